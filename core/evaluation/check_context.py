"""What a check written in Python is given, and what it answers (shown by `parley.api`).

    from parley.api import CheckedConversation, failed, not_applicable, passed

    def refund_is_polite(conversation: CheckedConversation):
        refunds = [call for call in conversation.tool_calls if call.name == "cancel_order" and call.ok]
        if not refunds:
            return not_applicable("nothing was cancelled")
        for reply in conversation.bot_replies:
            if reply.turn >= refunds[0].turn and "sorry" in reply.text.lower():
                return passed("the bot apologised", turn=reply.turn, quote="sorry")
        return failed("no apology after the cancellation")

The conversation is a read-only view, numbered in turns as the judge numbers them (turn N opens
with the customer's N-th message and holds the bot's answers to it; turn 0 is what a bot says
first): its messages, the tool calls with their arguments and results, the world's final state
(`final`, None for a bot parley cannot see acting: a connector, a prompt bot) and the customer's
profile. The answer is `passed`, `failed` or `not_applicable`, each with a reason, and evidence
when the check has some: a turn, and a quote that must be in that turn (checked as a judge's
quote is: a quote that is not there makes the check an evaluation error, never a pass).
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from parley.core.evaluation.transcript_turns import transcript_turns
from parley.core.records import Conversation, ConversationSpec, ToolCallRecord, WorldDiff

__all__ = [
    "CheckAnswer",
    "CheckedConversation",
    "Customer",
    "FinalState",
    "Message",
    "RowChange",
    "ToolUse",
    "failed",
    "not_applicable",
    "passed",
]

AnswerOutcome = Literal["pass", "fail", "not_applicable"]


def _frozen(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(copy.deepcopy(dict(value)))


@dataclass(frozen=True)
class Message:
    """A customer's or the bot's message with text."""

    role: Literal["customer", "bot"]
    text: str
    turn: int


@dataclass(frozen=True)
class ToolUse:
    """A tool call the bot made: its arguments (None when they were not a JSON object), the
    result it received (as text), whether it succeeded, and its turn."""

    name: str
    arguments: Mapping[str, Any] | None
    result: str
    ok: bool
    turn: int
    error: str | None = None
    data: Any = None
    """A successful call's result read as JSON (None for a failed call or text that is not JSON)."""


@dataclass(frozen=True)
class RowChange:
    """A record the conversation changed: its table and key, its row before and after (None
    where it did not exist)."""

    table: str
    key: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None


class FinalState:
    """The world at the end of the conversation, read-only: `final_row(table, key)` and the
    `changes` the conversation made to its records (a log table's rows aside), each with its row
    before and after. (The order world's orders are the table `orders`, keyed by order id.)"""

    def __init__(self, state: WorldDiff) -> None:
        self._state = state
        self.today: datetime.date = state.today
        self.changes: tuple[RowChange, ...] = tuple(
            RowChange(
                table=change.table,
                key=str(change.key),
                before=_frozen(change.before) if change.before is not None else None,
                after=_frozen(change.after) if change.after is not None else None,
            )
            for change in state.record_changes()
        )

    @property
    def tables(self) -> tuple[str, ...]:
        """The tables of the records the conversation changed or watched."""
        watched = [ref.split("/", 1)[0] for ref in self._state.watched]
        return tuple(dict.fromkeys([c.table for c in self.changes] + watched))

    def final_row(self, table: str, key: str) -> Mapping[str, Any] | None:
        """The record's row at the end: one the conversation changed, or one it watched (the
        records a spec's `expect:` names); None for any other (or a record deleted)."""
        row = self._state.final_row(table, key)
        return _frozen(row) if row is not None else None

    def __repr__(self) -> str:
        return f"FinalState(today={self.today}, changes={len(self.changes)})"


@dataclass(frozen=True)
class Customer:
    """The simulated customer as its profile made it."""

    id: str
    goals: tuple[str, ...]
    variables: Mapping[str, str]
    role: str
    context: tuple[str, ...]
    language: str


@dataclass(frozen=True)
class CheckedConversation:
    """One finished conversation, as a check written in Python reads it (see the module doc)."""

    messages: tuple[Message, ...]
    tool_calls: tuple[ToolUse, ...]
    final: FinalState | None
    customer: Customer
    stop_reason: str
    bot_turns: int

    @property
    def bot_replies(self) -> tuple[Message, ...]:
        return tuple(m for m in self.messages if m.role == "bot")

    @property
    def customer_lines(self) -> tuple[Message, ...]:
        return tuple(m for m in self.messages if m.role == "customer")

    @classmethod
    def of(cls, conversation: Conversation, spec: ConversationSpec) -> CheckedConversation:
        """The view of a stored conversation and its spec."""
        messages: list[Message] = []
        turn_of_call: dict[str, int] = {}
        for turn in transcript_turns(conversation.messages):
            for _, message in turn.messages:
                if message.role == "user" and message.content:
                    messages.append(Message("customer", message.content, turn.number))
                elif message.role == "assistant":
                    if message.content:
                        messages.append(Message("bot", message.content, turn.number))
                    for call in message.tool_calls:
                        turn_of_call[call.id] = turn.number
        last = messages[-1].turn if messages else 0
        calls = tuple(_tool_use(record, turn_of_call.get(record.call_id, last)) for record in conversation.tool_calls)
        state = conversation.final_state
        return cls(
            messages=tuple(messages),
            tool_calls=calls,
            final=FinalState(state) if state is not None else None,
            customer=Customer(
                id=conversation.customer_id,
                goals=tuple(spec.goals),
                variables=MappingProxyType(dict(spec.variables)),
                role=spec.role,
                context=tuple(spec.context),
                language=spec.language,
            ),
            stop_reason=conversation.stop_reason,
            bot_turns=conversation.bot_turns,
        )


def _tool_use(record: ToolCallRecord, turn: int) -> ToolUse:
    arguments = _frozen(record.arguments) if record.arguments is not None else None
    return ToolUse(
        name=record.name, arguments=arguments, result=record.result, ok=record.ok, turn=turn, error=record.error, data=record.data
    )


@dataclass(frozen=True)
class CheckAnswer:
    """A check's answer: pass, fail or not applicable, why, and where (a turn, and a quote from it)."""

    outcome: AnswerOutcome
    reason: str
    turn: int | None = None
    quote: str | None = None


def passed(reason: str, *, turn: int | None = None, quote: str | None = None) -> CheckAnswer:
    """The check held; `turn` and `quote` say where (the quote must be in that turn)."""
    return CheckAnswer("pass", reason, turn, quote)


def failed(reason: str, *, turn: int | None = None, quote: str | None = None) -> CheckAnswer:
    """The check did not hold; `turn` and `quote` say where (the quote must be in that turn)."""
    return CheckAnswer("fail", reason, turn, quote)


def not_applicable(reason: str) -> CheckAnswer:
    """The check does not apply to this conversation (it neither passes nor fails it)."""
    return CheckAnswer("not_applicable", reason)
