"""Schema v5: a batch's pair and batch rule results, stored apart from its conversations. Saving
replaces what the batch held, reading summarises without loading every decision, a database
written before v5 gains the tables empty, and one opened read-only before that still reports."""

from __future__ import annotations

import pytest

from parley.core.reports.stats import summarize
from parley.core.rules import RuleReport, RuleResult
from parley.core.store import batch_rule_summaries, clear_batch_rules, iter_rule_results, save_batch_rules
from parley.core.store.schema import MIGRATIONS
from parley.core.store.store import ReadOnlyDatabase, Store
from tests.test_store_fixtures import batch


def report(rule_file: str, outcomes: list[str], *, scope: object = 2) -> RuleReport:
    kind = "pair" if scope == 2 else "batch"
    return RuleReport(
        rule_file=rule_file,
        name=rule_file.split(".")[0],
        description="d",
        conversations=scope,  # type: ignore[arg-type]
        needs_model=["tone"] if "tone" in rule_file else [],
        results=[
            RuleResult(
                rule_file=rule_file,
                rule_name=rule_file.split(".")[0],
                kind=kind,  # type: ignore[arg-type]
                conversations=[f"a{i}", f"b{i}"],
                outcome=outcome,  # type: ignore[arg-type]
                reason="why" if outcome != "pass" else None,
                yields=f"failure {i}" if outcome == "fail" else None,
            )
            for i, outcome in enumerate(outcomes)
        ],
    )


def test_saving_replaces_and_summaries_count_without_loading_every_decision(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        b = store.create_batch(batch())
        save_batch_rules(store, b.id, [report("old.yaml", ["pass"])])
        many = ["fail"] * 30 + ["pass"] * 5 + ["not_run"] * 2
        save_batch_rules(store, b.id, [report("pairs.yaml", many), report("tone.yaml", ["not_applicable"], scope="all")])

        [pairs, tone] = batch_rule_summaries(store, b.id, failures_kept=3)
        assert pairs.rule_file == "pairs.yaml" and pairs.counts == {"fail": 30, "pass": 5, "not_run": 2} and pairs.failed
        assert [f.yields for f in pairs.failures] == ["failure 0", "failure 1", "failure 2"]
        assert pairs.failures[0].conversations == ["a0", "b0"] and pairs.not_run_reasons == ["why"]
        assert tone.conversations == "all" and tone.needs_model == ["tone"] and tone.decision.outcome == "not_applicable"
        assert [r.outcome for r in iter_rule_results(store, b.id, "pairs.yaml", page_size=7)] == many, "every decision, in order"
        assert list(iter_rule_results(store, b.id, "old.yaml")) == [], "the earlier decisions were replaced"

        clear_batch_rules(store, b.id)
        assert batch_rule_summaries(store, b.id) == []


def test_deleting_a_batch_deletes_its_rule_results(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        b = store.create_batch(batch())
        save_batch_rules(store, b.id, [report("pairs.yaml", ["pass", "fail"])])
        store.db.execute("DELETE FROM batches WHERE id = ?", [b.id])
        store.db.conn.commit()
        assert store.db.execute("SELECT COUNT(*) FROM rule_results").fetchone()[0] == 0


def test_a_database_from_before_rules_gains_the_tables_empty(tmp_path):
    path = tmp_path / "old.db"
    with Store.open(path, migrations=MIGRATIONS[:4]) as old:
        b = old.create_batch(batch())
        assert not old.db["batch_rules"].exists()
    with Store.open(path, read_only=True) as read_only:  # not migrated: it reports without the tables
        assert summarize(read_only, b.id).rules == []
    with Store.open(path) as store:
        assert store.schema_version() == len(MIGRATIONS) and len(MIGRATIONS) >= 5  # this and every later migration ran
        assert store.db["batch_rules"].exists() and store.db["rule_results"].exists()
        assert batch_rule_summaries(store, b.id) == [] and store.get_batch(b.id).id == b.id


def test_a_store_opened_read_only_refuses_to_save_rule_results(tmp_path):
    path = tmp_path / "p.db"
    with Store.open(path) as store:
        b = store.create_batch(batch())
    with Store.open(path, read_only=True) as store, pytest.raises(ReadOnlyDatabase, match="open read-only: saving rule results"):
        save_batch_rules(store, b.id, [report("pairs.yaml", ["pass"])])


def test_a_secret_the_run_resolved_is_redacted_from_stored_rule_results(tmp_path):
    from parley.core.redaction import register_secret

    secret = "sk-rules-0123456789abcdef"
    register_secret(secret, origin="a test key")
    leaky = report("pairs.yaml", ["fail"])
    leaky.results[0] = leaky.results[0].model_copy(update={"yields": f"the bot said {secret}", "reason": f"because {secret}"})
    with Store.open(tmp_path / "p.db") as store:
        b = store.create_batch(batch())
        save_batch_rules(store, b.id, [leaky])
        [stored] = list(iter_rule_results(store, b.id, "pairs.yaml"))
        assert stored.yields == "the bot said [redacted]" and stored.reason == "because [redacted]"
        assert stored.conversations == ["a0", "b0"], "ids are kept as they are"
