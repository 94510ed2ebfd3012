"""Batches over bots parley did not build: `parley run --bot rasa:...` against `parley serve-bot`,
a report with response times and not-applicable checks, connector failures that end one
conversation each (timeouts, 500s, non-JSON, a server killed mid-batch) and bad --bot values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.bots.connectors.base import aclose_connectors
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_runner import BatchRunner, prepare_batch
from parley.core.records.batch import BatchOptions, RoleModels
from parley.core.reports.markdown import render_markdown
from parley.core.reports.stats import summarize
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.connector_servers import misbehaving_app, serve_app, serve_bot_process

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
SOME_PROFILES = [PROFILES / "track_shipped_order.yaml", PROFILES / "cancel_eligible_order.yaml", PROFILES / "list_my_orders.yaml"]


def parley(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def served():
    with serve_bot_process() as bot:
        yield bot


def test_parley_run_over_the_served_bot_reports_response_times_and_decides_the_world_checks_on_its_served_world(served, tmp_path):
    db, report = tmp_path / "parley.db", tmp_path / "report.md"
    result = parley("run", *SOME_PROFILES, "--bot", f"rasa:{served.webhook}", "--db", db, "--report", report)

    assert result.exit_code == 0, result.output
    assert "Pass rate: 100.0% (4 of 4, 95% interval 51.0-100.0%)" in result.output
    assert "Not applicable" not in result.output  # the bot acted on the world parley served it: the world decides
    text = report.read_text(encoding="utf-8")
    assert f"bot `rasa:{served.webhook}`" in text
    # Response time per bot answer: turns, mean, min, max.
    section = text.split("## Bot response time", 1)[1].split("## ", 1)[0]
    turns, mean, low, high = re.search(r"\| (\d+) \| ([\d.]+) s \| ([\d.]+) s \| ([\d.]+) s \|", section).groups()
    assert int(turns) >= 4 and 0 < float(low) <= float(mean) <= float(high)
    assert "## Checks not applicable" not in text and "passed on the checks that applied" not in text
    with Store.open(db) as store:
        [row] = store.list_batches()
        assert row.batch.options.models.bot == f"rasa:{served.webhook}"
        stored = list(store.iter_conversations(row.id))
    assert all(s.conversation.final_state is not None for s in stored)
    cancelled = [s for s in stored if s.conversation.final_state.change_of("orders", "ORD-1002") is not None]
    assert cancelled and cancelled[0].conversation.final_state.final_row("orders", "ORD-1002")["status"] == "cancelled"
    decided = {c.kind for s in stored for c in s.verdict.checks if c.outcome == "pass"}
    assert {"record_state", "unchanged_others", "tool_called"} <= decided


@pytest.mark.parametrize(
    ("route", "extra", "reason"),
    [
        ("/hang", ["--bot-timeout", "0.3"], r"no answer to POST http://127\.0\.0\.1:\d+/hang within 0\.3 s"),
        ("/boom", [], r"HTTP 500 from POST .*/boom: .*database is on fire"),
        ("/html", [], r"the reply to POST .*/html is not JSON \(HTTP 200\): <html><body>Maintenance window"),
    ],
)
def test_a_failing_bot_is_the_bots_failure_in_every_conversation_and_the_batch_completes(tmp_path, route, extra, reason):
    app = misbehaving_app()
    with serve_app(app) as url:
        spec = tmp_path / "bot.yaml"
        spec.write_text(f"base_url: {url}\nsend_message: {{path: {route}}}\nresponse_path: text\n", encoding="utf-8")
        db = tmp_path / "parley.db"
        result = parley("run", *SOME_PROFILES[:2], "--bot", f"http:{spec}", "--db", db, *extra)
    assert result.exit_code == 1
    assert "batch completed: 3 of 3 done\n" in result.output  # its counts are the summary's, on the next lines
    assert "Conversations: 3 of 3 done: 0 passed, 0 failed, 3 bot errors (the bot's failures)" in result.output
    assert "Pass rate: 0.0% (0 of 3, 95% interval 0.0-56.1%)" in result.output
    with Store.open(db) as store:
        [row] = store.list_batches()
        stored = list(store.iter_conversations(row.id))
    assert row.batch.status == "completed" and len(stored) == 3
    for s in stored:
        assert s.conversation.stop_reason == "bot_error"
        assert re.search(reason, s.conversation.error), s.conversation.error


async def test_a_server_killed_mid_batch_errors_the_later_conversations_and_the_batch_is_stored(tmp_path):
    store = Store.open(tmp_path / "parley.db")
    try:
        with serve_bot_process() as served:
            options = BatchOptions(models=RoleModels(bot=f"rasa:{served.webhook}", bot_timeout_s=30), concurrency=1, trials=4)
            models = BatchModels(options.models, store=store)
            prepared = await prepare_batch(store, [SOME_PROFILES[0]], options, models=models)
            runner = BatchRunner(store, prepared, models=models)

            def kill_after_the_first(event):
                if event.kind == "conversation_finished" and served.proc.poll() is None:
                    served.kill()

            runner.subscribe(kill_after_the_first)
            result = await runner.run()
            await aclose_connectors()
        assert result.status == "completed"
        stored = sorted(store.iter_conversations(result.batch_id), key=lambda s: s.trial)
        assert len(stored) == 4
        assert stored[0].conversation.stop_reason == "user_stop" and stored[0].verdict.passed
        for later in stored[1:]:
            assert later.conversation.stop_reason == "bot_error"
            assert f"rasa:{served.webhook}: POST {served.webhook} failed" in later.conversation.error
        summary = summarize(store, result.batch_id)
        assert (summary.done, summary.passed, summary.bot_errors, summary.errors) == (4, 1, 3, 0)
        assert summary.pass_rate == 0.25 and summary.pass_rate_denominator == 4
        assert "rasa:" in render_markdown(summary)
    finally:
        store.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bot", "rasa:"], "needs a URL"),
        (["--bot", "rasa:localhost:5005/webhooks/rest/webhook"], "is not an http:// or https:// URL"),
        (["--bot", "grpc:http://h/x"], "unknown connector 'grpc:'"),
        (["--bot", "http://127.0.0.1:5005/webhooks/rest/webhook"], "is a URL, not a bot"),
        (["--bot", "http:no/such/bot.yaml"], "no/such/bot.yaml: no such connector file"),
        (["--bot", "offline", "--bot-prompt", "{prompt}"], "--bot-prompt needs an LLM"),
        (["--bot", "rasa:http://h/webhook", "--bot-prompt", "{prompt}"], "not with the connector"),
        (["--bot", "openai/gpt-4o-mini", "--bot-prompt", "no_such_prompt.txt"], "no such prompt file"),
    ],
)
def test_a_bad_bot_is_a_usage_error_before_anything_runs(tmp_path, args, message):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are a helpful agent.", encoding="utf-8")
    args = [a.replace("{prompt}", str(prompt)) for a in args]
    db = tmp_path / "parley.db"
    result = parley("run", SOME_PROFILES[0], *args, "--db", db)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not db.exists()
