"""The live chat without a face: one customer, one bot, a private copy of a world, history and metrics.

The TUI types into `send` (or `send_stream` for text deltas) and renders what comes back: a
`BotTurn` for a message, a `CommandResult` for a slash command. Nothing here blocks the event
loop: the World is in memory, and the export is written in a thread.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import pathlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import httpx

from parley.core.bots import Bot, BotContext, BotEvent, BotTurn, TextDelta, TurnCompleted, WorldBot
from parley.core.chat.commands import (
    CommandResult,
    CommandSpec,
    commands_for,
    help_result,
    is_command,
    metrics_table,
    missing_argument,
    parse_command,
    records_table,
    unknown_command,
)
from parley.core.errors import ParleyError
from parley.core.models import ChatModel
from parley.core.records import ChatExport, ChatMessage, SessionMetrics, did_you_mean
from parley.core.redaction import REDACTOR
from parley.core.world import ChatCommand, Refused, WorldDefinition, WorldTemplate, WorldTools, load_world

if TYPE_CHECKING:
    from parley.core.world import WorldCopy

DEFAULT_EXPORT_DIR = pathlib.Path("sessions")


def _resolve_bot(model: ChatModel | str | None, bot: Bot | None) -> Bot:
    if bot is not None:
        return bot
    if model is None or model == "offline":
        return WorldBot(None)  # the world's own offline model
    if isinstance(model, str):
        # A model name, or a deployed bot (`rasa:URL`, `taskyto:URL`, `http:FILE.yaml`).
        from parley.core.bots import bot_from_name

        return bot_from_name(model)
    return WorldBot(model)


class ChatSession:
    """A live chat bound to a customer and a bot (default: the world's offline bot) on a world
    (default: the order world; `world` a name, or a loaded world)."""

    def __init__(
        self,
        *,
        customer_id: str | None = None,
        model: ChatModel | str | None = None,
        bot: Bot | None = None,
        export_dir: str | pathlib.Path = DEFAULT_EXPORT_DIR,
        today: datetime.date | None = None,
        template: WorldTemplate | None = None,
        world: WorldDefinition | str | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        self.bot: Bot = _resolve_bot(model, bot)
        self.export_dir = pathlib.Path(export_dir)
        definition = template.world if template is not None else world if isinstance(world, WorldDefinition) else load_world(world)
        self.definition: WorldDefinition = definition
        self._template = template or WorldTemplate(definition, today or definition.today or datetime.date.today())
        self.customer_id = customer_id or definition.identity.default or ""
        self.started_at = datetime.datetime.now(datetime.UTC)
        self.closed = False
        self._world_commands: dict[str, ChatCommand] = {c.name: c for c in definition.chat_commands}
        self.commands: dict[str, CommandSpec] = commands_for(
            CommandSpec(name=c.name, usage=c.usage, summary=c.summary, argument=c.argument, example=c.example)
            for c in definition.chat_commands
        )
        self._fresh_world()
        known = self._customers()
        if known and "customer" in self.commands:  # the example names one of the world's customers
            other = next((c for c in known if c != self.customer_id), known[0])
            self.commands["customer"] = self.commands["customer"].model_copy(update={"example": f"/customer {other}"})

    # ---- state -----------------------------------------------------------------------------

    def _fresh_world(self) -> None:
        self.world: WorldCopy = self._template.new_copy()
        self.tools = WorldTools(self.definition, self.world, self.customer_id)
        self.ctx = BotContext(customer_id=self.customer_id, today=self.world.today, tools=self.tools)
        self.transcript: list[ChatMessage] = []
        self.turns: list[BotTurn] = []

    async def _drop_world(self) -> None:
        self.world.close()

    @property
    def today(self) -> datetime.date:
        return self.world.today

    @property
    def bot_model(self) -> str:
        return self.bot.name

    def metrics(self) -> SessionMetrics:
        by_name: dict[str, int] = {}
        for record in self.tools.records:
            by_name[record.name] = by_name.get(record.name, 0) + 1
        latencies = [t.latency_s for t in self.turns]
        return SessionMetrics(
            customer_id=self.customer_id,
            bot_model=self.bot_model,
            turns=len(self.turns),
            usage=self.ctx.usage,
            tool_calls=len(self.tools.records),
            tool_calls_by_name=by_name,
            tool_errors=sum(1 for r in self.tools.records if not r.ok and not r.refused),
            refused=sum(1 for r in self.tools.records if r.refused),
            bot_latency_last_s=latencies[-1] if latencies else 0.0,
            bot_latency_mean_s=sum(latencies) / len(latencies) if latencies else 0.0,
            bot_latency_total_s=sum(latencies),
        )

    # ---- before the first message --------------------------------------------------------

    async def check_ready(self) -> None:
        """ParleyError, saying what to do, when this chat could not answer its first message:
        a customer the world does not know, or a bot whose API key or base URL is not set. Sends
        nothing to any model."""
        known = self._customers()
        if known and self.customer_id not in known:
            raise ParleyError(
                f"There is no customer {self.customer_id} in world {self.definition.name}. The customers are: {', '.join(known)}"
                f" (e.g. parley chat --customer {known[0]})."
            )
        for part in (self.bot, getattr(self.bot, "model", None)):
            check = getattr(part, "check", None)
            if callable(check):
                try:
                    check()
                except ParleyError as exc:
                    raise ParleyError(f"{exc}; or start the chat with --bot offline") from None

    def prepare(self, loop: asyncio.AbstractEventLoop) -> None:
        """Set up the bot's HTTP client for `loop` now (from a worker thread), so the first
        message does not pay for the SDK's import and SSL context on that loop."""
        prepare = getattr(getattr(self.bot, "model", None), "prepare", None)
        if callable(prepare):
            prepare(loop)

    # ---- talking ---------------------------------------------------------------------------

    async def send(self, text: str) -> BotTurn | CommandResult:
        """A message -> the bot's turn; a slash command -> its result. A failing model gives an
        "error" result rather than an exception."""
        result: BotTurn | CommandResult | None = None
        async for event in self.send_stream(text):
            if isinstance(event, CommandResult):
                result = event
            elif isinstance(event, TurnCompleted):
                result = event.turn
        assert result is not None
        return result

    async def send_stream(self, text: str) -> AsyncIterator[BotEvent | CommandResult]:
        """As `send`, as events: for a message, text deltas and tool calls as they happen and
        finally `TurnCompleted`; for a command (or a failure), one `CommandResult`. What comes
        out is redacted (parley.core.redaction): a bot or an error that echoes a key the chat
        resolved shows `[redacted]`; a text delta that may end inside one waits for the next."""
        shown = REDACTOR.stream()
        async for event in self._events(text):
            if isinstance(event, TextDelta):
                piece = shown.feed(event.text)
                if piece:
                    yield TextDelta(text=piece)
                continue
            rest = shown.end()
            if rest:
                yield TextDelta(text=rest)
            yield REDACTOR.redact_record(event)
        rest = shown.end()
        if rest:
            yield TextDelta(text=rest)

    async def _events(self, text: str) -> AsyncIterator[BotEvent | CommandResult]:
        if self.closed:
            yield CommandResult(kind="error", text="This chat session is closed.")
            return
        if is_command(text):
            yield await self.run_command(text)
            return
        if not text.strip():
            yield CommandResult(kind="error", text="Type a message for the bot, or /help for the commands.")
            return
        self.transcript.append(ChatMessage(role="user", content=text))
        try:
            async for event in self.bot.respond_stream(self.transcript, self.ctx):
                if isinstance(event, TurnCompleted):
                    self.turns.append(event.turn)
                yield event
        except (ParleyError, httpx.HTTPError) as exc:
            yield CommandResult(kind="error", text=f"The bot failed: {exc}")

    # ---- commands --------------------------------------------------------------------------

    async def run_command(self, text: str) -> CommandResult:
        """Run one slash command line such as "/record customers/C-100"."""
        name, arg = parse_command(text)
        if name not in self.commands:
            return unknown_command(name, self.commands)
        if self.commands[name].argument and not arg:
            return missing_argument(name, self.commands)
        try:
            if name in self._world_commands:
                return self._world_command(self._world_commands[name], arg or None)
            handler: Callable[[str | None], Awaitable[CommandResult]] = getattr(self, f"_cmd_{name}")
            return await handler(arg)
        except Refused as exc:
            return CommandResult(kind="error", command=f"/{name}", text=exc.message)
        except (ParleyError, httpx.HTTPError, OSError) as exc:
            return CommandResult(kind="error", command=f"/{name}", text=f"/{name} failed: {exc}")

    def _world_command(self, command: ChatCommand, arg: str | None) -> CommandResult:
        view = command.show(self.world.db, self.today, self.customer_id, arg)
        return CommandResult(
            kind=view.kind,
            command=f"/{command.name}",
            title=view.title,
            columns=list(view.columns),
            rows=[list(row) for row in view.rows],
            text=view.text,
            data=view.data,
        )

    def _customers(self) -> list[str]:
        table = self.definition.customers_table
        return [str(row[table.key]) for row in self.world.db.select(table.name)] if table is not None else []

    async def _cmd_tables(self, arg: str) -> CommandResult:
        rows = [[t.name, str(self.world.db.count(t.name)), t.description or ""] for t in self.definition.tables]
        return CommandResult(
            kind="table",
            command="/tables",
            title=f"World {self.definition.name} (today {self.today.isoformat()})",
            columns=["Table", "Records", "What it holds"],
            rows=rows,
        )

    async def _cmd_table(self, arg: str) -> CommandResult:
        table = self.definition.table(arg.strip())
        if table is None:
            names = self.definition.table_names
            return CommandResult(
                kind="error",
                command="/table",
                text=f"There is no table {arg.strip()!r}{did_you_mean(arg.strip(), names)}; the tables are: {', '.join(names)}.",
            )
        return records_table("/table", f"{table.name} (today {self.today.isoformat()})", self.world.db.select(table.name))

    async def _cmd_record(self, arg: str) -> CommandResult:
        name, _, key = arg.replace(" ", "/", 1).partition("/")
        table = self.definition.table(name.strip())
        if table is None or not key.strip():
            return CommandResult(
                kind="error",
                command="/record",
                text=f"{arg!r} is not a record: write TABLE/KEY, e.g. /record {self.definition.table_names[0]}/KEY.",
            )
        row = self.world.db.get(table.name, key.strip())
        if row is None:
            return CommandResult(kind="error", command="/record", text=f"There is no record {key.strip()} in table {table.name}.")
        return CommandResult(
            kind="json", command="/record", title=f"{table.name}/{key.strip()}", text=f"{table.name}/{key.strip()}", data=row
        )

    async def _cmd_customer(self, arg: str) -> CommandResult:
        normalize = self.definition.hooks.get("customer_id")
        customer = normalize(arg) if callable(normalize) else arg.strip()
        known = self._customers()
        if not customer or (known and customer not in known):
            shown = customer or arg.strip()
            return CommandResult(
                kind="error",
                command="/customer",
                text=f"There is no customer {shown}. The customers are: {', '.join(known)} (e.g. /customer {known[0] if known else 'ID'}).",
            )
        previous = self.customer_id
        self.customer_id = customer
        # The new customer starts a new conversation (its own turns, tool calls and tokens);
        # the world's data stays as it is.
        self.tools = WorldTools(self.definition, self.world, customer)
        self.ctx = BotContext(customer_id=customer, today=self.world.today, tools=self.tools)
        self.transcript = []
        self.turns = []
        return CommandResult(
            kind="text",
            command="/customer",
            text=f"Now chatting as {customer} (was {previous}). The conversation was cleared; changes to the data are kept.",
            data={"customer_id": customer, "previous": previous},
        )

    async def _cmd_metrics(self, arg: str) -> CommandResult:
        return metrics_table(self.metrics().model_dump(mode="json"))

    async def _cmd_reset(self, arg: str) -> CommandResult:
        await self._drop_world()
        self._fresh_world()
        return CommandResult(
            kind="text", command="/reset", text="Conversation cleared and the world's data restored to its starting state."
        )

    async def _cmd_export(self, arg: str) -> CommandResult:
        path = await self.export()
        return CommandResult(kind="text", command="/export", text=f"Conversation exported to {path}", path=str(path))

    async def _cmd_playbook(self, arg: str) -> CommandResult:
        if not self.transcript:
            return CommandResult(
                kind="error",
                command="/playbook",
                text="Nothing was said yet: a playbook is made of the customer's lines and the bot's answers.",
            )
        path = await self.write_playbook()
        return CommandResult(
            kind="text",
            command="/playbook",
            text=f"Playbook written to {path}: edit its expectations, then `parley run` it.",
            path=str(path),
        )

    async def _cmd_help(self, arg: str) -> CommandResult:
        return help_result(self.commands)

    async def _cmd_exit(self, arg: str) -> CommandResult:
        if not self.transcript:  # a chat is saved once something is said in it: an empty one never was
            return CommandResult(kind="exit", command="/exit", text="Chat ended; nothing was said, so nothing was saved.")
        return CommandResult(kind="exit", command="/exit", text="Chat ended; it stays saved.")

    async def _cmd_quit(self, arg: str) -> CommandResult:
        return CommandResult(kind="exit", command="/quit", text="Goodbye.")

    # ---- export and closing ------------------------------------------------------------------

    def snapshot(self) -> ChatExport:
        """The session as the JSON /export writes."""
        return ChatExport(
            session_id=self.id,
            exported_at=datetime.datetime.now(datetime.UTC),
            customer_id=self.customer_id,
            bot_model=self.bot_model,
            today=self.today,
            world=self.definition.name,
            system_prompt=self.bot.system_prompt(self.ctx) if hasattr(self.bot, "system_prompt") else None,
            messages=list(self.transcript),
            tool_calls=list(self.tools.records),
            metrics=self.metrics(),
            world_state=self.world.diff(),
        )

    async def export(self) -> pathlib.Path:
        """Write the session to `<export_dir>/chat-<timestamp>.json`; returns the path."""
        record = self.snapshot()
        text = REDACTOR.redact(json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False))
        stamp = record.exported_at.strftime("%Y%m%d-%H%M%S")
        return await asyncio.to_thread(write_new_json, self.export_dir, f"chat-{stamp}", text)

    async def write_playbook(self) -> pathlib.Path:
        """Write the chat so far as a playbook (parley.core.reports.chat_playbook) to
        `<export_dir>/playbooks/chat_<id>.yaml` (`-2`... beside an earlier one); returns the path."""
        record = self.snapshot()

        def write() -> pathlib.Path:
            from parley.core.reports import chat_playbook

            name, text = chat_playbook(record, record.exported_at)
            return write_new_json(self.export_dir / "playbooks", name, REDACTOR.redact(text), suffix=".yaml")

        return await asyncio.to_thread(write)

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            await self._drop_world()
            close = getattr(self.bot, "aclose", None)
            if callable(close):
                await close()  # a connector's HTTP client

    async def __aenter__(self) -> ChatSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def write_new_json(directory: pathlib.Path, stem: str, text: str, *, suffix: str = ".json") -> pathlib.Path:
    """Write to stem.json (or `suffix`), or stem-2.json... if it exists (two exports in one second)."""
    directory.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        path = directory / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        try:
            with path.open("x", encoding="utf-8") as fh:
                fh.write(text)
            return path
        except FileExistsError:
            n += 1
