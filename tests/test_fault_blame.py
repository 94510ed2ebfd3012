"""A bot that fails is never the simulated customer's fault: a simulator fault excuses the bot
only when the customer misbehaved first, on its own. Run end to end on the shipped profiles with
`python:` bots that never do their job, and on transcripts made by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.evaluation.user_faults import detect_user_faults
from parley.core.evaluation.verdicts import evaluate
from parley.core.records.profile import Expectations
from parley.core.reports.compare import compare_batches
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.comparison_fixtures import PASS, Result, make_batch
from tests.test_eval_checks import as_diff, orders
from tests.test_user_faults import conversation, spec

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = [ROOT / "profiles" / f"{name}.yaml" for name in ("track_shipped_order", "cancel_eligible_order", "list_my_orders")]
ASKS = "python:tests.python_bots:asks_for_the_order_id"


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def outcomes(db: Path) -> dict[str, str]:
    with Store.open(db) as store:
        return {s.spec.spec_id: s.verdict.outcome for s in store.iter_conversations(store.latest_batch_id() or "")}


def test_a_bot_that_always_asks_for_the_order_id_fails_and_the_customer_is_not_blamed(tmp_path):
    db = tmp_path / "p.db"
    done = parley("run", *SHIPPED, "--bot", ASKS, "--db", db)
    assert done.exit_code == 1, done.output
    assert set(outcomes(db).values()) == {"failed"}
    assert "4 failed" in done.stdout and "0 simulator faults" in done.stdout and "Pass rate: 0.0% (0 of 4" in done.stdout
    with Store.open(db) as store:
        stored = next(s for s in store.iter_conversations(store.latest_batch_id() or "") if s.spec.name == "track_shipped_order")
    verdict = stored.verdict
    [fault] = verdict.user_faults
    assert fault.kind == "stopped_after_question" and not fault.blamed
    assert "the bot asked for the order id although the customer gave it in message 1 (ORD-1003)" in fault.excused
    [replies] = [c for c in verdict.checks if c.kind == "bot_replies"]
    assert replies.outcome == "fail" and "is the bot's doing" in replies.reason
    failed = {c.name for c in verdict.failed_checks}
    assert {"track_order called", "bot says /ORD-1003/"} <= failed
    junit = parley("report", "latest", "--format", "junit", "--db", db)
    assert junit.stdout.count("<failure") == 4 and "<skipped" not in junit.stdout


def test_mixed_with_a_passing_playbook_the_pass_rate_counts_the_failures(tmp_path):
    passing = tmp_path / "asks.yaml"
    passing.write_text(
        "name: asks\ntoday: 2026-11-21\nsteps:\n  - user: Hello\n  - expect_bot_regex: order id\n",
        encoding="utf-8",
    )
    done = parley("run", *SHIPPED, passing, "--bot", ASKS, "--db", tmp_path / "p.db")
    assert done.exit_code == 1, done.output
    assert "Pass rate: 20.0% (1 of 5" in done.stdout


def test_a_bot_that_says_nothing_fails_its_replies_check(tmp_path):
    db = tmp_path / "p.db"
    done = parley("run", ROOT / "profiles" / "cancel_eligible_order.yaml", "--bot", "python:tests.python_bots:says_nothing", "--db", db)
    assert done.exit_code == 1, done.output
    assert set(outcomes(db).values()) == {"failed"}
    with Store.open(db) as store:
        verdicts = [s.verdict for s in store.iter_conversations(store.latest_batch_id() or "")]
    for verdict in verdicts:
        [replies] = [c for c in verdict.checks if c.kind == "bot_replies"]
        assert replies.reason.startswith("The bot replied nothing to customer messages 1, 2, 3")
        assert all(not f.blamed for f in verdict.user_faults)


def test_a_failed_sensei_rule_about_the_bot_is_the_bots_failure(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "short.yaml").write_text(
        "name: short\ndescription: the bot names the carrier\nconversations: 1\n"
        "oracle: any('UPS' in p for p in chatbot_phrases)\nyields: \"'the bot never named the carrier'\"\n",
        encoding="utf-8",
    )
    (tmp_path / "track.yaml").write_text(
        "test_name: track_sensei\nuser:\n  language: English\n  role: a customer\n  context: [your name is Maya]\n"
        "  goals: [track order ORD-1003]\nchatbot:\n  is_starter: false\n  fallback: Sorry?\n  output: []\n"
        "conversation:\n  number: 1\n  goal_style:\n    steps: 6\n  interaction_style: [single question]\n",
        encoding="utf-8",
    )
    db = tmp_path / "p.db"
    done = parley("run", tmp_path / "track.yaml", "--rules", tmp_path / "rules", "--bot", ASKS, "--db", db)
    assert done.exit_code == 1, done.output
    with Store.open(db) as store:
        [stored] = list(store.iter_conversations(store.latest_batch_id() or ""))
    assert stored.verdict.outcome == "failed"
    assert any(c.name == "rule:short.yaml" and c.outcome == "fail" for c in stored.verdict.checks)
    assert "no check about the bot applied" not in (stored.verdict.comment or "")


def test_compare_counts_a_pass_that_became_the_bots_failure_as_a_regression(tmp_path):
    db = tmp_path / "p.db"
    assert parley("run", *SHIPPED, "--db", db).exit_code == 0
    assert parley("run", *SHIPPED, "--bot", ASKS, "--db", db).exit_code == 1
    done = parley("compare", "latest~1", "latest", "--fail-on-regression", "--alpha", "0.1", "--db", db)
    assert done.exit_code == 1, done.output
    assert "4 regressions, 0 fixes" in done.stderr


def test_compare_a_pass_lost_to_a_simulator_fault(tmp_path):
    faulty = Result(outcome="user_fault", score=None)
    faulty_and_failing = Result(outcome="user_fault", score=None, failed=("track_order called",))
    with Store.open(tmp_path / "p.db") as store:
        make_batch(store, {("a#0", 1): PASS, ("b#0", 1): PASS}, minutes=1)
        make_batch(store, {("a#0", 1): faulty, ("b#0", 1): faulty_and_failing}, minutes=2)
        c = compare_batches(store, "latest~1", "latest")
    assert [(ch.kind, ch.spec_id) for ch in c.changes] == [("regression", "b#0"), ("outcome_change", "a#0")]
    assert [ch.spec_id for ch in c.lost_to_simulator] == ["a#0"]
    done = parley("compare", "latest~1", "latest", "--db", tmp_path / "p.db")
    assert "1 regression, 0 fixes" in done.stderr and "1 pass lost to simulator faults (the bot not judged)" in done.stderr
    assert "1 conversation that passed in the base ended as a simulator fault" in done.stdout


# -- on transcripts made by hand ---------------------------------------------------------------


def blame(*turns: tuple[str, str], **kw: object) -> list[tuple[str, bool]]:
    return [(f.kind, f.blamed) for f in detect_user_faults(conversation(*turns), spec(**kw))]


def test_repeating_itself_to_a_bot_that_said_nothing_is_not_the_customers_fault():
    said = ("u", "Where is ORD-1004?")
    assert blame(said, ("b", ""), said, ("b", ""), said, ("b", "")) == [("repeated_message", False)]
    fallback = ("b", "I'm sorry, I didn't understand that.")
    faults = detect_user_faults(conversation(said, fallback, said, fallback, said), spec())
    assert "with its fallback" in (faults[0].excused or "") or "same thing" in (faults[0].excused or "")
    same = ("b", "Our shop is open from 9 to 5.")
    [fault] = detect_user_faults(conversation(said, same, said, same, said), spec())
    assert "the bot said the same thing each time" in (fault.excused or "")
    # a bot that answered differently each time: the customer repeated itself on its own
    assert blame(said, ("b", "It is shipped."), said, ("b", "With UPS."), said) == [("repeated_message", True)]


def test_leaving_after_a_question_the_customer_had_answered_is_the_bots_doing():
    asked = ("b", "Which order would you like me to cancel?")
    assert blame(("u", "Cancel my order please."), asked, ("u", "It's ORD-1004."), asked, ("u", "Thanks, bye!")) == [
        ("stopped_after_question", False)
    ]
    confirm = ("b", 'Shall I cancel order ORD-1004 now? Please reply "yes" to confirm.')
    faults = detect_user_faults(conversation(("u", "Cancel ORD-1004"), confirm, ("u", "Yes."), confirm, ("u", "Bye.")), spec())
    assert [(f.kind, f.blamed) for f in faults] == [("stopped_after_question", False)]
    assert "after the customer answered it in message 2" in (faults[0].excused or "")
    # the first time it is asked, leaving without an answer is the customer's fault
    assert blame(("u", "Cancel ORD-1004"), confirm, ("u", "Thanks, bye!")) == [("stopped_after_question", True)]


async def test_a_claim_nothing_backs_before_the_customer_misbehaved_is_the_bots_failure():
    conv = conversation(
        ("u", "Cancel order ORD-1004"),
        ("b", "I have cancelled ORD-1004."),
        ("u", "How can I help you today?"),
        ("b", "..."),
    )
    conv = conv.model_copy(update={"final_state": _state({"ORD-1004": "processing"})})
    verdict = await evaluate(conv, spec(expect=Expectations(records=orders({"ORD-1004": "processing"}))))
    [fault] = verdict.user_faults
    assert fault.kind == "speaks_as_assistant" and not fault.blamed
    assert "claims match actions failed at its reply to customer message 1" in (fault.excused or "")
    assert verdict.outcome == "failed"


async def test_a_customer_that_misbehaved_first_is_still_blamed_when_an_end_check_fails():
    confirm = ("b", 'Shall I cancel order ORD-1004 now? Please reply "yes" to confirm.')
    conv = conversation(("u", "Cancel order ORD-1004"), confirm, ("u", "Thanks, bye!"))
    conv = conv.model_copy(update={"final_state": _state({"ORD-1004": "processing"})})
    verdict = await evaluate(conv, spec(expect=Expectations(records=orders({"ORD-1004": "cancelled"}))))
    assert verdict.outcome == "user_fault" and any(c.outcome == "fail" for c in verdict.checks)
    assert [f.blamed for f in verdict.user_faults] == [True]


def _state(statuses: dict[str, str]):
    from parley.mockapi.schema import WorldState
    from tests.test_user_faults import TODAY

    return as_diff(WorldState(today=TODAY, statuses=statuses, audit=[]))


@pytest.mark.parametrize("surface", ["json"])
def test_an_excused_fault_is_stored_with_why(tmp_path, surface):
    db = tmp_path / "p.db"
    parley("run", SHIPPED[0], "--bot", ASKS, "--db", db)
    done = parley("report", "latest", "--format", surface, "--db", db)
    body = json.loads(done.stdout)
    [faults] = [c["verdict"]["user_faults"] for c in body["results"]]
    assert faults[0]["excused"].startswith("the bot asked for the order id")
