"""One planned conversation of a batch, start to verdict: world, bot, user, run, evaluation.

`run_planned` never raises for the conversation's own failure (the runner and the playbook
runner record timeouts and provider errors in the record). It also handles being stopped:
the batch runner interrupts a conversation by setting `ConversationControl.interrupted` and
cancelling its task; the bot and user wrappers turn that cancellation into an ordinary
ParleyError inside the conversation, so the runner records the transcript so far, and the
record is then marked `cancelled` (an infrastructure stop: `--resume` runs it again).

With `on_step`, the conversation is streamed as it happens: each customer line, the bot's text
as it comes, each tool call with its result (`parley run --single`).

A bot that does not use parley's World (a connector to a deployed chatbot, a prompt bot: see
parley.core.bots.bot_names) runs without one, and what parley cannot observe of it is evaluated as
`not_applicable` (parley.core.evaluation.unobservable).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_jsonable_python

from parley.core.bots import (
    Bot,
    BotContext,
    BotEvent,
    BotTurn,
    PromptBot,
    TextDelta,
    ToolCallFinished,
    TurnCompleted,
    prompt_variables,
    uses_world,
)
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_plan import PlannedRun
from parley.core.engine.harness import ConversationInterrupted, Limits, describe_error, run_conversation
from parley.core.engine.playbook_run import run_playbook
from parley.core.engine.spec_worlds import WorldTemplates, customer_of, today_of
from parley.core.errors import ParleyError
from parley.core.evaluation import broken_verdict, evaluate_observed
from parley.core.records import BROKEN_STOPS, ChatMessage, Conversation, ConversationSpec, StopReason, TranscriptStep, Verdict
from parley.core.specs import PLAYBOOK_USER, simulates, spec_steps
from parley.core.users import (
    GOALS_ONLY_STATED,
    GoalReporter,
    ReplayUser,
    StatesGoals,
    UserSimulator,
    UserTurn,
    finish_replay,
    read_customer_facts,
)
from parley.core.world import world_of

log = logging.getLogger("parley.engine.batch_conversation")

CANCELLED_TEXT = "the batch was stopped while this conversation was running"

StepCallback = Callable[[TranscriptStep, dict[str, Any]], None]
"""`on_step(step, data)`: step is user, bot_text, tool_call or bot_done."""


@dataclass
class ConversationControl:
    """What the batch runner knows and can do about one conversation in flight."""

    run: PlannedRun
    conversation_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    phase: str = "waiting"
    """waiting, running, judging, saving, done: only running and judging may be interrupted."""
    interrupted: bool = False
    task: asyncio.Task[Any] | None = None
    shown: int = 0
    """Streaming: how many transcript messages have been shown."""

    @property
    def interruptible(self) -> bool:
        return self.phase in ("running", "judging")

    def interrupt(self) -> bool:
        """Stop the conversation now (it is saved as cancelled); False if it is past that."""
        if not self.interruptible or self.task is None or self.task.done():
            return False
        self.interrupted = True
        self.task.cancel()
        return True

    def absorb(self) -> None:
        """In an `except CancelledError`: re-raise unless it is our interrupt, which is taken
        off the task so the conversation can still be evaluated and saved."""
        if not self.interrupted:
            raise  # noqa: PLE0704 - re-raise the CancelledError being handled
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()

    def convert(self) -> None:
        """In an `except CancelledError`: re-raise unless it is our interrupt, which becomes a
        ConversationInterrupted error the runners record."""
        self.absorb()
        raise ConversationInterrupted(CANCELLED_TEXT)


class BatchBot:
    """The batch's bot as one conversation sees it: interruptible, and streamed on request."""

    def __init__(
        self,
        inner: Bot,
        control: ConversationControl,
        on_step: StepCallback | None,
        variables: dict[str, str] | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.control = control
        self.on_step = on_step
        self.variables = variables or {}
        self.uses_world = uses_world(inner)

    def _bind(self, ctx: BotContext) -> None:
        """Give the context this conversation's variables (a prompt bot's template reads them)."""
        if not ctx.variables and self.variables:
            ctx.variables.update(self.variables)

    def system_prompt(self, ctx: BotContext) -> str | None:
        self._bind(ctx)
        getter = getattr(self.inner, "system_prompt", None)
        return getter(ctx) if callable(getter) else None

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        self._bind(ctx)
        try:
            if self.on_step is None:
                return await self.inner.respond(transcript, ctx)
            self._show_new(transcript)
            if callable(getattr(self.inner, "respond_stream", None)):
                turn = await self._streamed(transcript, ctx)
            else:
                turn = await self.inner.respond(transcript, ctx)
                self._replay(turn)
            self.control.shown = len(transcript)
            return turn
        except asyncio.CancelledError:
            self.control.convert()
            raise

    def _show_new(self, transcript: list[ChatMessage]) -> None:
        """Lines the bot is about to answer that nobody has shown yet: a playbook's customer
        lines and injected bot messages."""
        assert self.on_step is not None
        for message in transcript[self.control.shown :]:
            if message.role == "user" and message.content:
                self.on_step("user", {"text": message.content})
            elif message.role == "assistant" and message.content:
                self.on_step("bot_text", {"text": message.content, "injected": True})
                self.on_step("bot_done", {"text": message.content, "injected": True})
        self.control.shown = len(transcript)

    async def _streamed(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        assert self.on_step is not None
        turn: BotTurn | None = None
        events: AsyncIterator[BotEvent] = self.inner.respond_stream(transcript, ctx)
        async for event in events:
            if isinstance(event, TextDelta):
                self.on_step("bot_text", {"text": event.text})
            elif isinstance(event, ToolCallFinished):
                self.on_step("tool_call", {"tool": event.record})
            elif isinstance(event, TurnCompleted):
                turn = event.turn
        if turn is None:
            raise ParleyError(f"the bot {self.name} ended its turn without an answer")
        self.on_step("bot_done", {"text": turn.text, "ends": turn.ends_conversation})
        return turn

    def _replay(self, turn: BotTurn) -> None:
        assert self.on_step is not None
        for record in turn.tool_calls:
            self.on_step("tool_call", {"tool": record})
        self.on_step("bot_text", {"text": turn.text})
        self.on_step("bot_done", {"text": turn.text, "ends": turn.ends_conversation})

    def respond_stream(self, transcript: list[ChatMessage], ctx: BotContext) -> AsyncIterator[BotEvent]:
        self._bind(ctx)
        return self.inner.respond_stream(transcript, ctx)


class BatchUser:
    """The conversation's simulated customer: interruptible, and streamed on request."""

    def __init__(self, inner: UserSimulator, control: ConversationControl, on_step: StepCallback | None) -> None:
        self.inner = inner
        self.name = inner.name
        self.control = control
        self.on_step = on_step

    async def next_message(self, transcript: Sequence[ChatMessage]) -> UserTurn:
        try:
            move = await self.inner.next_message(transcript)
        except asyncio.CancelledError:
            self.control.convert()
            raise
        if self.on_step is not None and move.text:
            self.on_step("user", {"text": move.text, "stop": move.stop, "note": move.note})
            self.control.shown = len(transcript) + 1  # the runner appends it next
        return move


def _cancelled(conversation: Conversation) -> Conversation:
    return conversation.model_copy(update={"stop_reason": "cancelled", "error": CANCELLED_TEXT})


def _metadata(run: PlannedRun) -> dict[str, Any]:
    return {"spec_id": run.spec.spec_id, "trial": run.trial, "seed": run.spec.seed}


STAGE_TEXT = {
    "plan": "preparing the conversation failed",
    "world": "building its World failed",
    "run": "running the conversation failed",
    "evaluation": "evaluating the conversation failed",
    "store": "storing the conversation failed",
}
"""What each stage of a planned conversation is called in the error text of a conversation
that broke there (and was stored anyway)."""


def empty_conversation(
    control: ConversationControl, *, stop_reason: StopReason, error: str, bot_name: str = "-", user_name: str = "-"
) -> Conversation:
    """The record of a planned conversation that never got to talk (it broke while being
    prepared, or was cancelled before it started): stored so that nothing vanishes."""
    now = datetime.datetime.now(datetime.UTC)
    run = control.run
    return Conversation(
        id=control.conversation_id,
        customer_id=run.spec.world.customer_id or "",
        bot_model=bot_name,
        user_simulator=user_name,
        started_at=now,
        ended_at=now,
        duration_s=0.0,
        stop_reason=stop_reason,
        error=error,
        metadata=_metadata(run),
    )


def broke_at(conversation: Conversation, stage: str, exc: BaseException) -> Conversation:
    """`conversation` as an infrastructure_error that broke at `stage` (what it ran until then
    is kept; the stop it had is kept in metadata["stopped_as"])."""
    metadata = {**conversation.metadata, "stopped_as": conversation.stop_reason, "broke_at": stage}
    error = f"{STAGE_TEXT.get(stage, stage)}: {describe_error(exc)}"
    return conversation.model_copy(update={"stop_reason": "infrastructure_error", "error": error, "metadata": metadata})


async def run_planned(
    control: ConversationControl,
    *,
    models: BatchModels,
    worlds: WorldTemplates,
    limits: Limits,
    today: datetime.date,
    on_step: StepCallback | None = None,
) -> tuple[Conversation, Verdict]:
    """Run and evaluate one planned conversation (see the module doc). Whatever breaks while it
    is prepared (plan, world), run or evaluated ends as a conversation with a stop reason and
    the error text, never as an exception: every planned conversation is stored."""
    run = control.run
    spec = run.spec
    control.phase = "running"
    stage = "plan"
    bot: BatchBot | None = None
    inner_user: UserSimulator | None = None
    world = None
    server = None
    try:
        definition = world_of(spec)
        spec_today = today_of(spec, definition, today)
        customer = customer_of(spec, definition)
        bot = BatchBot(models.bot(), control, on_step, variables=prompt_variables(spec, spec_today))
        stage = "world"
        served = not bot.uses_world and bool(getattr(bot.inner, "serves_world", False))
        world = worlds.new_copy(spec, today) if bot.uses_world or served else None
        server = await worlds.server() if served else None
        if spec.kind != "playbook" or simulates(spec_steps(spec)):  # a playbook's `simulate` steps need a customer too
            stage = "plan"
            if world is not None:
                facts = read_customer_facts(definition, world.db, customer)
            else:
                with worlds.new_copy(spec, today) as aside:  # the customer knows itself whatever the bot acts on
                    facts = read_customer_facts(definition, aside.db, customer)
            inner_user = ReplayUser(run.replay) if run.replay is not None else models.user(spec, world=definition, customer=facts)
        stage = "run"
        if spec.kind == "playbook":
            conversation = await run_playbook(
                spec,
                world=world,
                bot=bot,
                customer_id=customer,
                limits=limits,
                conversation_id=control.conversation_id,
                metadata=_metadata(run),
                user=BatchUser(inner_user, control, on_step) if inner_user is not None else None,
                server=server,
            )
        else:
            assert inner_user is not None
            conversation = await run_conversation(
                world=world,
                today=spec_today,
                bot=bot,
                user=BatchUser(inner_user, control, on_step),
                customer_id=customer,
                limits=limits,
                bot_starts=spec.is_starter,
                conversation_id=control.conversation_id,
                metadata=_metadata(run),
                watched=spec.expect.watched if spec.expect is not None else (),
                server=server,
            )
    except asyncio.CancelledError:
        # Interrupted outside a bot or user call: nothing to keep.
        control.absorb()
        conversation = empty_conversation(
            control, stop_reason="cancelled", error=CANCELLED_TEXT, bot_name=_name(bot), user_name=_user_name(spec, inner_user)
        )
    except Exception as exc:  # plan or world: the conversation is stored with why it could not run
        log.warning("%s trial %s: %s", spec.spec_id, run.trial, STAGE_TEXT[stage], exc_info=True)
        conversation = empty_conversation(
            control,
            stop_reason="infrastructure_error",
            error=f"{STAGE_TEXT[stage]}: {describe_error(exc)}",
            bot_name=_name(bot) if bot is not None else models.names.bot,
            user_name=_user_name(spec, inner_user),
        )
        conversation.metadata["broke_at"] = stage
    finally:
        if world is not None:
            world.close()

    if control.interrupted and conversation.stop_reason in BROKEN_STOPS:
        conversation = _cancelled(conversation)
    if run.replay is not None and conversation.stop_reason != "cancelled":
        conversation = finish_replay(conversation, run.replay, getattr(inner_user, "stop_note", None))
    if isinstance(inner_user, StatesGoals) and (stated := inner_user.goals_only_stated()):
        conversation.metadata[GOALS_ONLY_STATED] = stated  # information shown with the verdict, not a fault
    if inner_user is not None and spec.goal_style.export and isinstance(inner_user, GoalReporter):
        try:
            rows = inner_user.goal_report(conversation.messages)
            conversation.metadata["goal_table"] = to_jsonable_python(rows)
        except Exception as exc:  # a report's bug must not lose the conversation
            log.warning("%s: the goal report failed", spec.spec_id, exc_info=True)
            conversation.metadata["goal_table_error"] = f"{type(exc).__name__}: {exc}"

    control.phase = "judging"
    try:
        verdict = await _evaluate(conversation, spec, bot, models)
    except asyncio.CancelledError:
        control.absorb()
        conversation = _cancelled(conversation)
        verdict = broken_verdict(conversation)  # a broken run: no judge is asked
    except Exception as exc:  # checks or extraction broke: stored as parley's failure, with the text
        log.warning("%s trial %s: evaluation failed", spec.spec_id, run.trial, exc_info=True)
        conversation = broke_at(conversation, "evaluation", exc)
        verdict = broken_verdict(conversation)
    control.phase = "saving"
    return conversation, verdict


async def _evaluate(conversation: Conversation, spec: ConversationSpec, bot: BatchBot | None, models: BatchModels) -> Verdict:
    return await evaluate_observed(
        conversation,
        spec,
        judge=models.judge(),
        # a deployed bot that called its served world acted on it: the world decides its checks
        uses_world=bot is None or bot.uses_world or bool(conversation.tool_calls),
        receives_context=bot is None or bot.uses_world,
        has_tools=bot is None or not isinstance(bot.inner, PromptBot),
        bot_name=_name(bot),
        limits=models.check_limits,
    )


def _name(bot: BatchBot | None) -> str:
    return bot.name if bot is not None else "-"


def _user_name(spec: ConversationSpec, user: UserSimulator | None) -> str:
    if spec.kind == "playbook":
        return PLAYBOOK_USER
    return user.name if user is not None else "-"
