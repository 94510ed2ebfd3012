"""Evidence shown where the verdict is: the markdown report (the quote under a criterion not met,
a table of criteria), CSV (a column per criterion), JSON and NDJSON (each criterion with its
evidence), JUnit (the failure message) and the inspect eval log (a score per criterion)."""

from __future__ import annotations

import csv
import io
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.evaluation.judge import LLMJudge
from parley.core.evaluation.verdicts import evaluate
from parley.core.models.registry import get_model
from parley.core.models.retry import RetryPolicy
from parley.core.records.profile import Expectations
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.test_store_fixtures import batch, conversation, spec

CARRIER = "The bot names the carrier"
APOLOGY = "The bot apologises for the wait"
QUOTE = "Order ORD-1003 has shipped with UPS"


def decisions(*entries: tuple[int, str, list[int], str]) -> str:
    return json.dumps(
        {
            "criteria": [
                {"criterion": n, "verdict": v, "turns": t, "quote": q, "reasoning": f"Criterion {n}: {v}."} for n, v, t, q in entries
            ]
        }
    )


@pytest.fixture
async def stored(tmp_path, server, close_model_clients) -> tuple[Path, str]:
    """A batch of two conversations judged by a scripted LLM judge: one with two criteria (one
    met, one not, each quoted), one whose spec has none."""
    model = get_model(
        "openai-api/fake/judge", role="judge", retry_policy=RetryPolicy(max_retries=0), env={"FAKE_BASE_URL": server.base_url}
    )
    judge = LLMJudge(model)
    server.push_text('{"score": 2, "comment": "ok"}')
    server.push_text(decisions((1, "met", [2], QUOTE), (2, "not met", [2], "Departed UPS facility"), (3, "not applicable", [], "")))
    server.push_text('{"score": 3, "comment": "ok"}')
    server.push_text(decisions((1, "not applicable", [], "")))
    db = tmp_path / "parley.db"
    with Store.open(db) as store:
        record = store.create_batch(batch(planned=2, status="completed"))
        with_criteria = spec("track_order", 0).model_copy(update={"expect": Expectations(criteria=[CARRIER, APOLOGY])})
        for s in (with_criteria, spec("list_orders", 1)):
            conv = conversation("track")
            store.save_conversation(record.id, s, conv, await evaluate(conv, s, judge=judge))
    return db, record.id


def report(db: Path, batch_id: str, fmt: str, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["report", batch_id, "--format", fmt, "--db", str(db), *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_markdown_report_quotes_the_evidence_under_a_criterion_not_met(stored):
    db, batch_id = stored
    text = report(db, batch_id, "md")
    assert "## Criteria" in text
    assert f"| {CARRIER} | 1 | 0 | 0 | 0 | 0 |" in text and f"| {APOLOGY} | 0 | 1 | 0 | 0 | 0 |" in text
    assert "(built in) | 0 | 0 | 2 | 0 | 0 |" in text
    lines = text.splitlines()
    at = lines.index(f"  - {APOLOGY}: not met: Criterion 2: not met.")
    assert lines[at + 1] == '    > turn 2: "Departed UPS facility"'


def test_csv_has_a_column_per_criterion(stored):
    db, batch_id = stored
    rows = list(csv.DictReader(io.StringIO(report(db, batch_id, "csv"))))
    assert [r[f"criterion: {CARRIER}"] for r in rows] == ["met", ""]
    assert [r[f"criterion: {APOLOGY}"] for r in rows] == ["not met", ""]
    builtin = next(k for k in rows[0] if k.startswith("criterion: Every action"))
    assert [r[builtin] for r in rows] == ["not applicable", "not applicable"]


@pytest.mark.parametrize("fmt", ["json", "ndjson"])
def test_json_results_list_each_criterion_with_its_evidence(stored, fmt):
    db, batch_id = stored
    text = report(db, batch_id, fmt)
    first = json.loads(text)["results"][0] if fmt == "json" else json.loads(text.splitlines()[0])
    by_name = {c["criterion"]: c for c in first["criteria"]}
    assert (by_name[CARRIER]["state"], by_name[CARRIER]["turn"], by_name[CARRIER]["quote"]) == ("met", 2, QUOTE)
    assert by_name[APOLOGY]["state"] == "not met" and by_name[APOLOGY]["reasoning"] == "Criterion 2: not met."


def test_junit_names_the_criterion_and_its_evidence_in_the_failure_message(stored):
    db, batch_id = stored
    root = ET.fromstring(report(db, batch_id, "junit"))
    [failure] = root.iter("failure")
    assert failure.get("message") == f'1 check failed: {APOLOGY} (not met, turn 2: "Departed UPS facility")'


def test_the_inspect_log_has_a_score_per_criterion(stored, tmp_path):
    pytest.importorskip("inspect_ai.log")
    from inspect_ai.log import read_eval_log

    db, batch_id = stored
    out = tmp_path / "logs"
    report(db, batch_id, "inspect", "--output", str(out))
    [path] = out.iterdir()
    log = read_eval_log(str(path))
    samples = {s.id: s for s in log.samples}
    scores = samples["track_order#0"].scores
    assert scores[f"criterion: {CARRIER}"].value == "C" and scores[f"criterion: {APOLOGY}"].value == "I"
    assert scores[f"criterion: {CARRIER}"].metadata["quote"] == QUOTE
    other = samples["list_orders#1"].scores[f"criterion: {CARRIER}"]
    assert math.isnan(other.value) and other.explanation == "this conversation's spec does not have this criterion"
    results = {s.name: s for s in log.results.scores}
    assert results[f"criterion: {CARRIER}"].metrics["accuracy"].value == 1.0
    assert results[f"criterion: {APOLOGY}"].metrics["accuracy"].value == 0.0
