"""`parley rescore BATCH --rules DIR`: a stored batch's conversations decided again by Sensei rule
files, without calling the bot or the customer: each copy's rules are checks of its verdict, the
pair and batch rules are stored with the new batch; without `--rules` a re-score decides the rules
its parent was run with; a bad rule file stops it before anything is stored."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.engine import prepare_rescore
from parley.core.engine.batch_runner import BatchRunner, prepare_resume
from parley.core.records import ConversationFinished
from parley.core.store import batch_rule_summaries
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.rules_support import TRACKING_PROFILE, rule_text, write_rules

HAS_TRACKING = rule_text("'1Z999AA10123456784' in tracking", name="has_tracking", yields='f"no tracking number for {order[0]}"')
SAME = rule_text("conv[0].tracking == conv[1].tracking", name="same", conversations=2, yields='"they differ"')


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    path = tmp_path / "suite" / "tracking.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(TRACKING_PROFILE, encoding="utf-8")
    return path


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def started(output: str) -> str:
    found = re.search(r"batch ([0-9a-f]{32}) started", output)
    assert found, output
    return found.group(1)


def verdicts(db: Path, batch_id: str) -> dict[str, object]:
    with Store.open(db) as store:
        return {stored.spec.spec_id: stored.verdict for stored in store.iter_conversations(batch_id)}


def rule_outcomes(verdict) -> dict[str, str]:
    return {c.name: c.outcome for c in verdict.checks if c.kind == "rule"}


def test_a_rescore_with_rules_decides_a_batch_that_was_run_without_them(tmp_path, profile):
    db = tmp_path / "p.db"
    first = parley("run", profile, "--db", db)
    assert first.exit_code == 0 and "2 unverified" in first.stdout, first.output
    parent = started(first.stdout)
    folder = write_rules(tmp_path / "rules", {"tracking.yaml": HAS_TRACKING, "pairs/same.yaml": SAME})

    result = parley("rescore", parent, "--rules", folder, "--db", db)

    assert result.exit_code == 1, result.output  # a conversation and a pair rule failed
    assert "pairs/same.yaml (same), each ordered pair: pass 0, fail 2" in result.stdout
    child = started(result.stdout)
    after = verdicts(db, child)
    assert rule_outcomes(after["tracking#0"]) == {"rule:tracking.yaml": "pass"} and after["tracking#0"].outcome == "passed"
    assert after["tracking#1"].outcome == "failed"
    [failed] = [c for c in after["tracking#1"].checks if c.kind == "rule"]
    assert failed.reason == "has_tracking: no tracking number for ORD-1001"
    with Store.open(db) as store:
        assert store.get_batch(child).options.rules == str(folder)
        assert [(s.rule_file, s.counts) for s in batch_rule_summaries(store, child)] == [("pairs/same.yaml", {"fail": 2})]
        assert batch_rule_summaries(store, parent) == [], "the parent is left as it was"
    assert {o for v in verdicts(db, parent).values() for o in rule_outcomes(v).values()} == set()


def test_without_rules_a_rescore_decides_the_rules_its_parent_was_run_with(tmp_path, profile):
    db = tmp_path / "p.db"
    folder = write_rules(tmp_path / "rules", {"tracking.yaml": HAS_TRACKING})
    parent = started(parley("run", profile, "--rules", folder, "--db", db).stdout)

    result = parley("rescore", parent, "--db", db)

    assert result.exit_code == 1, result.output
    after = verdicts(db, started(result.stdout))
    assert {k: rule_outcomes(v) for k, v in after.items()} == {
        "tracking#0": {"rule:tracking.yaml": "pass"},
        "tracking#1": {"rule:tracking.yaml": "fail"},
    }, "a re-score without --rules keeps its parent's rule checks"

    shutil.rmtree(folder)
    with Store.open(db) as store:
        batches = store.count_batches()
    gone = parley("rescore", parent, "--db", db)
    assert gone.exit_code == 1
    assert f"was run with --rules {folder}, which is no longer there" in gone.stderr and "--rules DIR" in gone.stderr
    assert "Traceback" not in gone.output
    with Store.open(db) as store:
        assert store.count_batches() == batches, "nothing stored"


def test_a_bad_rule_file_stops_a_rescore_before_anything_is_stored(tmp_path, profile):
    db = tmp_path / "p.db"
    parent = started(parley("run", profile, "--db", db).stdout)
    folder = write_rules(tmp_path / "rules", {"bad.yaml": rule_text("().__class__.__bases__", name="bad")})

    result = parley("rescore", parent, "--rules", folder, "--db", db)

    assert result.exit_code == 1
    assert re.search(r"bad\.yaml:\d+: bad\.oracle: ", result.stderr), result.stderr
    assert "Traceback" not in result.output
    with Store.open(db) as store:
        assert store.count_batches() == 1


@pytest.fixture
def stored_batch(tmp_path, profile) -> tuple[Path, str]:
    """A database holding one offline batch of the profile, and its id."""
    db = tmp_path / "p.db"
    return db, started(parley("run", profile, "--db", db).stdout)


async def test_an_interrupted_rescore_decides_its_pair_rules_when_it_is_resumed(tmp_path, stored_batch):
    db, parent = stored_batch
    folder = write_rules(tmp_path / "rules", {"pairs/same.yaml": SAME})
    with Store.open(db) as store:
        prepared = await prepare_rescore(store, parent, rules=folder, concurrency=1)
        runner = BatchRunner(store, prepared)
        runner.subscribe(lambda event: runner.stop(grace_s=0) if isinstance(event, ConversationFinished) else None)
        first = await runner.run()
        # stopped once the first copy is stored; the second may be in already (a copy is stored
        # behind the judging of the next: parley.core.engine.stored_copies)
        assert first.status == "cancelled" and first.done >= 1
        assert batch_rule_summaries(store, first.batch_id) == [], "not decided over an interrupted re-score"

        resumed = await prepare_resume(store, first.batch_id)
        assert [rule.rule_file for rule in resumed.rules] == ["pairs/same.yaml"]
        second = await BatchRunner(store, resumed).run()
        assert second.status == "completed" and second.rule_failures == 1
        assert [s.counts for s in batch_rule_summaries(store, first.batch_id)] == [{"fail": 2}]
