"""Checks written in Python: passing, failing, not applicable, raising, quoting what was never
said; counted as asked for, named in reports, run again by `parley rescore`, imported once before
the batch, refused by the service unless its operator allows Python; and the shipped ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.api import CheckedConversation, PythonCheck, conversation, expect_tool, passed, run_sync, say
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests import python_checks_support as support

SUPPORT = "tests.python_checks_support"


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def one(checks, *, bot="offline", steps=None, db: Path, **more):
    """Run one conversation with these checks; its verdict and the python checks' results by name."""
    spec = conversation("python-checks", steps=steps or [say("Where is my order ORD-1003?")], checks=checks, **more)
    result = run_sync(spec, bot=bot, db=db)
    [stored] = result.conversations
    return stored.verdict, {c.name: c for c in stored.verdict.checks if c.kind == "python"}


def test_a_passing_check_is_asked_for_and_makes_a_pass_with_its_evidence(tmp_path):
    verdict, checks = one([f"{SUPPORT}:says_shipped"], db=tmp_path / "p.db")
    check = checks[f"{SUPPORT}:says_shipped"]
    assert check.outcome == "pass"
    assert check.reason == 'The bot said the order shipped. Evidence, turn 1: "shipped"'
    assert check.details["turn"] == 1 and check.details["message"] == 1  # where the app's Enter goes
    assert verdict.outcome == "passed"  # the only check the author asked for held


def test_a_failing_check_fails_the_conversation(tmp_path):
    verdict, checks = one([f"{SUPPORT}:says_shipped", f"{SUPPORT}:says_refunded"], db=tmp_path / "p.db")
    assert checks[f"{SUPPORT}:says_refunded"].outcome == "fail"
    assert checks[f"{SUPPORT}:says_refunded"].reason.startswith('The bot never spoke of a refund. Evidence, turn 1: "')
    assert verdict.outcome == "failed"


def test_not_applicable_neither_passes_nor_fails(tmp_path):
    verdict, checks = one([f"{SUPPORT}:only_for_refunds"], db=tmp_path / "p.db")
    assert (checks[f"{SUPPORT}:only_for_refunds"].outcome, checks[f"{SUPPORT}:only_for_refunds"].reason) == (
        "not_applicable",
        "Nothing was cancelled.",
    )
    assert verdict.outcome == "unverified"  # nothing the author asked for applied


def test_a_check_that_raises_is_an_evaluation_error_naming_its_line_never_a_pass(tmp_path):
    verdict, checks = one([f"{SUPPORT}:says_shipped", f"{SUPPORT}:breaks"], db=tmp_path / "p.db")
    check = checks[f"{SUPPORT}:breaks"]
    assert check.outcome == "error"
    line = next(n for n, text in enumerate(Path(support.__file__).read_text().splitlines(), 1) if '"the reply nobody gave"' in text)
    assert check.reason.startswith("It raised KeyError: 'the reply nobody gave' (at ")
    assert f"python_checks_support.py:{line}, in breaks; the traceback is in parley.log)." in check.reason
    assert verdict.outcome == "evaluation_error" and f"{SUPPORT}:breaks: It raised KeyError" in (verdict.error or "")


def test_a_quote_that_is_not_in_the_transcript_is_an_evaluation_error(tmp_path):
    verdict, checks = one([f"{SUPPORT}:fabricates"], db=tmp_path / "p.db")
    check = checks[f"{SUPPORT}:fabricates"]
    assert (check.outcome, check.reason) == ("error", 'It quoted text that is not in turn 1: "your refund of 500 dollars is on its way"')
    assert verdict.outcome == "evaluation_error" and not verdict.passed


def test_an_answer_that_is_not_one_and_a_slow_check_are_errors(tmp_path, monkeypatch):
    from parley.core.evaluation import python_checks

    monkeypatch.setattr(python_checks, "PYTHON_CHECK_TIMEOUT_S", 0.5)
    _, checks = one([f"{SUPPORT}:answers_nothing", f"{SUPPORT}:slow"], db=tmp_path / "p.db")
    assert checks[f"{SUPPORT}:answers_nothing"].reason == (
        "It returned bool, not an answer: return passed(reason), failed(reason) or not_applicable(reason)."
    )
    assert checks[f"{SUPPORT}:slow"].reason == "It gave no answer within 0.5 s."
    assert all(c.outcome == "error" for c in checks.values())


