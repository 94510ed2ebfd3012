"""What every connector to a deployed chatbot shares: one HTTP client, bounded calls, and
failures turned into one clear `ConnectorError`.

A connector is a `Bot` (parley.core.bots.api) that forwards each customer message to a chatbot parley
did not build and returns its answer. It never touches parley's World (`uses_world = False`):
the batch runs it without one, so world checks are reported as not applicable.

Each call is bounded (parley.core.ingress.fetch_bounded): `timeout_s` (`--bot-timeout`) from
connect to the reply's last byte, so a bot that trickles its answer cannot outlast it, and at
most `max_reply_bytes` (`--bot-max-reply-bytes`, 1 MiB by default) of body, streamed: a larger
reply is dropped where it passes the cap, never held whole in memory.

Failures: an HTTP status >= 400, a redirect (never followed: the bot's URL is what is tested), a
call past its deadline, a reply over the cap, a refused connection and a reply that is not JSON
each raise `ConnectorError` (a ParleyError) whose message names the connector, the request, the
status and a short excerpt of the body. The runner records it as the conversation's
`bot_error` and the batch goes on. Nothing is retried: a deployed bot that fails is what the
test is for.

Header values, payload strings and the URL may name environment variables as `${NAME}`; they
are resolved at each call and never kept anywhere (not in the batch record, not in the database,
not in error messages): each value resolved is registered with the redactor
(parley.core.redaction), so a bot that echoes it shows `[redacted]` wherever its reply goes. A
bot URL given literally with a credential in it (user-info, `?token=...`) is refused: the URL is
the bot's name in every record.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from parley.core.bots.api import BotContext, BotEvent, BotTurn, TextDelta, TurnCompleted
from parley.core.errors import ConfigError, ParleyError
from parley.core.ingress import ReplyTooLarge, describe_size, fetch_bounded, port_problem
from parley.core.records import ChatMessage
from parley.core.redaction import credential_params, register_secret

DEFAULT_CALL_TIMEOUT_S = 30.0
DEFAULT_MAX_REPLY_BYTES = 1024 * 1024
EXCERPT_CHARS = 200
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

_OPEN: weakref.WeakSet[HttpConnector] = weakref.WeakSet()


class ConnectorError(ParleyError):
    """A call to a deployed chatbot failed; `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def check_url(url: str, *, what: str) -> str:
    """`url` when it is an absolute http(s) URL without credentials; ConfigError otherwise."""
    bad = next((c for c in url if c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F), None)
    if bad is not None:
        # urlsplit quietly drops tabs and newlines; the request would then go somewhere else
        raise ConfigError(f"{what}: {url!r} holds {_char_name(bad)}, which a URL cannot hold (percent-encode it)")
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ConfigError(f"{what}: {url!r} is not a valid URL: {exc}") from None
    bad_port = port_problem(url)
    if bad_port is not None:
        raise ConfigError(f"{what}: {url!r}: {bad_port}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{what}: {url!r} is not an http:// or https:// URL with a host")
    if parts.username or parts.password:
        # The URL is the bot's name in every record: a password in it would be stored.
        raise ConfigError(
            f"{what}: the URL carries credentials, which would be stored with the batch; "
            "use an http:FILE.yaml connector with a header naming an environment variable"
        )
    literal = [name for name, value in credential_params(url) if value and not ENV_REF.fullmatch(value)]
    if literal:
        # The same for a key in the query: name the variable that holds it instead.
        raise ConfigError(
            f"{what}: the URL's {', '.join(literal)} parameter holds a credential, which would be stored with the batch; "
            f"write it as ${{NAME}} (e.g. {literal[0]}=${{BOT_TOKEN}}) and set the environment variable NAME"
        )
    return url


def _char_name(c: str) -> str:
    names = {" ": "a space", "\t": "a tab", "\n": "a line break", "\r": "a carriage return"}
    return names.get(c, f"the control character U+{ord(c):04X}")


def env_names(text: str) -> list[str]:
    """The environment variables `text` names as `${NAME}`."""
    return ENV_REF.findall(text)


def resolve_env(text: str, env: Mapping[str, str] | None = None, *, what: str = "header") -> str:
    """`text` with each `${NAME}` replaced by the environment variable's value; ConfigError
    naming the variable (never a value) when one is unset."""
    source = os.environ if env is None else env

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        found = source.get(name)
        if found is None:
            raise ConfigError(f"{what} needs the environment variable {name}, which is not set")
        register_secret(found, origin=name)  # whatever its name, it is sent as a credential
        return found

    return ENV_REF.sub(value, text)


class HttpConnector:
    """Base of the HTTP connectors: the shared client and `call` (see the module doc).

    Subclasses implement `_answer(transcript, ctx) -> (text, ends_conversation)`; `respond`
    times it, appends the answer to the transcript and returns the BotTurn."""

    uses_world = False
    serves_world = True
    """Its conversation's world is served over HTTP, at a URL its requests carry (`world_url`): a
    deployed bot that calls it acts on that world, and parley records the calls."""

    def __init__(
        self,
        name: str,
        *,
        timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not 0 < timeout_s < float("inf"):
            raise ConfigError(f"{name}: the timeout per call must be a positive number of seconds, got {timeout_s:g}")
        if max_reply_bytes < 1:
            raise ConfigError(f"{name}: the reply size cap must be at least 1 byte, got {max_reply_bytes}")
        self.name = name
        self.timeout_s = timeout_s
        self.max_reply_bytes = max_reply_bytes
        self.env = env
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        _OPEN.add(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def system_prompt(self, ctx: BotContext) -> str | None:
        return None  # a deployed bot's prompt, if any, is not ours to see

    @property
    def probe_url(self) -> str:  # pragma: no cover - each connector says where it lives
        raise NotImplementedError

    def probe_address(self) -> str:
        """`probe_url` with its `${NAME}`s resolved: where the check before launch really goes."""
        return resolve_env(self.probe_url, self.env, what=f"{self.name}: the URL")

    def credential_names(self) -> list[str]:
        """The environment variables the connector sends (names only, for messages)."""
        return env_names(self.probe_url)

    def check(self) -> None:
        """ConfigError now for an environment variable the connector sends that is not set."""
        for name in self.credential_names():
            resolve_env("${" + name + "}", self.env, what=f"{self.name}: the URL")

    # -- HTTP ------------------------------------------------------------------------------------

    def client(self) -> httpx.AsyncClient:
        """The connector's client on the running loop (one per loop: a client is bound to one)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=self.timeout_s, limits=httpx.Limits(max_connections=200))
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and not client.is_closed and self._loop is asyncio.get_running_loop():
            await client.aclose()

    async def call(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        """One bounded request (see the module doc); its JSON reply, or ConnectorError (status,
        excerpt) for any failure. `timeout_s` overrides the connector's deadline for this call."""
        where = f"{method} {url}"  # as written: a `${NAME}` in it stays a name in every message
        limit = timeout_s or self.timeout_s
        try:
            sent_url = resolve_env(url, self.env, what=f"{self.name}: the URL")
            reply = await fetch_bounded(
                self.client(),
                method,
                sent_url,
                json=json,
                headers=dict(headers or {}),
                timeout=limit,
                deadline_s=limit,
                max_bytes=self.max_reply_bytes,
            )
        except (TimeoutError, httpx.TimeoutException):
            raise ConnectorError(
                f"{self.name}: no answer to {where} within {limit:g} s (its limit per call, from connect to the last byte)"
            ) from None
        except ReplyTooLarge as exc:
            raise ConnectorError(
                f"{self.name}: HTTP {exc.status} from {where}: {exc} (the cap is --bot-max-reply-bytes, {describe_size(exc.max_bytes)})",
                status=exc.status,
            ) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            why = str(exc) or type(exc).__name__
            raise ConnectorError(f"{self.name}: {where} failed: {why}") from None
        status = reply.status
        if reply.is_redirect:
            target = excerpt(reply.location or "(no Location header)")
            raise ConnectorError(f"{self.name}: HTTP {status} from {where}: redirect to {target} not followed", status=status)
        if status >= 400:
            body = excerpt(reply.text) or "(empty body)"
            raise ConnectorError(f"{self.name}: HTTP {status} from {where}: {body}", status=status)
        try:
            return reply.json()
        except ValueError:
            body = excerpt(reply.text) or "(empty body)"
            raise ConnectorError(f"{self.name}: the reply to {where} is not JSON (HTTP {status}): {body}", status=status) from None

    # -- the Bot protocol ------------------------------------------------------------------------

    async def _answer(self, transcript: list[ChatMessage], ctx: BotContext) -> tuple[str, bool]:
        raise NotImplementedError

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        """Forward the last customer message; the answer is appended to `transcript`. The
        latency is the wall time of the connector's calls for this turn, network included."""
        started = time.perf_counter()
        text, ends = await self._answer(transcript, ctx)
        transcript.append(ChatMessage(role="assistant", content=text))
        return BotTurn(text=text, latency_s=time.perf_counter() - started, rounds=1, ends_conversation=ends)

    async def respond_stream(self, transcript: list[ChatMessage], ctx: BotContext) -> AsyncIterator[BotEvent]:
        """As `respond`: a deployed bot answers in one piece, so one delta, then the turn."""
        turn = await self.respond(transcript, ctx)
        if turn.text:
            yield TextDelta(text=turn.text)
        yield TurnCompleted(turn=turn)


def last_user_text(transcript: list[ChatMessage]) -> str | None:
    """The customer's last message, or None when the bot is to open the conversation."""
    for message in reversed(transcript):
        if message.role == "user":
            return message.content or ""
        if message.role == "assistant":
            return None
    return None


async def aclose_connectors() -> None:
    """Close the clients the connectors opened on the running loop (at the end of a batch)."""
    for connector in list(_OPEN):
        await connector.aclose()
