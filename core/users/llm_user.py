"""The LLM user: a simulated customer played by a chat model, from a ConversationSpec.

Its system prompt says who the customer is (role, language, context lines), what they want
(the goals, values filled in), how they write (each interaction style as an instruction) and
when to stop (the goal style). Each turn may add a line for right now: rephrase after a
fallback, change topic after 3, write this one message in another language, say goodbye.

Role flip: in the simulator model's conversation the *bot's* lines are the "user" messages and
the customer's own lines are the "assistant" messages (the model plays the assistant role, as
chat models do). When the customer speaks first, a short kick-off "user" message stands in for
the bot so the conversation still starts with a user turn.

It ends the conversation by writing STOP_MARKER (`<<STOP>>`): the marker is stripped; a message
that is only the marker stops with no text. A stop right after agreeing to an action the bot
has not yet performed (answering "yes" to "Shall I cancel...?") is deferred: the message is
sent and the bot gets to act. Token usage and latency of every model call are in the UserTurn.
An empty or unusable reply is retried once, then the user stops with a note.

The history grows every turn: the prompt is fitted to the model's context (`context_tokens`, less
room for the reply) by leaving out the middle of the conversation, first and last turns kept,
and the system prompt says so (parley.core.prompts).

`generate_any_items(model, instruction)` lets the same model fill `any(...)` goal data:
`resolve_any_items(profile, generate=functools.partial(generate_any_items, model))`.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Sequence
from typing import Literal

from parley.core.models import ChatModel
from parley.core.prompts import DEFAULT_CONTEXT_TOKENS, Condensed, condense, estimate_messages, prompt_budget
from parley.core.reading import goal_mentioned, is_confirmation_question
from parley.core.records import ChatMessage, ConversationSpec, GenerateConfig, InteractionStyle, Usage
from parley.core.users.customer_facts import CustomerFacts
from parley.core.users.fallback_detection import FallbackAction, FallbackCounter
from parley.core.users.goal_driven_user import GoalDrivenUser
from parley.core.users.goal_tracker import GoalRow, GoalTracker, bot_turn_after, last_user_index
from parley.core.users.simulator import UserTurn, visible_transcript
from parley.core.users.styles import plan_language_switch, style_instruction
from parley.core.world import WorldDefinition

STOP_MARKER = "<<STOP>>"
KICKOFF = "(The chat window is open. Write your first message to the assistant.)"
DEFAULT_MAX_TOKENS = 400

# The marker and the near misses small models write.
_STOP_RE = re.compile(r"<{1,2}\s*stop\s*>{1,2}|\[\s*stop\s*\]", re.IGNORECASE)
_LABEL_RE = re.compile(r"^\s*(?:customer|user|me|client)\s*:\s*", re.IGNORECASE)
_AFFIRMATIVE = re.compile(
    r"^\W*(yes|yeah|yep|sure|ok|okay|please do|please go ahead|go ahead|confirm|i confirm|absolutely|s[ií]|oui|ja|sim)\b",
    re.IGNORECASE,
)


def split_stop_marker(text: str | None) -> tuple[str, bool]:
    """The message without the stop marker (and without a role label or wrapping quotes), and
    whether the marker was there."""
    raw = text or ""
    stop = bool(_STOP_RE.search(raw))
    clean = _STOP_RE.sub(" ", raw).strip()
    clean = _LABEL_RE.sub("", clean).strip()
    if len(clean) >= 2 and clean[0] == clean[-1] and clean[0] in "\"'\u201c":
        clean = clean[1:-1].strip()
    return re.sub(r"[ \t]{2,}", " ", clean), stop


def flip_roles(transcript: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The visible conversation as the simulator model sees it: the bot's lines as "user", the
    customer's own as "assistant"; consecutive lines of one side merged; a kick-off "user" line
    first when the customer opens the conversation."""
    out: list[ChatMessage] = []
    for m in visible_transcript(transcript):
        role: Literal["user", "assistant"] = "user" if m.role == "assistant" else "assistant"
        text = m.content or ""
        if out and out[-1].role == role:
            out[-1] = ChatMessage(role=role, content=f"{out[-1].content}\n\n{text}")
        else:
            out.append(ChatMessage(role=role, content=text))
    if not out or out[0].role == "assistant":
        out.insert(0, ChatMessage(role="user", content=KICKOFF))
    return out


