"""Calibrating a real judge: SmolLM2-135M behind llama.cpp, measured against a person's labels on
two one-question conversations (`parley judge calibrate`), then judging them again in a re-score whose
verdicts carry what was measured.

The tiny model's kappa will be poor, or undefined: what is held here is that the figures are
computed (every label compared or counted as a judge error, a confusion matrix that adds up) and
stored under the live judge's key, and that a later verdict of the same judge is marked with
them. Its answers are capped short (PARLEY_JUDGE_MAX_TOKENS) and cached during the calibration,
so the re-score asks the model nothing: the test stays short on two busy cores.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.live.conftest import LIVE_MODEL

PLAYBOOK = """\
name: {name}
customer_id: C-100
today: 2026-11-21
steps:
  - user: "{ask}"
expect:
  criteria:
    - {{id: names-order, text: The assistant names the order the customer asked about}}
  judge:
    rubric: The assistant answers the question.
    id: answers
"""
ASKS = {"track_1003": "Where is ORD-1003?", "track_1006": "Where is ORD-1006?"}
LABELS = {"track_1003": ("met", "3"), "track_1006": ("not_met", "1")}
"""Two labels of each item, of two values: kappa has something to say once the judge answers."""
MARKS = ("uncalibrated", "κ undefined", "below threshold (κ", "κ ")


def parley(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def labelled(tmp_path, live_model_name, monkeypatch):
    """Two one-question playbooks run offline (one short tool result each, a short rubric of their
    own: short prompts), a person's labels on each, as a JSONL file."""
    monkeypatch.setenv("PARLEY_JUDGE_MAX_TOKENS", "48")
    monkeypatch.setenv("PARLEY_TIMEOUT_SEC", "600")
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, ask in ASKS.items():
        (suite / f"{name}.yaml").write_text(textwrap.dedent(PLAYBOOK.format(name=name, ask=ask)), encoding="utf-8")
    db = tmp_path / "live.db"
    assert parley("run", suite, "--db", db).exit_code == 0
    rows = []
    with Store.open(db) as store:
        batch = store.resolve_batch_ref("latest")
        for stored in store.iter_conversations(batch):
            names, score = LABELS[stored.spec.name]
            rows.append({"conversation_id": stored.conversation.id, "criterion_id": "names-order", "label": names})
            rows.append({"conversation_id": stored.conversation.id, "kind": "rubric", "criterion_id": "answers", "label": score})
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps({**r, "labeller": "alice"}) + "\n" for r in rows), encoding="utf-8")
    return db, batch, path


def test_a_small_model_is_calibrated_and_its_later_verdicts_carry_the_figures(labelled):
    db, batch, labels = labelled
    result = parley("judge", "calibrate", "--labels", labels, "--judge", LIVE_MODEL, "--cache", "-c", "1", "--format", "json", "--db", db)
    assert result.exit_code == 0, result.output
    [calibration] = json.loads(result.stdout)
    assert calibration["key"]["model"] == LIVE_MODEL and calibration["key"]["generation"]["max_tokens"] == 48
    assert calibration["conversations"] == 2
    items = {i["item_id"]: i for i in calibration["items"]}
    assert set(items) == {"names-order", "answers"}
    for item in items.values():  # every label compared with the judge's decision, or counted as its error
        assert item["labels"] + item["judge_errors"] == 2, item
        assert sum(map(sum, item["confusion"])) == item["labels"]
        assert item["kappa"] is None or -1.0 <= item["kappa"] <= 1.0
    assert items["answers"]["weighted"] and not items["names-order"]["weighted"]

    listed = parley("judge", "calibrations", "--db", db)
    assert listed.exit_code == 0 and LIVE_MODEL in listed.stdout

    rescored = parley("rescore", batch, "--judge", LIVE_MODEL, "--cache", "-c", "1", "--db", db)  # every reply from the cache
    assert "Judge calibration: " in rescored.stdout, rescored.output
    with Store.open(db) as store:
        judged = list(store.iter_conversations(store.resolve_batch_ref("latest")))
    assert len(judged) == 2
    for stored in judged:
        assert stored.verdict.judge.key is not None and stored.verdict.judge.key.model == LIVE_MODEL
        marked = [c for c in stored.verdict.checks if c.details.get("calibration")]
        names = [c for c in marked if c.details.get("criterion_id") == "names-order"]
        assert names, [c.name for c in stored.verdict.checks]
        text = names[0].details["calibration"]["text"]
        assert text.startswith(MARKS), text
        assert (text != "uncalibrated") == (items["names-order"]["labels"] > 0), text  # measured: marked with it
