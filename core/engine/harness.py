"""The one conversation harness: a World, a bot and a script of customer moves, until someone
stops or a limit hits. A simulated user (`run_conversation`) and a playbook
(`parley.core.engine.playbook_run.run_playbook`) are two scripts on the same loop, so the
set-up, the deadline, who is blamed when something breaks and the record are written once.

Stop rules of the simulated user's script, checked in this order each round:
- the bot has answered `max_turns` times -> max_turns (checked before asking the user again);
- the user stops (a last message marked stop, or no message) -> user_stop, or fallback_loop when
  it gave up on the bot's fallback, or user_error when it had nothing usable to say;
- the bot ends its answer with the end marker (parley.core.records.END_MARKER) -> bot_stop.

Whatever the script, the harness ends a conversation that breaks (see `classify_failure`):
- the whole conversation outlasts `timeout_s`: timeout when the bot was answering (a bot that
  hangs fails), infrastructure_error when the user simulator's model was;
- the bot raised (a connector's HTTP error, a model endpoint that failed after retries, a bug
  in the bot) -> bot_error: the bot under test is that endpoint;
- the user simulator raised -> user_error, or infrastructure_error when its model provider
  failed after retries;
- anything else (setting up, the World) -> infrastructure_error;
- the batch interrupted it (`ConversationInterrupted`) -> cancelled.
It never raises for a failed conversation: the partial transcript, the reason and the error text
are recorded.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from parley.core.bots import Bot, BotContext, BotTurn
from parley.core.errors import ParleyError, ProviderError
from parley.core.models import rate_limit_deadline
from parley.core.records import ChatMessage, Conversation, StopReason, TurnTiming, Usage
from parley.core.users import UserSimulator, UserTurn
from parley.core.world import WorldTools, record_ids

if TYPE_CHECKING:
    from parley.core.world import WorldCopy, WorldServer

log = logging.getLogger("parley.engine.harness")

Role = Literal["bot", "user"]


class Limits(BaseModel):
    """When a conversation is cut short."""

    max_turns: int = Field(default=30, ge=1, description="Bot answers before stopping with max_turns.")
    timeout_s: float = Field(default=90.0, gt=0, description="Wall-clock limit of the whole conversation.")


DEFAULT_LIMITS = Limits()


class ConversationInterrupted(ParleyError):
    """Raised inside a conversation the batch stopped: it is recorded as `cancelled`."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class Session:
    """What a script works with: the transcript so far, the bot's context, the timed turns.

    Every call to the bot or the user goes through `bot_turn` / `user_move`, so the harness
    knows whose call was in progress when something broke.
    """

    def __init__(self, bot: Bot, ctx: BotContext, limits: Limits) -> None:
        self.bot = bot
        self.ctx = ctx
        self.limits = limits
        self.transcript: list[ChatMessage] = []
        self.turns: list[TurnTiming] = []
        self.last_turn: BotTurn | None = None
        """The bot's last answer."""
        self.user_usage = Usage()
        self.metadata: dict[str, Any] = {}
        self.role: Role | None = None
        """Whose call is in progress (None between calls)."""
        self.error: str | None = None
        """Why a script stopped with user_error (it says so; the harness fills it otherwise)."""

    async def bot_turn(self, user_latency: float = 0.0) -> BotTurn:
        """The bot answers the transcript (appending its messages); the turn is timed."""
        self.role = "bot"
        tools = self.ctx.tools
        before = len(tools.records) if tools is not None else 0
        turn = await self.bot.respond(self.transcript, self.ctx)
        self.role = None
        if tools is not None and not turn.tool_calls and len(tools.records) > before:
            # a deployed bot called its served world during the turn: those are the turn's calls
            turn = turn.model_copy(update={"tool_calls": list(tools.records[before:])})
        self.last_turn = turn
        self.turns.append(
            TurnTiming(
                index=len(self.turns) + 1,
                bot_latency_s=turn.latency_s,
                user_latency_s=user_latency,
                rounds=turn.rounds,
                tool_calls=len(turn.tool_calls),
                hit_round_cap=turn.hit_round_cap,
            )
        )
        return turn

    async def user_move(self, user: UserSimulator) -> tuple[UserTurn, float]:
        """The simulator's next move and how long it took."""
        self.role = "user"
        asked = time.perf_counter()
        move = await user.next_message(self.transcript)
        self.role = None
        self.user_usage = self.user_usage + move.usage
        return move, move.latency_s or (time.perf_counter() - asked)


