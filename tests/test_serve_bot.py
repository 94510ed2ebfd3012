"""`parley serve-bot`: the built-in order bot behind a Rasa-compatible webhook. Sessions are
tested in-process (httpx's ASGI transport); the command itself is started for real by the
connector tests (tests/connector_servers.py) and checked here for its errors."""

from __future__ import annotations

import datetime as dt

import httpx
import pytest
from click.testing import CliRunner

from parley.core.bots.bot_names import world_bot_model
from parley.core.bots.service import WEBHOOK_PATH, BotService, create_bot_app
from parley.core.bots.world_bot import WorldBot
from parley.tui.cli.main import cli

TODAY = dt.date(2026, 11, 21)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_service(**kw) -> BotService:
    return BotService(WorldBot(world_bot_model("offline")), today=TODAY, **kw)


@pytest.fixture
async def client_and_service():
    service = make_service()
    app = create_bot_app(service)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as client:
        yield client, service
    await service.close()


async def post(client, sender, message, **metadata):
    body = {"sender": sender, "message": message}
    if metadata:
        body["metadata"] = metadata
    return await client.post(WEBHOOK_PATH, json=body)


async def test_each_sender_has_its_own_order_database(client_and_service):
    client, _ = client_and_service
    await post(client, "alice", "cancel ORD-1002")
    done = await post(client, "alice", "yes, cancel it")
    assert done.status_code == 200
    [message] = done.json()
    assert message["recipient_id"] == "alice" and "cancel" in message["text"].lower()
    assert "cancelled" in (await post(client, "alice", "status of ORD-1002?")).json()[0]["text"].lower()
    # bob's copy of the database was not touched
    bob = (await post(client, "bob", "status of ORD-1002?")).json()[0]["text"]
    assert "ORD-1002" in bob and "cancelled" not in bob.lower()


async def test_metadata_signs_in_the_customer_and_pins_the_date(client_and_service):
    client, service = client_and_service
    reply = (await post(client, "carol", "list my orders", customer_id="C-200", today="2026-12-01")).json()[0]["text"]
    assert "ORD-1002" not in reply  # C-100's order
    session = service.sessions["carol"]
    assert (session.ctx.customer_id, session.ctx.today) == ("C-200", dt.date(2026, 12, 1))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"sender": "x", "message": "hi", "metadata": {"customer_id": "admin"}}, "is not a customer of world orders"),
        ({"sender": "x", "message": "hi", "metadata": {"today": "tomorrow"}}, "is not an ISO date"),
        ({"sender": "x", "message": "  "}, "`message` is empty"),
    ],
)
async def test_a_request_that_cannot_be_acted_on_is_a_422_saying_why(client_and_service, body, message):
    client, _ = client_and_service
    if body["message"].strip() == "":
        await post(client, "x", "hello")  # an existing session: an empty message is an error
    response = await client.post(WEBHOOK_PATH, json=body)
    assert response.status_code == 422
    assert message in response.json()["error"]


async def test_session_start_lets_the_bot_open_and_a_goodbye_carries_the_end_flag(client_and_service):
    client, _ = client_and_service
    [opening] = (await post(client, "dave", "/session_start")).json()
    assert opening["text"] and "custom" not in opening
    [bye] = (await post(client, "dave", "thanks, that's all, goodbye")).json()
    assert bye["custom"] == {"end_conversation": True}
    assert "[END]" not in bye["text"]


async def test_health_routes_answer(client_and_service):
    client, _ = client_and_service
    await post(client, "erin", "hello")
    assert (await client.get("/health")).json() == {"status": "ok", "bot": "offline", "sessions": 1}
    assert (await client.get("/webhooks/rest/")).json() == {"status": "ok"}


async def test_idle_sessions_expire_and_the_least_recently_used_go_past_the_cap():
    clock = Clock()
    service = make_service(max_sessions=2, idle_s=60, clock=clock)
    app = create_bot_app(service)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as client:
        await post(client, "a", "hello")
        clock.now += 10
        await post(client, "b", "hello")
        clock.now += 10
        await post(client, "a", "list my orders")  # a is now the most recent
        await post(client, "c", "hello")  # over the cap: b goes
        assert list(service.sessions) == ["a", "c"]
        clock.now += 61
        await post(client, "d", "hello")  # a and c idle too long
        assert list(service.sessions) == ["d"]
    await service.close()
    assert service.sessions == {}


def test_a_bad_model_is_a_usage_error_and_a_missing_key_one_line():
    bad = CliRunner().invoke(cli, ["serve-bot", "--model", "gpt-4o"])
    assert bad.exit_code == 2 and "did you mean openai/gpt-4o" in bad.output
    keyless = CliRunner().invoke(cli, ["serve-bot", "--model", "openai/gpt-4o-mini"], env={"OPENAI_API_KEY": None})
    assert keyless.exit_code == 1
    assert keyless.output.startswith("error: ") and "OPENAI_API_KEY" in keyless.output
    assert len(keyless.output.strip().splitlines()) == 1
