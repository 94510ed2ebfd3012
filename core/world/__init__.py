"""The order world a conversation runs against: a private copy of the mock order API per conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.world.order_world import AuditEntry, World, WorldState, WorldTemplate, new_world, world_client, world_template

__all__ = ["AuditEntry", "World", "WorldState", "WorldTemplate", "new_world", "world_client", "world_template"]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
