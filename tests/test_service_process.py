"""`parley serve` as a real process: the shipped scenario file and profiles submitted, polled to
completion and fetched in each format; then a slow batch survives kill -9 and SIGTERM of the
service, and resumes to completion without losing or repeating a finished conversation."""

from __future__ import annotations

import csv
import io
import json

import httpx
from click.testing import CliRunner
from service_support import PROFILES, SCENARIOS, SLOW_BOT, ServeProcess, poll, sample_scenarios

from parley.core.reports.exports import CSV_003_COLUMNS
from parley.core.specs.sources import load_specs
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.stored_rows import query

SHIPPED_YAML = sorted(PROFILES.glob("*.yaml"))


def parley(*args: str) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def finished_conversations(db, batch_id: str) -> dict[tuple[str, int], str]:
    with Store.open(db) as store:
        rows = query(
            store,
            "SELECT id, spec_id, trial FROM conversations WHERE batch_id = ? AND stop_reason NOT IN ('cancelled', 'error')",
            [batch_id],
        )
    return {(r["spec_id"], r["trial"]): r["id"] for r in rows}


def test_shipped_inputs_run_to_completion_and_fetch_in_every_format(tmp_path):
    service = ServeProcess(tmp_path).start()
    try:
        scenarios = parley("submit", SCENARIOS, "--api-url", service.url)
        profiles = parley("submit", *SHIPPED_YAML, "--api-url", service.url, "--trials", "2")
        assert scenarios.exit_code == 0 and profiles.exit_code == 0, scenarios.output + profiles.output
        scenario_batch = scenarios.stdout.split()[1]
        profile_batch = profiles.stdout.split()[1]
        expected = len(load_specs(SHIPPED_YAML, seed=0).specs) * 2
        assert f"launched: {expected} conversations" in profiles.stdout
        for batch_id, total in ((scenario_batch, 5), (profile_batch, expected)):
            view = poll(service.url, batch_id)
            assert (view["status"], view["completed_scenarios"], view["progress"]) == ("completed", total, 100.0)
            outputs = {fmt: tmp_path / f"{batch_id}.{fmt}" for fmt in ("json", "csv", "ndjson")}
            for fmt, path in outputs.items():
                fetched = parley("fetch", batch_id, "--format", fmt, "--output", path, "--api-url", service.url)
                assert fetched.exit_code == 0, fetched.output
            document = json.loads(outputs["json"].read_text(encoding="utf-8"))
            rows = list(csv.DictReader(io.StringIO(outputs["csv"].read_text(encoding="utf-8"))))
            lines = outputs["ndjson"].read_text(encoding="utf-8").splitlines()
            assert document["partial"] is False and document["total_results"] == total
            assert tuple(rows[0])[: len(CSV_003_COLUMNS)] == CSV_003_COLUMNS and len(rows) == total
            assert len(lines) == total
            ids = {r["session_id"] for r in document["results"]}
            assert ids == {r["session_id"] for r in rows} == {json.loads(line)["session_id"] for line in lines}
        summary = httpx.get(f"{service.url}/api/batches/{profile_batch}/summary").json()
        assert [p["k"] for p in summary["pass_k"]] == [1, 2]
        assert summary["success_rate"] == 1.0
    finally:
        assert service.stop() in (0, -15)


def test_a_batch_survives_kill_9_and_sigterm_and_resumes_without_loss_or_repeats(tmp_path, server):
    server.fixed_delay_ms = 120
    env = {"FAKE_BASE_URL": server.base_url}
    db = tmp_path / "parley.db"
    body = {"scenarios": sample_scenarios(), "models": {"bot": SLOW_BOT}, "concurrency": 1, "max_turns": 2, "trials": 2}

    service = ServeProcess(tmp_path, env=env).start()
    launched = httpx.post(f"{service.url}/api/batches", json=body).json()
    batch_id = launched["batch_id"]
    assert launched["total_scenarios"] == 10
    poll(service.url, batch_id, done_at_least=2)
    service.kill()
    before_kill = finished_conversations(db, batch_id)
    assert 2 <= len(before_kill) < 10

    service = ServeProcess(tmp_path, env=env).start()
    try:
        view = httpx.get(f"{service.url}/api/batches/{batch_id}").json()
        assert view["status"] == "interrupted" and "ended before the batch did" in view["error"]
        resumed = httpx.post(f"{service.url}/api/batches/{batch_id}/resume")
        assert resumed.status_code == 202 and resumed.json()["already_done"] == len(before_kill)
        poll(service.url, batch_id, done_at_least=len(before_kill) + 2)
    finally:
        assert service.stop() in (0, -15)  # SIGTERM: a graceful stop (uvicorn re-raises the signal)
    before_term = finished_conversations(db, batch_id)
    with Store.open(db) as store:
        assert store.get_batch(batch_id).status == "interrupted"

    service = ServeProcess(tmp_path, env=env).start()
    try:
        status = parley("status", batch_id, "--api-url", service.url)
        assert "interrupted" in status.stdout and "service stopped" in status.stdout
        assert httpx.post(f"{service.url}/api/batches/{batch_id}/resume").status_code == 202
        done = poll(service.url, batch_id)
        again = httpx.post(f"{service.url}/api/batches/{batch_id}/resume")
    finally:
        assert service.stop() in (0, -15)
    assert done["status"] == "completed" and done["completed_scenarios"] == 10
    assert again.status_code == 409
    after = finished_conversations(db, batch_id)
    assert len(after) == 10
    # what had finished before each stop is still there, as it was (same conversation ids)
    assert before_kill.items() <= before_term.items() <= after.items()
    with Store.open(db) as store:
        total = query(store, "SELECT COUNT(*) AS n FROM conversations WHERE batch_id = ?", [batch_id])[0]["n"]
    assert total == 10
