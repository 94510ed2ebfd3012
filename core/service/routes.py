"""The batch service's routes under /api, and the dependencies they share (the service's state,
the bearer token, unknown query parameters). `build_router` is used by parley.core.service.app.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, HTTPException, Query, Request, Security
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ValidationError

from parley.core.engine import BatchModels, EndpointCheckFailed
from parley.core.errors import ConfigError, ParleyError, PythonCodeRefused
from parley.core.ingress import StrictJsonRoute
from parley.core.records import BatchOptions, BatchRecord, LoadOptions, RoleModels, first_error
from parley.core.service.bot_hosts import AllowedHost, bot_host_problem, python_bot_problem, python_check_problem
from parley.core.service.health import health_report
from parley.core.service.inputs import InputInvalid, InputRefused, error_loc, error_message, is_inside, prepare_inputs, world_file_problem
from parley.core.service.jobs import BatchManager, JobConflict
from parley.core.service.models import (
    MAX_PLANNED,
    BatchActionResult,
    BatchBody,
    BatchCost,
    BatchLaunched,
    BatchList,
    BatchRequest,
    BatchStatusView,
    ErrorDetail,
    Health,
)
from parley.core.service.public_paths import PathScrubber
from parley.core.service.results import MEDIA_TYPES, chunks, render_results
from parley.core.service.token_guard import TOKEN_ENV
from parley.core.service.views import BatchSummaryView, cost_view, is_partial, list_view, status_view, summary_view
from parley.core.specs import SHIPPED_DIR
from parley.core.store import Store

if TYPE_CHECKING:
    from parley.core.engine import PreparedBatch

_ERRORS = {
    400: "A body that cannot be read (not UTF-8 JSON), or a Content-Length that is not a number.",
    401: "No bearer token, or the wrong one (only when the service has PARLEY_API_TOKEN set).",
    403: "A profile path outside the service's profile folders, or a Python bot (python:MODULE:NAME) on a service not started with --allow-python-bots.",
    404: "No batch with this id (or unique prefix of 6+ characters).",
    409: "The batch's state does not allow this (e.g. resuming a completed batch).",
    413: "The request body is larger than the service accepts.",
    503: "The service has not finished starting.",
}


def _responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorDetail, "description": _ERRORS[code]} for code in codes}


@dataclass
class ServiceState:
    """What the routes share, made when the app starts."""

    store: Store
    manager: BatchManager
    roots: list[Path]
    inputs_dir: Path
    defaults: RoleModels
    personality_dirs: list[str] = field(default_factory=list)
    allowed_bot_hosts: list[AllowedHost] = field(default_factory=list)
    allow_python_bots: bool = False
    """`parley serve --allow-python-bots`: requests may name python:MODULE:NAME bots."""

    def __post_init__(self) -> None:
        folders = [Path(d) for d in self.personality_dirs] + [SHIPPED_DIR.resolve()]
        if self.store.path is not None:
            folders.append(self.store.path.parent)
        self.scrub = PathScrubber(self.roots, self.inputs_dir, folders)


# ---- dependencies -----------------------------------------------------------------------------

_bearer = HTTPBearer(auto_error=False, description=f"The service's token ({TOKEN_ENV}), when it has one.")


async def require_token(credentials: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)]) -> None:
    """Declares the bearer token in the schema. The check itself is core.service.token_guard's,
    which runs before any route (and before the body is read)."""


def reject_unknown_query(request: Request) -> None:
    """A 422 for a query parameter the route does not take: `?fromat=csv` must not quietly
    return JSON."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None or not request.query_params:
        return
    known: set[str] = set()
    stack = [dependant]
    while stack:
        current = stack.pop()
        known |= {param.alias for param in current.query_params}
        stack.extend(current.dependencies)
    unknown = [name for name in request.query_params if name not in known]
    if unknown:
        takes = ", ".join(sorted(known)) or "none"
        raise RequestValidationError(
            [
                {
                    "type": "extra_forbidden",
                    "loc": ("query", name),
                    "msg": f"unknown query parameter (this route takes: {takes})",
                    "input": request.query_params[name],
                }
                for name in unknown
            ]
        )


def service(request: Request) -> ServiceState:
    state: ServiceState | None = request.app.state.service
    if state is None:
        raise HTTPException(503, "the service is not started (or is stopping)")
    return state


State = Annotated[ServiceState, Depends(service)]
BatchId = Annotated[str, PathParam(min_length=1, max_length=100, description="A batch id, or a unique prefix of 6+ characters.")]


