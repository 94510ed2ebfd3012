"""A bot under test written in Python and called in-process: `--bot python:PACKAGE.MODULE:NAME`,
or a callable handed to parley's Python API.

NAME is a callable, sync or async, called once per customer message with the conversation so
far (a list of `{"role": "user" | "assistant", "content": str}` dicts, the customer's and the
bot's own words), and, when it declares parameters of these names, `customer_id` (the signed-in
customer), `tools` (the order API's tools bound to this conversation's World:
parley.core.bots.python_tools) and `variables` (what a prompt bot's template may use: the
conversation's `session_id`, which begins with its profile's test name, `CURRENT_DATE`,
`CUSTOMER_ID` and the profile's goal variables). It returns the reply: a string, or an object (or mapping) with
`content` and, optionally, `tool_calls` it made elsewhere, each with `name`, `arguments` and
`result` (recorded as the bot's tool calls). NAME may be a class: one instance per conversation
(so it may keep state), called through `__call__`.

It is the bot under test, so whatever goes wrong in it is `bot_error` (a `PythonBotError`, whose
text the record keeps): an exception (its type and message; the traceback goes to parley.log),
a reply of the wrong type (named), a call that outlasts `timeout_s` (`--bot-timeout`). A sync
callable runs in a daemon thread of its own, and an async one on an event loop of its own
(parley.core.bots.bot_loop), so neither ever stalls the event loop that runs the batch or the
app: one that blocks its loop, catches its cancellation or never returns is a bot_error at its
time limit, the batch goes on, and nothing it left running keeps parley from exiting (its tools
no longer answer).

The module is imported once, when the bot is built (`PythonBot.load`), from the working folder
first as `python -m` would: a module or name that cannot be imported is one ConfigError naming
it. The REST service refuses these bots unless its operator allows them
(parley.core.service.bot_hosts): importing and calling a module is code execution.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import reprlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from parley.core.bots.api import BotContext, BotEvent, BotTurn, TextDelta, ToolCallFinished, TurnCompleted
from parley.core.bots.bot_loop import BotLoop
from parley.core.bots.connectors.base import DEFAULT_CALL_TIMEOUT_S, EXCERPT_CHARS, excerpt
from parley.core.bots.python_tools import AsyncTools, Tools
from parley.core.errors import ConfigError, ParleyError
from parley.core.python_code import import_target, in_daemon_thread, split_target, user_frame
from parley.core.records import ChatMessage, ToolCall, ToolCallRecord

__all__ = ["PYTHON_FORM", "PythonBot", "PythonBotError", "python_bot_name", "split_python_target"]

log = logging.getLogger("parley.bots.python_bot")

PYTHON_FORM = "python:PACKAGE.MODULE:NAME"
_FORM = f"a Python bot is named {PYTHON_FORM}, e.g. python:mybots.support:reply"
EXTRAS = ("customer_id", "tools", "variables")
"""Parameters a Python bot gets when it declares them by name."""
_INSTANCE = "python_bot_instance"
_shown = reprlib.Repr()
_shown.maxstring = 80
_shown.maxother = 80


class PythonBotError(ParleyError):
    """The Python bot under test failed a turn: it raised, replied with the wrong type, or took
    longer than its limit. Recorded as the conversation's bot_error."""


def split_python_target(name: str) -> tuple[str, str]:
    """(module, attribute path) of `python:MODULE:NAME` (the `python:` prefix optional); ConfigError
    naming the form when it is not one. Nothing is imported."""
    return split_target(name, form=_FORM)


def python_bot_name(obj: object) -> str:
    """The `python:MODULE:NAME` a callable is known by (its module and qualified name)."""
    module = getattr(obj, "__module__", None) or type(obj).__module__
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"python:{module}:{qualname}"


def _describe(value: object) -> str:
    return f"{type(value).__name__} {_shown.repr(value)}" if value is not None else "None"


def _import(name: str) -> object:
    """The object `python:MODULE:NAME` names, imported (see the module doc); ConfigError, one line."""
    return import_target(name, form=_FORM, what="the bot", exception_text=_exception_text)


