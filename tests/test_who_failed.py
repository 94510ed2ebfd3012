"""Who failed, as a QA engineer reads it: a deployed bot that fails half its calls is reported
as failing, everywhere (exit code, pass rate, exports, the verdict view), its unrun checks are
"not run", and an endpoint nobody answers is refused before anything runs."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.connector_servers import free_port, serve_app

PROFILES = Path(__file__).resolve().parent.parent / "profiles"


def parley(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def half_broken_rasa() -> FastAPI:
    """A Rasa REST webhook that answers HTTP 500 to every other message."""
    app = FastAPI()
    calls = itertools.count()

    @app.post("/webhooks/rest/webhook")
    async def webhook(request: Request):
        body = await request.json()
        if next(calls) % 2:
            return JSONResponse({"error": "internal error"}, status_code=500)
        return [{"recipient_id": body["sender"], "text": "Let me check that for you."}]

    @app.get("/webhooks/rest/webhook")
    async def probe():
        return {"status": "ok"}

    return app


@pytest.fixture(scope="module")
def half_broken_batch(tmp_path_factory):
    """The shipped suite against the half-broken bot: (CLI result, database, batch id)."""
    db = tmp_path_factory.mktemp("who") / "p.db"
    with serve_app(half_broken_rasa()) as url:
        result = parley("run", PROFILES, "--bot", f"rasa:{url}/webhooks/rest/webhook", "-c", "1", "--db", db)
    with Store.open(db) as store:
        batch_id = store.latest_batch_id()
    return result, db, batch_id


def test_a_bot_that_fails_half_its_calls_fails_the_batch_and_counts_in_the_pass_rate(half_broken_batch):
    result, db, batch_id = half_broken_batch
    assert result.exit_code == 1
    out = result.stdout
    counts = re.search(r"Conversations: 27 of 27 done: (\d+) passed, (\d+) failed, (\d+) bot errors? \(the bot's failures\)", out)
    assert counts, out
    passed, failed, bot_errors = map(int, counts.groups())
    assert bot_errors >= 10  # most conversations meet a 500 before they end
    rate = re.search(r"Pass rate: [\d.]+% \((\d+) of (\d+), 95% interval ([\d.]+)-([\d.]+)%\)", out)
    assert rate and int(rate.group(1)) == passed and int(rate.group(2)) == passed + failed + bot_errors
    assert "infrastructure error" in out and "0 infrastructure errors" in out  # nothing blamed on parley
    report = (db.parent / "reports" / f"{batch_id}.md").read_text(encoding="utf-8")
    assert "not failures of the bot" not in report and "are the bot's failures" in report


def test_the_exports_say_the_bot_failed(half_broken_batch):
    _, db, batch_id = half_broken_batch
    csv_text = parley("report", batch_id, "--format", "csv", "--db", db).stdout
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    broke = [r for r in rows if r["outcome"] == "bot_error"]
    assert broke and all(r["status"] == "failed" and r["stop_reason"] == "bot_error" and "HTTP 500" in r["error"] for r in broke)
    assert all("conversation completed" in r["failed_checks"] for r in broke)
    ndjson = [json.loads(line) for line in parley("report", batch_id, "--format", "ndjson", "--db", db).stdout.splitlines()]
    assert {r["outcome"] for r in ndjson if r["stop_reason"] == "bot_error"} == {"bot_error"}
    document = json.loads(parley("report", batch_id, "--format", "json", "--db", db).stdout)
    summary = document["summary"]
    assert summary["bot_errors"] == len(broke) and summary["pass_rate_denominator"] == summary["passed"] + summary["failed"] + len(broke)
    assert summary["pass_rate_interval"]["method"] == "wilson" and summary["pass_k"][0]["interval"] is not None


def test_the_checks_a_broken_conversation_never_ran_are_not_run_never_failed(half_broken_batch):
    _, db, batch_id = half_broken_batch
    with Store.open(db) as store:
        broke = [s for s in store.iter_conversations(batch_id) if s.conversation.stop_reason == "bot_error"]
    with_unrun = [s for s in broke if any(c.outcome == "not_run" for c in s.verdict.checks)]
    assert with_unrun  # e.g. "bot says /cancelled/", never reached
    for stored in broke:
        failed = [c for c in stored.verdict.checks if c.outcome == "fail"]
        assert "conversation_completed" in [c.kind for c in failed]  # the bot broke...
        assert all(
            c.kind in ("conversation_completed", "bot_never_says", "playbook_assertion") for c in failed
        )  # ...nothing it never reached
    shown = parley("sessions", "show", with_unrun[0].conversation.id, "--db", db).stdout
    assert "not run" in shown and "verdict: bot_error" in shown


def test_an_endpoint_nobody_answers_is_refused_in_one_line_before_anything_runs(tmp_path):
    port = free_port()
    db = tmp_path / "p.db"
    started = time.monotonic()
    result = parley("run", PROFILES, "--bot", "ollama/llama3", "--db", db, env={"OLLAMA_BASE_URL": f"http://127.0.0.1:{port}/v1"})
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: cannot reach the bot's endpoint http://127.0.0.1:{port}/v1 (ollama/llama3):")
    assert time.monotonic() - started < 15  # one short request, not 27 conversations of retries
    with Store.open(db) as store:
        assert store.count_batches() == 0


def test_the_user_simulators_endpoint_is_checked_too(tmp_path):
    port = free_port()
    env = {"LOCAL_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    result = parley("run", PROFILES / "track_shipped_order.yaml", "--user", "openai-api/local/m", "--db", tmp_path / "p.db", env=env)
    assert result.exit_code == 1
    assert f"cannot reach the user's endpoint http://127.0.0.1:{port}/v1 (openai-api/local/m)" in result.stderr
