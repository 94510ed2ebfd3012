"""ChatModel on any OpenAI-compatible chat completions endpoint, through `openai.AsyncOpenAI`.

One AsyncOpenAI client per endpoint (base URL + key) and event loop, shared by every model and
conversation, with a connection pool sized for many concurrent conversations. The SDK's own
retries are off: `parley.core.models.retry` retries instead, so that Retry-After is honoured the same way
everywhere and a batch runner hears about every 429.

Nothing here reads the environment or touches the network before a model's first call.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from parley.core.errors import ConfigError, ContextLengthExceeded, ProviderError
from parley.core.models.chat_model_base import ChatModelBase
from parley.core.models.completion_reply import MalformedReply, read_completion
from parley.core.models.names import Endpoint, EndpointSpec, parse_model_name
from parley.core.models.pricing import cost_usd, price_for
from parley.core.models.retry import AttemptError, OnRetry, RetryPolicy, Sleep, parse_retry_after, retry_call
from parley.core.records import ModelPrice, ModelReply, ModelRequest, ToolCall, Usage

if TYPE_CHECKING:  # the SDK is imported on first use, keeping `import core...` fast
    from openai import AsyncOpenAI

DEFAULT_TIMEOUT_S = 60.0
POOL_CONNECTIONS = 256
POOL_KEEPALIVE = 256
POOL_SHARDS = 4  # the connections of an endpoint are spread over this many pools (parley.core.models.pool_shards)
CONNECT_TIMEOUT_S = 10.0

# How servers say a prompt is longer than the model's context: OpenAI and vLLM ("maximum context
# length is 4096 tokens"), llama-cpp-python (the same), llama.cpp ("exceeds the available
# context size"), OpenRouter, Anthropic-style proxies ("prompt is too long").
_CONTEXT_OVERFLOW = re.compile(
    r"context[ _](length|window|size)|maximum context|context_length_exceeded|prompt is too long|too many tokens",
    re.IGNORECASE,
)


class _SharedEndpoint:
    """What every model of one endpoint shares on one loop: the client, and what was learnt."""

    def __init__(self, client: AsyncOpenAI) -> None:
        self.client = client
        self.stream_usage = True  # False once the server refused `stream_options`


# (base_url, api_key) -> shared endpoint, per event loop: a pooled connection belongs to the
# loop that opened it, so a client is only ever shared within one loop (the app has just one).
_shared: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], _SharedEndpoint]] = weakref.WeakKeyDictionary()


def _shared_endpoint(endpoint: Endpoint, loop: asyncio.AbstractEventLoop | None = None) -> _SharedEndpoint:
    loop = loop or asyncio.get_running_loop()
    per_loop = _shared.setdefault(loop, {})
    key = (endpoint.base_url, endpoint.api_key)
    shared = per_loop.get(key)
    if shared is None:
        import urllib.request

        import httpx2
        from openai import AsyncOpenAI, DefaultAsyncHttpx2Client

        from parley.core.models.pool_shards import PoolShards

        limits = httpx2.Limits(max_connections=POOL_CONNECTIONS, max_keepalive_connections=POOL_KEEPALIVE)
        # Several smaller pools cost less CPU per call than one big one (see parley.core.models.pool_shards).
        # With a proxy in the environment the client builds its own transports, as it always did.
        sharded = {} if urllib.request.getproxies() else {"transport": PoolShards(POOL_SHARDS, limits)}
        http_client = DefaultAsyncHttpx2Client(
            limits=limits,
            timeout=httpx2.Timeout(DEFAULT_TIMEOUT_S, connect=CONNECT_TIMEOUT_S, pool=None),
            **sharded,
        )
        client = AsyncOpenAI(
            api_key=endpoint.api_key,
            base_url=endpoint.base_url,
            max_retries=0,  # ours apply, see parley.core.models.retry
            http_client=http_client,
        )
        if not endpoint.sends_openai_org_headers:
            # the SDK picks OPENAI_ORG_ID / OPENAI_PROJECT_ID up from the environment; they are
            # OpenAI's business, not OpenRouter's or a local server's
            client.organization = None
            client.project = None
        shared = per_loop[key] = _SharedEndpoint(client)
    return shared


# Base URLs of servers that answered in this process (a reply, or the check before launch): a
# connection that fails after that means the server stopped (crashed, was killed), not that it
# was never there, and the message says so.
_answered: set[str] = set()


def mark_answered(base_url: str) -> None:
    """Remember that the server at `base_url` answered (parley.core.engine.reachability calls it)."""
    _answered.add(base_url.rstrip("/"))


def shared_client(endpoint: Endpoint) -> AsyncOpenAI:
    """The one AsyncOpenAI client for this endpoint on the running event loop."""
    return _shared_endpoint(endpoint).client


def shared_client_count() -> int:
    """How many clients the running loop holds (one per endpoint in use)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return 0
    return len(_shared.get(loop, {}))


