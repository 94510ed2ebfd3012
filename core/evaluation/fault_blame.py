"""Who a simulated customer's fault is blamed on: the customer only when it misbehaved first, on
its own.

What looks like a simulator fault is often the bot's doing: a customer repeats itself because the
bot said nothing, answered with its fallback or said the same thing again; it leaves without
answering because the bot asked for the id of a record it had already been given (the order id,
on the order world). Such a fault is
*excused* (`UserFault.excused` says why): it is the bot's failure, and `bot_replies_check` fails
with the reason. An empty reply to a customer's message is a bad reply of the bot whether or not
the customer then misbehaved.

A fault is excused too when the bot misbehaved before it: a check about the bot that failed at an
earlier turn (a claim nothing backs, a forbidden sentence, a forbidden tool call), or an earlier
fault the bot caused (`excuse_after_failures`, applied when a verdict is assembled, so that the
checks a batch adds later, its rules, are weighed too). A failed check that names no turn (a tool
never called, an order that does not end as expected) excuses nothing: a customer that left
without answering a confirmation is why the order was not cancelled, not the other way round.

Pure functions over records; nothing of any one bot.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from parley.core.reading import asks_for_id, ids_in, record_noun, records_in
from parley.core.records import CheckKind, CheckResult, Conversation, ConversationSpec, UserFault
from parley.core.users import FallbackDetector
from parley.core.world import WorldDefinition

__all__ = ["BOT_REPLIES_KIND", "bot_replies_check", "excuse_after_failures", "excuse_bot_caused", "fault_turn"]

BOT_REPLIES_KIND: CheckKind = "bot_replies"
_NAME = "bot answered what the customer said"
_CLAIMS_KIND = "claims_match_actions"  # (parley.core.evaluation.claims.CLAIMS_KIND; that module reads no faults)
_NORMAL = re.compile(r"[^\w]+", re.UNICODE)


def _normal(text: str) -> str:
    return " ".join(_NORMAL.sub(" ", text.casefold()).split())


def _clip(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class _Replies:
    """The customer's messages and the bot's reply to each (turn t: after user message t, 0 the
    opening): the text of the turn's bot messages joined, None when the bot sent none."""

    user: list[str]
    replies: dict[int, str | None]
    world: WorldDefinition | None = None
    """The conversation's world (None: the default world), whose ids the customer gives."""

    def reply(self, turn: int) -> str | None:
        return self.replies.get(turn)


def _replies(conversation: Conversation, world: WorldDefinition | None = None) -> _Replies:
    user: list[str] = []
    replies: dict[int, str | None] = {0: None}
    for message in conversation.messages:
        if message.role == "user":
            user.append(message.content or "")
            replies[len(user)] = None
        elif message.role == "assistant":
            said = replies.get(len(user))
            text = message.content or ""
            replies[len(user)] = text if said is None else (said + "\n" + text if text else said)
    return _Replies(user=user, replies=replies, world=world)


def _empty(reply: str | None) -> bool:
    return reply is not None and not reply.strip()


def _given_id(r: _Replies, before: int) -> tuple[int, str, str] | None:
    """The first customer message (number, table, id) before turn `before` that gave a record's id."""
    for n, text in enumerate(r.user[: max(0, before)], 1):
        records = records_in(text, r.world)
        if records:
            return n, *records[0]
    return None


def _ignores_the_id(reply: str, r: _Replies, turn: int) -> str | None:
    """The bot's reply to user message `turn` asks for a record's id the customer already gave."""
    if not asks_for_id(reply, r.world) or ids_in(reply, r.world):
        return None
    given = _given_id(r, turn)
    if given is None:
        return None
    n, table, key = given
    return f"the bot asked for the {record_noun(table)} id although the customer gave it in message {n} ({key})"


