"""The world each planned conversation runs on: found by the name or path its file gave (relative to
the file's folder; the default world when it named none), built once per (world, date, rows) as a
template image, and copied per conversation."""

from __future__ import annotations

import asyncio
import datetime
import json
from collections import OrderedDict
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from parley.core.records import ConversationSpec
from parley.core.world import WorldCopy, WorldDefinition, WorldTemplate, world_of

if TYPE_CHECKING:
    from parley.core.world import WorldServer

__all__ = ["WORLD_TEMPLATES_KEPT", "WorldTemplates", "customer_of", "today_of"]

WORLD_TEMPLATES_KEPT = 32


def customer_of(spec: ConversationSpec, world: WorldDefinition) -> str:
    """The customer a conversation runs as: the file's, else the world's default one."""
    return spec.world.customer_id or world.identity.default or ""


def today_of(spec: ConversationSpec, world: WorldDefinition, default_today: datetime.date) -> datetime.date:
    """The world's date for a conversation: the file's, else the world's own, else the run's."""
    return spec.world.today or world.today or default_today


class WorldTemplates:
    """World templates by (world, today, rows), the most recently used few kept; and, for deployed
    bots, the one server that serves each conversation's world over HTTP (started on first use,
    bound to `host`, and advertised at `url` when the bot reaches it by another address)."""

    def __init__(self, keep: int = WORLD_TEMPLATES_KEPT, *, host: str | None = None, url: str | None = None) -> None:
        self.keep = keep
        self.host = host
        self.url = url
        self._templates: OrderedDict[tuple[int, datetime.date, str], WorldTemplate] = OrderedDict()
        self._server: WorldServer | None = None
        self._starting: asyncio.Lock | None = None

    async def server(self) -> WorldServer:
        """The server of the served worlds, started on the running loop the first time."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._server is None:
                from parley.core.settings import settings
                from parley.core.world import WorldServer

                configured = settings()  # PARLEY_WORLD_HOST, PARLEY_WORLD_URL
                url = self.url or configured.world_url
                port = urlsplit(url).port if url else None  # an advertised URL names the port to listen on
                server = WorldServer(host=self.host or configured.world_host, port=port or 0, advertised=url)
                await server.start()
                self._server = server
        return self._server

    async def aclose(self) -> None:
        """Stop serving worlds (the batch ended)."""
        if self._server is not None:
            server, self._server = self._server, None
            await server.stop()

    def template(self, spec: ConversationSpec, default_today: datetime.date) -> WorldTemplate:
        world = world_of(spec)
        today = today_of(spec, world, default_today)
        key = (id(world), today, json.dumps(spec.world.rows, sort_keys=True, default=str))
        template = self._templates.get(key)
        if template is None:
            template = WorldTemplate(world, today, spec.world.rows)
            self._templates[key] = template
            if len(self._templates) > self.keep:
                self._templates.popitem(last=False)
        else:
            self._templates.move_to_end(key)
        return template

    def new_copy(self, spec: ConversationSpec, default_today: datetime.date) -> WorldCopy:
        """A private copy of the spec's world."""
        return self.template(spec, default_today).new_copy()
