"""A world's final state as plain data: the records a conversation changed, as a diff against the
world's template, and the records its checks name.

Every world (parley.core.world) ends a conversation with a `WorldDiff`: the records that were
inserted, changed or deleted (each with its table, key, owner and the row before and after) and
the final rows of the records the conversation's checks watch (`expect.records`), so a stored
batch can be judged again without the world's database. Rows are JSON-shaped mappings.
"""

from __future__ import annotations

import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

Row = dict[str, Any]
ChangeKind = Literal["inserted", "updated", "deleted"]


class RecordRef(BaseModel):
    """One record of a world: its table and key, and whose it is (None: nobody's, public data)."""

    table: str
    key: str
    owner: str | None = None

    @property
    def ref(self) -> str:
        """`table/key`, as `expect.records` names a record."""
        return f"{self.table}/{self.key}"


class RecordChange(RecordRef):
    """A record the conversation inserted, updated or deleted: its row before and after (None
    where it did not exist), and the fields that differ."""

    before: Row | None = None
    after: Row | None = None
    log: bool = False
    """True for a table the world keeps as a log of what happened (an audit trail): its rows are
    written by the world, never a change a customer asks for."""

    @property
    def kind(self) -> ChangeKind:
        if self.before is None:
            return "inserted"
        if self.after is None:
            return "deleted"
        return "updated"

    @property
    def fields(self) -> list[str]:
        """The fields whose value differs (every field of an inserted or deleted record)."""
        before, after = self.before or {}, self.after or {}
        return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))

    def describe(self) -> str:
        """One line: `orders/ORD-1004: status 'pending' -> 'cancelled'`."""
        if self.kind != "updated":
            return f"{self.ref}: {self.kind}"
        before, after = self.before or {}, self.after or {}
        parts = [f"{name} {_short(before.get(name))} -> {_short(after.get(name))}" for name in self.fields]
        return f"{self.ref}: " + ", ".join(parts)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class RuleViolation(BaseModel):
    """A rule of the world's policy (one its API does not enforce) that a tool call broke."""

    rule: str
    message: str
    undecided: bool = False
    """True when the rule itself failed to run: named, never counted as the bot's violation."""


class WorldDiff(BaseModel):
    """A world at the end of a conversation: what changed against its template, and the final rows
    of the records the checks watch.

    Conversations stored before worlds were declared kept the order world's state (`today`, every
    order's `statuses`, the `audit` trail); read back, such a state becomes this diff: each audit
    row's change of status, and every order's final status as a watched row (`orders/ID`)."""

    world: str = "orders"
    """The world's name (parley.core.world's registry)."""
    today: datetime.date
    changes: list[RecordChange] = Field(default_factory=list)
    watched: dict[str, Row | None] = Field(default_factory=dict)
    """`table/key` -> the record's final row (None: it does not exist), for every record a check
    of the conversation names."""

    @model_validator(mode="before")
    @classmethod
    def _from_order_state(cls, data: Any) -> Any:
        if isinstance(data, dict) and "statuses" in data and "changes" not in data:
            return diff_of_order_state(data)
        return data

    def change_of(self, table: str, key: str) -> RecordChange | None:
        for change in self.changes:
            if change.table == table and change.key == key:
                return change
        return None

    def final_row(self, table: str, key: str) -> Row | None:
        """The record's row at the end: from the watched records, else from the changes (None when
        neither knows it: unchanged and not watched, or deleted)."""
        ref = f"{table}/{key}"
        if ref in self.watched:
            return self.watched[ref]
        change = self.change_of(table, key)
        return change.after if change is not None else None

    def record_changes(self) -> list[RecordChange]:
        """The changes to records (a log table's rows left out)."""
        return [change for change in self.changes if not change.log]


def diff_of_order_state(state: dict[str, Any]) -> dict[str, Any]:
    """The diff of an order world's state as it was stored before worlds were declared (see
    WorldDiff): the audit trail's status changes, and every order's final status watched."""
    audit = [row for row in state.get("audit") or [] if isinstance(row, dict)]
    first: dict[str, dict[str, Any]] = {}
    for row in audit:
        first.setdefault(str(row.get("order_id")), row)
    statuses = {str(k): v for k, v in (state.get("statuses") or {}).items()}
    changes = [
        {
            "table": "orders",
            "key": order_id,
            "owner": row.get("customer_id"),
            "before": {"status": row.get("old_status")},
            "after": {"status": statuses.get(order_id, row.get("new_status"))},
        }
        for order_id, row in first.items()
    ]
    changes += [
        {"table": "audit", "key": str(n), "owner": row.get("customer_id"), "after": {k: v for k, v in row.items()}, "log": True}
        for n, row in enumerate(audit, start=1)
    ]
    return {
        "world": "orders",
        "today": state.get("today"),
        "changes": changes,
        "watched": {f"orders/{order_id}": {"status": status} for order_id, status in statuses.items()},
    }