async def aclose_clients() -> None:
    """Close the running loop's clients and their connections (at shutdown, or after a test)."""
    loop = asyncio.get_running_loop()
    for shared in _shared.pop(loop, {}).values():
        await shared.client.close()


async def _post_completion(client: AsyncOpenAI, body: dict[str, Any], timeout: Any, *, stream: bool = False) -> Any:
    """`client.chat.completions.create(**body, timeout=timeout)`, minus the SDK's request
    transform and its building of the reply: the reply's decoded JSON (read by
    parley.core.models.completion_reply), or the stream of chunks.

    `create` first walks the whole body against the SDK's TypedDicts (to rename aliased keys and
    encode files): ~1.3 ms of CPU per call for an 8-message request, most of a call's cost in a
    CPU-bound batch. Parley's bodies are plain JSON (text messages, tool calls, JSON schemas), for
    which the transform is the identity, so the body is posted as it is, the way `create` posts
    it: same path, auth, timeout and error mapping."""
    from openai import AsyncStream
    from openai.types.chat import ChatCompletionChunk

    return await client.post(
        "/chat/completions",
        body=body,
        cast_to=object,
        options={"timeout": timeout, "security": {"bearer_auth": True}},
        stream=stream,
        stream_cls=AsyncStream[ChatCompletionChunk],
    )


