"""Worlds: one private copy of the order database per simulated conversation.

A `WorldTemplate` loads the fixture once into an in-memory database and keeps its serialized
image; `new_world()` deserializes that image into a fresh connection (a few tens of µs, see
bench/bench_worlds.py). Every world is served by the same FastAPI app: `World.app` is a thin
ASGI wrapper that puts the world's store into the request scope, because building a FastAPI
app per world costs milliseconds.
"""

from __future__ import annotations

import datetime
import itertools
import pathlib
import sqlite3
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import httpx
import sqlite_utils
from starlette.types import Receive, Scope, Send

from parley.mockapi.app import STORE_STATE_KEY, shared_app
from parley.mockapi.order_store import OrderStore, connect, load_fixture
from parley.mockapi.schema import AuditEntry, WorldState

__all__ = [
    "WORLD_BASE_URL",
    "AuditEntry",
    "World",
    "WorldApp",
    "WorldClock",
    "WorldState",
    "WorldTemplate",
    "api_client",
    "new_world",
    "world_client",
    "world_template",
]

WORLD_BASE_URL = "http://world"
DEFAULT_TIMEOUT_S = 15.0


class WorldClock:
    """A world's clock: noon UTC of its `today`, one second later at every reading.

    Worlds are simulated time; a logical clock keeps a conversation's final state (audit
    timestamps included) identical from run to run.
    """

    def __init__(self, today: datetime.date) -> None:
        self._start = datetime.datetime.combine(today, datetime.time(12, 0), tzinfo=datetime.UTC)
        self._ticks = itertools.count()

    def __call__(self) -> datetime.datetime:
        return self._start + datetime.timedelta(seconds=next(self._ticks))


class WorldApp:
    """ASGI app serving one world's store through the process-wide shared FastAPI app."""

    def __init__(self, store: OrderStore) -> None:
        self.store = store
        self._app = shared_app()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            scope = {**scope, "state": {**(scope.get("state") or {}), STORE_STATE_KEY: self.store}}
        await self._app(scope, receive, send)


class World:
    """One conversation's private order database and the API over it."""

    def __init__(self, db: sqlite_utils.Database, today: datetime.date) -> None:
        self.db = db
        self.today: datetime.date = today
        self.store = OrderStore(db, clock=WorldClock(today), today=today, in_memory=True)
        self.app = WorldApp(self.store)

    def final_state(self) -> WorldState:
        """Every order's status and the audit trail, as plain data."""
        return self.store.final_state()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WorldTemplate:
    """The fixture loaded once (with overrides); stamps out private copies."""

    def __init__(
        self,
        *,
        today: datetime.date | None = None,
        fixture: pathlib.Path | None = None,
        overrides: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Load `fixture` (default: the shipped one) as of `today` (default: the real date).

        `overrides` are partial orders keyed by "id", e.g.
        `{"id": "ORD-1001", "status": "shipped", "placed_days_ago": 12}`; an unknown id or
        field raises ValueError.
        """
        self.today: datetime.date = today or datetime.date.today()
        self.db = connect(":memory:")
        load_fixture(self.db, today=self.today, fixture=fixture, overrides=overrides)
        self._image = self.db.conn.serialize()

    def new_world(self) -> World:
        """A private copy of the template's database, served by its own `World.app`."""
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.deserialize(self._image)
        return World(sqlite_utils.Database(conn), self.today)


def world_template(today: datetime.date | None = None) -> WorldTemplate:
    """The shipped fixture as a template, built once per `today` (None: the real date)."""
    return _cached_template(today or datetime.date.today())


@lru_cache(maxsize=8)
def _cached_template(today: datetime.date) -> WorldTemplate:
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
