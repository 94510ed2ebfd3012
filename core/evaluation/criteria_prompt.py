"""What the criteria judge is sent: one prompt that decides every criterion of a conversation.

The judge sees the whole trace: every message, numbered by turn (parley.core.evaluation.
transcript_turns: turn N starts at the customer's N-th message); every tool call with its
arguments and its result, refusals and failures included; the final state of the records the
conversation touched (on the order world, its orders' statuses); and the criteria, numbered. It answers with one JSON object, a decision per
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

from parley.core.evaluation.claims import sees_actions
from parley.core.evaluation.criteria import Criterion
from parley.core.evaluation.judge_prompt import fit_judge_messages
from parley.core.evaluation.state_checks import record_nouns, split_ref
from parley.core.evaluation.transcript_turns import quoted, render_turns, tool_call_line
from parley.core.prompts import Condensed, Turn, split_turns
from parley.core.reading import records_in
from parley.core.records import ChatMessage, Conversation, ConversationSpec, RecordChange
from parley.core.world import RecordKey, WorldDefinition, conversation_world, key_of

__all__ = [
    "CHECKPOINT_KEY",
    "CheckpointCut",
    "MAX_MESSAGE_CHARS",
    "MAX_TOOL_RESULT_CHARS",
    "REMINDER",
    "criteria_messages",
    "fit_criteria_prompt",
    "records_touched",
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


_NOT_VISIBLE = "This bot's tool calls and the database it acts on are not visible: none are shown."

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


def records_touched(conversation: Conversation, world: WorldDefinition | None = None) -> list[RecordKey]:
    """The records the conversation touched, in the order it first did: named in a tool call's
    arguments or result or in a message, or changed (a log table's rows aside); with a final state,
    those it holds (a change, or a final row it kept)."""
    state = conversation.final_state
    seen: dict[tuple[str, str], RecordKey] = {}

    def add(records: list[RecordKey]) -> None:
        for table, key in records:
            seen.setdefault((table, key_of(key)), (table, key))

    for record in conversation.tool_calls:
        add(records_in(f"{record.arguments_raw} {record.result}", world))
    for message in conversation.messages:
        add(records_in(message.content or "", world))
    if state is None:
        return list(seen.values())
    for change in state.record_changes():
        add([(change.table, change.key)])
    kept = {(change.table, key_of(change.key)) for change in state.record_changes()}
    kept |= {(table, key_of(key)) for table, key in map(split_ref, state.watched)}
    return [record for found, record in seen.items() if found in kept]


def _state_line(table: str, key: str, conversation: Conversation, world: WorldDefinition | None) -> str:
    state = conversation.final_state
    assert state is not None
    declared = world.table(table) if world is not None else None
    field = declared.state_field if declared is not None else None
    change: RecordChange | None = next((c for c in state.record_changes() if c.table == table and key_of(c.key) == key_of(key)), None)
    row = next((r for ref, r in state.watched.items() if split_ref(ref)[0] == table and key_of(split_ref(ref)[1]) == key_of(key)), None)
    if row is None and change is not None:
        row = change.after
    if field is not None:
        now = (row or {}).get(field) if row is not None else "deleted"
        was = f"(was {(change.before or {}).get(field)})" if change is not None and change.before is not None else "(unchanged)"
        if change is not None and change.before is None:
            was = "(created in the conversation)"
        return f"- {key}: {now} {was}"
    if change is None:
        return f"- {table}/{key}: unchanged"
    return f"- {change.describe()}"


def _final_state(conversation: Conversation, world: WorldDefinition | None) -> str:
    state = conversation.final_state
    if state is None:
        if sees_actions(conversation):
            return "The final state of the records is not known (the bot does not use a world parley runs)."
        return _NOT_VISIBLE
    touched = records_touched(conversation, world)
    tables = list(dict.fromkeys(table for table, _ in touched))
    one, many = record_nouns(tables or [t.name for t in world.tables if t.state_field] if world is not None else tables)
    if not touched:
        return f"Final state of the {many}: the conversation touched no {one}."
    lines = [_state_line(table, key, conversation, world) for table, key in touched]
    return f"Final state of the {many} the conversation touched:\n" + "\n".join(lines)


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
    state = _final_state(conversation, conversation_world(conversation, spec))
    if cut is not None:  # at a checkpoint a playbook's goals are its script, later lines included: left out
        ended = (
            f"This is the conversation as it stood at a checkpoint of the test (step {cut.step} of its script): "
            "it went on afterwards, and what came later is not shown. Decide every criterion as of this point."
        )
        state = "The state of the records at this point is what the tool calls above show." if cut.sees_actions else _NOT_VISIBLE
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
