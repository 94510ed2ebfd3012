"""A python:MODULE:NAME bot is code run on the server: a real `parley serve` refuses it (403 saying
how its operator allows it) unless started with --allow-python-bots, and then runs it as any bot."""

from __future__ import annotations

import httpx
from service_support import ServeProcess, poll

from parley.core.store import Store

BODY = {"profiles": ["playbooks/track_shipped_order.yaml"], "models": {"bot": "python:tests.python_bots:order_bot"}}


def test_a_service_not_started_with_the_option_refuses_python_bots_with_403(tmp_path):
    server = ServeProcess(tmp_path).start()
    try:
        refused = httpx.post(f"{server.url}/api/batches", json=BODY, timeout=30)
        listed = httpx.get(f"{server.url}/api/batches", timeout=30).json()
    finally:
        server.stop()
    assert refused.status_code == 403
    detail = refused.json()["detail"]
    assert "this service does not run Python bots (python:tests.python_bots:order_bot)" in detail
    assert "`parley serve --allow-python-bots`" in detail
    assert listed["total_count"] == 0  # nothing was stored, nothing ran


def test_a_service_started_with_the_option_runs_the_python_bot(tmp_path):
    server = ServeProcess(tmp_path, args=("--allow-python-bots",)).start()
    try:
        launched = httpx.post(f"{server.url}/api/batches", json=BODY, timeout=30)
        assert launched.status_code == 201, launched.text
        view = poll(server.url, launched.json()["batch_id"])
    finally:
        server.stop()
    assert view["status"] == "completed"
    with Store.open(tmp_path / "parley.db", read_only=True) as store:
        [stored] = list(store.iter_conversations(launched.json()["batch_id"]))
    assert stored.conversation.bot_model == "python:tests.python_bots:order_bot"
    assert stored.verdict is not None and stored.verdict.outcome == "passed"
    assert [call.name for call in stored.conversation.tool_calls] == ["track_order"]
