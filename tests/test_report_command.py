"""`parley report`: every format, read back; files; unknown batches."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
PLAYBOOKS = ROOT / "profiles" / "playbooks"


def parley(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "p.db"
    first = parley("run", PLAYBOOKS, "--trials", "2", "--db", path)
    assert first.exit_code == 0, first.output
    return path


def batch_id(db) -> str:
    from parley.core.store.store import Store

    with Store.open(db) as store:
        return store.latest_batch_id()


def test_markdown_to_stdout_by_default(db):
    result = parley("report", "--db", db)
    assert result.exit_code == 0
    md = result.stdout
    assert md.startswith(f"# parley batch report: `{batch_id(db)}`")
    assert md.index("## Policy violations") < md.index("## Totals") < md.index("## Pass rate")
    assert "**100.0%** (14 of 14, 95% interval 78.5-100.0%)" in md and "| 2 | 100.0% | 64.6-100.0% | 7 |" in md


def test_json_reads_back_with_every_conversation(db):
    result = parley("report", batch_id(db)[:8], "--format", "json", "--db", db)
    doc = json.loads(result.stdout)
    assert doc["batch_id"] == batch_id(db) and doc["status"] == "completed"
    assert doc["total_results"] == len(doc["results"]) == 14
    assert doc["summary"]["passed"] == 14
    first = doc["results"][0]
    assert first["messages"] and first["verdict"]["outcome"] == "passed" and first["score"] is None  # offline: no score


def test_ndjson_reads_back_one_conversation_a_line(db):
    lines = parley("report", "latest", "-f", "ndjson", "--db", db).stdout.splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 14
    assert {(r["spec_id"], r["trial"]) for r in records} == {(r["spec_id"], t) for r in records for t in (1, 2)}
    assert all(r["status"] == "completed" and r["passed"] for r in records)


def test_csv_reads_back_with_003s_columns_first(db, tmp_path):
    out = tmp_path / "results.csv"
    result = parley("report", "--output", out, "--db", db)  # the format from the suffix
    assert result.exit_code == 0 and f"wrote {out} (csv" in result.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert len(rows) == 14
    assert list(rows[0])[:4] == ["session_id", "scenario", "prompt_version", "score"]
    assert {r["score"] for r in rows} == {""} and {r["outcome"] for r in rows} == {"passed"}  # 003's score column: empty offline


def test_every_format_to_a_file(db, tmp_path):
    for fmt in ("md", "json", "csv", "ndjson"):
        target = tmp_path / f"report.{fmt}.out"
        result = parley("report", "-f", fmt, "-o", target, "--db", db)
        assert result.exit_code == 0
        assert target.read_text(encoding="utf-8").strip()
        assert not target.with_name(target.name + ".partial").exists()


def test_an_unknown_batch_is_one_line_and_exit_1(db, tmp_path):
    result = parley("report", "feedfacecafe", "--db", db)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == ["error: no batch 'feedfacecafe'; `parley sessions list` shows what is stored"]
    empty = parley("report", "--db", tmp_path / "empty.db")
    assert empty.exit_code == 1 and "there are no batches" in empty.stderr
    bad = parley("report", "--format", "xml", "--db", db)
    assert bad.exit_code == 2