class LLMUser(GoalDrivenUser):
    """A simulated customer played by `model` (see the module doc). Implements UserSimulator.
    One instance per conversation (a transcript without user messages starts over)."""

    def __init__(
        self,
        spec: ConversationSpec,
        model: ChatModel,
        *,
        config: GenerateConfig | None = None,
        bot_fallback: str | None = None,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
        world: WorldDefinition | None = None,
        customer: CustomerFacts | None = None,
    ) -> None:
        """`bot_fallback`: the fallback sentence the bot under test declares, if any (the
        profile's `chatbot.fallback` wins over it); `context_tokens`: the model's context, to which
        the prompt is fitted; `world` and `customer`: see GoalDrivenUser (the customer's
        credentials are in its prompt, to give when the assistant asks)."""
        super().__init__(spec, bot_fallback, world=world, customer=customer)
        self.model = model
        self.name = model.name
        self.context_tokens = context_tokens
        self.config = config or profile_generation(spec)
        self.reset()

    def reset(self) -> None:
        rng = random.Random(spec_seed_stream(self.spec.seed))
        self.tracker = GoalTracker(self.spec.goals, self.world)
        self.fallbacks = FallbackCounter()
        self.turns = 0
        self.language_turns: dict[int, str] = {}
        self.notes: list[str] = []
        self.goal_table: list[GoalRow] | None = None
        self._switch = plan_language_switch(self.styles, rng, max(1, len(self.spec.goals)))
        self._observed_user_index = -1
        self._done = False
        gs = self.spec.goal_style
        self._steps: int | None = None
        if gs.kind in ("steps", "random_steps"):
            self._steps = max(1, gs.steps) if gs.steps is not None else rng.randint(1, max(1, gs.max_steps or 1))

    # -- the prompt ------------------------------------------------------------------------------

    def system_prompt(self, now: Sequence[str] = ()) -> str:
        """The simulator's system prompt; `now` adds instructions for this turn only."""
        spec = self.spec
        lines = [
            "You are role-playing a customer who is chatting with a company's customer-service assistant. "
            "You are the customer, never the assistant: the messages you receive are the assistant's.",
        ]
        if spec.role.strip():
            lines.append(f"Your role: {spec.role.strip()}")
        lines.append(f"Write your messages in {spec.language or 'English'}.")
        if spec.context:
            lines.append("About you:")
            lines += [f"- {c.strip()}" for c in spec.context if c.strip()]
        if self.customer.credentials:
            lines.append("What you know about yourself (give it when the assistant asks who you are):")
            lines += [f"- {column.replace('_', ' ')}: {value}" for column, value in self.customer.credentials.items()]
        if spec.goals:
            lines.append("Your goals in this conversation (use these exact values, order ids included):")
            lines += [f"{i}. {g}" for i, g in enumerate(spec.goals, 1)]
        lines.append("How you write:")
        for style in spec.interaction_styles or []:
            lines.append(f"- {style_instruction(style, self._switch)}")
        if not spec.interaction_styles:
            lines.append(f"- {style_instruction(_DEFAULT_STYLE)}")
        lines.append("When to stop:")
        if self._steps is not None:
            lines.append(f"- The conversation lasts at most {self._steps} of your messages.")
        else:
            lines.append(f"- Keep going until every goal has been asked and answered (at most {self.limit} messages).")
        lines += [
            f"- When your goals are met, write a short thank-you or goodbye and end that message with {STOP_MARKER}. "
            f"You may also answer with {STOP_MARKER} alone.",
            "- Do not stop between agreeing to an action and the assistant performing it: after you say "
            '"yes, cancel it", wait until the assistant confirms it is done before you stop.',
        ]
        if spec.fallback:
            lines.append(
                f'- When the assistant answers with its "I don\'t understand" sentence ("{spec.fallback.strip()}"), '
                "say the same thing again in different words."
            )
        lines.append("Write only the customer's next message: no role labels, no quotation marks, no explanations.")
        if now:
            lines.append("Right now:")
            lines += [f"- {n}" for n in now]
        return "\n".join(lines)

    def messages(self, transcript: Sequence[ChatMessage], now: Sequence[str] = ()) -> list[ChatMessage]:
        """What the simulator model is sent: its system prompt, then the role-flipped conversation,
        fitted to the model's context (see the module doc)."""
        whole = self._prompt(self.system_prompt(now), visible_transcript(transcript), None)
        return whole if estimate_messages(whole) <= self._budget() else self._condensed(transcript, now)

    def _budget(self) -> int:
        return prompt_budget(self.context_tokens, max_tokens=self.config.max_tokens)

    @staticmethod
    def _prompt(system: str, visible: Sequence[ChatMessage], fitted: Condensed | None) -> list[ChatMessage]:
        note = fitted.note if fitted is not None else None
        shown = fitted.messages() if fitted is not None else visible
        return [ChatMessage(role="system", content=f"{system}\n\n{note}" if note else system), *flip_roles(shown)]

    def _condensed(self, transcript: Sequence[ChatMessage], now: Sequence[str]) -> list[ChatMessage]:
        system = self.system_prompt(now)
        fitted = condense(
            visible_transcript(transcript), self._budget(), measure=lambda candidate: estimate_messages(self._prompt(system, (), candidate))
        )
        return self._prompt(system, (), fitted)

    async def _fitted_messages(self, transcript: Sequence[ChatMessage], now: Sequence[str]) -> list[ChatMessage]:
        """`messages`, condensing (some milliseconds of CPU) off the event loop."""
        whole = self._prompt(self.system_prompt(now), visible_transcript(transcript), None)
        if estimate_messages(whole) <= self._budget():
            return whole
        return await asyncio.to_thread(self._condensed, transcript, now)

    # -- UserSimulator ---------------------------------------------------------------------------

    def _observe(self, transcript: Sequence[ChatMessage]) -> FallbackAction:
        index = last_user_index(transcript)
        if index < 0 or index == self._observed_user_index:
            return "none"
        self._observed_user_index = index
        view = bot_turn_after(transcript, index)
        if not view.text and not view.tools:
            return "none"
        view.fallback = self.detector.is_fallback(view.text)
        asked = [g.index for g in self.tracker.goals if goal_mentioned(g, transcript[index].content, self.world)]
        # a short reply ("yes", "it's ORD-1004") continues whatever is being discussed
        asked = asked or [i for i in self.tracker.open_goals() if self.tracker.status(i) in ("asked", "confirming")]
        self.tracker.mark_asked(asked)
        self.tracker.observe(asked, view)
        return self.fallbacks.record(view.fallback)

    async def _respond(self, transcript: Sequence[ChatMessage], action: FallbackAction, answered: str) -> UserTurn:
        now: list[str] = []
        notes: list[str] = []
        if action == "rephrase":
            now.append("The assistant did not understand your last message. Say the same thing in different words.")
            notes.append(f"rephrase after fallback {self.fallbacks.in_a_row} in a row")
        elif action == "change_topic":
            now.append(
                "The assistant has not understood you several times in a row. Leave that goal for now and ask about another of your goals."
            )
            notes.append(f"change topic after {self.fallbacks.in_a_row} fallbacks in a row")
        if self._switch and self._switch[0] == self.turns + 1:
            now.append(f"Write this message in {self._switch[1]}.")
            self.language_turns[self.turns + 1] = self._switch[1]
            notes.append(f"language switch: {self._switch[1]}")
        if self.turns + 1 == self.limit:
            now.append(f"This is your last message: close the conversation and end it with {STOP_MARKER}.")
        elif self.spec.goals and self.tracker.all_answered():
            now.append(f"All your goals have been answered: thank the assistant and end with {STOP_MARKER}.")

        messages = await self._fitted_messages(transcript, now)
        usage, latency = Usage(), 0.0
        text, stop = "", False
        for _attempt in range(2):
            started = time.perf_counter()
            reply = await self.model.generate(messages, config=self.config)
            latency += reply.latency_s or (time.perf_counter() - started)
            usage = usage + reply.usage
            text, stop = split_stop_marker(reply.text)
            if text or stop:
                break
        else:
            self._done = True
            return UserTurn.stopped("the user model gave no usable reply twice", stop_reason="user_error", usage=usage, latency_s=latency)

        if stop and text and _agrees_to_pending_action(transcript, text, self.world):
            stop = False
            notes.append("stop deferred: the bot has not yet done what the user just agreed to")
        if stop:
            self._done = True
            notes.append(f"the user ended the conversation ({answered})")
        if text:
            self.turns += 1
        return UserTurn(text=text or None, stop=stop, note="; ".join(notes) or None, usage=usage, latency_s=latency)