def test_the_final_state_arguments_and_async_checks(tmp_path):
    steps = [say("Please cancel my order ORD-1004"), say("yes, cancel ORD-1004"), expect_tool("cancel_order")]
    _, checks = one(
        [
            PythonCheck(target=f"{SUPPORT}:order_is", args={"order": "ORD-1004", "status": "cancelled"}),
            PythonCheck(target=f"{SUPPORT}:order_is", args={"order": "ORD-1001", "status": "cancelled"}),
            f"{SUPPORT}:async_says_shipped",
        ],
        steps=steps,
        db=tmp_path / "p.db",
    )
    cancelled = checks[f"{SUPPORT}:order_is(order='ORD-1004', status='cancelled')"]
    assert (cancelled.outcome, cancelled.reason) == ("pass", "ORD-1004 is cancelled (changed: ORD-1004).")
    other = checks[f"{SUPPORT}:order_is(order='ORD-1001', status='cancelled')"]
    assert other.outcome == "fail" and other.reason.startswith("ORD-1001 is ")
    assert checks[f"{SUPPORT}:async_says_shipped"].outcome == "fail"  # nothing shipped was said here


def test_a_callable_handed_to_the_api_is_a_check_named_after_it(tmp_path):
    def mentions_the_order(conversation: CheckedConversation):
        return passed("the order was named", turn=1, quote="ORD-1003")

    verdict, checks = one([mentions_the_order, "short_replies"], db=tmp_path / "p.db")
    name = f"{__name__}:test_a_callable_handed_to_the_api_is_a_check_named_after_it.<locals>.mentions_the_order"
    assert checks[name].outcome == "pass" and checks["short_replies"].outcome == "pass"
    assert verdict.outcome == "passed"


PLAYBOOK = """\
name: track_with_checks
steps:
  - user: "Where is my order ORD-1003?"
expect:
  python:
    - {support}:says_shipped
    - {support}:{second}
"""


def test_the_cli_names_each_check_in_the_summary_and_the_report_and_rescore_runs_them_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pb.yaml").write_text(PLAYBOOK.format(support=SUPPORT, second="counted"), encoding="utf-8")
    (tmp_path / "changed.yaml").write_text(PLAYBOOK.format(support=SUPPORT, second="says_refunded"), encoding="utf-8")
    support.CALLS.clear()
    ran = parley("run", "pb.yaml", "--db", "p.db")
    assert ran.exit_code == 0, ran.output
    assert support.CALLS == ["user_stop"]
    batch = parley("batches", "show", "--db", "p.db").stdout.split()[1].rstrip(":")

    again = parley("rescore", batch, "--db", "p.db")
    assert again.exit_code == 0, again.output
    assert support.CALLS == ["user_stop", "user_stop"]  # the check ran again on the stored conversation

    changed = parley("rescore", batch, "--criteria-from", "changed.yaml", "--db", "p.db")
    assert changed.exit_code == 1
    assert f"{SUPPORT}:says_refunded: The bot never spoke of a refund." in changed.stdout
    report = parley("report", "latest", "--db", "p.db").stdout
    assert f"{SUPPORT}:says_refunded" in report


def test_a_check_that_cannot_be_imported_stops_the_batch_before_it_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pb.yaml").write_text(PLAYBOOK.format(support=SUPPORT, second="no_such_check"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "pb.yaml", "--db", "p.db"])
    assert result.exit_code == 1
    assert f"error: {SUPPORT}:no_such_check: the module {SUPPORT} has no 'no_such_check'" in result.stderr
    with Store.open(tmp_path / "p.db") as store:
        assert store.list_batches() == []  # nothing was stored, nothing ran