class Script(Protocol):
    """The customer's side of a conversation. `run` drives the session until a stop (returning
    its reason); `finish` is called once after the end, however it came (a playbook records the
    steps it never reached)."""

    user_name: str

    async def run(self, session: Session) -> StopReason: ...

    def finish(self, session: Session, stop: StopReason) -> None: ...


def describe_error(exc: BaseException) -> str:
    """An exception as one line for the record: our own errors speak for themselves."""
    if isinstance(exc, ParleyError):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return f"A call timed out: {exc or 'TimeoutError'}"
    return f"{type(exc).__name__}: {exc}"


def classify_failure(exc: BaseException, role: Role | None, *, expired: bool, limits: Limits) -> tuple[StopReason, str]:
    """(stop reason, error text) of a conversation that raised `exc` while `role` was being
    called (None: neither), `expired` when the conversation's own deadline had passed."""
    if isinstance(exc, ConversationInterrupted):
        return "cancelled", str(exc)
    if expired:
        limit = f"{limits.timeout_s:g} s"
        if role == "user":
            return "infrastructure_error", f"the user simulator had not answered when the conversation's {limit} limit passed"
        return "timeout", f"The conversation took longer than its {limit} limit."
    text = describe_error(exc)
    if role == "bot":
        return "bot_error", text
    if role == "user":
        if isinstance(exc, ProviderError):
            return "infrastructure_error", f"the user simulator's model failed: {text}"
        return "user_error", f"the user simulator failed: {text}"
    return "infrastructure_error", text


async def run_script(
    script: Script,
    *,
    world: WorldCopy | None,
    bot: Bot,
    customer_id: str,
    limits: Limits = DEFAULT_LIMITS,
    bot_starts: bool = False,
    conversation_id: str | None = None,
    today: datetime.date | None = None,
    metadata: dict[str, Any] | None = None,
    watched: Sequence[str] = (),
    server: WorldServer | None = None,
) -> Conversation:
    """Run one conversation to its end and return its record; never raises for its failure.

    The bot's tools act on `world`, the conversation's private copy of its world (None: a bot
    that acts on no world parley runs; the record then has no final state), and with `server`
    that world is also served over HTTP for a deployed bot, at the URL its context carries, until
    the conversation ends. The record keeps what the conversation changed and the final rows of the
    `watched` records. The world copy is not closed here: its owner may still inspect it.
    """
    started_at = _now()
    clock = time.perf_counter()
    stop: StopReason | None = None
    error: str | None = None
    session: Session | None = None
    tools: WorldTools | None = None
    ctx: BotContext | None = None
    world_url: str | None = None
    deadline = asyncio.timeout(limits.timeout_s)
    try:
        with rate_limit_deadline(limits.timeout_s):
            async with deadline:
                tools = WorldTools(world.world, world, customer_id) if world is not None else None
                day = today or (world.today if world is not None else datetime.date.today())
                if server is not None and tools is not None:
                    world_url = server.register(tools)
                ctx = BotContext(customer_id=customer_id, today=day, tools=tools, world_url=world_url)
                session = Session(bot, ctx, limits)
                stop = await script.run(session)
                error = session.error
    except Exception as exc:  # a broken conversation is recorded, never raised
        stop, error = classify_failure(exc, session.role if session else None, expired=deadline.expired(), limits=limits)
    finally:
        if server is not None and world_url is not None:
            server.close_world(world_url)  # calls after the end answer 410
    assert stop is not None
    meta = dict(metadata or {})
    if session is not None:
        try:
            script.finish(session, stop)
        except Exception as exc:  # the record must be written whatever the script's bookkeeping does
            log.exception("a script's finish failed")
            stop, error = "infrastructure_error", f"recording the conversation failed: {describe_error(exc)}"
        meta.update(session.metadata)
    if ctx is not None:
        meta.update(ctx.notes)
    return Conversation(
        id=conversation_id or uuid.uuid4().hex,
        customer_id=customer_id,
        bot_model=bot.name,
        user_simulator=script.user_name,
        bot_starts=bot_starts,
        system_prompt=bot_system_prompt(bot, ctx) if ctx is not None else None,
        messages=session.transcript if session else [],
        tool_calls=list(tools.records) if tools else [],
        usage={"bot": ctx.usage if ctx else Usage(), "user": session.user_usage if session else Usage()},
        turns=session.turns if session else [],
        started_at=started_at,
        ended_at=_now(),
        duration_s=time.perf_counter() - clock,
        stop_reason=stop,
        error=error,
        final_state=world.diff([*watched, *_named(world, session.transcript if session else [])]) if world is not None else None,
        metadata=meta,
    )


