"""What a reader of files knows of the world a file runs on: its tables (keys, columns, the field
that says a record's state, the values a column takes), its tools, its customers. Records are the
floor and know no world: a file's reader (parley.core.specs) loads the world the file names and
hands these facts over, so `expect:` and `world:` are checked against that world where they are
written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TableFacts:
    """One table as a file may name it."""

    name: str
    key: str
    columns: tuple[str, ...]
    state_field: str | None = None
    """The field `expect.TABLE: {KEY: VALUE}` sets (an order's status), when the table has one."""
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Columns that take one of a few values."""
    keys: tuple[str, ...] = ()
    """The keys the world's template holds (for did-you-mean)."""
    id_pattern: str | None = None
    fixed_keys: bool = False
    """A file's override may change this table's records but not add one."""
    inputs: tuple[str, ...] = ()
    """Fields an override may write besides the columns."""

    @property
    def singular(self) -> str:
        """The table's name for one record ("order" of "orders")."""
        return self.name[:-1] if self.name.endswith("s") and len(self.name) > 3 else self.name


@dataclass(frozen=True)
class WorldFacts:
    """A world as a file's reader sees it (see the module doc)."""

    name: str
    tables: Mapping[str, TableFacts]
    tools: tuple[str, ...]
    customers: str | None = None
    """The customers table's name."""
    default_customer: str | None = None

    def table(self, name: str) -> TableFacts | None:
        return self.tables.get(name)

    def state_tables(self) -> dict[str, TableFacts]:
        """The tables `expect.TABLE: {KEY: VALUE}` may name (those with a state field)."""
        return {name: t for name, t in self.tables.items() if t.state_field}
