"""The SQLite schema of parley's store and the migrations that build it.

`MIGRATIONS` is applied in order: migration i (1-based) brings the database to schema version i
and is recorded in `schema_version`. A later release appends migrations; it never edits one
that has shipped. A database whose version is above `len(MIGRATIONS)` was written by a newer
parley and is refused rather than misread.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Sequence
from typing import Any

from parley.core.errors import ParleyError
from parley.core.store.sqlite_database import Database

Migration = Callable[[Database], None]


# Timestamps are ISO 8601 text in UTC with microseconds, so text order is time order.
_V1_TABLES = """
CREATE TABLE batches (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('pending','running','completed','failed','cancelled','interrupted')),
    sources TEXT NOT NULL DEFAULT '[]',
    options TEXT NOT NULL DEFAULT '{}',
    planned INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE INDEX idx_batches_created ON batches (created_at DESC);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    batch_id TEXT REFERENCES batches (id) ON DELETE CASCADE,
    spec_id TEXT NOT NULL,
    spec_index INTEGER NOT NULL DEFAULT 0,
    spec TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    source TEXT NOT NULL,
    variables TEXT NOT NULL DEFAULT '{}',
    seed INTEGER NOT NULL,
    trial INTEGER NOT NULL DEFAULT 1,
    customer_id TEXT NOT NULL,
    bot_model TEXT NOT NULL,
    user_model TEXT NOT NULL,
    bot_starts INTEGER NOT NULL DEFAULT 0,
    system_prompt TEXT,
    stop_reason TEXT NOT NULL,
    error TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    duration_s REAL NOT NULL,
    turns INTEGER NOT NULL DEFAULT 0,
    turn_timings TEXT NOT NULL DEFAULT '[]',
    bot_latency_total_s REAL NOT NULL DEFAULT 0,
    bot_latency_min_s REAL,
    bot_latency_max_s REAL,
    tool_call_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    final_state TEXT,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX idx_conversations_batch_spec_trial ON conversations (batch_id, spec_id, trial);
CREATE INDEX idx_conversations_started ON conversations (started_at DESC);
CREATE INDEX idx_conversations_batch_started ON conversations (batch_id, started_at DESC);
CREATE INDEX idx_conversations_name ON conversations (name);
CREATE INDEX idx_conversations_batch_order ON conversations (batch_id, spec_index, spec_id, trial, id);

CREATE TABLE messages (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT,
    tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_call_id TEXT,
    name TEXT,
    PRIMARY KEY (conversation_id, position)
);

CREATE TABLE tool_calls (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments_raw TEXT NOT NULL,
    arguments TEXT,
    customer_id TEXT NOT NULL,
    result TEXT NOT NULL,
    ok INTEGER NOT NULL,
    refused INTEGER NOT NULL DEFAULT 0,
    http_status INTEGER,
    error TEXT,
    latency_s REAL NOT NULL DEFAULT 0,
    ignored_arguments TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (conversation_id, position)
);
CREATE INDEX idx_tool_calls_name ON tool_calls (name);

