"""What the criteria judge is sent: one prompt that decides every criterion of a conversation.

The judge sees the whole trace: every message, numbered by turn (parley.core.evaluation.
transcript_turns: turn N starts at the customer's N-th message); every tool call with its
arguments and its result, refusals and failures included; the final state of the orders the
conversation touched; and the criteria, numbered. It answers with one JSON object, a decision per
criterion with the turns it rests on, a short quote and one sentence of reasoning
(parley.core.evaluation.criteria reads it).

A conversation cut at a playbook's checkpoint (parley.core.evaluation.checkpoints) carries a
`CheckpointCut` in `metadata["checkpoint"]`: the prompt then says the conversation went on after
what it shows, and shows neither the final state (the state at the checkpoint is what its tool
calls show) nor the customer's goals (a playbook's are its script's lines, later ones
included), so the judge decides the criteria as of that point.

`fit_criteria_prompt` is the one place the prompt is built. Given a budget (the judge model's
context less room for the answer), it condenses the transcript with parley.core.prompts (long
tool results shortened, repeats pointing back, the middle omitted), says so in the prompt and
keeps every turn's number, so the evidence still names real turns. Each message is clipped at
`MAX_MESSAGE_CHARS` and each tool result at `MAX_TOOL_RESULT_CHARS` in any case.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from pydantic import BaseModel, ValidationError

from parley.core.evaluation.checks import changed_orders
from parley.core.evaluation.claims import sees_actions
from parley.core.evaluation.criteria import Criterion
from parley.core.evaluation.judge_prompt import fit_judge_messages
from parley.core.evaluation.transcript_turns import quoted, render_turns, tool_call_line
from parley.core.prompts import Condensed, Turn, split_turns
from parley.core.reading import extract_order_ids
from parley.core.records import ChatMessage, Conversation, ConversationSpec

__all__ = [
    "CHECKPOINT_KEY",
    "CheckpointCut",
    "MAX_MESSAGE_CHARS",
    "MAX_TOOL_RESULT_CHARS",
    "REMINDER",
    "criteria_messages",
    "fit_criteria_prompt",
    "orders_touched",
    "render_transcript",
]

MAX_MESSAGE_CHARS = 4000
MAX_TOOL_RESULT_CHARS = 2000

SYSTEM = """\
You check a conversation between a customer-service chatbot (the Assistant) and a customer (the \
Customer, played by a simulator) against criteria, one by one. Judge only the Assistant: nothing \
the Customer does wrong is the Assistant's failure.

For each criterion decide one of:
- "met": the conversation satisfies it;
- "not met": it does not;
- "not applicable": what it is about never came up in this conversation.

