"""Named queries for a batch's pair and batch rules (Sensei rule files with `conversations: 2` or
`all`): what `parley run --rules` decided about pairs of its conversations and about the batch.

- `save_batch_rules`: every report at once, replacing what the batch held (a resumed batch
  decides its rules again over all its conversations), in one transaction;
- `clear_batch_rules`: forget them (a batch about to run more conversations: they are decided
  again once every conversation is in);
- `batch_rule_summaries`: each rule's counts, its first failures and why any was not run (the
  report, `parley run`'s last lines, the app), read without loading every decision;
- `iter_rule_results`: every decision of one rule in order, a page at a time (the JSON export).
A rule's decisions about one conversation are checks in that conversation's verdict, not here.
Their text (a `yields` may quote what the bot said) goes through the one redactor as every row
the store writes does (parley.core.redaction).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from parley.core.redaction import REDACTOR
from parley.core.rules import RuleReport, RuleResult, RuleSummary
from parley.core.store.rows import compact_json
from parley.core.store.store import ReadOnlyDatabase, Store

FAILURES_KEPT = 20
"""Failures a summary lists per rule (the count is always complete)."""


def save_batch_rules(store: Store, batch_id: str, reports: Sequence[RuleReport]) -> None:
    """Store the pair and batch rules' reports of `batch_id`, replacing any it had."""
    _writable(store, "saving rule results")
    now = datetime.datetime.now(datetime.UTC).isoformat()
    rules = [
        [batch_id, r.rule_file, position, _text(r.name), _text(r.description), str(r.conversations), compact_json(r.needs_model), now]
        for position, r in enumerate(reports)
    ]
    with store._lock, store._writing():
        store.db.execute("DELETE FROM batch_rules WHERE batch_id = ?", [batch_id])
        store.db.conn.executemany(
            "INSERT INTO batch_rules (batch_id, rule_file, position, name, description, conversations, needs_model, decided_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rules,
        )
        for report in reports:
            store.db.conn.executemany(
                "INSERT INTO rule_results (batch_id, rule_file, position, kind, conversations, outcome, reason, yields)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    [batch_id, report.rule_file, i, r.kind, compact_json(r.conversations), r.outcome, _text(r.reason), _text(r.yields)]
                    for i, r in enumerate(report.results)
                ),
            )


def _text(value: str | None) -> str | None:
    """`value` as the store writes text: with this process's secrets redacted."""
    return REDACTOR.redact_stored(value) if value else value


def clear_batch_rules(store: Store, batch_id: str) -> None:
    """Forget the batch's pair and batch rule results (their decisions cascade)."""
    _writable(store, "clearing rule results")
    with store._lock, store._writing():
        store.db.execute("DELETE FROM rule_results WHERE batch_id = ?", [batch_id])
        store.db.execute("DELETE FROM batch_rules WHERE batch_id = ?", [batch_id])


def batch_rule_summaries(store: Store, batch_id: str, *, failures_kept: int = FAILURES_KEPT) -> list[RuleSummary]:
    """Each pair or batch rule of the batch, in the order it was checked (see the module)."""
    if not _has_tables(store):
        return []
    rules = store._read(
        "SELECT rule_file, name, description, conversations, needs_model FROM batch_rules WHERE batch_id = ? ORDER BY position",
        [batch_id],
    )
    if not rules:
        return []
    counts: dict[str, dict[str, int]] = {}
    for row in store._read(
        "SELECT rule_file, outcome, COUNT(*) AS n FROM rule_results WHERE batch_id = ? GROUP BY rule_file, outcome", [batch_id]
    ):
        counts.setdefault(row["rule_file"], {})[row["outcome"]] = row["n"]
    summaries = []
    for rule in rules:
        rule_file = rule["rule_file"]
        failures = [
            _result(rule_file, rule["name"], row)
            for row in store._read(
                "SELECT kind, conversations, outcome, reason, yields FROM rule_results"
                " WHERE batch_id = ? AND rule_file = ? AND outcome = 'fail' ORDER BY position LIMIT ?",
                [batch_id, rule_file, failures_kept],
            )
        ]
        decided = store._read(
            "SELECT kind, conversations, outcome, reason, yields FROM rule_results"
            " WHERE batch_id = ? AND rule_file = ? AND kind = 'batch' ORDER BY position LIMIT 1",
            [batch_id, rule_file],
        )
        reasons = store._read(
            "SELECT DISTINCT reason FROM rule_results WHERE batch_id = ? AND rule_file = ? AND outcome = 'not_run' LIMIT 5",
            [batch_id, rule_file],
        )
        summaries.append(
            RuleSummary(
                rule_file=rule_file,
                name=rule["name"],
                description=rule["description"],
                conversations=2 if rule["conversations"] == "2" else "all",
                needs_model=json.loads(rule["needs_model"]),
                counts=counts.get(rule_file, {}),
                decision=_result(rule_file, rule["name"], decided[0]) if decided else None,
                failures=failures,
                not_run_reasons=[r["reason"] or "" for r in reasons],
            )
        )
    return summaries


def iter_rule_results(store: Store, batch_id: str, rule_file: str, *, page_size: int = 5000) -> Iterator[RuleResult]:
    """Every decision of one pair or batch rule of the batch, in order, a page at a time."""
    if not _has_tables(store):
        return
    name_rows = store._read("SELECT name FROM batch_rules WHERE batch_id = ? AND rule_file = ?", [batch_id, rule_file])
    if not name_rows:
        return
    name = name_rows[0]["name"]
    after = -1
    while True:
        rows = store._read(
            "SELECT position, kind, conversations, outcome, reason, yields FROM rule_results"
            " WHERE batch_id = ? AND rule_file = ? AND position > ? ORDER BY position LIMIT ?",
            [batch_id, rule_file, after, page_size],
        )
        for row in rows:
            yield _result(rule_file, name, row)
        if len(rows) < page_size:
            return
        after = rows[-1]["position"]


def _result(rule_file: str, name: str, row: Mapping[str, Any]) -> RuleResult:
    return RuleResult(
        rule_file=rule_file,
        rule_name=name,
        kind=row["kind"],
        conversations=json.loads(row["conversations"]),
        outcome=row["outcome"],
        reason=row["reason"],
        yields=row["yields"],
    )


def _has_tables(store: Store) -> bool:
    """Whether the database has the rules' tables: one opened read-only may predate them
    (schema 4 or older: it is migrated when it is next opened to write)."""
    with store._lock:
        return bool(store.db["batch_rules"].exists())


def _writable(store: Store, what: str) -> None:
    if store.read_only:
        raise ReadOnlyDatabase(f"{store.path} is open read-only: {what} needs to write to it")