async def _batch(state: ServiceState, batch_id: str) -> BatchRecord:
    try:
        return await asyncio.to_thread(state.store.get_batch, batch_id)
    except ParleyError as exc:
        message = str(exc).replace("`parley sessions list` shows what is stored", "GET /api/batches lists them")
        raise HTTPException(404, message) from None


MAX_PROBLEMS = 100
"""Problems listed in one 422; a body with more (10,000 scenarios with the same mistake) ends
its list with one saying how many more there are."""


def _without_paths(state: ServiceState, view: BaseModel) -> JSONResponse:
    """`view` as the route's JSON, each path value as clients see it (never the server's absolute path)."""
    return JSONResponse(state.scrub.deep(view.model_dump(mode="json", by_alias=True)))


BROWSER_HEADERS = ("origin", "referer", "sec-fetch-site", "sec-fetch-mode")
"""Headers only a browser sends: a request holding one comes from a web page."""


def _named_by_id(batch_id: str, request: Request) -> None:
    """A state-changing route called from a web page must name its batch by id: `latest` is
    whatever ran last, which a page cannot know and must not pick (403)."""
    if batch_id.strip().lower().startswith("latest") and any(name in request.headers for name in BROWSER_HEADERS):
        raise HTTPException(403, "from a browser, name the batch by its id (or a prefix of 6+ characters), not `latest`")