CREATE TABLE verdicts (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    outcome TEXT NOT NULL CHECK (outcome IN ('passed','failed','error')),
    passed INTEGER NOT NULL,
    score INTEGER CHECK (score IS NULL OR score IN (1, 2, 3)),
    comment TEXT,
    judge TEXT,
    error TEXT,
    checks TEXT NOT NULL DEFAULT '[]',
    outputs TEXT NOT NULL DEFAULT '[]',
    policy_violations INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_verdicts_outcome ON verdicts (outcome);

CREATE TABLE chat_sessions (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    bot_model TEXT NOT NULL,
    today TEXT NOT NULL,
    system_prompt TEXT,
    messages TEXT NOT NULL DEFAULT '[]',
    message_count INTEGER NOT NULL DEFAULT 0,
    tool_calls TEXT NOT NULL DEFAULT '[]',
    metrics TEXT NOT NULL DEFAULT '{}',
    world_state TEXT
);
CREATE INDEX idx_chat_sessions_updated ON chat_sessions (updated_at DESC);

CREATE TABLE usage (
    id INTEGER PRIMARY KEY,
    conversation_id TEXT REFERENCES conversations (id) ON DELETE CASCADE,
    chat_session_id TEXT REFERENCES chat_sessions (id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    calls INTEGER NOT NULL DEFAULT 0,
    unreported_calls INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    CHECK ((conversation_id IS NULL) != (chat_session_id IS NULL))
);
CREATE UNIQUE INDEX idx_usage_conversation_role ON usage (conversation_id, role) WHERE conversation_id IS NOT NULL;
CREATE UNIQUE INDEX idx_usage_chat_role ON usage (chat_session_id, role) WHERE chat_session_id IS NOT NULL;

CREATE TABLE llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


def _v1_initial(db: Database) -> None:
    """Every table of parley 0.1."""
    db.executescript(_V1_TABLES)


def _v2_batch_owner(db: Database) -> None:
    """Who runs a pending/running batch (parley.core.store.batch_owner), so a batch whose process was
    killed can be told from one that another live process is running."""
    for column, kind in (("owner_host", "TEXT"), ("owner_pid", "INTEGER"), ("owner_started", "TEXT"), ("owner_token", "TEXT")):
        db.execute(f"ALTER TABLE batches ADD COLUMN {column} {kind}")
    db.execute("CREATE INDEX idx_batches_status ON batches (status)")


_BATCH_COLUMNS = (
    "id, created_at, started_at, finished_at, status, sources, options, planned, error, owner_host, owner_pid, owner_started, owner_token"
)


def _v3_batch_lineage(db: Database) -> None:
    """A batch may stop at its budget (status `stopped_budget`) and name the batch it re-runs or
    replays (`parent_id`). SQLite cannot change a CHECK constraint in place: the table is rebuilt
    (SQLite's documented procedure; `migrate` runs it with foreign keys off, so dropping the old
    table does not cascade into conversations), rows copied in their original order."""
    db.execute(
        """CREATE TABLE batches_v3 (
            id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            status TEXT NOT NULL CHECK (status IN
                ('pending','running','completed','failed','cancelled','interrupted','stopped_budget')),
            sources TEXT NOT NULL DEFAULT '[]',
            options TEXT NOT NULL DEFAULT '{}',
            planned INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            owner_host TEXT,
            owner_pid INTEGER,
            owner_started TEXT,
            owner_token TEXT,
            parent_id TEXT REFERENCES batches (id) ON DELETE SET NULL
        )"""
    )
    db.execute(f"INSERT INTO batches_v3 ({_BATCH_COLUMNS}) SELECT {_BATCH_COLUMNS} FROM batches ORDER BY rowid")
    db.execute("DROP TABLE batches")
    db.execute("ALTER TABLE batches_v3 RENAME TO batches")
    db.execute("CREATE INDEX idx_batches_created ON batches (created_at DESC)")
    db.execute("CREATE INDEX idx_batches_status ON batches (status)")
    db.execute("CREATE INDEX idx_batches_parent ON batches (parent_id)")


_V4_VERDICTS = """
CREATE TABLE verdicts_v4 (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    outcome TEXT NOT NULL CHECK (outcome IN ('passed','failed','bot_error','unverified','user_fault','user_error',
                                             'infrastructure_error','cancelled','evaluation_error','error')),
    passed INTEGER NOT NULL,
    score INTEGER CHECK (score IS NULL OR score IN (1, 2, 3)),
    comment TEXT,
    judge TEXT,
    error TEXT,
    checks TEXT NOT NULL DEFAULT '[]',
    outputs TEXT NOT NULL DEFAULT '[]',
    policy_violations INTEGER NOT NULL DEFAULT 0,
    user_faults TEXT NOT NULL DEFAULT '[]'
)"""
_V4_COPY = (
    "INSERT INTO verdicts_v4 (conversation_id, outcome, passed, score, comment, judge, error, checks, outputs, policy_violations) "
    "SELECT conversation_id, outcome, passed, score, comment, judge, error, checks, outputs, policy_violations FROM verdicts"
)


def legacy_stop(bot_model: str, error: str | None) -> str:
    """Who failed, for a conversation stored with the old catch-all stop `error`, told from the
    error texts parley wrote then: "<bot> (bot): ..." (the bot's model) and "<connector>: ..."
    (a deployed bot) were the bot's; "... (user): ..." the user simulator's provider. Anything
    else stays `error`: unattributed."""
    text = (error or "").strip()
    if text.startswith(f"{bot_model} (bot):") or text.startswith(f"{bot_model}:"):
        return "bot_error"
    head = text.split(":", 1)[0]
    if head.endswith(" (user)"):
        return "infrastructure_error"
    return "error"


def _v4_outcomes(db: Database) -> None:
    """Who failed, and the one outcome. `verdicts.outcome` now holds the outcome every report
    reads (passed, failed, bot_error, unverified, user_fault, user_error, infrastructure_error,
    cancelled, evaluation_error, error) and `verdicts.user_faults` the simulator's faults. Old
    rows are rewritten so they read as new ones do:
    - a conversation that stopped with `error` gets the stop reason `legacy_stop` attributes;
      one it cannot attribute keeps `error`: "stored before parley told who failed" (reports say so);
    - its verdict takes that stop reason as outcome, as does a cancelled one's; the checks such a
      run never decided become not_run, and `conversation completed` fails for a bot_error;
    - a verdict `error` on a run that did not break is an evaluation_error;
    - a pass on which no check about the bot applied (and no LLM judge scored) is unverified.

    It works on the stored JSON with its own copy of the rules as they stood at version 4 (the
    `_V4_*` constants and `_v4_*` functions below), never on today's evaluation code: a
    migration gives the same result forever, whatever the checks become."""
    db.execute(_V4_VERDICTS)
    db.execute(_V4_COPY)
    db.execute("DROP TABLE verdicts")
    db.execute("ALTER TABLE verdicts_v4 RENAME TO verdicts")
    db.execute("CREATE INDEX idx_verdicts_outcome ON verdicts (outcome)")

    for cid, bot_model, error in db.execute("SELECT id, bot_model, error FROM conversations WHERE stop_reason = 'error'").fetchall():
        stop = legacy_stop(bot_model, error)
        if stop != "error":
            db.execute("UPDATE conversations SET stop_reason = ? WHERE id = ?", [stop, cid])

    rows = db.execute(
        "SELECT v.conversation_id, v.outcome, v.checks, v.judge, v.score, c.stop_reason, c.error "
        "FROM verdicts v JOIN conversations c ON c.id = v.conversation_id"
    ).fetchall()
    for cid, outcome, checks_json, judge_json, score, stop, error in rows:
        checks: list[dict[str, Any]] = json.loads(checks_json or "[]")
        settled = [_v4_completed(c, stop, error) for c in _v4_settle(checks, stop, error)]
        update: dict[str, Any] = {}
        if stop in _V4_BROKEN_STOPS:
            update = {"outcome": stop, "error": f"{stop}: {error}" if error else f"{stop}: the run failed"}
        elif outcome == "error":
            update = {"outcome": "evaluation_error"}
        elif outcome == "passed":
            judge = json.loads(judge_json) if judge_json else None
            by_llm = judge is not None and judge.get("judge") != "offline" and score is not None
            if not _v4_about_the_bot(settled) and not by_llm:
                update = {"outcome": "unverified"}
        if settled != checks:
            update["checks"] = json.dumps(settled, ensure_ascii=False, separators=(",", ":"))
        if update:
            if "outcome" in update:
                update["passed"] = int(update["outcome"] == "passed")
            sets = ", ".join(f"{k} = ?" for k in update)
            db.execute(f"UPDATE verdicts SET {sets} WHERE conversation_id = ?", [*update.values(), cid])


_V4_BROKEN_STOPS = frozenset({"bot_error", "user_error", "infrastructure_error", "cancelled", "error"})
_V4_UNFINISHED_STOPS = _V4_BROKEN_STOPS | {"timeout"}
_V4_DECIDED = {"bot_says": "pass", "bot_never_says": "fail", "tool_called": "pass", "tool_not_called": "fail", "unchanged_others": "fail"}
"""What a transcript cut short had already decided for good, as version 4 read it."""


def _v4_about_the_bot(checks: list[dict[str, Any]]) -> bool:
    return any(c.get("outcome") in ("pass", "fail") and c.get("kind") != "conversation_completed" for c in checks)


def _v4_decided(check: dict[str, Any]) -> bool:
    kind, outcome = check.get("kind"), check.get("outcome")
    if outcome in ("not_applicable", "not_run", "error") or kind == "conversation_completed":
        return True
    if check.get("policy_violation") and outcome == "fail":
        return True
    if kind == "playbook_assertion":
        return (check.get("details") or {}).get("ran", True) is not False
    return _V4_DECIDED.get(str(kind)) == outcome


def _v4_settle(checks: list[dict[str, Any]], stop: str, error: str | None) -> list[dict[str, Any]]:
    if stop not in _V4_UNFINISHED_STOPS:
        return checks
    why = f" ({error})" if error else ""
    reason = f"Not run: the conversation ended early ({stop}{why}) before this could be decided."
    return [c if _v4_decided(c) else {**c, "outcome": "not_run", "reason": reason} for c in checks]


def _v4_completed(check: dict[str, Any], stop: str, error: str | None) -> dict[str, Any]:
    if check.get("kind") != "conversation_completed":
        return check
    if stop == "bot_error":
        return {**check, "outcome": "fail", "reason": f"The bot broke: {error or 'the bot failed'}"}
    if stop in ("user_error", "infrastructure_error", "cancelled", "error"):
        why = f": {error}" if error else ""
        return {**check, "outcome": "not_run", "reason": f"Not run: the run itself broke ({stop}{why}); not counted against the bot."}
    return check


_V5_TABLES = """
CREATE TABLE batch_rules (
    batch_id TEXT NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
    rule_file TEXT NOT NULL,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    conversations TEXT NOT NULL CHECK (conversations IN ('2', 'all')),
    needs_model TEXT NOT NULL DEFAULT '[]',
    decided_at TEXT NOT NULL,
    PRIMARY KEY (batch_id, rule_file)
);
CREATE TABLE rule_results (
    batch_id TEXT NOT NULL,
    rule_file TEXT NOT NULL,
    position INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('conversation', 'pair', 'batch')),
    conversations TEXT NOT NULL DEFAULT '[]',
    outcome TEXT NOT NULL CHECK (outcome IN ('pass', 'fail', 'not_applicable', 'not_run')),
    reason TEXT,
    yields TEXT,
    PRIMARY KEY (batch_id, rule_file, position),
    FOREIGN KEY (batch_id, rule_file) REFERENCES batch_rules (batch_id, rule_file) ON DELETE CASCADE
);
CREATE INDEX idx_rule_results_outcome ON rule_results (batch_id, rule_file, outcome);
"""


def _v5_rule_results(db: Database) -> None:
    """Sensei rule files' decisions about pairs of conversations and about a batch (`parley run
    --rules`): `batch_rules` holds each pair or batch rule a batch was checked with, in order,
    `rule_results` each of its decisions (the conversations it is about, by id, as a JSON list).
    A rule's decisions about one conversation are checks in that conversation's verdict, not
    rows here. New tables only: older databases gain them empty."""
    for statement in _V5_TABLES.split(";"):  # one by one: executescript would commit the migration's transaction
        if statement.strip():
            db.execute(statement)


_V6_TABLES = """
CREATE TABLE labels (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('criterion', 'rubric', 'check')),
    item_id TEXT NOT NULL,
    item_text TEXT NOT NULL DEFAULT '',
    value TEXT NOT NULL CHECK ((kind = 'rubric' AND value IN ('1', '2', '3'))
                               OR (kind != 'rubric' AND value IN ('met', 'not_met', 'not_applicable'))),
    labeller TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    labelled_at TEXT NOT NULL,
    PRIMARY KEY (conversation_id, kind, item_id, labeller)
);
CREATE INDEX idx_labels_item ON labels (kind, item_id);
CREATE TABLE calibrations (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    judge TEXT NOT NULL,
    endpoint TEXT,
    prompt_version TEXT NOT NULL,
    generation TEXT NOT NULL DEFAULT '{}',
    judge_key TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    record TEXT NOT NULL
);
CREATE INDEX idx_calibrations_key ON calibrations (judge_key, created_at DESC);
"""


def _v6_labels_and_calibrations(db: Database) -> None:
    """People's labels on stored conversations and the calibrations of judges measured against
    them (`parley judge`): `labels` holds one row per conversation, item (a criterion by its
    stable id, the rubric, an `expect:` check by its name) and labeller, with when and a note;
    `calibrations` one row per calibration, keyed by the judge's model, endpoint, prompt version
    and generation settings (`judge_key`: their digest), the whole record as JSON. New tables
    only: older databases gain them empty."""
    for statement in _V6_TABLES.split(";"):  # one by one: executescript would commit the migration's transaction
        if statement.strip():
            db.execute(statement)


def _v7_batch_groups(db: Database) -> None:
    """Batches that belong together (a run of several bots side by side, a base and its mutants):
    each member's `group_id` (the group's own id) and `group_role` (its name in the group: a bot's,
    `base`, a mutant's). Older batches belong to no group."""
    db.execute("ALTER TABLE batches ADD COLUMN group_id TEXT")
    db.execute("ALTER TABLE batches ADD COLUMN group_role TEXT")
    db.execute("CREATE INDEX idx_batches_group ON batches (group_id)")


def _v8_world_diffs(db: Database) -> None:
    """Worlds declared once: a conversation's final state is the diff of the records it changed
    (parley.core.records.WorldDiff), no longer the order world's statuses and audit trail, and each
    tool call keeps what it changed in the world, which records it showed, and the rules it broke
    (`world_effects`, a JSON object). Stored states are rewritten as diffs (each audit row's change
    of status, every order's final status watched), chats' too; old tool calls have no effects."""
    from parley.core.records import WorldDiff

    db.execute("ALTER TABLE tool_calls ADD COLUMN world_effects TEXT NOT NULL DEFAULT '{}'")
    for table, column, key in (("conversations", "final_state", "id"), ("chat_sessions", "world_state", "id")):
        rows = db.execute(f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL").fetchall()
        for row_key, text in rows:
            try:
                state = json.loads(text)
            except ValueError:
                continue  # a damaged cell stays as it is: reading it says so
            if isinstance(state, dict) and "statuses" in state and "changes" not in state:
                db.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", [WorldDiff.model_validate(state).model_dump_json(), row_key])


MIGRATIONS: tuple[Migration, ...] = (
    _v1_initial,
    _v2_batch_owner,
    _v3_batch_lineage,
    _v4_outcomes,
    _v5_rule_results,
    _v6_labels_and_calibrations,
    _v7_batch_groups,
    _v8_world_diffs,
)


APP_KEY = "app"
APP_NAME = "parley"
"""The `meta` row (key, value) = (APP_KEY, APP_NAME) marks a database parley created. Like
`schema_version`, the `meta` table is bookkeeping kept outside the numbered migrations."""


class ForeignDatabase(ParleyError):
    """A SQLite file with tables parley did not create: refused, never changed."""


def owner_problem(db: Database) -> str | None:
    """Why `db` is not parley's to use (None when it is: empty, marked as parley's, or built by
    parley's migrations before the mark existed)."""
    tables = sorted(t for t in db.table_names() if not t.startswith("sqlite_"))
    if not tables:
        return None
    if "meta" in tables:
        row = db.execute("SELECT value FROM meta WHERE key = ?", [APP_KEY]).fetchone() if _has_columns(db, "meta") else None
        if row is not None and row[0] == APP_NAME:
            return None
    elif "schema_version" in tables:
        first = db.execute("SELECT name FROM schema_version WHERE version = 1").fetchone() if _has_columns(db, "schema_version") else None
        if first is not None and first[0] == MIGRATIONS[0].__name__.lstrip("_"):
            return None  # parley's, from before the mark
    shown = ", ".join(tables[:6]) + (", ..." if len(tables) > 6 else "")
    return f"it holds tables parley did not create ({shown})"


def _has_columns(db: Database, table: str) -> bool:
    columns = {c.name for c in db[table].columns}
    return {"key", "value"} <= columns if table == "meta" else {"version", "name"} <= columns


def check_owner(db: Database, where: str) -> None:
    """ForeignDatabase unless `db` is parley's to use (see owner_problem)."""
    problem = owner_problem(db)
    if problem is not None:
        raise ForeignDatabase(
            f"{where} is not a parley database: {problem}. parley leaves it as it is; give --db (or PARLEY_DB) a new file"
        )


def has_mark(db: Database) -> bool:
    return db["meta"].exists()


def ensure_mark(db: Database) -> None:
    """Mark `db` as parley's (inside the caller's transaction)."""
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", [APP_KEY, APP_NAME])


def ensure_version_table(db: Database) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")


def schema_version(db: Database) -> int:
    """The database's schema version: 0 for a new file."""
    if not db["schema_version"].exists():
        return 0
    row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(db: Database, migrations: Sequence[Migration] = MIGRATIONS, *, where: str = "the database") -> int:
    """Bring `db` up to `len(migrations)`; returns the version it ends at.

    Each migration runs in its own IMMEDIATE transaction (so two processes opening a new file at
    once do not both build it, and neither sees the other's half-built one), re-reading the
    version inside it, and marks the database as
    parley's. Raises ParleyError for a database written by a newer parley. (Store.open checks
    first, with check_owner, that the file is parley's to change.)

    Foreign keys are off while migrations run, as SQLite's procedure for rebuilding a table
    requires (dropping a parent table would otherwise cascade into its children), and every
    reference is checked (`PRAGMA foreign_key_check`) before a migration commits.
    """
    latest = len(migrations)
    foreign_keys = db.execute("PRAGMA foreign_keys").fetchone()[0]
    db.execute("PRAGMA foreign_keys = OFF")  # only takes effect outside a transaction: here
    try:
        return _apply(db, migrations, latest, where)
    finally:
        db.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")


def _apply(db: Database, migrations: Sequence[Migration], latest: int, where: str) -> int:
    while True:
        db.conn.execute("BEGIN IMMEDIATE")
        try:
            # In the transaction: a process opening the new file meanwhile sees no table at all,
            # or the version table with its first migration (never an empty version table, which
            # it would take for someone else's: schema.owner_problem).
            ensure_version_table(db)
            current = schema_version(db)
            if current > latest:
                raise ParleyError(
                    f"{where} was written by a newer parley (schema version {current}; this parley "
                    f"reads up to version {latest}). Upgrade parley, or set PARLEY_DB to another file."
                )
            if current == latest:
                if has_mark(db):
                    db.rollback()
                else:
                    ensure_mark(db)
                    db.commit()
                return current
            migration = migrations[current]
            migration(db)
            broken = db.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise ParleyError(f"migrating {where} to schema version {current + 1} left {len(broken)} broken references")
            db.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                [current + 1, migration.__name__.lstrip("_"), datetime.datetime.now(datetime.UTC).isoformat()],
            )
            db.commit()
        except BaseException:
            db.rollback()
            raise
