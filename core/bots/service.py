"""The built-in bot served over HTTP behind a Rasa-compatible REST webhook (`parley serve-bot`), on a
world (the order world unless `--world` names another).

    POST /webhooks/rest/webhook   {"sender": "id", "message": "text", "metadata": {...}}
        -> [{"recipient_id": "id", "text": "..."}]          (Rasa's REST channel shape)
    GET  /webhooks/rest/          {"status": "ok"}            (Rasa's channel health check)
    GET  /health                  {"status": "ok", "bot": MODEL, "sessions": N}

Each sender is one conversation with its own private copy of the world and its transcript, created
on its first message: `metadata.customer_id` (default: the service's customer, else the world's)
signs the customer in, `metadata.today` (ISO date) pins the world's date, and
`metadata.world_url` (what parley's rasa: connector sends) is where the conversation's world is
served: the bot then calls its tools there, so parley records them as the conversation's. The
message `/session_start` (Rasa's session-start intent) on a new sender lets the bot open the
conversation. When the bot closes the conversation, its message also carries
`"custom": {"end_conversation": true}` (parley's rasa: connector reads it as the bot's stop).

Sessions live in memory, bounded: at most `max_sessions` (the least recently used is dropped
first), none idle for longer than `idle_s`, no conversation longer than `max_session_chars`
(a message past it is refused: start a new sender) and all of them together under
`max_total_chars` (least recently used dropped first). Bodies over `max_body_bytes` get 413,
a message over `max_message_chars` 422, as do metadata that cannot be acted on (an unknown
customer id, a date that is not one or that the world cannot be dated at) and text that
is not valid Unicode (a lone surrogate). A failure of the bot's model answers 502 with the reason.
"""

from __future__ import annotations

import asyncio
import datetime
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from parley.core.bots.api import Bot, BotContext
from parley.core.bots.connectors.rasa import END_KEY, SESSION_START
from parley.core.errors import ParleyError
from parley.core.ingress import DEFAULT_MAX_BODY_BYTES, BodyLimit, StrictJsonRoute
from parley.core.records import ChatMessage
from parley.core.world import ServedWorldTools, WorldCopy, WorldDefinition, WorldTemplate, WorldTools, load_world, world_facts

WEBHOOK_PATH = "/webhooks/rest/webhook"
DEFAULT_MAX_SESSIONS = 1000
DEFAULT_IDLE_S = 1800.0
DEFAULT_MAX_MESSAGE_CHARS = 16_000
DEFAULT_MAX_SESSION_CHARS = 200_000
DEFAULT_MAX_TOTAL_CHARS = 20_000_000


class WebhookMessage(BaseModel):
    """A Rasa REST channel request."""

    sender: str = Field(min_length=1, max_length=200)
    message: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass
class BotSession:
    """One sender's conversation: its World, the bot's context and the transcript."""

    world: WorldCopy
    ctx: BotContext
    transcript: list[ChatMessage] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)

    def size(self) -> int:
        """Characters the transcript holds (messages and tool-call arguments)."""
        return sum(len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls) for m in self.transcript)

    async def close(self) -> None:
        self.world.close()


class BadRequest(ParleyError):
    """A webhook request parley cannot act on (answered 422, saying why)."""


