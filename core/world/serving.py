"""A world served over HTTP: each running conversation's private world, for bots parley does not run.

A deployed bot is given its conversation's world URL (`{world_url}` in an HTTP bot's payload or
headers, Rasa's `metadata`) and calls the world's tools there:

    POST {world_url}/tools/{name}    body: the arguments as a JSON object   -> the result as JSON
    GET  {world_url}/openapi.json    the OpenAPI document of this world's tools
    GET  {world_url}/                the world's name, policy and tools (and a page for people)

Every call is run by the conversation's `WorldTools`, so it is recorded as a tool call of that
conversation, and world checks, violations, claims and the judge's view apply to a deployed bot as
to a built-in one. A refusal answers with its status (409 for the policy, 4xx for a wrong request)
and `{"detail": {"reason": ..., "message": ...}}`; the body of a 200 is the tool's result.

The URL is unguessable (a random token per conversation) and carries the conversation's identity:
on a session-bound world, nothing a caller sends (a header such as `X-Customer-Id`, an argument)
makes a tool act for another customer; one conversation's URL never reaches another's world; a
call after its conversation ended gets 410 Gone; an unknown token 404.

`WorldServer` is one uvicorn server on loopback (or a bind address of your choice, with the URL
bots should use when they run elsewhere) started on the running event loop; the tools run on that
loop, as the built-in bot's do.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import secrets
import socket
from dataclasses import dataclass, field
from typing import Any

from parley.core.records import ToolCall
from parley.core.world.executor import WorldTools

__all__ = ["ServedWorld", "ServedWorldTools", "WorldServer", "openapi_document", "world_page"]

log = logging.getLogger("parley.world.serving")

MAX_BODY_BYTES = 256 * 1024
MOUNT = "/w"


@dataclass
class ServedWorld:
    """One conversation's world as served: its tools and whether the conversation still runs."""

    tools: WorldTools
    token: str
    open: bool = True
    calls: int = 0
    served: list[str] = field(default_factory=list)


def openapi_document(tools: WorldTools, server_url: str = "") -> dict[str, Any]:
    """The OpenAPI 3.1 document of a world's tools (one POST route per tool)."""
    world = tools.world
    paths: dict[str, Any] = {}
    error = {"$ref": "#/components/schemas/Error"}
    for declared in world.declared_tools:
        paths[f"/tools/{declared.name}"] = {
            "post": {
                "operationId": declared.name,
                "summary": declared.description,
                "tags": ["changes the world" if declared.changes_state else "reads"],
                "requestBody": {"required": False, "content": {"application/json": {"schema": declared.parameters}}},
                "responses": {
                    "200": {"description": "The tool's result.", "content": {"application/json": {"schema": {}}}},
                    "409": {"description": "Refused by the policy.", "content": {"application/json": {"schema": error}}},
                    "4XX": {
                        "description": "A wrong request (unknown record, bad arguments).",
                        "content": {"application/json": {"schema": error}},
                    },
                    "410": {"description": "The conversation has ended."},
                },
            }
        }
    return {
        "openapi": "3.1.0",
        "info": {"title": f"parley world: {world.name}", "version": "1", "description": world.description or world.name},
        "servers": [{"url": server_url}] if server_url else [],
        "paths": paths,
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "detail": {
                            "type": "object",
                            "properties": {"reason": {"type": "string"}, "message": {"type": "string"}},
                            "required": ["reason", "message"],
                        }
                    },
                    "required": ["detail"],
                }
            }
        },
    }


