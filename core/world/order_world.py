"""Worlds: a private copy of the order database per conversation, and HTTP clients to reach one.

This is the one place the engine reaches into mockapi. A World is served in-process through
httpx's ASGI transport, so a conversation's tool calls never touch the network; the same tools
can also talk to any order API by base URL (e.g. a mockapi served with uvicorn).

`World` and `WorldTemplate` are imported on first use: they bring in FastAPI, which records
such as `Conversation` (and so the TUI's start-up) do not need.
"""

from __future__ import annotations

import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import httpx

from parley.mockapi.schema import AuditEntry, WorldState

if TYPE_CHECKING:
    from parley.mockapi.worlds import World, WorldTemplate


def __getattr__(name: str) -> Any:
    if name in ("World", "WorldTemplate"):
        from parley.mockapi import worlds

        return getattr(worlds, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AuditEntry",
    "World",
    "WorldState",
    "WorldTemplate",
    "WORLD_BASE_URL",
    "api_client",
    "new_world",
    "world_client",
    "world_template",
]

WORLD_BASE_URL = "http://world"
DEFAULT_TIMEOUT_S = 15.0


def world_template(today: datetime.date | None = None) -> WorldTemplate:
    """The shipped fixture as a template, built once per `today` (None: the real date)."""
    return _cached_template(today or datetime.date.today())


@lru_cache(maxsize=8)
def _cached_template(today: datetime.date) -> WorldTemplate:
    from parley.mockapi.worlds import WorldTemplate

    return WorldTemplate(today=today)


def new_world(today: datetime.date | None = None, template: WorldTemplate | None = None) -> World:
    """A fresh private World from `template` (default: the shipped fixture at `today`)."""
    return (template or world_template(today)).new_world()


def world_client(world: World, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> httpx.AsyncClient:
    """An async client serving `world`'s API in-process; close it (or use `async with`) when done."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=world.app), base_url=WORLD_BASE_URL, timeout=timeout_s)


def api_client(base_url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> httpx.AsyncClient:
    """An async client for an order API served elsewhere, e.g. `http://127.0.0.1:8000`."""
    return httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout_s)