def _named(world: WorldCopy, transcript: Sequence[ChatMessage]) -> list[str]:
    """The records a conversation named (in what was said, in tool arguments and results): their
    final rows are kept with its final state, so a claim about one can be held against it later."""
    refs: list[str] = []
    for message in transcript:
        texts = [message.content or "", *(call.arguments for call in message.tool_calls)]
        for text in texts:
            refs += [f"{table}/{key}" for table, key in record_ids(world.world, text)]
    return list(dict.fromkeys(refs))


class SimulatedCustomer:
    """The script of a simulated user: ask it for a move, let the bot answer, until a stop.
    `turn_limit` ends it with max_turns once the bot has answered that many times in all, sooner
    than the conversation's own limit (a playbook's `simulate` step)."""

    def __init__(self, user: UserSimulator, *, bot_starts: bool = False, turn_limit: int | None = None) -> None:
        self.user = user
        self.user_name = user.name
        self.bot_starts = bot_starts
        self.turn_limit = turn_limit

    async def run(self, session: Session) -> StopReason:
        if self.bot_starts:
            turn = await session.bot_turn()
            if turn.ends_conversation:
                return "bot_stop"
        limit = session.limits.max_turns if self.turn_limit is None else min(self.turn_limit, session.limits.max_turns)
        while True:
            if len(session.turns) >= limit:
                return "max_turns"
            move, latency = await session.user_move(self.user)
            if move.stop and move.stop_reason == "user_error":
                session.error = move.note or "the user simulator produced nothing usable"
                return "user_error"
            if move.text or not move.stop:
                # An empty move that does not stop is kept as an empty turn, so it can be seen
                # (and flagged as the simulator's fault) rather than silently ending the talk.
                session.transcript.append(ChatMessage(role="user", content=move.text or ""))
            if move.stop or not move.text:
                return move.stop_reason
            turn = await session.bot_turn(latency)
            if turn.ends_conversation:
                return "bot_stop"

    def finish(self, session: Session, stop: StopReason) -> None:
        return None


async def run_conversation(
    *,
    world: WorldCopy | None,
    bot: Bot,
    user: UserSimulator,
    customer_id: str,
    limits: Limits = DEFAULT_LIMITS,
    bot_starts: bool = False,
    conversation_id: str | None = None,
    today: datetime.date | None = None,
    metadata: dict[str, Any] | None = None,
    watched: Sequence[str] = (),
    server: WorldServer | None = None,
) -> Conversation:
    """A simulated user talks to `bot` (see `run_script` and the module doc); `bot_starts`
    lets the bot open the conversation."""
    return await run_script(
        SimulatedCustomer(user, bot_starts=bot_starts),
        world=world,
        bot=bot,
        customer_id=customer_id,
        limits=limits,
        bot_starts=bot_starts,
        conversation_id=conversation_id,
        today=today,
        metadata=metadata,
        watched=watched,
        server=server,
    )


def bot_system_prompt(bot: Bot, ctx: BotContext) -> str | None:
    """The bot's system prompt for the record, or None when it has none or cannot say."""
    getter = getattr(bot, "system_prompt", None)
    if not callable(getter):
        return None
    try:
        prompt: str | None = getter(ctx)
        return prompt
    except Exception:  # noqa: BLE001 - the record must be written even if a connector cannot say
        log.warning("the bot %s could not give its system prompt", getattr(bot, "name", bot), exc_info=True)
        return None