def world_page(tools: WorldTools, base: str) -> str:
    """A self-contained HTML page (nothing loaded from elsewhere) listing the world's tools with
    their schemas and a form to call each one."""
    world = tools.world
    rows = []
    for declared in world.declared_tools:
        example = {name: declared.examples.get(name, "") for name in declared.parameter_names}
        rows.append(
            f"<section><h2>{html.escape(declared.name)}{' <small>(changes the world)</small>' if declared.changes_state else ''}</h2>"
            f"<p>{html.escape(declared.description)}</p>"
            f"<pre>{html.escape(json.dumps(declared.parameters, indent=2))}</pre>"
            f"<form data-tool='{html.escape(declared.name)}'><textarea rows='3' cols='70'>{html.escape(json.dumps(example))}</textarea>"
            "<br><button type='submit'>call</button><pre class='out'></pre></form></section>"
        )
    script = (
        "document.querySelectorAll('form').forEach(f=>f.addEventListener('submit',async e=>{e.preventDefault();"
        "const r=await fetch(" + json.dumps(base) + "+'/tools/'+f.dataset.tool,{method:'POST',headers:{'Content-Type':'application/json'},"
        "body:f.querySelector('textarea').value});f.querySelector('.out').textContent=r.status+' '+await r.text();}));"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>parley world: "
        + html.escape(world.name)
        + "</title><style>body{font-family:sans-serif;max-width:60em;margin:2em auto}pre{background:#f4f4f4;padding:.5em;"
        "overflow:auto}</style></head><body>"
        + f"<h1>World: {html.escape(world.name)}</h1><p>{html.escape(world.description)}</p>"
        + f"<h2>Policy</h2><pre>{html.escape(world.policy)}</pre>"
        + f"<p>OpenAPI document: <a href='{html.escape(base)}/openapi.json'>openapi.json</a></p>"
        + "".join(rows)
        + f"<script>{script}</script></body></html>"
    )


