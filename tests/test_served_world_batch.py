"""Deployed bots on a served world: a bot parley does not run (here a small HTTP app on loopback,
reached through an `http:` connector file) is told where its conversation's world is served, acts
on it there, and parley decides its world checks, ownership and claims from what it did, exactly as
for a bot it runs; and the shipped suite through `parley serve-bot` and the Rasa connector decides
the world checks it could not before."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI, Request

from parley.core.store import Store
from tests.connector_servers import serve_app, serve_bot_process
from tests.lineage_support import parley

PROFILES = Path(__file__).resolve().parent.parent / "profiles"

CONNECTOR = """\
base_url: {base_url}
send_message:
  path: /chat
  method: POST
  payload_template:
    session: "{{session_id}}"
    message: "{{user_msg}}"
    world: "{{world_url}}"
response_path: reply
"""


def deployed_bot(behaviour: str, seen: dict[str, list[str]] | None = None) -> FastAPI:
    """A bot deployed elsewhere: it calls the world at the URL each request carries.
    honest: checks and cancels the order the customer names, and says so once it did;
    boaster: says it cancelled without calling anything;
    snoop: cancels another customer's order (ORD-2001) through the staff console's API."""
    app = FastAPI()

    @app.post("/chat")
    async def chat(request: Request) -> dict[str, str]:
        body = await request.json()
        world, message = body["world"], body["message"]
        if seen is not None:
            seen.setdefault(body["session"], []).append(world)
        order = re.search(r"ORD-[0-9]+", message)
        async with httpx.AsyncClient(timeout=30) as client:
            if behaviour == "boaster":
                return {"reply": f"I have cancelled {order.group(0) if order else 'your order'}."}
            if behaviour == "snoop":
                done = await client.post(f"{world}/tools/cancel_order", json={"order_id": "ORD-2001"})
                return {"reply": "Done." if done.status_code == 200 else "I could not."}
            if order is None:
                return {"reply": "Which order would you like to cancel?"}
            check = await client.post(f"{world}/tools/check_cancellation", json={"order_id": order.group(0)})
            if not check.json().get("eligible"):
                return {"reply": f"I'm sorry, {order.group(0)} cannot be cancelled: {check.json().get('message')}"}
            done = await client.post(f"{world}/tools/cancel_order", json={"order_id": order.group(0)})
            return {"reply": f"I have cancelled {order.group(0)}." if done.status_code == 200 else "I could not cancel it."}

    return app


PROFILE = """\
test_name: {name}
user:
  role: a customer who wants an order cancelled
  goals:
    - "cancel order ORD-1004"
world:
  name: {world}
  customer_id: C-100
  today: 2026-11-21
expect:
  orders: {{ORD-1004: cancelled}}
"""


def run_with(tmp_path: Path, behaviour: str, world: str = "orders", seen: dict[str, list[str]] | None = None) -> tuple[int, list]:
    with serve_app(deployed_bot(behaviour, seen)) as base_url:
        (tmp_path / "bot.yaml").write_text(CONNECTOR.format(base_url=base_url), encoding="utf-8")
        for n in range(2):
            (tmp_path / f"cancel_{n}.yaml").write_text(PROFILE.format(name=f"cancel_{n}", world=world), encoding="utf-8")
        db = tmp_path / "p.db"
        done = parley("run", tmp_path, "--bot", f"http:{tmp_path / 'bot.yaml'}", "--db", db, "--concurrency", "2")
    with Store.open(db, read_only=True) as store:
        stored = list(store.iter_conversations(store.list_batches()[0].batch.id))
    return done.exit_code, stored


def test_a_deployed_bot_that_acts_on_its_served_world_is_judged_by_the_world(tmp_path):
    seen: dict[str, list[str]] = {}
    code, stored = run_with(tmp_path, "honest", seen=seen)
    assert code == 0
    for item in stored:
        conversation, verdict = item.conversation, item.verdict
        assert [(c.name, c.ok) for c in conversation.tool_calls] == [("check_cancellation", True), ("cancel_order", True)]
        assert [c.describe().split(":")[0] for c in conversation.final_state.record_changes()] == ["orders/ORD-1004"]
        checks = {c.name: c.outcome for c in verdict.checks}
        assert checks["ORD-1004 ends cancelled"] == "pass" and checks["claims match actions"] == "pass"
    # two conversations at once, each its own world behind its own URL, never shared
    urls = [url for urls in seen.values() for url in urls]
    assert len(seen) == 2 and all(len(set(urls_of)) == 1 for urls_of in seen.values()) and len(set(urls)) == 2


def test_a_claim_the_world_does_not_back_fails_for_a_deployed_bot_too(tmp_path):
    code, stored = run_with(tmp_path, "boaster")
    assert code == 1
    verdict = stored[0].verdict
    checks = {c.name: c for c in verdict.checks}
    assert checks["ORD-1004 ends cancelled"].outcome == "fail"
    assert checks["claims match actions"].outcome == "fail" and "ORD-1004" in checks["claims match actions"].reason


def test_a_deployed_bot_acting_for_another_customer_is_an_ownership_violation(tmp_path):
    code, stored = run_with(tmp_path, "snoop", world="orders-staff")
    assert code == 1
    conversation, verdict = stored[0].conversation, stored[0].verdict
    assert [c.key for c in conversation.final_state.record_changes()] == ["ORD-2001"]
    broken = [c for c in verdict.checks if c.kind == "ownership"]
    assert broken and broken[0].outcome == "fail" and broken[0].policy_violation and "ORD-2001" in broken[0].reason


def test_the_shipped_suite_through_serve_bot_and_rasa_decides_world_checks(tmp_path):
    with serve_bot_process() as bot:
        db = tmp_path / "p.db"
        done = parley(
            "run",
            PROFILES / "track_shipped_order.yaml",
            PROFILES / "cancel_eligible_order.yaml",
            "--bot",
            f"rasa:{bot.webhook}",
            "--db",
            db,
        )
    assert done.exit_code == 0, done.output
    with Store.open(db, read_only=True) as store:
        stored = list(store.iter_conversations(store.list_batches()[0].batch.id))
    for item in stored:
        outcomes = {c.kind: c.outcome for c in item.verdict.checks}
        assert outcomes["record_state"] == "pass"  # not applicable before: parley now sees what the deployed bot did
        assert item.conversation.tool_calls, "the bot's calls on its served world are the conversation's"
