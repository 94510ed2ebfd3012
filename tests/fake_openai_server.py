"""A scripted fake OpenAI-compatible chat server, served for real on a loopback port.

Each request to /v1/chat/completions takes the next step of a script (a text reply, tool calls,
an HTTP error, a hang); with the script empty it answers `default` (a short text). In fixed-delay
mode every request is answered after N ms (the throughput benchmark uses 200 ms). `stream: true`
is answered with OpenAI-style SSE chunks ending with a usage chunk and `[DONE]`. Every request is
recorded, so tests can assert what was sent. `hold_requests()` makes every request wait, in
flight, until `release_requests()`: a test sees N requests in flight at once by waiting for
`held == N` (an event), not by hoping a delay is long enough on a busy machine. With
`context_tokens` set, a prompt longer than that (counted at `chars_per_token` characters a
token, as a real tokenizer might) is refused with the 400 llama-cpp-python's server sends,
before the script is looked at.

In a test (the server runs in a background thread with its own event loop):

    with run_fake_server() as server:
        server.push_text("hello", usage=(12, 3))
        model = OpenAICompatibleModel("openai-api/fake/m", env={"FAKE_BASE_URL": server.base_url})
        ...
        assert len(server.requests) == 1

For a benchmark, run it as its own process so it does not share the client's GIL:

    with fake_server_process(delay_ms=200) as base_url: ...
    # or: python -m tests.fake_openai_server --delay-ms 200 --port 8765
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import random
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from tests.child_process import stop_process

AUTO: Literal["auto"] = "auto"
UsageSpec = tuple[int, int] | None | Literal["auto"]


# -- script steps --------------------------------------------------------------------------------


@dataclass
class TextReply:
    text: str
    usage: UsageSpec = AUTO  # (prompt, completion) tokens; None leaves usage out of the reply
    finish_reason: str = "stop"
    delay_ms: int = 0
    stall_s: float = 0.0  # streamed: pause this long after the first piece of text


@dataclass
class ToolCallsReply:
    calls: list[tuple[str, str]]  # (tool name, raw argument text: sent as is, even if not JSON)
    text: str | None = None
    usage: UsageSpec = AUTO
    delay_ms: int = 0


@dataclass
class ErrorReply:
    status: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)
    delay_ms: int = 0


@dataclass
class Hang:
    """Answer nothing for `seconds` (longer than the client's timeout), then a text reply."""

    seconds: float = 30.0


@dataclass
class RawReply:
    """Answer 200 with `body` as it is (JSON-encoded unless it is a str, sent as text/plain):
    a reply that is not a chat completion."""

    body: Any


Step = TextReply | ToolCallsReply | ErrorReply | Hang | RawReply


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]
    received_at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])


def _words(text: str | None) -> int:
    return len((text or "").split())