def _bad_reply(turn: int, r: _Replies, fallback: FallbackDetector) -> str | None:
    """Why the bot's reply to user message `turn` is a bad one (None: it is not)."""
    reply = r.reply(turn)
    if reply is None:
        return None
    if not reply.strip():
        return f"the bot replied nothing to customer message {turn}"
    if fallback.is_fallback(reply):
        return f"the bot answered customer message {turn} with its fallback ({_clip(reply)!r})"
    return _ignores_the_id(reply, r, turn)


def _repeated_cause(fault: UserFault, r: _Replies, fallback: FallbackDetector, repeats: int) -> str | None:
    if fault.turn is None:
        return None
    turns = list(range(max(1, fault.turn - repeats + 1), fault.turn))
    for turn in turns:
        why = _bad_reply(turn, r, fallback)
        if why is not None:
            return why
    said = [_normal(r.reply(t) or "") for t in turns]
    if len(said) > 1 and said[0] and all(s == said[0] for s in said):
        return f"the bot said the same thing each time ({_clip(r.reply(turns[0]) or '')!r})"
    return None


def _question_turn(fault: UserFault, r: _Replies) -> int | None:
    """The turn of the bot's question the customer did not answer."""
    if fault.turn is None:  # it stopped without a word: the bot's last reply
        asked = [t for t, text in r.replies.items() if text]
        return max(asked) if asked else None
    for turn in range(fault.turn - 1, -1, -1):
        if r.reply(turn):
            return turn
    return None


def _stopped_cause(fault: UserFault, r: _Replies, fallback: FallbackDetector) -> str | None:
    turn = _question_turn(fault, r)
    if turn is None:
        return None
    question = r.reply(turn) or ""
    ignored = _ignores_the_id(question, r, turn)
    if ignored is not None:
        return ignored
    key = _normal(question)
    for earlier in range(turn - 1, -1, -1):
        if _normal(r.reply(earlier) or "") == key and earlier < len(r.user):
            return f"the bot asked the same again after the customer answered it in message {earlier + 1} ({_clip(question)!r})"
    return None


def _cause(fault: UserFault, r: _Replies, fallback: FallbackDetector, repeats: int) -> str | None:
    """Why the bot's own replies caused what looks like this fault (None: they did not)."""
    if fault.kind == "repeated_message":
        return _repeated_cause(fault, r, fallback, repeats)
    if fault.kind == "stopped_after_question":
        return _stopped_cause(fault, r, fallback)
    if fault.kind == "empty_turn" and fault.turn is not None:
        return _bad_reply(fault.turn - 1, r, fallback)
    return None  # talking as the assistant, never stating a goal: the customer's own doing


def fault_turn(fault: UserFault) -> float:
    """When a fault happened, for ordering: its user message; a goal never stated is a fault
    from the start, a silent stop one at the end."""
    if fault.turn is not None:
        return fault.turn
    return 0 if fault.kind == "no_goal_stated" else math.inf


def _excused(fault: UserFault, why: str) -> UserFault:
    return fault.model_copy(update={"excused": why})


def _after(faults: Sequence[UserFault], first: tuple[float, str] | None) -> list[UserFault]:
    """`faults` with those after `first` (when the bot misbehaved, and how) excused."""
    if first is None:
        return list(faults)
    at, how = first
    return [_excused(f, f"the bot misbehaved first ({how})") if f.excused is None and at < fault_turn(f) else f for f in faults]


def excuse_bot_caused(
    faults: Sequence[UserFault], conversation: Conversation, spec: ConversationSpec, repeats: int, world: WorldDefinition | None = None
) -> list[UserFault]:
    """`faults` (in their order) with those the bot's replies caused excused, and every fault
    after one of them: the bot misbehaved first. `world`: the conversation's (None: the default)."""
    if not faults:
        return []
    r = _replies(conversation, world)
    fallback = FallbackDetector.for_spec(spec)
    causes = [_cause(fault, r, fallback, repeats) for fault in faults]
    caused = [(fault_turn(f), c) for f, c in zip(faults, causes, strict=True) if c is not None]
    out = [f if c is None else _excused(f, c) for f, c in zip(faults, causes, strict=True)]
    return _after(out, min(caused, key=lambda x: x[0]) if caused else None)