_DEFAULT_STYLE = InteractionStyle(name="default")


def spec_seed_stream(seed: int) -> int:
    """The seed of the LLM user's own draws (which turn switches language)."""
    return random.Random(seed).getrandbits(64)


def _agrees_to_pending_action(transcript: Sequence[ChatMessage], text: str, world: WorldDefinition | None) -> bool:
    for m in reversed(transcript):
        if m.role == "user":
            return False
        if m.role == "assistant" and m.content:
            return is_confirmation_question(m.content, world) and bool(_AFFIRMATIVE.match(text))
    return False


# -- any() items ---------------------------------------------------------------------------------

_ITEMS_SYSTEM = "You write lists. Answer with the items only, one per line, with no introduction."
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*\u2022+]|\(?\d{1,3}[.)]|\(\d{1,3}\))\s+")


def parse_items(text: str | None) -> list[str]:
    """Items from a model's list: a JSON list, numbered or bulleted lines, plain lines, or one
    comma-separated line. Introductions ("Here are...:"), quotes and repeats are dropped."""
    raw = _FENCE.sub("", (text or "").strip()).strip()
    if not raw:
        return []
    items: list[str] = []
    start, end = raw.find("["), raw.rfind("]")
    if start >= 0 and end > start:
        try:
            data = json.loads(raw[start : end + 1])
        except ValueError:
            data = None
        if isinstance(data, list):
            items = [str(x).strip() for x in data if not isinstance(x, (list, dict)) and str(x).strip()]
    if not items:
        lines = [line.strip() for line in raw.splitlines() if line.strip()]
        bulleted = [line for line in lines if _BULLET.match(line)]
        chosen = bulleted or [line for line in lines if not line.endswith(":")]
        items = [_BULLET.sub("", line).strip() for line in chosen]
        if len(items) == 1 and "," in items[0]:
            items = [p for p in re.split(r",\s*|\s+and\s+", items[0]) if p.strip()]
    seen: dict[str, None] = {}
    for item in items:
        clean = item.strip().strip("\"'\u201c\u201d`").strip().rstrip(",;")
        if clean.endswith(".") and not re.search(r"\d\.$", clean):
            clean = clean[:-1]
        if clean:
            seen.setdefault(clean, None)
    return list(seen)


def profile_generation(spec: ConversationSpec) -> GenerateConfig:
    """The customer's generation settings from its profile's `llm:` block: Sensei's temperature,
    parley's top_p, max_tokens (DEFAULT_MAX_TOKENS unless given), seed (each conversation's own
    unless given) and stop."""
    llm = spec.llm
    return GenerateConfig(
        temperature=llm.temperature,
        top_p=llm.top_p,
        max_tokens=llm.max_tokens or DEFAULT_MAX_TOKENS,
        seed=llm.seed if llm.seed is not None else spec.seed % (2**31),
        stop=list(llm.stop) or None,
    )


async def generate_any_items(model: ChatModel, instruction: str) -> list[str]:
    """Ask `model` for the list an `any(...)` item describes and parse it (see `parse_items`)."""
    reply = await model.generate(
        [ChatMessage(role="system", content=_ITEMS_SYSTEM), ChatMessage(role="user", content=instruction)],
        config=GenerateConfig(max_tokens=DEFAULT_MAX_TOKENS),
    )
    return parse_items(reply.text)
