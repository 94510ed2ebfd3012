"""Checks that need a chance get one: `tools_called` counts the calls that succeeded (a call the
world refused is no check made), `tools_attempted` every attempt; a playbook's assertions that
build on context it injects are not applicable to a bot that never receives it, and the run
says so before it starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.api import conversation, run_sync
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests import python_bots
from tests.conftest import PINNED_TODAY
from tests.connector_servers import serve_bot_process

ROOT = Path(__file__).resolve().parent.parent
TEN_DAYS = ROOT / "profiles" / "playbooks" / "cancel_at_ten_days.yaml"


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_a_call_the_world_refused_does_not_make_tools_called_pass(tmp_path):
    spec = conversation("garbage", goals=["cancel order ORD-1004"], today=PINNED_TODAY, tools_called=["check_cancellation"])
    [one] = run_sync(spec, bot=python_bots.checks_a_garbage_id, db=tmp_path / "p.db").conversations
    [called] = [c for c in one.checks if c.name == "check_cancellation called"]
    assert called.outcome == "fail" and one.outcome == "failed"
    assert "and none succeeded" in called.reason and "only the calls that succeeded count" in called.reason
    attempted = conversation("tried", goals=["cancel order ORD-1004"], today=PINNED_TODAY, tools_attempted=["check_cancellation"])
    [tried] = run_sync(attempted, bot=python_bots.checks_a_garbage_id, db=tmp_path / "p.db").conversations
    assert [c.outcome for c in tried.checks if c.name == "check_cancellation attempted"] == ["pass"]


@pytest.fixture(scope="module")
def served():
    with serve_bot_process() as bot:
        yield bot


def test_assertions_on_injected_context_are_not_applicable_to_a_deployed_bot(served, tmp_path):
    db = tmp_path / "p.db"
    done = parley("run", TEN_DAYS, "--bot", f"rasa:{served.webhook}", "--db", db)
    assert done.exit_code == 0, done.output  # not failed: the bot never received what the assertions build on
    warnings = [line for line in done.stderr.splitlines() if "injects context" in line]
    assert warnings == [
        f"warning: {TEN_DAYS}: the playbook injects context (steps 1, 2) that rasa:{served.webhook} never receives: "
        "its assertions built on it (steps 4, 5) are not applicable to this bot"
    ]
    with Store.open(db) as store:
        [stored] = list(store.iter_conversations(store.latest_batch_id() or ""))
    checks = {c.name: c for c in stored.verdict.checks}
    regex = checks["step 5: expect_bot_regex cancell?ed"]
    assert regex.outcome == "not_applicable" and "never received the context the playbook injected (steps 1, 2)" in regex.reason
    assert stored.verdict.outcome == "unverified"


def test_the_same_playbook_still_holds_parleys_own_bot_to_it(tmp_path):
    done = parley("run", TEN_DAYS, "--db", tmp_path / "p.db")
    assert done.exit_code == 0, done.output
    assert "injects context" not in done.stderr and "1 passed" in done.stdout
