"""`parley.api.run(specs, rules=DIR)`: Sensei rule files in a batch run from code, as `parley run
--rules` decides them: each conversation's rules are checks of it, the pair and batch rules are
decided once the batch is in and a failed one fails the run; bad rules are refused before
anything is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.api import ConfigError, SpecsInvalid, load_specs, run, run_sync
from parley.core.store import Store
from tests.rules_support import TRACKING_PROFILE, rule_text, write_rules

HAS_TRACKING = rule_text("'1Z' in tracking", name="has_tracking", yields='f"no tracking number for {order[0]}"')
EVERY_TRACKING = rule_text(
    "num_exist(\"'1Z' in tracking\") == 2", name="every_tracking", conversations="all", yields='"not every customer got a tracking number"'
)


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """The shared model clients a test's run opened are closed."""


@pytest.fixture
def specs(tmp_path: Path):
    path = tmp_path / "suite" / "tracking.yaml"
    path.parent.mkdir()
    path.write_text(TRACKING_PROFILE, encoding="utf-8")
    return load_specs(path)


def test_rules_decide_each_conversation_and_a_failed_batch_rule_fails_the_run(tmp_path, specs):
    rules = write_rules(tmp_path / "rules", {"tracking.yaml": HAS_TRACKING, "batch/every.yaml": EVERY_TRACKING})
    result = run_sync(specs, rules=rules, db=tmp_path / "p.db")

    by_spec = {c.spec.spec_id: c for c in result.conversations}
    [held] = [c for c in by_spec["tracking#0"].checks if c.name == "rule:tracking.yaml"]
    assert held.outcome == "pass" and by_spec["tracking#0"].passed, "a held rule is a check the author asked for"
    [broken] = by_spec["tracking#1"].failed_checks
    assert broken.reason == "has_tracking: no tracking number for ORD-1001"

    [every] = result.failed_rules
    assert (every.rule_file, every.counts, every.failures[0].yields) == (
        "batch/every.yaml",
        {"fail": 1},
        "not every customer got a tracking number",
    )
    assert result.status == "completed" and not result.passed and not result.ok()
    explained = result.explain()
    assert "  - batch/every.yaml (every_tracking), the batch: pass 0, fail 1, not applicable 0" in explained
    assert "      the batch of 2: not every customer got a tracking number" in explained
    with Store.open(tmp_path / "p.db", read_only=True) as store:
        assert store.get_batch(result.batch_id).options.rules == str(rules.resolve())


async def test_held_batch_rules_leave_an_awaited_run_ok(tmp_path, specs):
    some = rule_text("exists(\"'1Z' in tracking\")", name="some", conversations="all")
    result = await run(specs, rules=write_rules(tmp_path / "rules", {"some.yaml": some}), db=tmp_path / "p.db")
    [rule] = result.rules
    assert rule.decision is not None and rule.decision.outcome == "pass"
    assert result.failed_rules == [] and result.ok()


def test_a_rules_folder_that_is_not_there_or_a_bad_rule_file_is_refused_before_anything_is_stored(tmp_path, specs):
    db = tmp_path / "p.db"
    with pytest.raises(ConfigError, match=r"^rules nowhere: no such file or folder \(from "):
        run_sync(specs, rules="nowhere", db=db)
    bad = write_rules(
        tmp_path / "rules", {"bad.yaml": "name: bad\ndescription: reads a file\nconversations: 1\noracle: __import__('os')\n"}
    )
    with pytest.raises(SpecsInvalid) as caught:
        run_sync(specs, rules=bad, db=db)
    assert f"{bad / 'bad.yaml'}:4: bad.oracle: the name __import__ is not allowed in a rule" in str(caught.value)
    if db.exists():
        with Store.open(db, read_only=True) as store:
            assert store.count_batches() == 0