def _exception_text(exc: BaseException) -> str:
    """`Type: message`, the message an excerpt (one line, EXCERPT_CHARS at most: a bot's exception
    may hold megabytes) that says where the whole of it is (parley.log, with the traceback)."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose text cannot be made: its type says enough
        message = ""
    if not message:
        return type(exc).__name__
    shown = excerpt(message[: EXCERPT_CHARS * 4])
    whole = " ".join(message.split())
    return f"{type(exc).__name__}: {shown}" + ("" if shown == whole else f" ({len(message):,} characters: the whole text is in parley.log)")


def _parameters(call: Callable[..., Any], name: str, *, method: bool = False) -> tuple[str, ...]:
    """Which of EXTRAS `call` takes, checking it can be called with the conversation and those."""
    try:
        signature = inspect.signature(call)
    except (TypeError, ValueError):  # a builtin without a signature: give it the conversation only
        return ()
    params = list(signature.parameters.values())
    if method and params:
        params = params[1:]  # self
        signature = signature.replace(parameters=params)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    named = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
    extras = tuple(e for e in EXTRAS if takes_any or e in named)
    try:
        signature.bind([], **dict.fromkeys(extras))
    except TypeError as exc:
        raise ConfigError(
            f"{name} cannot be called with the conversation so far ({exc}): it takes the messages, and may declare {' and '.join(EXTRAS)}"
        ) from None
    return extras


class PythonBot:
    """A Python callable as the bot under test (see the module doc). One instance serves many
    conversations at once: what a conversation needs (a class's instance) lives in its context."""

    uses_world = True

    def __init__(self, target: object, *, name: str | None = None, timeout_s: float = DEFAULT_CALL_TIMEOUT_S) -> None:
        if not 0 < timeout_s < float("inf"):
            raise ConfigError(f"{name or 'a Python bot'}: the time limit per call must be a positive number of seconds, got {timeout_s:g}")
        self.name = name or python_bot_name(target)
        self.target = target
        self.timeout_s = timeout_s
        self._loop: BotLoop | None = None
        self._loop_lock = threading.Lock()
        self.per_conversation = inspect.isclass(target)
        if self.per_conversation:
            call = getattr(target, "__call__", None)  # noqa: B004 - the class's own __call__, not type's
            if call is None or call is type.__call__ or not inspect.isfunction(call):
                raise ConfigError(f"{self.name} is a class without __call__: each conversation calls its instance with the messages")
            self.extras = _parameters(call, self.name, method=True)
            self.is_async = inspect.iscoroutinefunction(call)
        elif callable(target):
            self.extras = _parameters(target, self.name)
            method = type(target).__call__  # an instance's own __call__ (a function's is not a coroutine function)
            self.is_async = inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(method)
        else:
            raise ConfigError(f"{self.name} is {_describe(target)}, not a function or a class to call with the conversation")

    @classmethod
    def load(cls, target: str, *, name: str | None = None, timeout_s: float = DEFAULT_CALL_TIMEOUT_S) -> PythonBot:
        """The bot `python:MODULE:NAME` names, its module imported now (ConfigError, one line, when
        it cannot be); `name`: what the bot is called (default: `target`)."""
        return cls(_import(target), name=name or target, timeout_s=timeout_s)

    def __repr__(self) -> str:
        return f"PythonBot({self.name!r})"

    def system_prompt(self, ctx: BotContext) -> str | None:
        return None  # a Python bot's prompt, if it has one, is its own business

    # -- a turn ----------------------------------------------------------------------------------

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        """Call the bot with the conversation so far; its answer (and the tool calls it made) are
        appended to `transcript`. PythonBotError for whatever went wrong in the bot."""
        started = time.perf_counter()
        before = len(ctx.tools.records) if ctx.tools is not None else 0
        messages = [{"role": m.role, "content": m.content} for m in transcript if m.role in ("user", "assistant") and m.content is not None]
        async_tools = self._tools(transcript, ctx)
        try:
            reply = await self._call(messages, ctx, async_tools)
        finally:
            if async_tools is not None:
                async_tools.closed = True  # a thread left behind cannot act after the turn
        text, reported = self._read(reply, ctx)
        records = list(ctx.tools.records[before:]) if ctx.tools is not None else []
        for record in reported:
            call = ToolCall(id=record.call_id, name=record.name, arguments=record.arguments_raw)
            transcript.append(ChatMessage(role="assistant", content=None, tool_calls=[call]))
            transcript.append(ChatMessage(role="tool", content=record.result, tool_call_id=call.id, name=call.name))
            if ctx.tools is not None:
                ctx.tools.records.append(record)
        transcript.append(ChatMessage(role="assistant", content=text))
        return BotTurn(text=text, tool_calls=records + reported, latency_s=time.perf_counter() - started, rounds=1)

    async def respond_stream(self, transcript: list[ChatMessage], ctx: BotContext) -> AsyncIterator[BotEvent]:
        """As `respond`: a Python bot answers in one piece, so its tool calls, its text, then the turn."""
        turn = await self.respond(transcript, ctx)
        for record in turn.tool_calls:
            yield ToolCallFinished(record=record)
        if turn.text:
            yield TextDelta(text=turn.text)
        yield TurnCompleted(turn=turn)

    def _tools(self, transcript: list[ChatMessage], ctx: BotContext) -> AsyncTools | None:
        if "tools" not in self.extras or ctx.tools is None:
            return None

        def shown(call: ToolCall, record: ToolCallRecord) -> None:  # the transcript holds the calls as the order bot's does
            transcript.append(ChatMessage(role="assistant", content=None, tool_calls=[call]))
            transcript.append(ChatMessage(role="tool", content=record.result, tool_call_id=call.id, name=call.name))

        return AsyncTools(ctx.tools, on_call=shown, home=asyncio.get_running_loop())

    def _bot_loop(self) -> BotLoop:
        """The loop this bot's coroutines run on (a new one after one was left behind)."""
        with self._loop_lock:
            if self._loop is None:
                self._loop = BotLoop(f"parley bot {self.name}")
            return self._loop

    async def _call(self, messages: list[dict[str, Any]], ctx: BotContext, async_tools: AsyncTools | None) -> Any:
        kwargs: dict[str, Any] = {}
        if "customer_id" in self.extras:
            kwargs["customer_id"] = ctx.customer_id
        loop = asyncio.get_running_loop()
        if "tools" in self.extras:
            kwargs["tools"] = None if async_tools is None else async_tools if self.is_async else Tools(async_tools, loop)
        if "variables" in self.extras:
            kwargs["variables"] = dict(ctx.variables)
        limit = asyncio.timeout(self.timeout_s)
        bot_loop: BotLoop | None = None
        try:
            async with limit:
                callee = await self._callee(ctx)
                if self.is_async:
                    bot_loop = self._bot_loop()
                    reply = await bot_loop.run(lambda: callee(messages, **kwargs))
                else:
                    reply = await in_daemon_thread(lambda: callee(messages, **kwargs), thread_name=f"parley bot {self.name}")
                if inspect.isawaitable(reply):  # a sync callable that hands back a coroutine: awaited on the bot's loop
                    bot_loop = self._bot_loop()
                    awaitable = reply
                    reply = await bot_loop.run(lambda: awaitable)
                return reply
        except TimeoutError as exc:
            if not limit.expired():  # the bot's own code timed out at something: its error
                raise self._raised(exc) from None
            left = " (its thread is left running)" if bot_loop is None else await self._left_behind(bot_loop)
            raise PythonBotError(f"{self.name} did not answer within {self.timeout_s:g} s (--bot-timeout){left}") from None
        except asyncio.CancelledError:
            raise
        except PythonBotError:
            raise
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # the bot's code: its failure, never parley's exit
            raise self._raised(exc) from None

    async def _left_behind(self, bot_loop: BotLoop) -> str:
        """After a call on `bot_loop` outlasted its limit: when the loop no longer runs anything,
        later calls get a new one; what to add to the error."""
        if await bot_loop.responds():
            return ""
        with self._loop_lock:
            if self._loop is bot_loop:
                self._loop = None
        bot_loop.leave()
        log.warning("the bot %s holds its event loop (a blocking call in async code?): its later calls run on a new one", self.name)
        return " (it held its event loop, blocked: its later calls run on a new one)"

    async def _callee(self, ctx: BotContext) -> Callable[..., Any]:
        """What a turn calls: the target, or this conversation's instance of the target class
        (made on its first turn, in a thread, as its calls are)."""
        if not self.per_conversation:
            return self.target  # type: ignore[return-value]
        instance: Callable[..., Any] | None = ctx.session.get(_INSTANCE)
        if instance is None:
            factory: Callable[[], Any] = self.target  # type: ignore[assignment]
            instance = await in_daemon_thread(factory, thread_name=f"parley bot {self.name}")
            ctx.session[_INSTANCE] = instance
        return instance

    def _raised(self, exc: BaseException) -> PythonBotError:
        log.error("the bot %s raised", self.name, exc_info=exc)
        where = user_frame(exc)
        at = f"at {where}; " if where else ""
        return PythonBotError(f"{self.name} raised {_exception_text(exc)} ({at}the traceback is in parley.log)")

    # -- the reply -------------------------------------------------------------------------------

    def _read(self, reply: Any, ctx: BotContext) -> tuple[str, list[ToolCallRecord]]:
        """The reply's text and the tool calls it reports; PythonBotError naming what came back
        when it is not a reply."""
        if isinstance(reply, str):
            return reply, []
        form = "return a string, or an object with `content` (and optionally `tool_calls`)"
        if isinstance(reply, Mapping):
            if "content" not in reply:
                raise PythonBotError(f"{self.name} returned {_describe(reply)}, which has no 'content': {form}")
            content, calls = reply["content"], reply.get("tool_calls")
        elif hasattr(reply, "content") and not isinstance(reply, (bytes, bytearray)):
            content, calls = reply.content, getattr(reply, "tool_calls", None)
        else:
            raise PythonBotError(f"{self.name} returned {_describe(reply)}, not a reply: {form}")
        if not isinstance(content, str):
            raise PythonBotError(f"{self.name} returned a reply whose content is {_describe(content)}, not a string")
        if calls is None:
            return content, []
        if isinstance(calls, (str, bytes, Mapping)) or not hasattr(calls, "__iter__"):
            raise PythonBotError(f"{self.name} returned tool_calls as {_describe(calls)}, not a list of calls (name, arguments, result)")
        return content, [self._reported(n, call, ctx) for n, call in enumerate(calls, 1)]

    def _reported(self, n: int, call: Any, ctx: BotContext) -> ToolCallRecord:
        """One tool call the bot says it made elsewhere, as a record."""

        def field(key: str) -> Any:
            return call.get(key) if isinstance(call, Mapping) else getattr(call, key, None)

        name, arguments, result = field("name"), field("arguments"), field("result")
        where = f"{self.name}'s tool call {n}"
        if not isinstance(name, str) or not name.strip():
            raise PythonBotError(f"{where} has no name (a string): got {_describe(name)}")
        if arguments is None:
            arguments = {}
        if isinstance(arguments, str):
            raw = arguments
            try:
                parsed = json.loads(arguments or "{}")
            except ValueError:
                parsed = None
            arguments = parsed if isinstance(parsed, dict) else None
        elif isinstance(arguments, Mapping):
            arguments = dict(arguments)
            raw = json.dumps(arguments, default=str)
        else:
            raise PythonBotError(f"{where} ({name}) has arguments {_describe(arguments)}: a mapping or JSON text")
        if result is None:
            text = ""
        elif isinstance(result, str):
            text = result
        else:
            try:
                text = json.dumps(result, default=str, ensure_ascii=False)
            except ValueError as exc:
                raise PythonBotError(f"{where} ({name}) has a result that cannot be written as JSON: {exc}") from None
        ok = field("ok")
        return ToolCallRecord(
            call_id=f"py_reported_{len(ctx.tools.records) + n if ctx.tools is not None else n}",
            name=name.strip(),
            arguments_raw=raw,
            arguments=arguments,
            customer_id=ctx.customer_id,
            result=text,
            ok=ok if isinstance(ok, bool) else True,
            error=field("error") if isinstance(field("error"), str) else None,
        )
