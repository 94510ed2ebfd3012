"""Records as customers and bots name them, on the conversation's world: the ids a text names (read
with the world's own reader of ids or its tables' id patterns, parley.core.world.id_reading), and
whether two ids written differently name the same record ("ORD-1004", "ord 1004" and a bare "1004"
on the order world).

The customers table's records are left out: a customer id says who is talking, it is no record a
goal, a request or a claim is about. `world` None reads on the default world.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict

from parley.core.world import RecordKey, WorldDefinition, WorldError, key_of, load_world, record_ids

__all__ = ["id_digits", "ids_in", "mentions_id", "reading_world", "record_noun", "records_in", "same_id"]


def reading_world(world: WorldDefinition | None) -> WorldDefinition | None:
    """`world`, or the default world when None (None only when even that cannot be loaded)."""
    if world is not None:
        return world
    try:
        return load_world()
    except WorldError:
        return None


_READ_KEPT = 4096
"""How many texts' records are kept per world: the checks of one conversation read its messages
several times over (claims, requests, the customer's faults)."""
_read: dict[int, tuple[WorldDefinition, OrderedDict[str, tuple[RecordKey, ...]]]] = {}
_read_lock = threading.Lock()


def records_in(text: str | None, world: WorldDefinition | None = None) -> list[RecordKey]:
    """The records `text` names (customers aside), in order, each once."""
    if not text:
        return []
    world = reading_world(world)
    if world is None:
        return []
    with _read_lock:
        kept = _read.get(id(world))
        if kept is None or kept[0] is not world:
            kept = _read[id(world)] = (world, OrderedDict())
        found = kept[1].get(text)
        if found is not None:
            kept[1].move_to_end(text)
            return list(found)
    customers = world.identity.customers
    found = tuple((table, key) for table, key in record_ids(world, text) if table != customers)
    with _read_lock:
        kept[1][text] = found
        if len(kept[1]) > _READ_KEPT:
            kept[1].popitem(last=False)
    return list(found)


def ids_in(text: str | None, world: WorldDefinition | None = None) -> list[str]:
    """The keys of the records `text` names (customers aside), in order; none for no text."""
    return [key for _, key in records_in(text, world)]


def id_digits(key: str) -> str:
    """The ASCII digits of an id (`ORD-1003` -> `1003`): a bare number names the record whose id
    has those digits."""
    return "".join(c for c in key if "0" <= c <= "9")


def same_id(a: str | None, b: str | None, world: WorldDefinition | None = None) -> bool:
    """Do two ids, as people wrote them, name the same record? The same key (case aside), the same
    record as the world reads them, or a bare number and an id with those digits."""
    if not a or not b:
        return False
    if key_of(a) == key_of(b):
        return True
    read_a, read_b = ids_in(a, world), ids_in(b, world)
    if read_a and read_b:
        return any(key_of(x) == key_of(y) for x in read_a for y in read_b)
    bare = [x for x in (a, b) if not re.search(r"[^\W\d_]", x)]
    return bool(bare) and bool(id_digits(a)) and id_digits(a) == id_digits(b)


def mentions_id(text: str | None, key: str, world: WorldDefinition | None = None) -> bool:
    """Does the text name the record, as an id in any of its forms or as its bare digits?"""
    digits = id_digits(key)
    if any(same_id(found, key, world) for found in ids_in(text, world)):
        return True
    return bool(digits) and re.search(rf"(?<!\d){re.escape(digits)}(?!\d)", text or "") is not None


def record_noun(table: str) -> str:
    """How one record of `table` is named in words ("order" of "orders", "payment method" of
    "payment_methods")."""
    words = table.replace("_", " ")
    return words[:-1] if words.endswith("s") and len(words) > 3 else words
