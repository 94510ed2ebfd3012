"""Validating YAML (or positioned JSON) against a record, every problem where it was written.

`YamlReading` is the context records read a file's data with (see
parley.core.records.yaml_fields). It collects the warnings and notes they hand it, finds where a
mapping or list of the data was written, and turns each error of a failed validation into a
ProfileError at file:line:col with the field path, by walking the error's `loc` down the data.
The data keeps its positions: ruamel's round-trip containers and parley.core.specs.json_positions'
both answer `.lc.key(k)`, `.lc.value(k)` and `.lc.item(i)`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from parley.core.errors import ProfileError
from parley.core.records import PROBLEM, Loc, Reading, SourceLocation
from parley.core.specs.file_world import FileWorld

logger = logging.getLogger("parley.specs")

RecordT = TypeVar("RecordT", bound=BaseModel)


@dataclass(frozen=True)
class Node:
    """A value in the data, with its field path and 1-based positions.

    `line`/`column` point at the value; `key_line`/`key_column` at the key that names it (the
    same as the value's position for list items and the root). Problems about a value's content
    point at the value; problems about a whole entry (an unknown key, an empty list) at the key.
    """

    value: Any
    path: str
    line: int | None
    column: int | None
    key_line: int | None
    key_column: int | None

    @classmethod
    def root(cls, value: Any) -> Node:
        return cls(value, "", 1, 1, 1, 1)

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_seq(self) -> bool:
        return isinstance(self.value, list)

    def has(self, key: str) -> bool:
        return self.is_map and key in self.value

    def child(self, key: Any) -> Node:
        """The value under `key` of this mapping (positions of the key and of the value)."""
        mapping = self.value
        value = mapping.get(key)
        path = f"{self.path}.{key}" if self.path else str(key)
        key_pos = _lc(mapping, "key", key) or (self.key_line, self.key_column)
        value_pos = key_pos
        # ruamel places an empty value after the line; a collection's position is its first
        # entry. Point at the key for both, and at the value itself for scalars.
        if value is not None and not isinstance(value, (dict, list)):
            value_pos = _lc(mapping, "value", key) or key_pos
        return Node(value, path, value_pos[0], value_pos[1], key_pos[0], key_pos[1])

    def item(self, index: int) -> Node:
        """Item `index` of this list."""
        pos = _lc(self.value, "item", index) or (self.key_line, self.key_column)
        return Node(self.value[index], f"{self.path}[{index}]", pos[0], pos[1], pos[0], pos[1])

    def items(self) -> list[Node]:
        """The items of this list (none for anything else)."""
        return [self.item(i) for i in range(len(self.value))] if self.is_seq else []

    def entries(self) -> list[tuple[Any, Node]]:
        """The keys of this mapping, each with its value (none for anything else)."""
        return [(key, self.child(key)) for key in self.value] if self.is_map else []

    def below(self, part: Any) -> Node | None:
        """The value `part` names below this one (a key of a mapping, an index of a list)."""
        if isinstance(self.value, dict):
            try:
                return self.child(part) if part in self.value else None
            except TypeError:  # an unhashable part cannot be a key
                return None
        if isinstance(self.value, list) and isinstance(part, int) and not isinstance(part, bool) and 0 <= part < len(self.value):
            return self.item(part)
        return None

    def location(self, file: str, *, at_key: bool = False) -> SourceLocation:
        line, column = (self.key_line, self.key_column) if at_key else (self.line, self.column)
        return SourceLocation(file=file, line=line, column=column, field_path=self.path or None)


def _lc(container: Any, kind: str, key: Any) -> tuple[int, int] | None:
    """1-based (line, column) from the container's `.lc`, or None for data without positions."""
    lc = getattr(container, "lc", None)
    if lc is None:
        return None
    try:
        line, column = getattr(lc, kind)(key)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return line + 1, column + 1


class YamlReading(FileWorld, Reading):
    """The reading of one file's data (`data`, as read with its positions)."""

    def __init__(self, file: str, data: Any) -> None:
        self.file = file
        self.data = data
        self._warnings: list[tuple[Any, Loc, str, bool]] = []
        self._notes: list[tuple[Any, Loc, str, bool]] = []
        self._paths: dict[int, Loc] | None = None
        self._nodes: dict[int, Node] = {}  # where each container asked about is, found once

    # -- what records hand over ------------------------------------------------------------------

    def warn(self, container: Any, at: Loc, reason: str, *, at_key: bool = False) -> None:
        self._warnings.append((container, tuple(at), reason, at_key))

    def note(self, container: Any, at: Loc, reason: str, *, at_key: bool = False) -> None:
        self._notes.append((container, tuple(at), reason, at_key))

    def location(self, container: Any, at: Loc = (), *, at_key: bool = False) -> SourceLocation:
        node = self._nodes.get(id(container))
        if node is None:
            node = self._nodes[id(container)] = self.node(self._loc_of(container))
        for part in at:
            node = node.below(part) or node
        return node.location(self.file, at_key=at_key)

    @property
    def warnings(self) -> list[str]:
        """Located warnings, `file:line:col: field: reason`, in the order they were given."""
        return [self.location(c, at, at_key=k).render(reason) for c, at, reason, k in self._warnings]

    @property
    def notes(self) -> list[str]:
        return [self.location(c, at, at_key=k).render(reason) for c, at, reason, k in self._notes]

    # -- where things are ----------------------------------------------------------------------------

    def node(self, loc: Loc) -> Node:
        """The deepest value `loc` reaches in the data; parts it cannot follow (pydantic's own
        names for union members, keys a shape was read from) are passed over."""
        node = Node.root(self.data)
        for part in loc:
            node = node.below(part) or node
        return node

    def _loc_of(self, container: Any) -> Loc:
        """Where a mapping or list of the data is (found by identity: records hand over the
        containers they were given)."""
        if self._paths is None:
            self._paths = {}
            stack: list[tuple[Any, Loc]] = [(self.data, ())] if isinstance(self.data, (dict, list)) else []
            while stack:
                value, loc = stack.pop()
                if id(value) in self._paths:
                    continue  # an alias reached again keeps its first place
                self._paths[id(value)] = loc
                # dict's own items, not ruamel's views: several times faster, the same entries
                # (ruamel stores keys merged in with `<<` in the mapping itself).
                children = list(dict.items(value)) if isinstance(value, dict) else list(enumerate(value))
                stack.extend((child, (*loc, key)) for key, child in reversed(children) if isinstance(child, (dict, list)))
        return self._paths.get(id(container), ())

    # -- errors --------------------------------------------------------------------------------------

    def errors(self, exc: ValidationError) -> list[ProfileError]:
        """Each problem of a failed validation as a ProfileError where it was written."""
        located: list[ProfileError] = []
        for error in exc.errors(include_url=False):
            loc = tuple(error["loc"])
            ctx = error.get("ctx") or {}
            at_key = False
            if error["type"] == PROBLEM:
                reason, at_key = ctx["reason"], bool(ctx.get("at_key"))
            elif error["type"] == "missing":
                reason, loc, at_key = f"missing required key '{loc[-1]}'", loc[:-1], True
            else:  # a check that did not word its problem: pydantic's words, still located
                logger.debug("unworded validation error %s at %s in %s", error["type"], loc, self.file)
                reason = error["msg"]
            located.append(self.node(loc).location(self.file, at_key=at_key).error(reason))
        return located

    def validate(self, model: type[RecordT]) -> tuple[RecordT | None, list[ProfileError]]:
        """(the record or None, every problem) of this file's data read as `model`."""
        try:
            return model.model_validate(self.data, context=self), []
        except ValidationError as exc:
            return None, self.errors(exc)