class WorldServer:
    """One HTTP server for the worlds of many conversations (see the module doc)."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, advertised: str | None = None) -> None:
        self.host = host
        self.port = port
        self.advertised = advertised.rstrip("/") if advertised else None
        self._worlds: dict[str, ServedWorld] = {}
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None

    @property
    def base_url(self) -> str:
        if self.advertised:
            return self.advertised
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def register(self, tools: WorldTools) -> str:
        """Serve `tools`' world until `close_world`; its URL (unguessable, one per conversation)."""
        token = secrets.token_urlsafe(24)
        self._worlds[token] = ServedWorld(tools=tools, token=token)
        return f"{self.base_url}{MOUNT}/{token}"

    def close_world(self, url_or_token: str) -> None:
        """The conversation ended: its URL answers 410 from now on."""
        token = url_or_token.rstrip("/").rsplit("/", 1)[-1]
        served = self._worlds.get(token)
        if served is not None:
            served.open = False

    def served(self, token: str) -> ServedWorld | None:
        return self._worlds.get(token)

    # -- the server ---------------------------------------------------------------------------------

    def app(self) -> Any:
        """The ASGI app: every world behind its token."""
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, JSONResponse, Response
        from starlette.routing import Route

        def lookup(request: Request) -> ServedWorld | Response:
            served = self._worlds.get(request.path_params["token"])
            if served is None:
                return JSONResponse({"detail": {"reason": "unknown_world", "message": "No world is served at this URL."}}, status_code=404)
            if not served.open:
                return JSONResponse(
                    {"detail": {"reason": "conversation_ended", "message": "This conversation has ended."}}, status_code=410
                )
            return served

        async def index(request: Request) -> Response:
            found = lookup(request)
            if isinstance(found, Response):
                return found
            base = str(request.url).rstrip("/")
            if "text/html" in request.headers.get("accept", ""):
                return HTMLResponse(world_page(found.tools, base))
            world = found.tools.world
            return JSONResponse(
                {
                    "world": world.name,
                    "description": world.description,
                    "policy": world.policy,
                    "tools": [t.spec.model_dump() for t in world.declared_tools],
                }
            )

        async def openapi(request: Request) -> Response:
            found = lookup(request)
            if isinstance(found, Response):
                return found
            return JSONResponse(openapi_document(found.tools, str(request.url).rsplit("/openapi.json", 1)[0]))

        async def call(request: Request) -> Response:
            found = lookup(request)
            if isinstance(found, Response):
                return found
            name = request.path_params["name"]
            body = await _bounded_body(request)
            if body is None:
                return JSONResponse(
                    {"detail": {"reason": "body_too_large", "message": f"The body is over {MAX_BODY_BYTES} bytes."}}, status_code=413
                )
            try:
                text = body.decode("utf-8") if body else "{}"
            except UnicodeDecodeError:
                return JSONResponse({"detail": {"reason": "invalid_body", "message": "The body is not UTF-8."}}, status_code=422)
            found.calls += 1
            record = await found.tools.execute(ToolCall(id=f"http_{found.calls}", name=name, arguments=text))
            if record.ok:
                try:
                    return JSONResponse(json.loads(record.result))
                except ValueError:
                    return JSONResponse(record.result)
            status = record.http_status or (409 if record.refused else 404 if record.error == "unknown_tool" else 422)
            message = record.result.split("] ", 1)[-1]
            return JSONResponse({"detail": {"reason": record.error or "error", "message": message}}, status_code=status)

        return Starlette(
            routes=[
                Route(f"{MOUNT}/{{token}}", index, methods=["GET"]),
                Route(f"{MOUNT}/{{token}}/", index, methods=["GET"]),
                Route(f"{MOUNT}/{{token}}/openapi.json", openapi, methods=["GET"]),
                Route(f"{MOUNT}/{{token}}/tools/{{name}}", call, methods=["POST"]),
            ]
        )

    async def start(self) -> None:
        """Start serving on the running loop; returns once the server listens."""
        import uvicorn

        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        self._socket = sock
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        if self._socket is not None:
            self._socket.close()

    async def __aenter__(self) -> WorldServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def _bounded_body(request: Any) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class ServedWorldTools:
    """A bot's side of a served world: the tools of the world at `url`, called over HTTP, as a bot
    that parley does not run (`parley serve-bot` given a conversation's `world_url`) holds them. It
    offers what `WorldTools` offers a bot (the world's declaration for its prompt, the specs, and
    `execute`), and keeps its own records of the calls; parley keeps its own on the serving side."""

    def __init__(self, world: Any, url: str, customer_id: str, *, timeout_s: float = 30.0) -> None:
        self.world = world
        self.url = url.rstrip("/")
        self.customer_id = customer_id
        self.records: list[Any] = []
        self.specs = [t.spec for t in world.declared_tools]
        self._timeout_s = timeout_s

    @property
    def tool_names(self) -> list[str]:
        return list(self.world.tool_names)

    async def execute(self, call: ToolCall) -> Any:
        """Run one call on the served world; the record of it (never raises but for cancellation)."""
        import time

        import httpx

        from parley.core.records import ToolCallRecord

        started = time.perf_counter()
        status: int | None = None
        try:
            async with httpx.AsyncClient(timeout=self._timeout_s) as client:
                response = await client.post(f"{self.url}/tools/{call.name}", content=(call.arguments or "{}").encode("utf-8"))
            status = response.status_code
            body = response.json() if response.content else {}
        except (httpx.HTTPError, ValueError) as exc:
            record = ToolCallRecord(
                call_id=call.id,
                name=call.name,
                arguments_raw=call.arguments,
                customer_id=self.customer_id,
                result=f"ERROR [unavailable] The world at {self.url} could not be reached ({type(exc).__name__}).",
                ok=False,
                error="unavailable",
                http_status=status,
                latency_s=time.perf_counter() - started,
            )
            self.records.append(record)
            return record
        ok = 200 <= status < 300
        detail = body.get("detail") if isinstance(body, dict) and not ok else None
        reason = str(detail.get("reason", f"http_{status}")) if isinstance(detail, dict) else f"http_{status}"
        message = str(detail.get("message", "")) if isinstance(detail, dict) else ""
        refused = not ok and status in (403, 409)
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            arguments = None
        record = ToolCallRecord(
            call_id=call.id,
            name=call.name,
            arguments_raw=call.arguments,
            arguments=arguments if isinstance(arguments, dict) else None,
            customer_id=self.customer_id,
            result=json.dumps(body, separators=(",", ":"), ensure_ascii=False)
            if ok
            else f"{'REFUSED' if refused else 'ERROR'} [{status} {reason}] {message}",
            ok=ok,
            error=None if ok else reason,
            refused=refused,
            http_status=status,
            latency_s=time.perf_counter() - started,
        )
        self.records.append(record)
        return record
