"""The world a file's conversation runs on, and the world a finished conversation ran on: found by
the name or path the file gave (a path relative to the file's folder; the default world when it
named none), else by the name its final state keeps."""

from __future__ import annotations

import logging
from pathlib import Path

from parley.core.records import Conversation, ConversationSpec, WorldSpec
from parley.core.world.declaration import WorldDefinition
from parley.core.world.registry import WorldError, load_world

__all__ = ["conversation_world", "world_of"]

log = logging.getLogger("parley.world.spec_world")


def world_of(spec: ConversationSpec | WorldSpec, source: str | None = None) -> WorldDefinition:
    """The world a spec (or a `world:` block read from the file `source`) runs on; WorldError
    when it cannot be loaded."""
    world = spec.world if isinstance(spec, ConversationSpec) else spec
    where = spec.source if isinstance(spec, ConversationSpec) else source
    base = Path(where).parent if where and not where.startswith("<") else None
    return load_world(world.name, path=world.path, base_dir=base)


def conversation_world(conversation: Conversation, spec: ConversationSpec | None = None) -> WorldDefinition | None:
    """The world `conversation` ran on: the one its spec names, else the one its final state names
    (a batch stored before worlds were declared: the order world), else the default world; None
    when none of them can be loaded any more (logged: the checks then read it without its world)."""
    if spec is not None and spec.world.names_world:
        try:
            return world_of(spec)
        except WorldError as exc:
            log.warning("the world of %s cannot be loaded (%s); trying the name its final state keeps", spec.spec_id, exc)
    name = conversation.final_state.world if conversation.final_state is not None else None
    try:
        return load_world(name)
    except WorldError as exc:
        log.warning("the world %r of conversation %s cannot be loaded: %s", name, conversation.id, exc)
        return None
