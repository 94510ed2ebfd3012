"""Named queries for people's labels on stored conversations (parley.core.records.Label).

- `save_labels`: labels in, each replacing the same labeller's label on the same item of the
  same conversation (another labeller's is kept beside it), in one transaction; a label on a
  conversation the database does not hold is refused, naming it (`missing_conversations`);
- `delete_label`: a labeller's label taken back (the app's "clear");
- `labels_of`: one conversation's labels; `all_labels`: every label (an export, a calibration),
  optionally of some conversations or one labeller;
- `labelled_counts`: how many items each of some conversations has labels on (the app's progress).
A label's text and note go through the one redactor, as every row the store writes does.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from parley.core.errors import ParleyError
from parley.core.records import Label
from parley.core.redaction import REDACTOR
from parley.core.store.store import ReadOnlyDatabase, Store

__all__ = ["all_labels", "delete_label", "labelled_counts", "labels_of", "missing_conversations", "save_labels"]

_COLUMNS = "conversation_id, kind, item_id, item_text, value, labeller, note, labelled_at"
_CHUNK = 500  # ids per IN (...) list: well under SQLite's limit on bound parameters


def _has_table(store: Store) -> bool:
    """Whether the database has the labels' table (one opened read-only may predate it)."""
    with store._lock:
        return bool(store.db["labels"].exists())


def _writable(store: Store, what: str) -> None:
    if store.read_only:
        raise ReadOnlyDatabase(f"{store.path} is open read-only: {what} needs to write to it")


def missing_conversations(store: Store, conversation_ids: Sequence[str]) -> list[str]:
    """Those of `conversation_ids` the database holds no conversation of, in the order given."""
    wanted = list(dict.fromkeys(conversation_ids))
    found: set[str] = set()
    for at in range(0, len(wanted), _CHUNK):
        chunk = wanted[at : at + _CHUNK]
        rows = store._read(f"SELECT id FROM conversations WHERE id IN ({', '.join('?' * len(chunk))})", chunk)
        found.update(r["id"] for r in rows)
    return [c for c in wanted if c not in found]


def save_labels(store: Store, labels: Sequence[Label]) -> int:
    """Store `labels` (see the module doc); returns how many were written. ParleyError naming
    the first conversations that are not stored, with nothing written."""
    _writable(store, "saving labels")
    if not labels:
        return 0
    missing = missing_conversations(store, [label.conversation_id for label in labels])
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ParleyError(f"{len(missing)} labelled conversation(s) are not in {store.path or 'the database'}: {shown}")
    clean = REDACTOR.redact_stored
    rows = [
        [
            label.conversation_id,
            label.kind,
            label.item_id,
            clean(label.item_text) if label.item_text else "",
            label.value,
            label.labeller,
            clean(label.note) if label.note else "",
            label.labelled_at.astimezone(datetime.UTC).isoformat(),
        ]
        for label in labels
    ]
    with store._lock, store._writing():
        store.db.conn.executemany(
            f"INSERT INTO labels ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (conversation_id, kind, item_id, labeller) DO UPDATE SET"
            " item_text = excluded.item_text, value = excluded.value, note = excluded.note, labelled_at = excluded.labelled_at",
            rows,
        )
    return len(rows)


def delete_label(store: Store, conversation_id: str, kind: str, item_id: str, labeller: str) -> bool:
    """Take back a labeller's label on an item; False when there was none."""
    _writable(store, "clearing a label")
    with store._lock, store._writing():
        cursor = store.db.conn.execute(
            "DELETE FROM labels WHERE conversation_id = ? AND kind = ? AND item_id = ? AND labeller = ?",
            [conversation_id, kind, item_id, labeller],
        )
        return cursor.rowcount > 0


def _label(row: Mapping[str, Any]) -> Label:
    return Label(
        conversation_id=row["conversation_id"],
        kind=row["kind"],
        item_id=row["item_id"],
        item_text=row["item_text"] or "",
        value=row["value"],
        labeller=row["labeller"],
        note=row["note"] or "",
        labelled_at=datetime.datetime.fromisoformat(row["labelled_at"]),
    )


def labels_of(store: Store, conversation_id: str) -> list[Label]:
    """Every label on one conversation, by item then labeller."""
    if not _has_table(store):
        return []
    rows = store._read(f"SELECT {_COLUMNS} FROM labels WHERE conversation_id = ? ORDER BY kind, item_id, labeller", [conversation_id])
    return [_label(r) for r in rows]


def all_labels(store: Store, *, conversation_ids: Sequence[str] | None = None, labeller: str | None = None) -> list[Label]:
    """Every stored label (of `conversation_ids`, of `labeller`, when given), in the order they
    were first written per conversation: conversation, item, labeller."""
    if not _has_table(store):
        return []
    where, params = [], []
    if labeller is not None:
        where.append("labeller = ?")
        params.append(labeller)
    if conversation_ids is None:
        sql = f"SELECT {_COLUMNS} FROM labels {'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY conversation_id, kind, item_id, labeller"
        return [_label(r) for r in store._read(sql, params)]
    out: list[Label] = []
    wanted = list(dict.fromkeys(conversation_ids))
    for at in range(0, len(wanted), _CHUNK):
        chunk = wanted[at : at + _CHUNK]
        clause = " AND ".join([f"conversation_id IN ({', '.join('?' * len(chunk))})", *where])
        sql = f"SELECT {_COLUMNS} FROM labels WHERE {clause} ORDER BY conversation_id, kind, item_id, labeller"
        out += [_label(r) for r in store._read(sql, [*chunk, *params])]
    return out


def labelled_counts(store: Store, conversation_ids: Sequence[str], *, labeller: str | None = None) -> dict[str, int]:
    """Conversation id -> how many items it has labels on (by `labeller`, when given); a
    conversation without any is left out."""
    if not _has_table(store):
        return {}
    counts: dict[str, int] = {}
    wanted = list(dict.fromkeys(conversation_ids))
    for at in range(0, len(wanted), _CHUNK):
        chunk = wanted[at : at + _CHUNK]
        by = " AND labeller = ?" if labeller is not None else ""
        rows = store._read(
            f"SELECT conversation_id, COUNT(DISTINCT kind || ':' || item_id) AS n FROM labels"
            f" WHERE conversation_id IN ({', '.join('?' * len(chunk))}){by} GROUP BY conversation_id",
            [*chunk, *([labeller] if labeller is not None else [])],
        )
        counts.update({r["conversation_id"]: r["n"] for r in rows})
    return counts
