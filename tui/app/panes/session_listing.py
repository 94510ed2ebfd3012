"""Stored sessions as the Sessions pane shows them: the table's cells, the date filter, and one
session in full for the detail screen (the queries themselves live in
parley.core.store.session_queries).

No Textual here: the panes call these from worker threads.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parley.tui.app.panes.batch_results import outcome_label, plural

if TYPE_CHECKING:
    from parley.core.records import ChatMessage, StoredChatSession, StoredConversation, ToolCallRecord, Verdict
    from parley.core.store import SessionItem, SessionKind, Store


_DATE_RANGE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})?\s*(?:\.\.\s*(\d{4}-\d{2}-\d{2})?)?\s*$")


def parse_date_filter(text: str) -> tuple[dt.date | None, dt.date | None]:
    """`2026-11-21` (that day), `2026-11-01..2026-11-21` (both days included), `2026-11-01..`
    or `..2026-11-21` -> (since, until exclusive). ValueError with a readable message otherwise."""
    text = text.strip()
    if not text:
        return None, None
    match = _DATE_RANGE.match(text)
    if not match or not (match.group(1) or match.group(2)):
        raise ValueError(f"{text!r} is not a date: use YYYY-MM-DD, or FROM..TO")
    try:
        first = dt.date.fromisoformat(match.group(1)) if match.group(1) else None
        last = dt.date.fromisoformat(match.group(2)) if match.group(2) else None
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a date: {exc}") from None
    if ".." not in text:
        return first, first + dt.timedelta(days=1) if first else None
    return first, (last + dt.timedelta(days=1)) if last else None


COLUMNS = ("Started (UTC)", "Kind", "Name", "Outcome", "Score", "Turns", "Tokens", "Stop", "Details")


def session_cells(item: SessionItem) -> tuple[str, ...]:
    """One stored session as a row of the Sessions table."""
    when = item.started.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")
    if item.kind == "chat":
        kind, detail = "chat", f"{item.detail} · {plural(item.messages, 'message')}"
    else:
        kind, detail = "batch", (f"trial {item.trial} · " if item.trial > 1 else "") + item.detail
    score = "-" if item.score is None else str(item.score)
    return (when, kind, item.name, outcome_label(item.outcome), score, str(item.turns), f"{item.tokens:,}", item.stop, detail)


# ---- one session in full ----------------------------------------------------------------------


@dataclass
class SessionDetail:
    """A stored session as the detail screen shows it."""

    item_kind: SessionKind
    id: str
    title: str
    facts: list[tuple[str, str]]
    messages: list[ChatMessage]
    tool_calls: list[ToolCallRecord]
    verdict: Verdict | None = None  # None for chats and unevaluated conversations
    record: StoredConversation | StoredChatSession | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def load_detail(store: Store, kind: SessionKind, session_id: str) -> SessionDetail:
    """Load one session (a batch conversation or a live chat) in full."""
    if kind == "chat":
        chat_stored = store.load_chat_session(session_id)
        chat = chat_stored.chat
        m = chat.metrics
        facts = [
            ("Session", chat.session_id[:16]),
            ("Started", chat_stored.created_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")),
            ("Customer", chat.customer_id),
            ("Bot model", chat.bot_model),
            ("Today (orders)", chat.today.isoformat()),
            ("Turns", str(m.turns)),
            ("Tokens", f"{m.usage.input_tokens} in · {m.usage.output_tokens} out"),
            ("Tool calls", f"{m.tool_calls} ({m.refused} refused, {plural(m.tool_errors, 'error')})"),
        ]
        return SessionDetail(
            "chat", chat.session_id, f"Live chat as {chat.customer_id}", facts, chat.messages, chat.tool_calls, None, chat_stored
        )
    stored = store.load_conversation(session_id)
    conv, spec, verdict = stored.conversation, stored.spec, stored.verdict
    total = conv.total_usage
    judge = verdict.judge.judge if verdict is not None and verdict.judge is not None else "none"
    facts = [
        ("Conversation", conv.id[:16]),
        ("Spec", f"{spec.spec_id} ({spec.kind}, trial {stored.trial})"),
        ("Source", spec.source),
        ("Batch", (stored.batch_id or "-")[:16]),
        ("Started", conv.started_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("Customer", conv.customer_id),
        ("Models", f"bot {conv.bot_model} · user {conv.user_simulator} · judge {judge}"),
        ("Stop reason", conv.stop_reason + (f" ({conv.error})" if conv.error else "")),
        ("Turns", str(conv.bot_turns)),
        ("Tokens", f"{total.input_tokens} in · {total.output_tokens} out"),
    ]
    if spec.variables:
        facts.append(("Variables", ", ".join(f"{k}={v}" for k, v in spec.variables.items())))
    return SessionDetail("conversation", conv.id, f"{spec.name} · {spec.spec_id}", facts, conv.messages, conv.tool_calls, verdict, stored)


def export_detail(store: Store, kind: SessionKind, session_id: str, directory: Path) -> Path:
    """Write one session as JSON under `directory`; returns the path (never overwrites)."""
    if kind == "chat":
        chat_stored = store.load_chat_session(session_id)
        data: Any = chat_stored.chat.model_dump(mode="json")
        stem = f"chat-{chat_stored.chat.session_id[:12]}"
    else:
        from parley.core.reports import result_record

        stored = store.load_conversation(session_id)
        data = result_record(stored)
        stem = f"conversation-{stored.conversation.id[:12]}"
    from parley.core.chat import write_new_json

    return write_new_json(directory, stem, json.dumps(data, indent=2, ensure_ascii=False))


def export_playbook(store: Store, kind: SessionKind, session_id: str, directory: Path) -> Path:
    """Write one session as a playbook under `directory`/playbooks (parley.core.reports.session_playbook):
    the chat as a test to edit and run; returns the path (never overwrites)."""
    from parley.core.chat import write_new_json
    from parley.core.reports import session_playbook

    stored = store.load_chat_session(session_id) if kind == "chat" else store.load_conversation(session_id)
    name, text = session_playbook(stored)
    return write_new_json(directory / "playbooks", name, text, suffix=".yaml")
