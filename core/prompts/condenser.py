"""A conversation condensed to fit a token budget, saying what was condensed and keeping every
remaining turn's number.

The messages of a prompt are split into the head (its leading system messages, never touched)
and turns: turn 0 holds what comes before the customer's first message (a bot that opens the
conversation), turn N starts at the customer's N-th message and holds everything up to the next
one (the bot's answers, its tool calls and their results). When the prompt is over budget, it is
condensed in this order, each step only as far as needed:

1. long tool results (parley.core.prompts.tool_results) are shortened to their first line and key
   fields, oldest first;
2. a tool result identical to an earlier one says "same result as in turn N" instead;
3. the middle of the conversation is omitted, oldest turns first, as "turns N-M omitted"; the
   first turn (with turn 0) and the last are always kept;
4. the longest messages of the turns kept are cut in the middle (their start and their end kept,
   the cut marked with how many characters it left out), down to `MIN_CLIPPED_CHARS` each: a
   model that wrote thousands of tokens in one turn still leaves a prompt that fits.

For a bot, the last turn is not changed by steps 1, 2 and 4 (`answering`): it is what the bot
is answering right now; a judge reads every turn as history. What was condensed is said in
`Condensed.note`, which `prompt_messages()` adds to the system message. Only a head (system
messages) too long by itself, or more kept messages than the budget has room for even cut short,
leaves a conversation that does not fit: it is returned condensed as far as it goes, `fits`
False, and the caller decides (the judge gives up with a reason, a bot or a user simulator sends it and
lets the endpoint decide, since the budget may be a default guess).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from parley.core.prompts.tokens import estimate_messages
from parley.core.prompts.tool_results import KEY_FIELDS, LONG_TOOL_RESULT_CHARS, shorten_tool_result
from parley.core.records import ChatMessage

__all__ = ["MIN_CLIPPED_CHARS", "Condensed", "Turn", "condense", "cut_middle", "fit_messages", "split_turns", "turn_list"]

MIN_CLIPPED_CHARS = 240
"""The shortest a message is cut to (step 4): its first and last sentences or so."""


class Turn(BaseModel):
    """One turn of a conversation: its number (see the module doc) and its messages."""

    number: int
    messages: list[ChatMessage] = Field(default_factory=list)


class Condensed(BaseModel):
    """A prompt after condensing: the head, the turns kept (each with its own number, condensed
    as the flags say), and the token counts before and after, by the caller's measure."""

    head: list[ChatMessage] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    omitted: tuple[int, int] | None = None
    """The first and last turn numbers left out (the middle of the conversation)."""
    shortened: list[int] = Field(default_factory=list)
    """Turns whose long tool results were shortened."""
    repeats: list[int] = Field(default_factory=list)
    """Turns whose repeated tool results point back to the turn that first gave them."""
    clipped: list[int] = Field(default_factory=list)
    """Turns with a message cut in the middle (step 4)."""
    budget: int
    tokens_before: int = 0
    tokens_after: int = 0

    @property
    def condensed(self) -> bool:
        return bool(self.shortened or self.repeats or self.omitted or self.clipped)

    @property
    def fits(self) -> bool:
        return self.tokens_after <= self.budget

    @property
    def note(self) -> str | None:
        """What was condensed, in a sentence for the model (None: nothing was)."""
        if not self.condensed:
            return None
        parts = []
        if self.omitted is not None:
            first, last = self.omitted
            parts.append(f"turn {first} is omitted" if first == last else f"turns {first}-{last} are omitted")
        if self.shortened:
            parts.append(f"long tool results in {turn_list(self.shortened)} are shortened to their first line and key fields")
        if self.repeats:
            parts.append(f"tool results repeated in {turn_list(self.repeats)} name the earlier turn that gave the same result")
        if self.clipped:
            parts.append(f"long messages in {turn_list(self.clipped)} are cut in the middle, where they say how much was left out")
        return "To fit the model's context, the conversation is condensed: " + "; ".join(parts) + "."

    def messages(self) -> list[ChatMessage]:
        """The head and the kept turns' messages, without the note."""
        return [*self.head, *(m for turn in self.turns for m in turn.messages)]

    def prompt_messages(self) -> list[ChatMessage]:
        """`messages()` with the note added to the last system message of the head (or as a
        system message of its own when there is none)."""
        messages = self.messages()
        note = self.note
        if note is None:
            return messages
        system_at = [i for i, m in enumerate(self.head) if m.role == "system"]
        if not system_at:
            return [ChatMessage(role="system", content=note), *messages]
        i = system_at[-1]
        messages[i] = messages[i].model_copy(update={"content": f"{messages[i].content or ''}\n\n{note}".strip()})
        return messages