def _unprocessable(problems: list[tuple[list[str | int], str]], scrub: Callable[[str], str] = str) -> HTTPException:
    """A 422 listing `problems` (at most MAX_PROBLEMS), each message through `scrub`."""
    shown = [(loc, scrub(msg)) for loc, msg in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        shown.append((["body"], f"... and {len(problems) - MAX_PROBLEMS} more problems like these"))
    return HTTPException(422, [{"loc": loc, "msg": msg, "type": "invalid_input"} for loc, msg in shown])


# ---- routes -----------------------------------------------------------------------------------


def build_router(*, guarded: bool) -> APIRouter:
    """The /api routes; with `guarded`, the batch routes need the bearer token (and the schema
    says so; without a token the schema claims no security it does not have)."""
    api = APIRouter(prefix="/api", dependencies=[Depends(reject_unknown_query)])
    guards = [Depends(require_token)] if guarded else []
    batches = APIRouter(prefix="/batches", dependencies=guards, tags=["batches"], route_class=StrictJsonRoute)

    @api.get("/health", response_model=Health, tags=["service"], summary="Service and database health")
    async def health(request: Request) -> Health:
        """Status, version, whether the database answers, and which roles' models have the keys
        they need (never the keys themselves). Needs no token."""
        return await health_report(request.app.state.service, request.app.state.version, request.app.state.token is not None)

    @batches.post(
        "",
        status_code=201,
        response_model=BatchLaunched,
        summary="Launch a batch",
        responses=_responses(400, 401, 403, 409, 413, 503),
    )
    async def launch(
        state: State,
        body: Annotated[
            BatchBody,
            Body(
                description='003\'s {"scenarios": [...]}, a bare list of scenarios, or {"profiles": [...]} '
                "(with or without scenarios), each with optional options (models, concurrency, trials...).",
            ),
        ],
    ) -> BatchLaunched:
        """Check the inputs, store the batch and start it; the reply comes at once and the batch
        runs in the background. Problems in the inputs are a 422 naming the field and why; nothing
        is stored then."""
        from parley.core.engine import InvalidInputs, prepare_batch

        if isinstance(body, list) and not body:
            raise _unprocessable([(["body"], "the list of scenarios is empty: there is nothing to run")])
        request = body if isinstance(body, BatchRequest) else BatchRequest(scenarios=body)
        models = request.models
        try:
            declared = BatchOptions.from_values(request.option_values())
        except ValidationError as exc:  # a `gen`, `price` or `limit` entry that is not one
            first = first_error(exc, "body")
            field = {"models.generation": "gen", "prices": "price", "limits": "limit"}.get(first.where, first.where)
            raise _unprocessable([(["body", field], first.message.removeprefix("Value error, "))]) from None
        options = declared.model_copy(
            update={
                "models": RoleModels(
                    bot=models.bot or state.defaults.bot,
                    user=models.user or state.defaults.user,
                    judge=models.judge or state.defaults.judge,
                    generation=declared.models.generation,
                ),
                # A profile's files are read beside it, never from the service's working directory.
                "loading": LoadOptions(from_working_dir=False, personality_dirs=state.personality_dirs),
            }
        )
        refused_python = python_bot_problem(options.models.bot, state.allow_python_bots)
        if refused_python is not None:  # code execution on the server: refused before anything is read
            raise HTTPException(403, refused_python)
        refused_bot = bot_host_problem(options.models.bot, state.allowed_bot_hosts)
        if refused_bot is not None:
            raise _unprocessable([(["body", "models", "bot"], refused_bot)])
        refused_world = await asyncio.to_thread(world_file_problem, body, state.allow_python_bots)
        if refused_world is not None:  # a world file is code, like a python: bot: refused before anything loads it
            raise HTTPException(403, f"{'.'.join(str(p) for p in refused_world[0])}: {refused_world[1]}")
        try:
            inputs = await asyncio.to_thread(prepare_inputs, body, state.inputs_dir, state.roots)
        except InputRefused as exc:
            raise HTTPException(403, state.scrub(str(exc))) from None
        except InputInvalid as exc:
            raise _unprocessable([(exc.loc, str(exc))], state.scrub) from None

        def unprocessable(problems: list[tuple[list[str | int], str]]) -> HTTPException:
            inputs.discard()
            return _unprocessable(
                [(loc, state.scrub(msg, inputs.folder)) for loc, msg in problems[: MAX_PROBLEMS + 1]] + problems[MAX_PROBLEMS + 1 :]
            )

        try:
            refusal = None if state.allow_python_bots else python_check_problem
            batch_models = BatchModels.for_batch(options, store=state.store, python_refusal=refusal)
            prepared = await prepare_batch(state.store, inputs.sources, options, models=batch_models, max_planned=MAX_PLANNED)
            await state.manager.launch(prepared)
        except InvalidInputs as exc:
            raise unprocessable([(error_loc(e, inputs), error_message(e, inputs)) for e in exc.errors]) from None
        except JobConflict as exc:
            inputs.discard()
            raise HTTPException(409, str(exc)) from None
        except EndpointCheckFailed as exc:  # nothing answers there, or the key is refused: before anything runs
            inputs.discard()
            raise _unprocessable([(["body", "models", exc.role], str(exc))]) from None
        except PythonCodeRefused as exc:  # code execution on the server: refused before any module is imported
            inputs.discard()
            raise HTTPException(403, state.scrub(str(exc))) from None
        except ConfigError as exc:
            role = re.search(r"for the (bot|user|judge) role", str(exc))
            raise unprocessable([(["body", "models", *([role.group(1)] if role else [])], str(exc))]) from None
        except ParleyError as exc:
            raise unprocessable([(["body"], str(exc))]) from None
        except BaseException:
            inputs.discard()
            raise
        return BatchLaunched(
            batch_id=prepared.id, status="launched", total_scenarios=prepared.total, warnings=_launch_warnings(prepared, state.scrub)
        )

    @batches.get("", response_model=BatchList, summary="List batches", responses=_responses(401, 503))
    async def list_batches(
        state: State,
        limit: Annotated[int, Query(ge=1, le=500, description="Batches per page.")] = 50,
        offset: Annotated[int, Query(ge=0, le=10**9, description="Batches to skip.")] = 0,
    ) -> BatchList:
        """Batches newest first, a page at a time, with their counts so far."""
        await asyncio.to_thread(state.store.interrupt_orphans)
        return await asyncio.to_thread(list_view, state.store, limit, offset)

    @batches.get(
        "/{batch_id}", response_model=BatchStatusView, summary="A batch's status and progress", responses=_responses(401, 404, 503)
    )
    async def batch_status(state: State, batch_id: BatchId) -> JSONResponse:
        """Status, progress as a real fraction (stored conversations / planned: it moves as each
        conversation ends), counts and timings."""
        batch = await _batch(state, batch_id)
        if batch.status in ("pending", "running"):
            await state.manager.settle(batch.id)
        row = await asyncio.to_thread(state.store.batch_row, batch.id)
        progress = state.manager.progress(batch.id)
        owner = None
        if progress is None and row.batch.status in ("pending", "running"):
            found = await asyncio.to_thread(state.store.batch_owner, batch.id)
            owner = found.describe() if found else None
        return _without_paths(state, status_view(row, progress, owner))

    @batches.get(
        "/{batch_id}/results",
        summary="A batch's results (json, csv or ndjson)",
        responses={
            200: {
                "description": "The results. JSON: parley's export document with `partial` first; CSV and "
                "NDJSON: one row / line per conversation. The X-Parley-Partial header says whether the batch "
                "is still running or stopped short (true) or completed (false).",
                "content": {
                    "application/json": {"schema": {"type": "object"}},
                    "text/csv": {"schema": {"type": "string"}},
                    "application/x-ndjson": {"schema": {"type": "string"}},
                },
            },
            **_responses(401, 404, 503),
        },
    )
    async def results(
        state: State,
        batch_id: BatchId,
        format: Annotated[Literal["json", "csv", "ndjson"], Query(description="json, csv or ndjson.")] = "json",
    ) -> StreamingResponse:
        """Every stored conversation of the batch, also while it runs (flagged as partial)."""
        batch = await _batch(state, batch_id)
        partial = is_partial(batch)
        spool = await asyncio.to_thread(render_results, state.store, batch.id, format, partial, state.scrub.deep)
        headers = {
            "X-Parley-Partial": str(partial).lower(),
            "X-Parley-Batch-Status": batch.status,
            "Content-Disposition": f'inline; filename="batch-{batch.id}.{format}"',
        }
        return StreamingResponse(chunks(spool), media_type=MEDIA_TYPES[format], headers=headers)

    @batches.get(
        "/{batch_id}/summary", response_model=BatchSummaryView, summary="A batch's statistics", responses=_responses(401, 404, 503)
    )
    async def summary(state: State, batch_id: BatchId) -> JSONResponse:
        """The report's statistics: pass rate, pass^k, scores, profiles, usage, failures."""
        batch = await _batch(state, batch_id)
        return _without_paths(state, await asyncio.to_thread(summary_view, state.store, batch.id))

    @batches.get(
        "/{batch_id}/cost", response_model=BatchCost, summary="A batch's tokens and cost per role", responses=_responses(401, 404, 503)
    )
    async def cost(state: State, batch_id: BatchId) -> BatchCost:
        """Tokens and cost per role from the stored usage. A model without a known price makes its
        role's cost and the total null, with a note: never 0 for unknown."""
        batch = await _batch(state, batch_id)
        return await asyncio.to_thread(cost_view, state.store, batch.id)

    @batches.post(
        "/{batch_id}/cancel", response_model=BatchActionResult, summary="Cancel a running batch", responses=_responses(401, 404, 409, 503)
    )
    async def cancel(state: State, batch_id: BatchId, request: Request) -> BatchActionResult:
        """Stop a batch this service runs: conversations in flight are saved as cancelled, the
        batch ends `cancelled` (it can still be resumed). 409 for a batch that is not running here."""
        _named_by_id(batch_id, request)
        batch = await _batch(state, batch_id)
        try:
            await state.manager.cancel(batch.id)
        except JobConflict as exc:
            raise HTTPException(409, str(exc)) from None
        now = await asyncio.to_thread(state.store.get_batch, batch.id)
        return BatchActionResult(batch_id=batch.id, status=now.status, message=f"batch {batch.id} cancelled")

    @batches.post(
        "/{batch_id}/resume",
        status_code=202,
        response_model=BatchLaunched,
        summary="Resume an interrupted, cancelled or failed batch",
        responses=_responses(401, 403, 404, 409, 503),
    )
    async def resume(state: State, batch_id: BatchId, request: Request) -> BatchLaunched:
        """Re-plan the batch from its stored inputs and options and run only the conversations not
        completed (errors and cancelled ones run again). 409 for a completed or running batch."""
        _named_by_id(batch_id, request)
        batch = await _batch(state, batch_id)
        allowed = [*state.roots, state.inputs_dir]

        def confined(record: BatchRecord) -> None:
            outside = [s for s in record.sources if not is_inside(Path(s).resolve(), allowed)]
            if outside:
                raise InputRefused(
                    f"batch {record.id} was started from files outside the service's profile folders "
                    f"({', '.join(outside)}); resume it with `parley run --resume {record.id}`"
                )
            refused_bot = python_bot_problem(record.options.models.bot, state.allow_python_bots) or bot_host_problem(
                record.options.models.bot, state.allowed_bot_hosts
            )
            if refused_bot is not None:
                raise InputRefused(f"batch {record.id}: {refused_bot}; or resume it with `parley run --resume {record.id}`")

        try:
            refusal = None if state.allow_python_bots else python_check_problem
            prepared = await state.manager.resume(batch.id, confined, python_refusal=refusal)
        except (InputRefused, PythonCodeRefused) as exc:
            raise HTTPException(403, state.scrub(str(exc))) from None
        except ParleyError as exc:  # JobConflict, sources gone or changed, a missing key
            raise HTTPException(409, state.scrub(str(exc))) from None
        return BatchLaunched(
            batch_id=prepared.id,
            status="resumed",
            total_scenarios=prepared.total,
            already_done=prepared.already_done,
            warnings=_launch_warnings(prepared, state.scrub),
        )

    api.include_router(batches)
    return api


def _launch_warnings(prepared: PreparedBatch, scrub: Callable[[str], str]) -> list[str]:
    """The loader's warnings, and the files of a folder that were left out for their problems
    (without the server's absolute paths)."""
    return [scrub(w) for w in (*prepared.warnings, *(f"left out: {error.render()}" for error in prepared.left_out))]