def test_the_shipped_checks_catch_long_repeated_and_asked_again_replies(tmp_path):
    steps = [say("Where is my order ORD-1003?"), say("It is ORD-1003, as I said.")]
    verdict, checks = one(
        ["no_repeated_reply", "no_asking_again", PythonCheck(target="short_replies", args={"words": 5})],
        bot=support.asking_bot,
        steps=steps,
        db=tmp_path / "p.db",
    )
    assert checks["no_repeated_reply"].outcome == "fail"
    assert checks["no_repeated_reply"].reason.startswith("The bot said the same again (turns 1 and 2).")
    asked = checks["no_asking_again"]
    assert asked.outcome == "fail"
    assert asked.reason == (
        'The bot asked for the id in turn 1, which the customer gave in turn 1. Evidence, turn 1: "What is your order number?"'
    )
    assert checks["short_replies(words=5)"].reason.startswith("A reply has 10 words, more than 5 (2 replies are).")
    _, fine = one(["no_repeated_reply", "no_asking_again", "short_replies"], steps=steps, db=tmp_path / "q.db")
    assert {name: c.outcome for name, c in fine.items()} == {
        "no_repeated_reply": "pass",
        "no_asking_again": "pass",
        "short_replies": "pass",
    }


def test_a_wrongly_named_check_is_a_located_problem_of_the_file(tmp_path):
    (tmp_path / "pb.yaml").write_text(
        PLAYBOOK.format(support=SUPPORT, second="x").replace(f"{SUPPORT}:x", "shortreplies"), encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["profiles", "validate", str(tmp_path / "pb.yaml")])
    assert result.exit_code == 1
    assert "pb.yaml:7:7: expect.python[1]: 'shortreplies' is not a check parley ships" in result.stdout


async def test_the_service_refuses_python_checks_unless_its_operator_allows_them(tmp_path, close_model_clients, monkeypatch):
    from tests.service_support import service, wait_for

    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # where `tests` is importable from
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "pb.yaml").write_text(PLAYBOOK.format(support=SUPPORT, second="counted"), encoding="utf-8")
    body = {"profiles": [{"path": "pb.yaml"}]}
    support.CALLS.clear()
    async with service(tmp_path, profile_dirs=[profiles]) as client:
        refused = await client.post("/api/batches", json=body)
    assert refused.status_code == 403
    assert f"this service does not run checks written in Python ({SUPPORT}:says_shipped)" in refused.json()["detail"]
    assert "parley serve --allow-python-bots" in refused.json()["detail"]
    assert support.CALLS == []  # nothing of the module ran
    async with service(tmp_path / "allowed", profile_dirs=[profiles], allow_python_bots=True) as client:
        launched = await client.post("/api/batches", json=body)
        assert launched.status_code == 201, launched.text
        view = await wait_for(client, launched.json()["batch_id"])
    assert view["status"] == "completed" and support.CALLS == ["user_stop"]


@pytest.mark.parametrize("written", ["short_replies", {"short_replies": {"words": 10}}])
def test_a_shipped_check_is_named_without_a_module(written):
    from parley.core.records import read_python_checks

    [check] = read_python_checks([written])
    assert check.target == "short_replies"


FIXTURE_CHECKS = """
import datetime
from parley.api import passed, failed, say

TODAY = datetime.date(2026, 11, 21)


def names_the_status(conversation):
    last = conversation.bot_replies[-1]
    if "shipped" in last.text:
        return passed("the status is named", turn=last.turn, quote="shipped")
    return failed("no status")


def test_with_checks(parley):
    result = parley.converse(steps=[say("Where is ORD-1003?")], checks=[names_the_status, "short_replies"], today=TODAY)
    assert result.passed, result.explain()


def test_a_check_that_fails(parley):
    result = parley.converse(steps=[say("Hello")], checks=[names_the_status], today=TODAY)
    assert result.passed, result.explain()
"""


def test_the_pytest_fixture_takes_checks_written_in_python(tmp_path):
    from tests.test_pytest_plugin import pytest_run

    (tmp_path / "test_checks.py").write_text(FIXTURE_CHECKS, encoding="utf-8")
    done = pytest_run(str(tmp_path), "--rootdir", str(tmp_path), "--parley-db", str(tmp_path / "p.db"), cwd=tmp_path)
    assert "1 failed, 1 passed" in done.stdout, done.stdout[-3000:]
    assert "test_checks:names_the_status: No status." in done.stdout


def test_a_check_given_arguments_it_does_not_take_stops_the_batch_before_it_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pb.yaml").write_text(
        PLAYBOOK.format(support=SUPPORT, second="says_shipped").replace(f"    - {SUPPORT}:says_shipped\n", "", 1)
        + "    - short_replies: {length: 10}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["run", "pb.yaml", "--db", "p.db"])
    assert result.exit_code == 1
    assert "error: short_replies(length=10): short_replies cannot be called with the conversation and these arguments" in result.stderr
