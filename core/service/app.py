"""The batch REST service: 003's API under /api, on parley's engine and SQLite store.

`create_app(db_path=..., profile_dirs=[...], token=...)` builds the FastAPI app; `parley serve`
runs it with uvicorn. Batches run on their own thread and event loop (parley.core.service.jobs) and live
in the database: a restart loses no finished conversation, and a batch the restart cut short is
`interrupted` and can be resumed.

Guards: an optional bearer token, checked before anything else (every route but /health needs
it, the schema and docs included; parley.core.service.token_guard); without one, only loopback
Host names and no other web origin (DNS rebinding, a page's cross-origin POST:
parley.core.service.browser_guard); request bodies are capped
(413) and read strictly (NaN, infinite numbers and lone surrogates are a 422 naming the field;
parley.core.ingress); profile paths must resolve inside the configured profile folders (403
otherwise; parley.core.service.inputs); connector bots only on allowed hosts
(parley.core.service.bot_hosts); replies never show the server's absolute paths, nor a secret the
service resolved (its token, the batches' keys; parley.core.service.redacted_responses).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from parley.core.ingress import DEFAULT_MAX_BODY_BYTES, BodyLimit, encodable
from parley.core.records import RoleModels
from parley.core.redaction import register_secret
from parley.core.service.bot_hosts import parse_allowed_host
from parley.core.service.browser_guard import BrowserGuard
from parley.core.service.jobs import BatchManager
from parley.core.service.models import BODY_TAGS
from parley.core.service.redacted_responses import RedactedResponses
from parley.core.service.routes import ServiceState, build_router
from parley.core.service.token_guard import TOKEN_ENV, TokenGuard
from parley.core.settings import settings
from parley.core.specs import SHIPPED_DIR
from parley.core.store import Store

if TYPE_CHECKING:
    from parley.core.engine.distributed import Placement

__all__ = ["TOKEN_ENV", "create_app", "default_profile_dirs"]


def default_profile_dirs() -> list[Path]:
    """`profiles/` under the working directory when there is one, else the shipped profiles."""
    here = Path.cwd() / "profiles"
    return [here if here.is_dir() else SHIPPED_DIR]


def create_app(
    *,
    db_path: str | os.PathLike[str] | None = None,
    profile_dirs: Sequence[str | os.PathLike[str]] | None = None,
    token: str | None = None,
    inputs_dir: str | os.PathLike[str] | None = None,
    default_models: RoleModels | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    grace_s: float = 2.0,
    personality_dirs: Sequence[str | os.PathLike[str]] = (),
    allowed_bot_hosts: Sequence[str] = (),
    placement: Placement | None = None,
    allow_python_bots: bool = False,
    allowed_hosts: Sequence[str] = (),
) -> FastAPI:
    """The service over the database at `db_path` (default as `Store.open`), reading profiles
    only inside `profile_dirs` (default: see default_profile_dirs), keeping request inputs in
    `inputs_dir` (default: service-inputs/ beside the database). `token` (default
    $PARLEY_API_TOKEN; "" for none) guards every route but /health. A profile's personality and
    list-function files are read beside it, else in `personality_dirs` (`--personalities`).
    `allowed_bot_hosts` (HOST or HOST:PORT) are the hosts connector bots named in requests may be on;
    `allow_python_bots` lets requests name python:MODULE:NAME bots (code run on the server: 403 otherwise).
    Without a token, only requests for a loopback Host (or one of `allowed_hosts`) and from no other
    web origin are answered (parley.core.service.browser_guard).
    With `placement`, batches run sharded over worker processes (`parley serve --workers N`)."""
    token = settings().token if token is None else token
    register_secret(token, origin=TOKEN_ENV)  # whatever a batch's bot or model echoes, the service's token is never shown
    bot_hosts = [parse_allowed_host(host) for host in allowed_bot_hosts]
    roots = [Path(p).expanduser().resolve() for p in (profile_dirs or default_profile_dirs())]
    defaults = default_models or RoleModels()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = await asyncio.to_thread(Store.open, db_path)
        # The batches write through a connection of their own, so a status call never waits for
        # the lock of a connection that twenty batches keep busy (SQLite's WAL lets them both go).
        batch_store = await asyncio.to_thread(Store.open, store.path) if store.path is not None else store
        beside_db = (store.path.parent if store.path else Path.cwd()) / "service-inputs"
        folder = Path(inputs_dir) if inputs_dir is not None else beside_db
        manager = BatchManager(batch_store, grace_s=grace_s, placement=placement)
        await manager.start()
        app.state.service = ServiceState(
            store,
            manager,
            roots,
            folder.resolve(),
            defaults,
            [str(Path(d).resolve()) for d in personality_dirs],
            bot_hosts,
            allow_python_bots,
        )
        try:
            yield
        finally:
            app.state.service = None
            await manager.shutdown()
            if batch_store is not store:
                batch_store.close()
            store.close()

    from importlib.metadata import PackageNotFoundError, version

    try:
        app_version = version("parley")
    except PackageNotFoundError:
        app_version = "0.0.0"
    app = FastAPI(
        title="parley batch service",
        version=app_version,
        description="Launch batches of simulated customer conversations, watch them, fetch results, "
        "summary and cost. Batches live in parley's SQLite database and survive a restart.",
        lifespan=lifespan,
    )
    app.state.service = None
    app.state.token = token or None
    app.state.version = app_version
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(RedactedResponses)  # what any route answers, without the secrets this process resolved
    app.add_middleware(BrowserGuard, token=app.state.token, allowed_hosts=allowed_hosts)  # no token: no web page gets in
    app.add_middleware(TokenGuard, token=app.state.token)  # added last: runs first
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(405, _method_not_allowed)
    app.include_router(build_router(guarded=app.state.token is not None))
    return app


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422, with the body's union tag left out of `loc` (["body", "concurrency"]) and
    every echoed value encodable (a value that is not, such as an infinite float, is shown as text)."""
    errors = []
    for error in exc.errors() if isinstance(exc, RequestValidationError) else []:
        loc = list(error.get("loc", ()))
        if len(loc) > 1 and loc[0] == "body" and loc[1] in BODY_TAGS:
            del loc[1]
        errors.append({**error, "loc": loc})
    return JSONResponse({"detail": encodable(jsonable_encoder(errors, custom_encoder={Exception: str}))}, status_code=422)


async def _method_not_allowed(request: Request, exc: Exception) -> JSONResponse:
    """405 with every method the path has in `Allow` (Starlette names only the first route's,
    and GET and POST /api/batches are two routes)."""
    from starlette.routing import Match

    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches(request.scope)
        if match == Match.PARTIAL:
            methods |= set(getattr(route, "methods", None) or ())
    return JSONResponse({"detail": "Method Not Allowed"}, status_code=405, headers={"Allow": ", ".join(sorted(methods))})
