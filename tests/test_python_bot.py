"""A bot written in Python and called in-process (`--bot python:MODULE:NAME`, or a callable handed to
parley.api): sync and async, with the order API's tools, checked as the order bot is; whatever it
does wrong is its bot_error; its module imported once, before anything runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parley.api import ConfigError, conversation, run_sync, say
from parley.core.bots import BotContext, PythonBot, parse_bot_spec
from parley.core.chat.session import ChatSession
from parley.core.records import ChatMessage
from parley.core.store import Store
from tests import python_bots
from tests.conftest import PINNED_TODAY
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
PLAYBOOK = ROOT / "profiles" / "playbooks" / "track_shipped_order.yaml"


def track(name: str = "track", **kw: object):
    return conversation(
        name,
        goals=["track order ORD-1003"],
        today=PINNED_TODAY,
        orders={"ORD-1003": "shipped"},
        tools_called=["track_order"],
        says=[r"\bUPS\b"],
        **kw,  # type: ignore[arg-type]
    )


def test_a_sync_bot_with_tools_is_checked_as_the_order_bot_is(tmp_path):
    result = run_sync(track(), bot=python_bots.order_bot, db=tmp_path / "p.db")
    [one] = result.conversations
    assert one.passed, one.explain()
    assert [c.name for c in one.tool_calls] == ["track_order"] and one.tool_calls[0].customer_id == "C-100"
    assert one.reply == "ORD-1003 is shipped, with UPS, due 2026-11-23."
    held = {c.name for c in one.checks if c.outcome == "pass"}
    assert {"ORD-1003 ends shipped", "track_order called"} <= held
    # the transcript holds the call as the order bot's does: the call, its result, then the answer
    assert [m.role for m in one.conversation.messages[1:4]] == ["assistant", "tool", "assistant"]
    assert one.conversation.bot_model == "python:tests.python_bots:order_bot"


def test_an_async_bot_gets_its_customer_and_awaits_its_tools(tmp_path):
    spec = conversation("greet", steps=[say("Hello"), say("And ORD-1003?")], today=PINNED_TODAY, customer_id="C-200")
    result = run_sync(spec, bot=python_bots.async_order_bot, db=tmp_path / "p.db")
    texts = result.conversations[0].conversation.bot_texts
    assert texts == ["Hello C-200: you have 4 orders. Which one is it about?", "I could not find ORD-1003."]  # C-200 does not own it
    assert [c.name for c in result.conversations[0].tool_calls] == ["list_my_orders", "track_order"]
    assert result.conversations[0].tool_calls[1].error == "not_your_order"


def test_a_sync_bot_runs_in_a_daemon_thread_never_on_the_loop(tmp_path):
    result = run_sync(conversation("t", steps=[say("hi")]), bot=python_bots.thread_bot, db=tmp_path / "p.db")
    reply = result.conversations[0].reply
    assert reply == "thread=parley bot python:tests.python_bots:thread_bot daemon=True main=False"


def test_a_class_is_one_instance_per_conversation(tmp_path):
    spec = conversation("count", steps=[say("one"), say("two")])
    result = run_sync(spec, bot=python_bots.CountingBot, trials=2, db=tmp_path / "p.db")
    for one in result.conversations:  # each trial starts counting again
        assert one.conversation.bot_texts == ["Answer 1 of this conversation.", "Answer 2 of this conversation."]


def test_tool_calls_the_bot_reports_are_its_own(tmp_path):
    result = run_sync(track(), bot=python_bots.reporting_bot, db=tmp_path / "p.db")
    [call] = result.conversations[0].tool_calls
    assert (call.name, call.arguments, call.result, call.ok) == ("track_order", {"order_id": "ORD-1003"}, '{"status": "shipped"}', True)
    held = {c.name for c in result.conversations[0].checks if c.outcome == "pass"}
    assert "track_order called" in held


def test_claims_against_actions_hold_a_python_bot_to_what_it_did(tmp_path):
    spec = conversation("cancel", steps=[say("Please cancel ORD-1004")], today=PINNED_TODAY)
    [one] = run_sync(spec, bot=python_bots.lying_bot, db=tmp_path / "p.db").conversations
    assert one.outcome == "failed"
    [claims] = [c for c in one.checks if c.kind == "claims_match_actions"]
    assert claims.outcome == "fail" and "I have cancelled ORD-1004 for you." in claims.reason
    # the honest bot that really cancels passes the same check
    [honest] = run_sync(spec, bot=python_bots.order_bot, db=tmp_path / "p.db").conversations
    assert [c.outcome for c in honest.checks if c.kind == "claims_match_actions"] == ["pass"]
    assert honest.conversation.final_state is not None


def test_claims_against_actions_read_the_tool_calls_a_python_bot_made(tmp_path):
    """A bot using `tools` that checked but never cancelled is caught saying it cancelled."""
    spec = conversation("cancel", steps=[say("Please cancel ORD-1004")], today=PINNED_TODAY)
    [one] = run_sync(spec, bot=python_bots.checking_only_bot, db=tmp_path / "p.db").conversations
    assert [c.name for c in one.tool_calls] == ["check_cancellation"]
    [claims] = [c for c in one.checks if c.kind == "claims_match_actions"]
    assert claims.outcome == "fail" and "Done: I have cancelled ORD-1004." in claims.reason
    assert one.outcome == "failed"


@pytest.mark.parametrize(
    ("bot", "error"),
    [
        (python_bots.raising_bot, "python:tests.python_bots:raising_bot raised ValueError: the knowledge base is empty"),
        (python_bots.wrong_type_bot, "python:tests.python_bots:wrong_type_bot returned int 42, not a reply"),
        (python_bots.hanging_async_bot, "python:tests.python_bots:hanging_async_bot did not answer within 0.5 s (--bot-timeout)"),
    ],
    ids=["raises", "wrong type", "hangs"],
)
def test_whatever_the_bot_does_wrong_is_its_bot_error(tmp_path, bot, error):
    [one] = run_sync(track(), bot=bot, bot_timeout_s=0.5, db=tmp_path / "p.db").conversations
    assert one.outcome == "bot_error" and one.conversation.stop_reason == "bot_error"
    assert one.conversation.error is not None and one.conversation.error.startswith(error)
    if bot is python_bots.raising_bot:  # where in the bot's own code, not parley's
        assert "(at tests/python_bots.py:" in one.conversation.error and ", in raising_bot;" in one.conversation.error


def test_a_reply_object_without_text_is_named(tmp_path):
    bot = PythonBot(lambda messages: {"text": "hi"}, name="python:x:y")
    ctx = BotContext(customer_id="C-100", today=PINNED_TODAY)
    with pytest.raises(Exception, match=r"python:x:y returned dict \{'text': 'hi'\}, which has no 'content'"):
        import asyncio

        asyncio.run(bot.respond([ChatMessage(role="user", content="hi")], ctx))


async def test_the_live_chat_talks_to_a_python_bot(tmp_path):
    async with ChatSession(model="python:tests.python_bots:order_bot", today=PINNED_TODAY, export_dir=tmp_path) as chat:
        turn = await chat.send("where is ORD-1003?")
    assert turn.text == "ORD-1003 is shipped, with UPS, due 2026-11-23." and [r.name for r in turn.tool_calls] == ["track_order"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("python:", "a Python bot is named python:PACKAGE.MODULE:NAME"),
        ("python:tests.python_bots", "a Python bot is named python:PACKAGE.MODULE:NAME"),
        ("python:1tests:bot", "'1tests' is not a module name"),
    ],
)
def test_a_python_bot_name_has_one_form(name, message):
    with pytest.raises(ConfigError, match=message):
        parse_bot_spec(name)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("python:tests.no_such_module:bot", "cannot import the module tests.no_such_module"),
        ("python:tests.python_bots:no_such_bot", "the module tests.python_bots has no 'no_such_bot'"),
        ("python:tests.python_bots:NOT_A_BOT", "is int 42, not a function or a class"),
        ("python:tests.python_bots:CountingBot.__init__.<locals>.x", "is defined inside a function"),
    ],
)
def test_a_bot_that_cannot_be_imported_is_one_line(name, message):
    with pytest.raises(ConfigError, match=message):
        PythonBot.load(name)


def parley(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = PATIENCE_S
) -> subprocess.CompletedProcess[str]:
    run_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "parley.tui.cli.main", *args], cwd=cwd, env=run_env, capture_output=True, text=True, timeout=timeout
    )


def test_parley_run_refuses_a_bot_it_cannot_import_with_one_line_and_exit_2(tmp_path):
    (tmp_path / "broken_bot.py").write_text("raise RuntimeError('missing configuration')\n\ndef bot(messages):\n    return 'hi'\n")
    db = str(tmp_path / "p.db")
    for name, said in (
        ("python:broken_bot:bot", "importing broken_bot raised RuntimeError: missing configuration"),
        ("python:nope_module:bot", "cannot import the module nope_module"),
    ):
        done = parley("run", str(PLAYBOOK), "--bot", name, "--db", db, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert said in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) <= 4  # click's usage line, its hint, and the one line
    assert not (tmp_path / "p.db").exists()  # nothing ran, nothing stored


def test_parley_run_calls_a_bot_from_the_working_folder_and_logs_its_traceback(tmp_path):
    (tmp_path / "mybot.py").write_text("def bot(messages):\n    raise KeyError('order index')\n")
    done = parley("run", str(PLAYBOOK), "--bot", "python:mybot:bot", "--db", str(tmp_path / "p.db"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "python:mybot:bot raised KeyError: 'order index'" in done.stdout
    assert "(at mybot.py:2, in bot; the traceback is in parley.log)" in done.stdout  # the user's own line, and where to look
    log = (tmp_path / "parley.log").read_text(encoding="utf-8")
    assert "Traceback" in log and "raise KeyError('order index')" in log


def test_a_sync_bot_that_never_returns_never_keeps_parley_from_exiting(tmp_path):
    started = time.monotonic()
    done = parley(
        "run", str(PLAYBOOK), "--bot", "python:tests.python_bots:hanging_bot", "--bot-timeout", "1", "--db", str(tmp_path / "p.db")
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "did not answer within 1 s (--bot-timeout) (its thread is left running)" in done.stdout
    assert time.monotonic() - started < PATIENCE_S  # the process ended with the thread still blocked


@pytest.mark.parametrize(
    ("bot", "said"),
    [
        (
            "blocking_async_bot",
            "did not answer within 1 s (--bot-timeout) (it held its event loop, blocked: its later calls run on a new one)",
        ),
        ("uncancellable_async_bot", "did not answer within 1 s (--bot-timeout)"),
        ("to_thread_async_bot", "did not answer within 1 s (--bot-timeout)"),
    ],
    ids=["blocks its loop", "swallows its cancellation", "waits on a thread"],
)
def test_an_async_bot_never_holds_parley_s_loop_it_is_a_bot_error_at_its_timeout(tmp_path, bot, said):
    # On parley's own loop, each of these held the batch for ever: no bot_error, nothing stored,
    # the batch left running, SIGTERM unanswered (the first), or the process alive after it (the last).
    db = tmp_path / "p.db"
    started = time.monotonic()
    done = parley("run", str(PLAYBOOK), "--bot", f"python:tests.python_bots:{bot}", "--bot-timeout", "1", "--db", str(db), timeout=60)
    assert time.monotonic() - started < 45, "one 1 s timeout, a 1 s look at the bot's loop, and the rest of the run"
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"python:tests.python_bots:{bot} {said}" in done.stdout
    assert "batch completed" in done.stdout
    with Store.open(db, read_only=True) as store:
        [row] = store.list_batches()
        assert row.batch.status == "completed" and row.summary.bot_errors == row.summary.done == 1  # type: ignore[union-attr]


def test_a_thread_the_bot_leaves_running_never_keeps_the_run_alive(tmp_path):
    started = time.monotonic()
    done = parley("run", str(PLAYBOOK), "--bot", "python:tests.python_bots:thread_leaving_bot", "--db", str(tmp_path / "p.db"), timeout=60)
    assert time.monotonic() - started < 45  # on main: "batch completed", then alive for ever, SIGTERM ignored
    assert done.returncode == 1, done.stdout + done.stderr  # the playbook wants track_order called: the run's own exit code
    assert "batch completed" in done.stdout
    assert "note: 1 thread left running (\"the bot's poller\"), not parley's: exiting without waiting for it" in done.stderr


@pytest.mark.parametrize("bot", ["blocking_async_bot", "thread_leaving_bot"])
def test_under_pytest_too_the_bot_neither_holds_the_session_nor_keeps_pytest_alive(tmp_path, bot):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARLEY_", "PYTEST_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "parley.tui.pytest_plugin", "--parley", str(PLAYBOOK)]
    command += ["--parley-bot", f"python:tests.python_bots:{bot}", "--parley-bot-timeout", "1", "--parley-db", str(tmp_path / "p.db")]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=90)
    assert time.monotonic() - started < 60
    if bot == "blocking_async_bot":
        assert done.returncode == 1 and "did not answer within 1 s" in done.stdout, done.stdout + done.stderr
    else:
        assert "1 thread left running" in done.stderr, done.stdout + done.stderr


def test_a_bot_s_huge_exception_is_an_excerpt_and_the_whole_text_goes_to_the_log(tmp_path):
    # On main: 5 MB stored in the conversation's error, 10 MB printed by `parley run`.
    done = parley("run", str(PLAYBOOK), "--bot", "python:tests.python_bots:huge_exception_bot", "--db", str(tmp_path / "p.db"))
    assert done.returncode == 1, done.stderr
    assert len(done.stdout) + len(done.stderr) < 20_000
    assert "raised ValueError: xxxx" in done.stdout and "(5,000,000 characters: the whole text is in parley.log)" in done.stdout
    with Store.open(tmp_path / "p.db", read_only=True) as store:
        [stored] = list(store.iter_conversations(store.latest_batch_id() or ""))
    assert stored.conversation.error is not None and len(stored.conversation.error) < 500
    assert "x" * 1_000_000 in (tmp_path / "parley.log").read_text(encoding="utf-8")
