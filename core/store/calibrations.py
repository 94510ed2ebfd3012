"""Named queries for judges' calibrations (parley.core.records.Calibration).

- `save_calibration`: one calibration, its key's parts in columns of their own (the judge's
  model, endpoint, prompt version, generation settings, and their digest), the whole record as JSON;
- `list_calibrations`: every calibration, newest first (optionally of one judge model);
- `calibrations_for`: those of one judge key (what a batch's verdicts are marked with);
- `get_calibration`: one by id or a unique prefix of it.
"""

from __future__ import annotations

import json

from parley.core.errors import ParleyError
from parley.core.records import Calibration, JudgeKey
from parley.core.redaction import REDACTOR
from parley.core.store.store import ReadOnlyDatabase, Store

__all__ = ["calibrations_for", "get_calibration", "list_calibrations", "save_calibration"]

MIN_PREFIX = 6


def _has_table(store: Store) -> bool:
    with store._lock:
        return bool(store.db["calibrations"].exists())


def save_calibration(store: Store, calibration: Calibration) -> None:
    """Store one calibration (its quotes and notes redacted as every row the store writes)."""
    if store.read_only:
        raise ReadOnlyDatabase(f"{store.path} is open read-only: saving a calibration needs to write to it")
    key = calibration.key
    record = REDACTOR.redact_stored(calibration.model_dump_json())
    with store._lock, store._writing():
        store.db.conn.execute(
            "INSERT INTO calibrations (id, created_at, judge, endpoint, prompt_version, generation, judge_key, source, record)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                calibration.id,
                calibration.created_at.isoformat(),
                key.model,
                key.endpoint,
                key.prompt_version,
                json.dumps(key.generation, sort_keys=True),
                key.digest,
                calibration.source,
                record,
            ],
        )


def list_calibrations(store: Store, *, judge: str | None = None, limit: int | None = None) -> list[Calibration]:
    """Every stored calibration, newest first (of judge model `judge`, when given)."""
    if not _has_table(store):
        return []
    where = "WHERE judge = ?" if judge is not None else ""
    params: list[object] = [judge] if judge is not None else []
    tail = ""
    if limit is not None:
        tail = " LIMIT ?"
        params.append(limit)
    rows = store._read(f"SELECT record FROM calibrations {where} ORDER BY created_at DESC, id{tail}", params)
    return [Calibration.model_validate_json(r["record"]) for r in rows]


def calibrations_for(store: Store, key: JudgeKey) -> list[Calibration]:
    """The calibrations of a judge of exactly this key, newest first."""
    if not _has_table(store):
        return []
    rows = store._read("SELECT record FROM calibrations WHERE judge_key = ? ORDER BY created_at DESC, id", [key.digest])
    return [Calibration.model_validate_json(r["record"]) for r in rows]


def get_calibration(store: Store, ref: str) -> Calibration:
    """One calibration by its id, a unique prefix of 6+ characters, or `latest`."""
    if not _has_table(store):
        raise ParleyError("no calibration is stored yet: run `parley judge calibrate`")
    ref = ref.strip()
    if ref == "latest":
        rows = store._read("SELECT record FROM calibrations ORDER BY created_at DESC, id LIMIT 1")
    elif len(ref) >= MIN_PREFIX:
        rows = store._read("SELECT record FROM calibrations WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 2", [len(ref), ref])
        if len(rows) > 1:
            raise ParleyError(f"'{ref}' matches several calibrations; type more of the id")
    else:
        raise ParleyError(f"'{ref}' is too short to pick a calibration: type at least {MIN_PREFIX} characters of its id, or `latest`")
    if not rows:
        raise ParleyError(f"no calibration '{ref}'; list them with `parley judge calibrations`")
    return Calibration.model_validate_json(rows[0]["record"])
