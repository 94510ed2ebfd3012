"""Nothing is shown as judged that nobody judged: offline there is no score (no histogram, mean
or score column of made-up 3s), and what no role read (criteria for want of an LLM judge, a
language the claims check does not read) is said beside the pass rate in the end lines and in
every report."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from click.testing import CliRunner

from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
TRACK = ROOT / "profiles" / "track_shipped_order.yaml"
WITH_CRITERIA = """\
test_name: polite_tracking
user:
  role: a customer
  goals: [track order ORD-1003]
world: {customer_id: C-100, today: 2026-11-21}
expect:
  tools_called: [track_order]
  criteria:
    - The bot names the carrier
    - The bot is polite
"""
JAPANESE = """\
test_name: japanese_tracking
user:
  language: Japanese
  role: a customer
  goals: [track order ORD-1003]
world: {customer_id: C-100, today: 2026-11-21}
expect:
  tools_called: [track_order]
"""


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_offline_no_surface_shows_a_score(tmp_path):
    db = tmp_path / "p.db"
    done = parley("run", TRACK, "--db", db)
    assert done.exit_code == 0, done.output
    assert "score 3" not in done.stdout and "Scores: none (no LLM judge scored; the checks decide)" in done.stdout
    html = tmp_path / "r.html"
    assert parley("report", "latest", "--output", html, "--db", db).exit_code == 0
    page = html.read_text(encoding="utf-8")
    assert "Conversations by judge score" not in page and "No score: no LLM judge scored these conversations" in page
    rows = list(csv.DictReader(io.StringIO(parley("report", "latest", "--format", "csv", "--db", db).stdout)))
    assert [r["score"] for r in rows] == [""]
    body = json.loads(parley("report", "latest", "--format", "json", "--db", db).stdout)
    assert body["summary"]["score_statistics"]["count"] == 0 and body["results"][0]["score"] is None
    assert body["results"][0]["comment"].startswith("All ") and body["results"][0]["comment"].endswith("checks passed.")


def test_what_no_role_read_is_said_beside_the_pass_rate(tmp_path):
    (tmp_path / "criteria.yaml").write_text(WITH_CRITERIA, encoding="utf-8")
    (tmp_path / "japanese.yaml").write_text(JAPANESE, encoding="utf-8")
    db = tmp_path / "p.db"
    done = parley("run", tmp_path / "criteria.yaml", tmp_path / "japanese.yaml", "--db", db)
    assert done.exit_code == 0, done.output
    said = "2 criteria not run (need an LLM judge); claims not read in: Japanese (1 conversation)"
    [rate] = [line for line in done.stdout.splitlines() if line.startswith("Pass rate:")]
    assert rate.endswith(said)
    markdown = parley("report", "latest", "--db", db).stdout
    assert f"Not read: {said}." in markdown
    body = json.loads(parley("report", "latest", "--format", "json", "--db", db).stdout)
    assert body["summary"]["not_read"] == {"criteria_need_judge": 2, "claims_languages": {"Japanese": 1}}
    junit = parley("report", "latest", "--format", "junit", "--db", db).stdout
    assert f'<property name="not_read" value="{said}" />' in junit
    html = tmp_path / "r.html"
    parley("report", "latest", "--output", html, "--db", db)
    assert said in html.read_text(encoding="utf-8")
    shown = parley("sessions", "list", "--db", db).stdout
    assert "passed" in shown


def test_a_language_the_claims_table_does_not_read_is_not_run_saying_so(tmp_path):
    (tmp_path / "japanese.yaml").write_text(JAPANESE, encoding="utf-8")
    db = tmp_path / "p.db"
    parley("run", tmp_path / "japanese.yaml", "--db", db)
    body = json.loads(parley("report", "latest", "--format", "json", "--db", db).stdout)
    [claims] = [c for c in body["results"][0]["verdict"]["checks"] if c["kind"] == "claims_match_actions"]
    assert claims["outcome"] == "not_run" and claims["reason"].startswith("Not checked: claims not read in: Japanese")
