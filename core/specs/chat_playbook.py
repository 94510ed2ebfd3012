"""A conversation turned into a playbook a person then edits (`parley sessions export ID --as
playbook`, the app's Sessions pane): a live chat, or any stored conversation, as a test.

- each customer line is a `user` step, as it was said;
- each tool call the bot made answering it is an `expect_tool` step, with its arguments;
- each bot reply is an `expect_bot_regex` step whose regex is built from the ids and world values
  the reply states (record ids by the shapes its world declares, the values of the tool results it repeats: statuses, carriers,
  tracking numbers, dates; the customer's id), escaped and joined in the order the reply states
  them, never from its wording: rephrasing keeps it passing, a wrong order or status fails it.
  The reply itself is kept as a comment beside it. A reply that states none gets `"."` (it said
  something) and a comment asking for what it must say;
- the customer and the world's date it ran with (`customer_id`, `today`).

Run against the same deterministic bot (the offline one, a Python bot, a model at temperature 0 on
a cached run), the playbook passes; against a bot that changed, its failing steps show where.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from parley.core.records import ChatMessage, ToolCallRecord

__all__ = ["ChatTurns", "playbook_from_chat", "reply_regex", "stated_values"]

_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
MIN_VALUE_CHARS = 3
MAX_VALUE_CHARS = 60
"""World values shorter than this say too little (a count, "ok"); longer ones are prose."""
MAX_VALUE_SPACES = 2
"""A world value of more words than this is a sentence (an API's message), not a value."""
COMMENT_CHARS = 160


@dataclass
class _Turn:
    user: str
    calls: list[ToolCallRecord] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ChatTurns:
    """What a playbook is made from: the transcript, the tool calls made, who and when."""

    messages: Sequence[ChatMessage]
    tool_calls: Sequence[ToolCallRecord]
    customer_id: str
    today: datetime.date | None
    id_patterns: Sequence[str] = ()
    """The shapes of its world's record ids (each table's `id_pattern`): an id a reply states is a value wherever it comes from."""


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


def stated_values(reply: str, known: Iterable[str], id_patterns: Sequence[str] = ()) -> list[str]:
    """The ids and world values `reply` states, in the order it states them: record ids (of the
    shapes `id_patterns`) and dates wherever they come from, and the `known` values (the tool
    results', the customer's id) that appear in it (case aside); a value inside a longer one
    stated at the same place is left out."""
    found: list[tuple[int, int, str]] = []
    patterns = [re.compile(rf"\b(?:{p})\b", re.IGNORECASE) for p in id_patterns]
    for pattern in (*patterns, _DATE):
        found += [(m.start(), m.end(), m.group(0)) for m in pattern.finditer(reply)]
    lowered = reply.casefold()
    for value in dict.fromkeys(v.strip() for v in known):
        if not MIN_VALUE_CHARS <= len(value) <= MAX_VALUE_CHARS or value.count(" ") > MAX_VALUE_SPACES:
            continue  # too short to say anything, or prose (a message the API wrote), not a value
        if value.isdigit() and len(value) < 4:
            continue
        at = lowered.find(value.casefold())
        if at >= 0:
            found.append((at, at + len(value), reply[at : at + len(value)]))
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    kept: list[tuple[int, int, str]] = []
    for start, end, text in found:
        if kept and start < kept[-1][1]:  # inside (or across) the value before it
            continue
        kept.append((start, end, text))
    return [text for _, _, text in kept]


def reply_regex(values: Sequence[str]) -> str:
    """A regex that holds when a reply states `values` in this order, each escaped."""
    return "(?s)" + ".*".join(re.escape(v) for v in values) if values else "."


def _turns(chat: ChatTurns) -> tuple[list[str], list[_Turn]]:
    """(what the bot said before the customer's first line, the turns from it)."""
    by_call = {r.call_id: r for r in chat.tool_calls}
    opening: list[str] = []
    turns: list[_Turn] = []
    for message in chat.messages:
        if message.role == "user":
            turns.append(_Turn(user=message.content or ""))
        elif message.role == "assistant":
            target = turns[-1] if turns else None
            for call in message.tool_calls:
                record = by_call.get(call.id)
                if record is not None and target is not None:
                    target.calls.append(record)
            if message.content:
                (target.replies if target is not None else opening).append(message.content)
    return opening, turns


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def _comment(text: str) -> str:
    """What the bot said, on one comment line: control characters escaped, cut to a length."""
    shown = json.dumps(" ".join(text.split()), ensure_ascii=False)
    return shown if len(shown) <= COMMENT_CHARS else shown[: COMMENT_CHARS - 2] + '…"'


def playbook_from_chat(chat: ChatTurns, *, name: str, made_from: str, notes: Sequence[str] = ()) -> str:
    """The playbook's YAML text (see the module doc); `made_from` says which session it is, `notes`
    go at its head as comments (what the playbook could not carry over)."""
    known = [chat.customer_id]
    for record in chat.tool_calls:
        if record.ok:
            try:
                known += list(_leaves(json.loads(record.result)))
            except ValueError:
                continue
    opening, turns = _turns(chat)
    lines = [
        f"# A playbook made from {made_from}.",
        "# Each bot reply's expectation is built from the ids and values it states, not from its wording:",
        "# edit them to say what the bot must say (the reply is in the comment above each).",
        *(f"# Note: {_comment(note)[1:-1]}" for note in notes),
        f"name: {_quoted(name)}",
        f"description: {_quoted(f'Made from {made_from}')}",
        f"customer_id: {_quoted(chat.customer_id)}",
    ]
    if chat.today is not None:
        lines.append(f"today: {chat.today.isoformat()}")
    lines.append("steps:")
    for text in opening:
        lines.append(f"  # before the customer's first line, the bot said: {_comment(text)}")
    for turn in turns:
        lines.append(f"  - user: {_quoted(turn.user)}")
        for record in turn.calls:
            arguments = record.arguments if record.arguments is not None else {}
            shown = json.dumps(arguments, ensure_ascii=False) if arguments else "{}"
            lines.append(f"  - expect_tool: {{name: {record.name}, arguments: {shown}}}")
        for reply in turn.replies:
            lines.append(f"  # the bot said: {_comment(reply)}")
        if turn.replies:  # the step is checked against the bot's last answer to the line
            values = stated_values(turn.replies[-1], known, chat.id_patterns)
            if not values:
                lines.append("  # it states no id or value: write what it must say")
            lines.append(f"  - expect_bot_regex: {_quoted(reply_regex(values))}")
    if not turns:
        lines.append('  - user: "Hello"  # the conversation had no customer line: write the first one')
    return "\n".join(lines) + "\n"
