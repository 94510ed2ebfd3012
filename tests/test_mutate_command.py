"""`parley mutate`: the base batch and one stored batch per mutant, linked to the base; per mutant
killed (with the conversations and checks that caught it), survived (with what would kill it), not
exercised or not exercisable; the score with its interval; and the shipped suite, offline, kills
every mutant it can exercise on the order world."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from parley.core.store import BatchRow, Store
from parley.tui.cli.main import cli

SHIPPED = Path(__file__).resolve().parent.parent / "profiles"


def write_profile(folder: Path, expect: str) -> None:
    (folder / "cancel.yaml").write_text(
        "test_name: cancel\n"
        "user:\n  language: English\n  role: a customer\n  goals:\n    - cancel order ORD-1002\n"
        "chatbot:\n  fallback: \"I'm sorry, I didn't understand that.\"\n"
        "conversation:\n  number: 1\n  goal_style:\n    all_answered:\n      limit: 8\n"
        "world:\n  name: orders\n  customer_id: C-100\n  today: 2026-11-21\n"
        f"expect:\n{expect}",
        encoding="utf-8",
    )


def test_a_survivor_is_named_with_what_would_kill_it_and_fails_the_exit_code(tmp_path: Path):
    write_profile(tmp_path, "  unchanged_others: false\n  tools_called: [cancel_order]\n")
    db = tmp_path / "parley.db"
    result = CliRunner().invoke(cli, ["mutate", str(tmp_path), "--mutants", "acts_without_doing,gives_up", "--db", str(db)])
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "acts_without_doing     SURVIVED" in out and "would kill it: A final-state check" in out
    assert "gives_up               killed" in out and "caught by cancel trial 1" in out and "cancel_order called" in out
    assert "mutation score: 1 of 2 exercised mutants killed (50%, 95% interval" in out
    assert "survivors: acts_without_doing" in out
    with Store.open(db, read_only=True) as store:
        batches = [row.batch for row in store.list_batches() if isinstance(row, BatchRow)]
    base = [b for b in batches if b.options.mutant is None]
    children = {b.options.mutant: b.parent_id for b in batches if b.options.mutant}
    assert len(base) == 1 and children == {"acts_without_doing": base[0].id, "gives_up": base[0].id}


def test_an_unknown_mutant_is_a_usage_error_naming_them_all(tmp_path: Path):
    result = CliRunner().invoke(cli, ["mutate", str(tmp_path), "--mutants", "acts_thrice", "--db", str(tmp_path / "p.db")])
    assert result.exit_code == 2 and "no mutant named 'acts_thrice'" in result.output and "acts_twice" in result.output


def test_the_shipped_suite_offline_kills_every_mutant_it_can_exercise_on_the_order_world(tmp_path: Path):
    result = CliRunner().invoke(cli, ["mutate", str(SHIPPED), "--format", "json", "--db", str(tmp_path / "parley.db")])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    status = {r["mutant"]: r["status"] for r in report["results"]}
    assert status == {
        "acts_without_doing": "killed",
        "wrong_record": "killed",
        "wrong_customer_record": "not_exercisable",  # the order world binds every tool to the signed-in customer
        "acts_twice": "no_visible_effect",  # the world refuses a second cancellation
        "acts_without_asking": "killed",
        "trusts_the_claim": "not_exercisable",
        "says_wrong_thing": "killed",
        "gives_up": "killed",
        "leaks": "killed",
        "wrong_language": "not_exercised",  # the offline bot answers in English whatever the customer writes
    }
    leaks = next(r for r in report["results"] if r["mutant"] == "leaks")
    assert {"list_my_orders", "cancel_eligible_order"} <= {c["name"] for c in leaks["caught_by"]}
    assert (report["killed"], report["exercised"]) == (6, 6)


def test_a_mutants_batch_is_not_resumed_and_a_rerun_of_it_runs_the_bot_as_it_is(tmp_path: Path):
    write_profile(tmp_path, "  unchanged_others: false\n  tools_called: [cancel_order]\n")
    db = tmp_path / "parley.db"
    CliRunner().invoke(cli, ["mutate", str(tmp_path), "--mutants", "gives_up", "--db", str(db)])
    with Store.open(db, read_only=True) as store:
        [child] = [row.batch for row in store.list_batches() if isinstance(row, BatchRow) and row.batch.options.mutant]
    resumed = CliRunner().invoke(cli, ["run", "--resume", child.id, "--db", str(db)])
    assert resumed.exit_code == 1 and f"batch {child.id} ran the bot under the mutant gives_up" in resumed.output
    rerun = CliRunner().invoke(cli, ["run", "--rerun", "failed", child.id, "--db", str(db)])
    assert rerun.exit_code == 0, rerun.output  # the bot as it is passes what the mutant failed
    with Store.open(db, read_only=True) as store:
        [again] = [row.batch for row in store.list_batches() if isinstance(row, BatchRow) and row.batch.parent_id == child.id]
    assert again.options.mutant is None and again.options.rerun == ["failed"]


RETURNS = Path(__file__).resolve().parent.parent / "worlds" / "returns" / "suite"
RETURNS_BOT = "python:parley.worlds.returns.reference_bot:ReturnsDeskBot"


def test_a_world_declares_its_own_mutant_and_the_suite_catches_it_by_the_worlds_rule(tmp_path):
    db = tmp_path / "m.db"
    ran = CliRunner().invoke(
        cli, ["mutate", str(RETURNS), "--bot", RETURNS_BOT, "--mutants", "refund_elsewhere", "--db", str(db), "-f", "json"]
    )
    assert ran.exit_code == 0, ran.output  # every exercised mutant killed
    report = json.loads(ran.stdout)
    [result] = report["results"]
    assert (result["mutant"], result["status"]) == ("refund_elsewhere", "killed")
    assert any("rule refund_to_original_method broken" in c for c in json.dumps(result["caught_by"]).split('"'))


def test_a_mutant_no_world_declares_is_a_usage_error_naming_them_all_and_nothing_is_stored(tmp_path):
    db = tmp_path / "m.db"
    ran = CliRunner().invoke(cli, ["mutate", str(RETURNS), "--bot", RETURNS_BOT, "--mutants", "refund_elsewher", "--db", str(db)])
    assert ran.exit_code == 2
    assert "no mutant named 'refund_elsewher'" in ran.output and "refund_elsewhere" in ran.output  # the world's own, listed
    with Store.open(db) as store:
        assert store.list_batches() == []