def split_turns(messages: Sequence[ChatMessage]) -> tuple[list[ChatMessage], list[Turn]]:
    """The leading system messages, and the turns that follow (see the module doc)."""
    at = 0
    while at < len(messages) and messages[at].role == "system":
        at += 1
    turns: list[Turn] = []
    current = Turn(number=0)
    for message in messages[at:]:
        if message.role == "user":
            if current.messages:
                turns.append(current)
            current = Turn(number=current.number + 1, messages=[message])
        else:
            current.messages.append(message)
    if current.messages:
        turns.append(current)
    return list(messages[:at]), turns


def turn_list(numbers: Sequence[int]) -> str:
    """`turn 3`, `turns 1 and 3`, `turns 1, 3 and 5`."""
    shown = [str(n) for n in numbers]
    if len(shown) == 1:
        return f"turn {shown[0]}"
    return f"turns {', '.join(shown[:-1])} and {shown[-1]}"


def cut_middle(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters: its first two thirds and its last third, the cut
    marked with how many characters it left out (unchanged when it is no longer than `limit`)."""
    if len(text) <= limit:
        return text
    keep_end = limit // 3
    keep_start = limit - keep_end
    left_out = len(text) - keep_start - keep_end
    return f"{text[:keep_start]} [… {left_out} characters left out …] {text[len(text) - keep_end :]}"


Measure = Callable[[Condensed], int]


def default_measure(condensed: Condensed) -> int:
    """Tokens of `prompt_messages()`: the prompt as it is sent."""
    return estimate_messages(condensed.prompt_messages())


@dataclass
class _Plan:
    """How far condensing has gone: which tool results are shortened, whether repeats point
    back, how many middle turns are left out."""

    shorten: set[tuple[int, int]] = field(default_factory=set)
    repeats: bool = False
    omit: int = 0
    clip: int | None = None
    """The most characters a kept message may have (step 4); None: messages whole."""


def _render(
    head: list[ChatMessage], turns: list[Turn], plan: _Plan, shorten: Callable[[str], str], budget: int, answering: bool
) -> Condensed:
    last = len(turns) - 1
    middle = [i for i, turn in enumerate(turns) if turn.number > 1 and i != last]
    left_out = set(middle[: plan.omit])
    kept: list[Turn] = []
    shortened: list[int] = []
    repeats: list[int] = []
    clipped: list[int] = []
    first_seen: dict[str, int] = {}
    for i, turn in enumerate(turns):
        if i in left_out:
            continue
        out: list[ChatMessage] = []
        for j, message in enumerate(turn.messages):
            if message.role == "tool" and message.content:
                original = message.content
                reference = f"[same result as in turn {first_seen[original]}]" if original in first_seen else None
                content = original
                if plan.repeats and not (answering and i == last) and reference is not None and len(reference) < len(original):
                    content = reference
                    repeats.append(turn.number)
                elif (i, j) in plan.shorten:
                    content = shorten(original)
                    if content != original:
                        shortened.append(turn.number)
                first_seen.setdefault(original, turn.number)
                if content != original:
                    message = message.model_copy(update={"content": content})
            if plan.clip is not None and not (answering and i == last) and message.content and len(message.content) > plan.clip:
                message = message.model_copy(update={"content": cut_middle(message.content, plan.clip)})
                clipped.append(turn.number)
            out.append(message)
        kept.append(Turn(number=turn.number, messages=out))
    gone = [turns[i].number for i in sorted(left_out)]
    return Condensed(
        head=head,
        turns=kept,
        omitted=(gone[0], gone[-1]) if gone else None,
        shortened=sorted(set(shortened)),
        repeats=sorted(set(repeats)),
        clipped=sorted(set(clipped)),
        budget=budget,
    )


def condense(
    messages: Sequence[ChatMessage],
    budget: int,
    *,
    measure: Measure = default_measure,
    fields: Collection[str] = KEY_FIELDS,
    answering: bool = True,
) -> Condensed:
    """`messages` condensed until `measure` says they take at most `budget` tokens (see the
    module doc). `measure` counts the prompt a caller builds from a Condensed (by default its
    `prompt_messages()`); `fields` are what shortened JSON tool results keep; `answering`: the
    last turn is being answered (a bot's prompt), its tool results kept whole."""
    head, turns = split_turns(messages)
    plan = _Plan()
    shortened: dict[str, str] = {}  # each result is shortened once, however many renders show it

    def shorten(text: str) -> str:
        if text not in shortened:
            shortened[text] = shorten_tool_result(text, fields)
        return shortened[text]

    whole = _render(head, turns, plan, shorten, budget, answering)
    before = measure(whole)
    whole.tokens_before = whole.tokens_after = before
    if before <= budget:
        return whole

    def attempt() -> Condensed:
        candidate = _render(head, turns, plan, shorten, budget, answering)
        candidate.tokens_before = before
        candidate.tokens_after = measure(candidate)
        return candidate

    def fewest(count: int, apply: Callable[[int], None]) -> Condensed | None:
        """The state with the fewest of `count` steps applied that fits (each step takes tokens
        off, so a binary search finds it in a few renders), or None, all `count` applied."""
        low, high, best = 1, count, None
        while low <= high:
            mid = (low + high) // 2
            apply(mid)
            candidate = attempt()
            if candidate.fits:
                best, high = candidate, mid - 1
            else:
                low = mid + 1
        if best is None:
            apply(count)
        return best

    last = len(turns) - 1
    long_results = [
        (i, j)
        for i, turn in enumerate(turns[:last] if answering else turns)
        for j, m in enumerate(turn.messages)
        if m.role == "tool" and len(m.content or "") > LONG_TOOL_RESULT_CHARS
    ]

    def shorten_first(n: int) -> None:
        plan.shorten = set(long_results[:n])

    found = fewest(len(long_results), shorten_first)
    if found is not None:
        return found
    plan.repeats = True
    state = attempt()
    if state.fits:
        return state
    middle = sum(1 for i, turn in enumerate(turns) if turn.number > 1 and i != last)

    def omit_first(n: int) -> None:
        plan.omit = n

    found = fewest(middle, omit_first)
    if found is not None:
        return found

    def smaller(state: Condensed) -> Condensed:
        # what does not fit goes as far as condensing took it, unless the note made it longer
        return state if state.tokens_after < before else whole

    state = attempt()
    kept = state.turns[:-1] if answering else state.turns
    longest = max((len(m.content or "") for turn in kept for m in turn.messages), default=0)
    if longest <= MIN_CLIPPED_CHARS:
        return smaller(state)
    # step 4: the longest limit on a kept message's length that fits (a shorter limit never
    # takes tokens back), found by halving the range
    low, high, best = MIN_CLIPPED_CHARS, longest - 1, None
    while low <= high:
        plan.clip = (low + high) // 2
        candidate = attempt()
        if candidate.fits:
            best, low = candidate, plan.clip + 1
        else:
            high = plan.clip - 1
    if best is not None:
        return best
    plan.clip = MIN_CLIPPED_CHARS
    return smaller(attempt())


def fit_messages(messages: Sequence[ChatMessage], budget: int) -> list[ChatMessage]:
    """`messages` as they are when they fit `budget` (checked first, cheaply: most prompts do),
    else condensed, with the note in the system message. A prompt that does not fit even
    condensed is returned condensed as far as it goes: the endpoint decides."""
    if estimate_messages(messages) <= budget:
        return list(messages)
    return condense(messages, budget).prompt_messages()
