"""Running a playbook (parley.core.specs.playbook) on the one conversation harness.

The playbook's steps are a script: each `user` step is one bot turn, a `simulate` step hands the
conversation to the simulated customer for up to N turns (the harness's own loop for a
simulated user: `SimulatedCustomer`, its stop rules included), injected messages go into the
transcript as context, and each expect_* step is checked against the bot's last answer (to a
`user` step or a simulated turn). Assertions never stop a playbook: each is recorded in
`conversation.metadata["assertions"]` (see PlaybookAssertion), and the steps a stop kept from
running are recorded as not checked (`ran: false`). A `judge` step asks no model here: it
records where the conversation was (`metadata["checkpoints"]`, see PlaybookCheckpoint), and its
criteria are decided with the conversation's others, on the transcript cut there
(parley.core.evaluation.checkpoints says why then and not now).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from parley.core.bots import Bot, BotTurn
from parley.core.engine.harness import DEFAULT_LIMITS, Limits, Session, SimulatedCustomer, run_script
from parley.core.engine.spec_worlds import customer_of
from parley.core.errors import ParleyError
from parley.core.records import ChatMessage, Conversation, ConversationSpec, StopReason, ToolCall, ToolCallRecord
from parley.core.specs import (
    PLAYBOOK_USER,
    ExpectBotRegexStep,
    ExpectToolStep,
    InjectBotResponseStep,
    InjectToolStep,
    JudgeStep,
    PlaybookAssertion,
    PlaybookCheckpoint,
    PlaybookStep,
    SimulateStep,
    TooLongToMatch,
    UserStep,
    compile_pattern,
    spec_steps,
)

if TYPE_CHECKING:
    from parley.core.users import UserSimulator
    from parley.core.world import WorldCopy, WorldServer


class PlaybookScript:
    """A playbook's steps as the customer's side of a conversation; `user` is the simulated
    customer its `simulate` steps hand the conversation to."""

    user_name = PLAYBOOK_USER

    def __init__(self, steps: Sequence[PlaybookStep], *, user: UserSimulator | None = None) -> None:
        if user is None and any(isinstance(step, SimulateStep) for step in steps):
            raise ParleyError("the playbook has `simulate` steps, and no simulated customer was given to run them")
        self.user = user
        self.steps = list(steps)
        self.assertions: list[PlaybookAssertion] = []
        self.checkpoints: list[PlaybookCheckpoint] = []
        self.injected: list[int] = []
        self.done = 0  # steps run

    async def run(self, session: Session) -> StopReason:
        transcript = session.transcript
        last_turn: BotTurn | None = None
        last_user_step = 0
        bot_closed = False
        for number, step in enumerate(self.steps, start=1):
            if isinstance(step, UserStep):
                if bot_closed:
                    return "bot_stop"
                if len(session.turns) >= session.limits.max_turns:
                    return "max_turns"
                transcript.append(ChatMessage(role="user", content=step.text))
                last_user_step = number
                last_turn = await session.bot_turn()
                bot_closed = last_turn.ends_conversation
            elif isinstance(step, SimulateStep):
                if bot_closed:
                    return "bot_stop"
                assert self.user is not None
                turns = len(session.turns)
                stop = await SimulatedCustomer(self.user, turn_limit=turns + step.turns).run(session)
                if len(session.turns) > turns:
                    last_user_step = number
                    last_turn = session.last_turn
                if stop == "bot_stop":
                    bot_closed = True
                elif stop == "user_error" or (stop == "max_turns" and len(session.turns) >= session.limits.max_turns):
                    return stop
                # otherwise the customer stopped, or the step's turns are done: the playbook goes on
            elif isinstance(step, InjectBotResponseStep):
                self.injected.append(len(transcript))
                transcript.append(ChatMessage(role="assistant", content=step.text))
            elif isinstance(step, InjectToolStep):
                call = ToolCall(id=f"injected_{number}", name=step.name, arguments=json.dumps(step.arguments))
                self.injected += [len(transcript), len(transcript) + 1]
                transcript.append(ChatMessage(role="assistant", content=None, tool_calls=[call]))
                transcript.append(ChatMessage(role="tool", content=step.result, tool_call_id=call.id, name=call.name))
            elif isinstance(step, ExpectToolStep):
                self.assertions.append(_check_tool(number, step, last_turn, last_user_step))
            elif isinstance(step, JudgeStep):
                self.checkpoints.append(PlaybookCheckpoint(step=number, messages=len(transcript)))
            else:
                self.assertions.append(_check_regex(number, step, last_turn, last_user_step))
            self.done = number
        return "user_stop"

    def finish(self, session: Session, stop: StopReason) -> None:
        assertions = self.assertions + _not_checked(self.steps, self.done, stop)
        session.metadata["assertions"] = [a.model_dump() for a in assertions]
        session.metadata["injected_messages"] = self.injected
        if self.checkpoints:
            session.metadata["checkpoints"] = [c.model_dump() for c in self.checkpoints]


async def run_playbook(
    spec: ConversationSpec,
    *,
    world: WorldCopy | None,
    bot: Bot,
    customer_id: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    conversation_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    user: UserSimulator | None = None,
    server: WorldServer | None = None,
) -> Conversation:
    """Run a playbook's steps against `bot` and return the conversation; never raises for a
    failed run (the harness records it, see parley.core.engine.harness).

    `stop_reason` is user_stop when every step ran; bot_stop when the bot closed the
    conversation with `user` steps still to come; max_turns when more `user` steps than
    `limits.max_turns`; otherwise the harness's (timeout, bot_error...). `customer_id` defaults
    to the playbook's; `user` is the simulated customer of its `simulate` steps.
    """
    today = None if world is not None else (spec.world.today or datetime.date.today())
    return await run_script(
        PlaybookScript(spec_steps(spec), user=user),
        world=world,
        bot=bot,
        customer_id=customer_id or (customer_of(spec, world.world) if world is not None else spec.world.customer_id or ""),
        limits=limits,
        today=today,
        conversation_id=conversation_id,
        metadata=metadata,
        watched=spec.expect.watched if spec.expect is not None else (),
        server=server,
    )


def _check_tool(number: int, step: ExpectToolStep, turn: BotTurn | None, user_step: int) -> PlaybookAssertion:
    def outcome(passed: bool, reason: str) -> PlaybookAssertion:
        return PlaybookAssertion(step=number, kind="expect_tool", expected=step.expected, passed=passed, reason=reason)

    calls = turn.tool_calls if turn is not None else []
    named = [c for c in calls if c.name == step.name]
    if not named:
        made = ", ".join(_describe_call(c) for c in calls) or "no tool"
        return outcome(False, f"the bot did not call {step.name} answering step {user_step}; it called {made}")
    if not step.arguments:
        return outcome(True, f"the bot called {_describe_call(named[0])} answering step {user_step}")
    for call in named:
        if _arguments_match(step.arguments, call.arguments or {}):
            return outcome(True, f"the bot called {_describe_call(call)} answering step {user_step}")
    made = ", ".join(_describe_call(c) for c in named)
    return outcome(False, f"the bot called {step.name} answering step {user_step}, but not with {step.expected}: {made}")


def _check_regex(number: int, step: ExpectBotRegexStep, turn: BotTurn | None, user_step: int) -> PlaybookAssertion:
    def outcome(passed: bool, reason: str) -> PlaybookAssertion:
        return PlaybookAssertion(step=number, kind="expect_bot_regex", expected=step.pattern, passed=passed, reason=reason)

    reply = turn.text if turn is not None else ""
    if not reply:
        return outcome(False, f"the bot said nothing answering step {user_step}")
    try:
        match = compile_pattern(step.pattern).search(reply)
    except TooLongToMatch as exc:  # not decided: not run, never held
        reason = f"not checked: the bot's answer to step {user_step} could not be matched: {exc}"
        return PlaybookAssertion(step=number, kind="expect_bot_regex", expected=step.pattern, passed=False, ran=False, reason=reason)
    if match is None:
        return outcome(False, f"the bot's answer to step {user_step} does not match: {_clip(reply)!r}")
    return outcome(True, f"the bot's answer to step {user_step} matches at {_clip(match.text, 80)!r}")


def _not_checked(steps: Sequence[Any], done: int, stop: str) -> list[PlaybookAssertion]:
    out = []
    for number, step in enumerate(steps, start=1):
        if number <= done or not isinstance(step, (ExpectToolStep, ExpectBotRegexStep)):
            continue
        expected = step.expected if isinstance(step, ExpectToolStep) else step.pattern
        out.append(
            PlaybookAssertion(
                step=number,
                kind=step.kind,
                expected=expected,
                passed=False,
                ran=False,
                reason=f"not checked: the conversation stopped ({stop}) before step {number}",
            )
        )
    return out


def _arguments_match(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    for key, want in expected.items():
        if key not in actual:
            return False
        got = actual[key]
        if isinstance(want, str) and isinstance(got, str):
            if want.strip().casefold() != got.strip().casefold():
                return False
        elif want != got:
            return False
    return True


def _describe_call(call: ToolCallRecord) -> str:
    args = call.arguments or {}
    inner = ", ".join(f"{k}={v}" for k, v in args.items()) if args else ""
    return f"{call.name}({inner})"


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