class FakeOpenAIServer:
    """Script, recorder and (once started) address of one fake server."""

    def __init__(self) -> None:
        self.script: collections.deque[Step] = collections.deque()
        self.default: Step = TextReply("ok")
        self.fixed_delay_ms: int = 0
        # what a streamed reply does with stream_options.include_usage: honour it, ignore it
        # (no usage chunk), or refuse the request with 400 as some older servers do
        self.stream_usage: Literal["honour", "ignore", "reject"] = "honour"
        self.requests: list[RecordedRequest] = []
        self.record_requests = True  # a long benchmark may turn this off to keep memory flat
        # A rate-limit storm: this share of requests (drawn from a seeded generator) is answered
        # 429 with `Retry-After: storm_retry_after` before the script is looked at.
        self.storm_share = 0.0
        self.storm_retry_after = "0.3"
        self.storm_status = 429
        self.storm_rng = random.Random(0)
        self.storm_hits = 0
        # What GET /models lists: none by default (the fake serves any model name it is asked
        # for); a test of the check before launch lists some.
        self.listed_models: list[str] = []
        # The context length GET /models reports for each listed model, as vLLM's max_model_len
        # (None: not reported, as llama-cpp-python's server).
        self.reported_context: int | None = None
        # A model's context: prompts longer than this many tokens are refused (None: no limit).
        self.context_tokens: int | None = None
        self.chars_per_token = 4.0
        self.refused_for_length = 0
        self.base_url: str = ""
        self._stopping = threading.Event()
        self._released = threading.Event()
        self._released.set()
        self.held = 0
        """Requests waiting for `release_requests()` now (see `hold_requests`)."""
        self._counter = 0
        self._lock = threading.Lock()
        # A scripted judge: with the script empty, the step this returns for a request's body
        # (its model, its messages), before `default`; None from it falls through to `default`.
        self.responder: Callable[[dict[str, Any]], Step | None] | None = None
        self.app = self._build_app()

    # script helpers
    def push(self, *steps: Step) -> FakeOpenAIServer:
        self.script.extend(steps)
        return self

    def push_text(self, text: str, *, usage: UsageSpec = AUTO, finish_reason: str = "stop") -> FakeOpenAIServer:
        return self.push(TextReply(text, usage=usage, finish_reason=finish_reason))

    def push_tool_calls(self, *calls: tuple[str, str], text: str | None = None, usage: UsageSpec = AUTO) -> FakeOpenAIServer:
        return self.push(ToolCallsReply(list(calls), text=text, usage=usage))

    def push_error(
        self, status: int, message: str = "scripted error", *, retry_after: str | float | None = None, headers: dict[str, str] | None = None
    ) -> FakeOpenAIServer:
        hdrs = dict(headers or {})
        if retry_after is not None:
            hdrs["Retry-After"] = str(retry_after)
        return self.push(ErrorReply(status, message, hdrs))

    def push_hang(self, seconds: float = 30.0) -> FakeOpenAIServer:
        return self.push(Hang(seconds))

    def hold_requests(self) -> None:
        """From now on every request waits, once recorded, until `release_requests()`."""
        self._released.clear()

    def release_requests(self) -> None:
        self._released.set()

    def reset(self) -> None:
        """Forget the script, the recorded requests and any mode (between tests)."""
        self.release_requests()
        self.script.clear()
        self.requests.clear()
        self.listed_models = []
        self.reported_context = None
        self.default = TextReply("ok")
        self.fixed_delay_ms = 0
        self.stream_usage = "honour"
        self.storm_share = 0.0
        self.storm_status = 429
        self.storm_rng = random.Random(0)
        self.storm_hits = 0
        self.context_tokens = None
        self.chars_per_token = 4.0
        self.refused_for_length = 0
        self.responder = None

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The prompt's length as this server counts it: characters of every message's text and
        tool calls, and of the tools offered, at `chars_per_token`, plus 4 a message."""
        chars = 0
        for message in body.get("messages", []):
            content = message.get("content")
            chars += len(content) if isinstance(content, str) else 0
            chars += sum(len(json.dumps(call)) for call in message.get("tool_calls") or [])
        chars += len(json.dumps(body.get("tools") or []))
        return int(chars / self.chars_per_token) + 4 * len(body.get("messages", []))

    # the app
    def _next_step(self, body: dict[str, Any]) -> Step:
        try:
            return self.script.popleft()
        except IndexError:
            pass
        answered = self.responder(body) if self.responder is not None else None
        return answered if answered is not None else self.default

    async def _pause(self, seconds: float) -> None:
        # in small steps, so that stopping the server ends a hang at once
        deadline = time.monotonic() + seconds
        while not self._stopping.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    async def _wait_for_release(self) -> None:
        with self._lock:
            self.held += 1
        try:
            while not (self._released.is_set() or self._stopping.is_set()):
                await asyncio.sleep(0.01)
        finally:
            with self._lock:
                self.held -= 1

    def rate_limit_storm(self, share: float, *, retry_after: str = "0.3", status: int = 429, seed: int = 0) -> FakeOpenAIServer:
        """Answer `share` of the requests (seeded, so a run repeats) with `status` and Retry-After."""
        self.storm_share, self.storm_retry_after, self.storm_status = share, retry_after, status
        self.storm_rng = random.Random(seed)
        return self

    def _in_storm(self) -> bool:
        with self._lock:
            hit = self.storm_rng.random() < self.storm_share
            self.storm_hits += hit
        return hit

    def _next_id(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def _usage(self, spec: UsageSpec, body: dict[str, Any], text: str | None) -> dict[str, int] | None:
        if spec is None:
            return None
        if spec == AUTO:
            prompt = sum(_words(m.get("content") if isinstance(m.get("content"), str) else "") for m in body.get("messages", [])) or 1
            completion = max(1, _words(text))
        else:
            prompt, completion = spec
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _build_app(self) -> FastAPI:
        app = FastAPI(title="fake OpenAI-compatible server")

        @app.get("/v1/models")
        async def models() -> dict[str, Any]:
            reported = {} if self.reported_context is None else {"max_model_len": self.reported_context}
            listed = [{"id": m, "object": "model", "owned_by": "parley-tests", **reported} for m in self.listed_models]
            return {"object": "list", "data": listed}

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Response:
            try:
                body = await request.json()
            except json.JSONDecodeError:
                return _error(400, "request body is not JSON")
            if self.record_requests:
                self.requests.append(
                    RecordedRequest(
                        path=request.url.path,
                        headers={k.lower(): v for k, v in request.headers.items()},
                        body=body,
                        received_at=time.time(),
                    )
                )
            if not self._released.is_set():
                await self._wait_for_release()
            if self.context_tokens is not None and (asked := self.prompt_tokens(body)) > self.context_tokens:
                with self._lock:
                    self.refused_for_length += 1
                return _error(
                    400,
                    f"This model's maximum context length is {self.context_tokens} tokens. However, you requested {asked} tokens "
                    f"({asked} in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
                )
            if self.storm_share and self._in_storm():
                return _error(self.storm_status, "rate limited (storm)", {"Retry-After": self.storm_retry_after})
            step = self._next_step(body)
            if self.fixed_delay_ms:
                await self._pause(self.fixed_delay_ms / 1000)
            if isinstance(step, Hang):
                await self._pause(step.seconds)
                step = TextReply("too late")
            if getattr(step, "delay_ms", 0):
                await self._pause(step.delay_ms / 1000)
            if isinstance(step, ErrorReply):
                return _error(step.status, step.message, step.headers)
            if isinstance(step, RawReply):
                if isinstance(step.body, str):
                    return Response(step.body, media_type="text/plain")
                return JSONResponse(step.body)
            stream = bool(body.get("stream"))
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            if stream and "stream_options" in body and self.stream_usage == "reject":
                return _error(400, "Unrecognized request argument supplied: stream_options")
            model = body.get("model", "fake-model")
            n = self._next_id()
            if stream:
                with_usage = wants_usage and self.stream_usage == "honour"
                return StreamingResponse(self._sse(step, body, model, n, with_usage), media_type="text/event-stream")
            return JSONResponse(self._completion(step, body, model, n))

        return app

    def _completion(self, step: Step, body: dict[str, Any], model: str, n: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": step.text}
        finish = "stop"
        if isinstance(step, ToolCallsReply):
            message["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
                for i, (name, args) in enumerate(step.calls)
            ]
            finish = "tool_calls"
        elif isinstance(step, TextReply):
            finish = step.finish_reason
        out: dict[str, Any] = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        usage = self._usage(step.usage, body, step.text)
        if usage is not None:
            out["usage"] = usage
        return out

    async def _sse(self, step: Step, body: dict[str, Any], model: str, n: int, with_usage: bool):
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

        def event(choices: list[dict[str, Any]], **extra: Any) -> str:
            return "data: " + json.dumps({**base, "choices": choices, **extra}) + "\n\n"

        yield event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        for i, piece in enumerate(re.findall(r"\S+\s*|\s+", step.text or "")):
            yield event([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
            if i == 0 and getattr(step, "stall_s", 0):
                await self._pause(step.stall_s)
            await asyncio.sleep(0)
        finish = "stop"
        if isinstance(step, ToolCallsReply):
            finish = "tool_calls"
            for i, (name, args) in enumerate(step.calls):
                head = {"index": i, "id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": ""}}
                yield event([{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}])
                half = len(args) // 2
                for part in (args[:half], args[half:]):
                    if part:
                        delta = {"tool_calls": [{"index": i, "function": {"arguments": part}}]}
                        yield event([{"index": 0, "delta": delta, "finish_reason": None}])
        elif isinstance(step, TextReply):
            finish = step.finish_reason
        yield event([{"index": 0, "delta": {}, "finish_reason": finish}])
        usage = self._usage(step.usage, body, step.text)
        if with_usage and usage is not None:
            yield event([], usage=usage)
        yield "data: [DONE]\n\n"


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(
        status, "server_error" if status >= 500 else "invalid_request_error"
    )
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": str(status)}},
        status_code=status,
        headers=headers or {},
    )


# -- running it ----------------------------------------------------------------------------------


def loopback_socket(port: int = 0) -> socket.socket:
    # Name the protocol: a socket made with proto 0 is not recognised as TCP when the server
    # decides to set TCP_NODELAY, and every reply on a kept-alive connection then waits ~40 ms.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


@contextlib.contextmanager
def run_fake_server(server: FakeOpenAIServer | None = None, *, port: int = 0) -> Iterator[FakeOpenAIServer]:
    """Serve a fake server on 127.0.0.1 (a free port by default) in a background thread; yields
    it with `base_url` set (`http://127.0.0.1:PORT/v1`); stops it on exit."""
    server = server or FakeOpenAIServer()
    sock = loopback_socket(port)
    host, bound_port = sock.getsockname()[:2]
    config = uvicorn.Config(
        server.app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        timeout_keep_alive=30,
    )
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, name="fake-openai-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60  # only a bound on a hang: a busy machine starts it slowly
    while not uv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the fake OpenAI server did not start")
        time.sleep(0.01)
    server.base_url = f"http://{host}:{bound_port}/v1"
    server._stopping.clear()
    try:
        yield server
    finally:
        server._stopping.set()
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextlib.contextmanager
def fake_server_process(
    *, delay_ms: int = 0, port: int = 0, storm: float = 0.0, retry_after: str = "0.3", text: str | None = None
) -> Iterator[str]:
    """Run the fake server in a child process (for benchmarks); yields its base_url. `text`:
    the reply to every request (default "ok")."""
    extra = ["--rate-limit-share", str(storm), "--retry-after", retry_after] if storm else []
    if text is not None:
        extra += ["--text", text]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai_server", "--port", str(port), "--delay-ms", str(delay_ms), *extra],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        match = re.search(r"(http://\S+)", line)
        if not match:
            raise RuntimeError(f"the fake OpenAI server process did not start: {line!r}")
        yield match.group(1)
    finally:
        stop_process(proc)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible chat server on loopback.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--delay-ms", type=int, default=0, help="answer every request after this long")
    parser.add_argument("--text", default="ok", help="the reply to every request")
    parser.add_argument("--rate-limit-share", type=float, default=0.0, help="answer this share of requests 429")
    parser.add_argument("--retry-after", default="0.3", help="the Retry-After of those 429s")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer()
    if args.rate_limit_share:
        server.rate_limit_storm(args.rate_limit_share, retry_after=args.retry_after)
    server.fixed_delay_ms = args.delay_ms
    server.default = TextReply(args.text)
    server.record_requests = False
    sock = loopback_socket(args.port)
    host, port = sock.getsockname()[:2]
    print(f"fake OpenAI server listening on http://{host}:{port}/v1", flush=True)
    uvicorn.Server(uvicorn.Config(server.app, log_level="warning", access_log=False, lifespan="off")).run(sockets=[sock])


if __name__ == "__main__":
    main()
