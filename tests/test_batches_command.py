"""`parley batches list` and `parley batches show` as a person uses them: newest first, the
filters, JSON, `latest~N` and prefixes, the parent a batch was made from, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.comparison_fixtures import FAIL, PASS, make_batch

ROOT = Path(__file__).resolve().parent.parent
PROFILE = ROOT / "profiles" / "track_shipped_order.yaml"


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_list_shows_batches_newest_first_with_counts_and_pass_rate(tmp_path):
    db = tmp_path / "p.db"
    with Store.open(db) as store:
        old = make_batch(store, {("a#0", 1): PASS, ("b#0", 1): FAIL}, minutes=1, sources=("profiles/a.yaml",))
        new = make_batch(store, {("a#0", 1): PASS}, minutes=2, bot="openai/gpt-4o-mini")
        store.update_batch(new.id, status="stopped_budget")
    result = parley("batches", "list", "--db", db)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["Batch", "Created", "(UTC)", "Status"]
    assert lines[1].startswith(new.id[:12]) and "stopped_budget" in lines[1] and "openai/gpt-4o-mini" in lines[1] and "100.0%" in lines[1]
    assert lines[2].startswith(old.id[:12]) and "profiles/a.yaml" in lines[2] and "50.0%" in lines[2]
    assert lines[-1] == "2 batches"

    only = parley("batches", "list", "--status", "completed", "--db", db)
    assert [line[:12] for line in only.stdout.splitlines()[1:-1]] == [old.id[:12]] and only.stdout.splitlines()[-1] == "1 batch (completed)"
    limited = parley("batches", "list", "--limit", "1", "--db", db)
    assert limited.stdout.splitlines()[-1] == "1 of 2 batches (--limit shows more)"
    rows = json.loads(parley("batches", "list", "--json", "--db", db).stdout)
    assert [r["id"] for r in rows] == [new.id, old.id]
    assert rows[1] | {"created_at": None} == rows[1] | {
        "created_at": None,
        "status": "completed",
        "done": 2,
        "passed": 1,
        "failed": 1,
        "pass_rate": 0.5,
        "parent_id": None,
        "bot": "offline",
    }
    bad = parley("batches", "list", "--status", "finished", "--db", db)
    assert bad.exit_code == 2 and "'finished' is not one of pending, running" in bad.stderr


def test_an_empty_database_says_how_to_start(tmp_path):
    result = parley("batches", "list", "--db", tmp_path / "p.db")
    assert result.exit_code == 0 and "no batches yet" in result.stdout and "`parley run PATH` starts one" in result.stdout
    missing = parley("batches", "show", "latest", "--db", tmp_path / "p.db")
    assert missing.exit_code == 1 and "there are no batches in" in missing.stderr


def test_show_prints_the_run_summary_for_latest_a_prefix_and_latest_tilde(tmp_path):
    db = tmp_path / "p.db"
    first = parley("run", PROFILE, "--db", db)
    second = parley("run", PROFILE, "--db", db, "--seed", "5")
    assert first.exit_code == second.exit_code == 0
    with Store.open(db) as store:
        older, newer = store.resolve_batch_ref("latest~1"), store.resolve_batch_ref("latest")
    shown = parley("batches", "show", "latest~1", "--db", db)
    assert shown.exit_code == 0, shown.output
    out = shown.stdout
    assert out.startswith(f"Batch {older}: completed")
    assert f"Sources: {PROFILE}" in out and "Models: bot offline, user offline, judge offline" in out
    assert "Trials 1, seed 0, max turns 30" in out
    assert "Pass rate: 100.0% (1 of 1, 95% interval 20.7-100.0%)" in out and "Policy violations: none" in out
    assert "Made from" not in out
    by_prefix = parley("batches", "show", newer[:7], "--db", db)
    assert by_prefix.exit_code == 0 and f"Batch {newer}:" in by_prefix.stdout and "seed 5" in by_prefix.stdout
    unknown = parley("batches", "show", "abcdef123", "--db", db)
    assert unknown.exit_code == 1 and unknown.stderr.startswith("error: no batch 'abcdef123'")