def _server_message(err: Any) -> str:
    """The human part of an error body, whichever shape the server used."""
    body = getattr(err, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            msg = inner.get("message") or inner.get("detail")
            if msg:
                return str(msg)
        elif isinstance(inner, str) and inner:
            return inner
        detail = body.get("detail") or body.get("message")
        if detail:
            return str(detail)
    elif isinstance(body, str) and body:
        return body
    return str(getattr(err, "message", "") or err)


class OpenAICompatibleModel(ChatModelBase):
    """A ChatModel behind an OpenAI-compatible endpoint, named `openai/...`, `openrouter/...`,
    `ollama/...` or `openai-api/SERVICE/...`.

    The endpoint is resolved from the environment at the first call (or `check()`), so a missing
    key fails only the role that needs it, with a ConfigError, before any request is sent.
    """

    def __init__(
        self,
        name: str | EndpointSpec,
        *,
        role: str = "bot",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry_policy: RetryPolicy | None = None,
        on_retry: OnRetry | None = None,
        env: Mapping[str, str] | None = None,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        """`prices`: prices given for models by name (a batch's `--price`), which win over the table."""
        self.spec = name if isinstance(name, EndpointSpec) else parse_model_name(name)
        self.prices = dict(prices or {})
        if self.spec.is_offline:
            raise ConfigError("the offline model is not served over HTTP; use parley.core.models.registry.get_model")
        self.name = self.spec.name
        self.role = role
        self.timeout_s = timeout_s
        self.retry_policy = retry_policy or RetryPolicy()
        self.on_retry = on_retry
        self._env = env
        self._sleep = sleep
        self._rng = rng
        self._endpoint: Endpoint | None = None

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel({self.name!r}, role={self.role!r})"

    # -- setup -------------------------------------------------------------------------------

    def check(self) -> Endpoint:
        """Resolve the endpoint now: ConfigError if a required key or URL is not set."""
        if self._endpoint is None:
            self._endpoint = self.spec.resolve(self._env, role=self.role)
        return self._endpoint

    def prepare(self, loop: asyncio.AbstractEventLoop) -> None:
        """Build `loop`'s shared client for this model's endpoint now. Call it from a worker
        thread: importing the SDK and building its SSL context take about half a second, which
        must not be spent on an event loop that draws a screen (ConfigError as `check()`)."""
        _shared_endpoint(self.check(), loop)

    @property
    def base_url(self) -> str:
        return self.check().base_url

    def client(self) -> AsyncOpenAI:
        """The shared client of this model's endpoint (on the running loop)."""
        return shared_client(self.check())

    def _request_args(self, request: ModelRequest) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [m.to_openai() for m in request.messages],
        }
        if request.tools:
            args["tools"] = [t.to_openai() for t in request.tools]
            # "auto" is OpenAI's default, but some servers (llama.cpp's function-calling chat
            # formats) ignore the tools altogether unless a tool_choice is sent.
            args["tool_choice"] = "auto"
        if (config := request.config) is not None:
            if config.temperature is not None:
                args["temperature"] = config.temperature
            if config.top_p is not None:
                args["top_p"] = config.top_p
            if config.seed is not None:
                args["seed"] = config.seed
            if config.stop:
                args["stop"] = list(config.stop)
            if config.max_tokens is not None:
                # OpenAI's newer models refuse max_tokens; other servers may not know the new name
                key = "max_completion_tokens" if self.spec.provider == "openai" else "max_tokens"
                args[key] = config.max_tokens
        return args

    def _timeout(self) -> Any:
        import httpx2

        return httpx2.Timeout(self.timeout_s, connect=min(self.timeout_s, CONNECT_TIMEOUT_S), pool=None)

    # -- errors ------------------------------------------------------------------------------

    def _map_error(self, err: Exception) -> Exception:
        """An SDK exception as a ProviderError a person can act on; anything else unchanged."""
        import openai

        endpoint = self.check()
        where = endpoint.base_url
        who = f"{self.name} ({self.role})"
        if isinstance(err, openai.APITimeoutError):
            return AttemptError(f"{who}: no reply from {where} within {self.timeout_s:g} s", retryable=True, kind="timeout")
        if isinstance(err, openai.APIConnectionError):
            cause = err.__cause__ or err.__context__
            detail = f": {cause}" if cause else ""
            if where.rstrip("/") in _answered:
                return AttemptError(f"{who}: the model server at {where} stopped answering{detail}", retryable=True, kind="connection")
            return AttemptError(f"{who}: cannot reach {where}{detail}", retryable=True, kind="connection")
        if isinstance(err, openai.APIStatusError):
            status = err.status_code
            msg = _server_message(err)
            headers = dict(err.response.headers) if getattr(err, "response", None) is not None else {}
            retry_after = parse_retry_after(headers)
            if status == 401:
                if endpoint.api_key_env:
                    text = f"{who}: the API key in {endpoint.api_key_env} was refused by {where} (401): {msg}"
                else:
                    text = f"{who}: {where} requires an API key (401): {msg}"
                return AttemptError(text, status=status)
            if status == 403:
                return AttemptError(f"{who}: access denied by {where} (403): {msg}", status=status)
            if status == 404:
                return AttemptError(f"{who}: model {self.spec.model!r} not found at {where} (404): {msg}", status=status)
            if status in (400, 413, 422) and _CONTEXT_OVERFLOW.search(msg):
                return ContextLengthExceeded(
                    f"{who}: {where} refused the prompt as too long for the model's context ({status}): {msg}", status=status
                )
            if status == 429:
                return AttemptError(
                    f"{who}: rate limited by {where} (429): {msg}",
                    status=status,
                    retryable=True,
                    retry_after_s=retry_after,
                )
            if status >= 500 or status in (408, 409):
                return AttemptError(
                    f"{who}: server error from {where} ({status}): {msg}",
                    status=status,
                    retryable=True,
                    retry_after_s=retry_after,
                )
            return AttemptError(f"{who}: {where} rejected the request ({status}): {msg}", status=status)
        if isinstance(err, openai.APIError):  # e.g. an error event inside a stream, a malformed reply
            return AttemptError(f"{who}: bad reply from {where}: {err}", retryable=False)
        return err

    async def _attempt(self, coro_fn: Any) -> Any:
        try:
            return await coro_fn()
        except ProviderError:
            raise
        except Exception as err:  # noqa: BLE001 - mapped or re-raised as it was
            mapped = self._map_error(err)
            if mapped is err:
                raise
            raise mapped from err

    def _usage(self, raw: Any) -> Usage:
        if raw is None:
            # the call happened; its tokens are unknown, so is its cost unless the model is free
            price = price_for(self.name, self.prices)
            free = price is not None and price.input_per_m == 0 and price.output_per_m == 0
            return Usage(calls=1, cost_usd=0.0 if free else None, unreported_calls=1)
        inp = int(getattr(raw, "prompt_tokens", 0) or 0)
        out = int(getattr(raw, "completion_tokens", 0) or 0)
        return Usage(input_tokens=inp, output_tokens=out, calls=1, cost_usd=cost_usd(self.name, inp, out, self.prices))

    # -- ChatModel ---------------------------------------------------------------------------

    async def reply_to(self, request: ModelRequest) -> ModelReply:
        """One reply; retried on 429/5xx/timeouts; ProviderError or ConfigError otherwise."""
        self.check()  # ConfigError before any request
        client = self.client()
        args = self._request_args(request)
        timeout = self._timeout()
        started = time.perf_counter()
        resp = await retry_call(
            lambda: self._attempt(lambda: _post_completion(client, args, timeout)),
            policy=self.retry_policy,
            on_retry=self.on_retry,
            sleep=self._sleep,
            rng=self._rng,
        )
        latency = time.perf_counter() - started
        mark_answered(self.base_url)
        try:
            reply = read_completion(resp)
        except MalformedReply as err:
            raise ProviderError(f"{self.name} ({self.role}): bad reply from {self.base_url}: {err}") from err
        return ModelReply(
            model=self.name,
            text=reply.text,
            tool_calls=reply.tool_calls,
            usage=self._usage(reply.usage),
            latency_s=latency,
            finish_reason=reply.finish_reason,
        )

    def stream_reply(self, request: ModelRequest) -> OpenAIReplyStream:
        """Text deltas as they arrive; `.reply` (as `generate` would return it) once exhausted."""
        return OpenAIReplyStream(self, request)


class OpenAIReplyStream:
    """An async iterator of text deltas; `reply` is set when it is exhausted.

    Opening the stream is retried like `generate`; once text has been shown it is not (a retry
    would repeat it), so a failure mid-stream is a ProviderError.
    """

    def __init__(self, model: OpenAICompatibleModel, request: ModelRequest) -> None:
        self.model = model
        self.request = request
        self.reply: ModelReply | None = None
        self._started = False

    def __aiter__(self) -> AsyncIterator[str]:
        if self._started:
            raise RuntimeError("a reply stream can be iterated once")
        self._started = True
        return self._run()

    async def _open(self, client: AsyncOpenAI, args: dict[str, Any], timeout: Any) -> Any:
        shared = _shared_endpoint(self.model.check())
        with_usage = shared.stream_usage
        try:
            return await self.model._attempt(
                lambda: _post_completion(
                    client,
                    {**args, "stream": True, **({"stream_options": {"include_usage": True}} if with_usage else {})},
                    timeout,
                    stream=True,
                )
            )
        except ProviderError as err:
            if with_usage and err.status in (400, 422) and "stream_options" in str(err):
                shared.stream_usage = False
                return await self._open(client, args, timeout)
            raise

    def _failure_mid_stream(self, err: Exception) -> Exception:
        """Why a stream broke off after it began. Not retried here: its text may already be on
        screen; `retryable` still tells the caller that trying the turn again may work."""
        import httpx2
        import openai

        model = self.model
        who = f"{model.name} ({model.role})"
        if isinstance(err, (httpx2.TimeoutException, openai.APITimeoutError)):
            return ProviderError(
                f"{who}: the reply from {model.base_url} stalled for more than {model.timeout_s:g} s",
                retryable=True,
            )
        if isinstance(err, (httpx2.TransportError, openai.APIConnectionError)):
            return ProviderError(
                f"{who}: the model server at {model.base_url} stopped answering: the reply broke off: {err}", retryable=True
            )
        mapped = model._map_error(err)
        if mapped is err:
            return err
        return ProviderError(str(mapped), status=getattr(mapped, "status", None), retryable=getattr(mapped, "retryable", False))

    async def _run(self) -> AsyncIterator[str]:
        model = self.model
        model.check()
        client = model.client()
        args = model._request_args(self.request)
        timeout = model._timeout()
        started = time.perf_counter()
        sdk_stream = await retry_call(
            lambda: self._open(client, args, timeout),
            policy=model.retry_policy,
            on_retry=model.on_retry,
            sleep=model._sleep,
            rng=model._rng,
        )
        text_parts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish_reason: str | None = None
        raw_usage: Any = None
        try:
            try:
                async for chunk in sdk_stream:
                    if getattr(chunk, "usage", None) is not None:
                        raw_usage = chunk.usage
                    for choice in chunk.choices or []:
                        if choice.finish_reason:
                            finish_reason = choice.finish_reason
                        delta = choice.delta
                        if delta is None:
                            continue
                        for pos, tc in enumerate(delta.tool_calls or []):
                            index = tc.index if tc.index is not None else len(calls) + pos
                            slot = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                            if tc.id and not slot["id"]:
                                slot["id"] = tc.id
                            if tc.function is not None:
                                if tc.function.name and not slot["name"]:
                                    slot["name"] = tc.function.name
                                if tc.function.arguments:
                                    slot["arguments"] += tc.function.arguments
                        if delta.content:
                            text_parts.append(delta.content)
                            yield delta.content
            except ProviderError:
                raise
            except Exception as err:  # noqa: BLE001
                failure = self._failure_mid_stream(err)
                if failure is err:
                    raise
                raise failure from err
        finally:
            await sdk_stream.close()
        mark_answered(model.base_url)
        latency = time.perf_counter() - started
        self.reply = ModelReply(
            model=model.name,
            text="".join(text_parts) if text_parts else None,
            tool_calls=[
                ToolCall(id=slot["id"] or f"call_{i}", name=slot["name"], arguments=slot["arguments"]) for i, slot in sorted(calls.items())
            ],
            usage=model._usage(raw_usage),
            latency_s=latency,
            finish_reason=finish_reason,
        )