class BotService:
    """The sessions of a served bot (see the module doc)."""

    def __init__(
        self,
        bot: Bot,
        *,
        customer_id: str | None = None,
        today: datetime.date | None = None,
        world: WorldDefinition | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_s: float = DEFAULT_IDLE_S,
        max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS,
        max_session_chars: int = DEFAULT_MAX_SESSION_CHARS,
        max_total_chars: int = DEFAULT_MAX_TOTAL_CHARS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.world = world or load_world()
        self.customer_id = customer_id or self.world.identity.default or ""
        self.today = today
        self._templates: dict[datetime.date, WorldTemplate] = {}
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self.max_message_chars = max_message_chars
        self.max_session_chars = max_session_chars
        self.max_total_chars = max_total_chars
        self.clock = clock
        self.sessions: OrderedDict[str, BotSession] = OrderedDict()
        self._sizes: dict[str, int] = {}

    def _new_session(self, metadata: dict[str, Any] | None) -> BotSession:
        metadata = metadata or {}
        customer = str(metadata.get("customer_id") or self.customer_id).strip()
        customers = world_facts(self.world).table(self.world.identity.customers)
        if customers is not None and customer not in customers.keys:
            raise BadRequest(f"metadata.customer_id {customer!r} is not a customer of world {self.world.name}")
        today = self.today or self.world.today or datetime.date.today()
        if metadata.get("today"):
            try:
                today = datetime.date.fromisoformat(str(metadata["today"]))
            except ValueError:
                raise BadRequest(f"metadata.today {metadata['today']!r} is not an ISO date (YYYY-MM-DD)") from None
            date_problem = self.world.hooks.get("date_problem")
            problem = date_problem(today, {}) if callable(date_problem) else None
            if problem is not None:
                raise BadRequest(f"metadata.today: {problem}")
        template = self._templates.get(today)
        if template is None:
            template = self._templates[today] = WorldTemplate(self.world, today)
        world = template.new_copy()
        served = metadata.get("world_url")
        if isinstance(served, str) and served.startswith(("http://", "https://")):
            # the conversation's world is served by whoever runs it: act on that one, not a copy of ours
            tools: Any = ServedWorldTools(self.world, served, customer)
        else:
            tools = WorldTools(self.world, world, customer)
        ctx = BotContext(customer_id=customer, today=world.today, tools=tools, world_url=served if isinstance(served, str) else None)
        return BotSession(world=world, ctx=ctx, last_used=self.clock())

    async def _drop(self, sender: str) -> None:
        self._sizes.pop(sender, None)
        await self.sessions.pop(sender).close()

    async def _expire(self) -> None:
        now = self.clock()
        for sender in [s for s, session in self.sessions.items() if now - session.last_used > self.idle_s]:
            await self._drop(sender)
        while len(self.sessions) >= self.max_sessions:
            await self._drop(next(iter(self.sessions)))

    async def _within_memory(self, keep: str) -> None:
        """Drop the least recently used sessions (never `keep`) until all fit max_total_chars."""
        while sum(self._sizes.values()) > self.max_total_chars:
            oldest = next((s for s in self.sessions if s != keep), None)
            if oldest is None:
                return
            await self._drop(oldest)

    @property
    def held_chars(self) -> int:
        """Characters all sessions' transcripts hold together."""
        return sum(self._sizes.values())

    async def session(self, sender: str, metadata: dict[str, Any] | None) -> tuple[BotSession, bool]:
        """The sender's session (made when new) and whether it is new."""
        await self._expire()
        session = self.sessions.get(sender)
        if session is not None:
            self.sessions.move_to_end(sender)
            return session, False
        session = self.sessions[sender] = self._new_session(metadata)
        return session, True

    async def reply(self, request: WebhookMessage) -> list[dict[str, Any]]:
        """The bot's answer to one webhook message, in Rasa's REST channel shape."""
        text = (request.message or "").strip()
        if len(text) > self.max_message_chars:
            raise BadRequest(f"`message` has {len(text)} characters; this bot takes up to {self.max_message_chars}")
        session, new = await self.session(request.sender, request.metadata)
        async with session.lock:
            session.last_used = self.clock()
            opening = new and text in ("", SESSION_START)
            if not opening:
                if not text:
                    raise BadRequest("`message` is empty")
                if text == SESSION_START:
                    return []  # a session that already started: nothing to say
                if self._sizes.get(request.sender, 0) + len(text) > self.max_session_chars:
                    raise BadRequest(
                        f"the conversation of sender {request.sender!r} is over {self.max_session_chars} characters; "
                        "start a new one with another sender id"
                    )
                session.transcript.append(ChatMessage(role="user", content=text))
            try:
                turn = await self.bot.respond(session.transcript, session.ctx)
            finally:
                session.last_used = self.clock()
                if request.sender in self.sessions:
                    self._sizes[request.sender] = session.size()
        await self._within_memory(keep=request.sender)
        message: dict[str, Any] = {"recipient_id": request.sender, "text": turn.text}
        if turn.ends_conversation:
            message["custom"] = {END_KEY: True}
        return [message]

    async def close(self) -> None:
        while self.sessions:
            _, session = self.sessions.popitem()
            await session.close()
        self._sizes.clear()


def create_bot_app(service: BotService, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> FastAPI:
    """The FastAPI app serving `service` (see the module doc)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await service.close()
        from parley.core.models import aclose_clients

        await aclose_clients()

    app = FastAPI(title="parley serve-bot", lifespan=lifespan)
    app.router.route_class = StrictJsonRoute  # lone surrogates and NaN are a 422, not a 500
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)

    @app.post(WEBHOOK_PATH)
    async def webhook(request: WebhookMessage) -> Any:
        try:
            return await service.reply(request)
        except BadRequest as exc:
            return JSONResponse({"error": str(exc)}, status_code=422)
        except ParleyError as exc:  # the bot's model failed after its retries
            return JSONResponse({"error": str(exc)}, status_code=502)

    @app.get("/webhooks/rest/")
    async def channel_health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "bot": service.bot.name, "sessions": len(service.sessions)}

    return app


def build_bot_app(
    model: str = "offline",
    *,
    customer_id: str | None = None,
    today: datetime.date | None = None,
    world: str | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_s: float = DEFAULT_IDLE_S,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS,
    max_session_chars: int = DEFAULT_MAX_SESSION_CHARS,
    max_total_chars: int = DEFAULT_MAX_TOTAL_CHARS,
) -> FastAPI:
    """The served built-in bot on `model` (any parley model name) and `world` (a world's name or a
    world file's path; the order world by default); ConfigError for a bad name or a missing API
    key, WorldError for a world that cannot be loaded, before anything is served."""
    from parley.core.bots.bot_names import world_bot_model
    from parley.core.bots.world_bot import WorldBot

    definition = load_world(path=world) if world and world.endswith(".py") else load_world(world)
    chat_model = world_bot_model(model)
    check = getattr(chat_model, "check", None)
    if callable(check):
        check()
    bot = WorldBot(chat_model)
    bot.model_for(definition)  # ConfigError now for an offline bot on a world that has none
    service = BotService(
        bot,
        customer_id=customer_id,
        today=today,
        world=definition,
        max_sessions=max_sessions,
        idle_s=idle_s,
        max_message_chars=max_message_chars,
        max_session_chars=max_session_chars,
        max_total_chars=max_total_chars,
    )
    return create_bot_app(service, max_body_bytes=max_body_bytes)