Give your evidence: the number of the turn (or turns) the decision rests on, and a quote copied \
exactly from that turn, in one piece: at least a few words (and at most 25) that stand in the turn \
just as you give them, never shortened or joined with "..." (the Customer's or the Assistant's \
words, or a tool call's arguments or result). A "met" always needs such a quote. When what \
decides it is something the Assistant never did, name the turn where it should have happened \
and quote what the Assistant said instead; when no single turn is to blame, give no turns and \
an empty quote. Then one sentence of reasoning.

Messages marked "injected by the test" were written by the person running the test, not by the \
Assistant: never hold them against it. When the transcript shows no tool calls because they are \
not visible, judge claims of actions only by whether the Assistant could have taken them.

Reply with only a JSON object, no other text, of exactly this form:
{"criteria": [{"criterion": 1, "verdict": "met", "turns": [2], "quote": "words copied from turn 2", \
"reasoning": "one sentence saying why"}]}
with one entry for every criterion, by its number; verdict is "met", "not met" or "not applicable"."""

REMINDER = (
    "Your reply could not be read in full ({why}). Answer again with only the JSON object "
    '{{"criteria": [{{"criterion": N, "verdict": "met" | "not met" | "not applicable", "turns": [...], '
    '"quote": "...", "reasoning": "..."}}]}}, one entry for each of criteria 1-{count}, and nothing else.'
)


_NOT_VISIBLE = "This bot's tool calls and the order database it acts on are not visible: none are shown."

CHECKPOINT_KEY = "checkpoint"
"""Where a conversation cut at a checkpoint keeps its CheckpointCut (`Conversation.metadata`)."""


class CheckpointCut(BaseModel):
    """A conversation cut at a playbook's `judge` step: the step, and whether parley saw the
    bot's actions in the whole conversation (its tool calls or a final state)."""

    step: int
    sees_actions: bool


def _cut(conversation: Conversation) -> CheckpointCut | None:
    raw = conversation.metadata.get(CHECKPOINT_KEY)
    if raw is None:
        return None
    try:
        return CheckpointCut.model_validate(raw)
    except ValidationError:
        return None  # not a cut parley made: the conversation is shown as a whole one


def _injected(conversation: Conversation) -> set[int]:
    raw = conversation.metadata.get("injected_messages") or []
    return {p for p in raw if isinstance(p, int)} if isinstance(raw, list) else set()


def render_transcript(conversation: Conversation, fitted: Condensed | None = None) -> str:
    """The transcript as the criteria judge reads it: a `Turn N:` line opening each turn, then
    `Customer:` and `Assistant:` lines, each tool call with its arguments and how it went on its
    own line under the message that made it. `fitted`: the turns as condensed (a tool result
    shortened or pointing back is shown so; the turns left out as one line); None: whole."""
    records = {r.call_id: r for r in conversation.tool_calls}
    results = {m.tool_call_id: m.content or "" for m in conversation.messages if m.role == "tool" and m.tool_call_id}
    # the condenser copies only the tool results it changes: messages are the conversation's own
    injected = {id(conversation.messages[p]) for p in _injected(conversation) if 0 <= p < len(conversation.messages)}
    if fitted is None:
        head, turns = split_turns([m for m in conversation.messages if m.role != "system"])
        fitted = Condensed(head=head, turns=turns, budget=0)

    def turn_lines(turn: Turn) -> list[str]:
        lines: list[str] = []
        condensed = {
            m.tool_call_id: m.content or ""
            for m in turn.messages
            if m.role == "tool" and m.tool_call_id and (m.content or "") != results.get(m.tool_call_id)
        }
        for message in turn.messages:
            if message.role == "user":
                lines.append(f"Customer: {quoted(message.content or '', MAX_MESSAGE_CHARS)}")
            elif message.role == "assistant":
                who = "Assistant (injected by the test)" if id(message) in injected else "Assistant"
                if message.content:
                    lines.append(f"{who}: {quoted(message.content, MAX_MESSAGE_CHARS)}")
                for call in message.tool_calls:
                    record = records.get(call.id)
                    full = record.result if record is not None else results.get(call.id, "")
                    lines.append(tool_call_line(call, record, condensed.get(call.id, full), MAX_TOOL_RESULT_CHARS))
        return lines

    return render_turns(fitted, turn_lines)


def orders_touched(conversation: Conversation) -> list[str]:
    """The orders the conversation touched, in the order it first did: named in a tool call's
    arguments or result or in a message, or changed."""
    state = conversation.final_state
    seen: dict[str, None] = {}
    for record in conversation.tool_calls:
        for order in extract_order_ids(f"{record.arguments_raw} {record.result}"):
            seen.setdefault(order, None)
    for message in conversation.messages:
        for order in extract_order_ids(message.content or ""):
            seen.setdefault(order, None)
    if state is not None:
        for order in changed_orders(state):
            seen.setdefault(order, None)
        return [o for o in seen if o in state.statuses]
    return list(seen)


def _final_state(conversation: Conversation) -> str:
    state = conversation.final_state
    if state is None:
        if sees_actions(conversation):
            return "The final state of the orders is not known (the bot does not use parley's order database)."
        return _NOT_VISIBLE
    touched = orders_touched(conversation)
    if not touched:
        return "Final state of the orders: the conversation touched no order."
    changes = changed_orders(state)
    lines = []
    for order in touched:
        change = changes.get(order)
        was = f"(was {change.initial})" if change is not None else "(unchanged)"
        lines.append(f"- {order}: {state.statuses[order]} {was}")
    return "Final state of the orders the conversation touched:\n" + "\n".join(lines)


def criteria_messages(conversation: Conversation, spec: ConversationSpec, criteria: Sequence[Criterion]) -> list[ChatMessage]:
    """The system and user messages that ask a judge to decide `criteria` on `conversation`,
    the transcript whole."""
    return fit_criteria_prompt(conversation, spec, criteria)[0]


def fit_criteria_prompt(
    conversation: Conversation,
    spec: ConversationSpec,
    criteria: Sequence[Criterion],
    *,
    budget: int | None = None,
    tail: Sequence[ChatMessage] = (),
) -> tuple[list[ChatMessage], Condensed]:
    """The messages that ask a judge to decide `criteria` (followed by `tail`, a reminder's
    exchange), the transcript condensed until they take at most `budget` tokens (None: no
    limit), and what the condensing did (`fits` False: not even condensed)."""
    cut = _cut(conversation)
    ended = None
    state = _final_state(conversation)
    if cut is not None:  # at a checkpoint a playbook's goals are its script, later lines included: left out
        ended = (
            f"This is the conversation as it stood at a checkpoint of the test (step {cut.step} of its script): "
            "it went on afterwards, and what came later is not shown. Decide every criterion as of this point."
        )
        state = "The state of the orders at this point is what the tool calls above show." if cut.sees_actions else _NOT_VISIBLE
    return fit_judge_messages(
        conversation,
        spec,
        system=SYSTEM,
        transcript=[m for m in conversation.messages if m.role != "system"],
        render=functools.partial(render_transcript, conversation),
        asked=[
            state,
            "Criteria:\n" + "\n".join(f"{c.number}. {c.text}" for c in criteria),
            "Now give your decision on every criterion as the JSON object.",
        ],
        budget=budget,
        tail=tail,
        ended=ended,
        goals=cut is None,
    )
