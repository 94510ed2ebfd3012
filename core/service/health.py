"""GET /api/health: is the service up, does its database answer, can each role's model run.

Which keys are set is told by variable name only; a key's value never leaves the process.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from parley.core.errors import ConfigError
from parley.core.records import RoleModels
from parley.core.service.models import PROFILE_USER_MODEL, DatabaseHealth, Health, RoleHealth

PROVIDER_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENROUTER_API_KEY", "OLLAMA_BASE_URL")


def role_health(role: str, name: str) -> RoleHealth:
    """Whether `name` could run for `role` now: its key / base URL is set (no request is sent)."""
    if name in ("offline", PROFILE_USER_MODEL):
        return RoleHealth(model=name, ready=True)
    from parley.core.models import get_model

    try:
        model = get_model(name, role=role)
        check = getattr(model, "check", None)
        if callable(check):
            check()
    except ConfigError as exc:
        return RoleHealth(model=name, ready=False, problem=str(exc))
    return RoleHealth(model=name, ready=True)


def _variables(defaults: RoleModels) -> list[str]:
    from parley.core.models import parse_model_name

    names = list(PROVIDER_VARIABLES)
    for model in (defaults.bot, defaults.user, defaults.judge):
        try:
            spec = parse_model_name(model)
        except ConfigError:
            continue
        for variable in (spec.base_url_env, spec.api_key_env):
            if variable and variable not in names:
                names.append(variable)
    return names


async def health_report(state: Any, version: str, auth: bool) -> Health:
    """The health of a running service (`state` None: not started or stopping)."""
    defaults: RoleModels = state.defaults if state is not None else RoleModels()
    if state is None:
        database = DatabaseHealth(path="", reachable=False, error="the service is not started")
    else:
        path = state.store.path.name if state.store.path is not None else ":memory:"  # never the server's absolute path
        try:
            schema = await asyncio.to_thread(state.store.schema_version)
            database = DatabaseHealth(path=path, reachable=True, schema_version=schema)
        except Exception as exc:  # noqa: BLE001 - health reports, never fails
            database = DatabaseHealth(path=path, reachable=False, error=f"{type(exc).__name__}: {exc}")
    roles = {role: role_health(role, getattr(defaults, role)) for role in ("bot", "user", "judge")}
    return Health(
        status="healthy" if database.reachable else "degraded",
        version=version,
        database=database,
        roles=roles,
        keys={name: bool(os.environ.get(name, "").strip()) for name in _variables(defaults)},
        running_batches=state.manager.running if state is not None else 0,
        auth=auth,
    )