# -- weighed against the checks -------------------------------------------------------------


def _turn_of_bot_message(conversation: Conversation, number: int) -> int | None:
    """The turn (customer messages before it) of the `number`-th bot message with text, as the
    text checks count them."""
    seen = turn = 0
    for message in conversation.messages:
        if message.role == "user":
            turn += 1
        elif message.role == "assistant" and message.content:
            seen += 1
            if seen == number:
                return turn
    return None


def _turn_of_call(conversation: Conversation, tool: str) -> int | None:
    turn = 0
    for message in conversation.messages:
        if message.role == "user":
            turn += 1
        elif message.role == "assistant" and any(call.name == tool for call in message.tool_calls):
            return turn
    return None


def check_turn(check: CheckResult, conversation: Conversation) -> int | None:
    """The turn at which a failed check's failure happened (the customer messages before the
    bot's message or call it is about), None when it names none."""
    details = check.details or {}
    if isinstance(details.get("turn"), int):
        return int(details["turn"])
    if check.kind == _CLAIMS_KIND:
        turns = [c.get("turn") for c in details.get("claims", []) if isinstance(c, dict) and not c.get("backed")]
        known = [t for t in turns if isinstance(t, int)]
        return min(known) if known else None
    messages = details.get("messages")
    if check.kind == "bot_never_says" and isinstance(messages, list) and messages and isinstance(messages[0], int):
        return _turn_of_bot_message(conversation, messages[0])
    if check.kind == "tool_not_called" and isinstance(details.get("tool"), str):
        return _turn_of_call(conversation, details["tool"])
    return None


def excuse_after_failures(faults: Sequence[UserFault], checks: Sequence[CheckResult], conversation: Conversation) -> list[UserFault]:
    """`faults` with those after the first check about the bot that failed at a known turn
    excused (see the module)."""
    if not faults or all(f.excused is not None for f in faults):
        return list(faults)
    failed = [(check_turn(c, conversation), c) for c in checks if c.outcome == "fail"]
    timed = [(t, c) for t, c in failed if t is not None]
    if not timed:
        return list(faults)
    turn, check = min(timed, key=lambda x: x[0])
    where = "the opening message" if turn == 0 else f"its reply to customer message {turn}"
    return _after(faults, (turn, f"{check.name} failed at {where}"))


def bot_replies_check(conversation: Conversation, faults: Sequence[UserFault]) -> CheckResult | None:
    """A failing check when the bot replied nothing to a customer's message, or its replies
    caused what looks like a simulator fault; None otherwise (nobody asks for it: it is
    `by_default`, and there only when it fails)."""
    r = _replies(conversation)
    empty = [t for t in range(1, len(r.user) + 1) if _empty(r.reply(t))]
    caused = [f for f in faults if f.excused is not None]
    if not empty and not caused:
        return None
    lines = []
    if empty:
        listed = ", ".join(str(t) for t in empty[:10]) + (" ..." if len(empty) > 10 else "")
        lines.append(f"The bot replied nothing to {'customer message' if len(empty) == 1 else 'customer messages'} {listed}")
    for fault in caused:
        where = f" at customer message {fault.turn}" if fault.turn is not None else ""
        lines.append(f"the customer's {fault.kind}{where} is the bot's doing: {fault.excused}")
    details: dict[str, object] = {"empty_replies": empty, "faults": [f.kind for f in caused]}
    if empty:
        details["turn"] = empty[0]
    reason = "; ".join(lines)
    return CheckResult(
        kind=BOT_REPLIES_KIND,
        name=_NAME,
        outcome="fail",
        reason=reason[:1].upper() + reason[1:] + ".",
        by_default=True,
        details=details,
    )
