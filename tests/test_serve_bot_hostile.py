"""`parley serve-bot` under hostile requests: bodies, messages and the memory its sessions hold
are bounded; invalid Unicode and dates the order database cannot hold are a 422, never a 500."""

from __future__ import annotations

import json

import httpx
import pytest
from click.testing import CliRunner

from parley.core.bots.service import WEBHOOK_PATH, create_bot_app
from parley.tui.cli.main import cli
from tests.test_serve_bot import make_service, post


@pytest.fixture
async def bot():
    service = make_service(max_message_chars=2_000, max_session_chars=5_000, max_total_chars=12_000)
    app = create_bot_app(service, max_body_bytes=64 * 1024)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as client:
        yield client, service
    await service.close()


async def test_a_body_over_the_limit_is_413_before_it_is_read(bot):
    client, service = bot
    response = await post(client, "big", "x" * (70 * 1024))
    assert response.status_code == 413
    assert service.sessions == {}


def test_the_default_body_limit_is_one_mebibyte():
    service = make_service()
    app = create_bot_app(service)
    transport = httpx.ASGITransport(app=app)

    async def send(size: int) -> int:
        async with httpx.AsyncClient(transport=transport, base_url="http://bot") as client:
            return (await post(client, "big", "x" * size)).status_code

    import asyncio

    assert asyncio.run(send(20 * 1024 * 1024)) == 413  # the 20 MB message


async def test_a_message_over_its_length_is_422(bot):
    client, service = bot
    response = await post(client, "long", "y" * 2_001)
    assert response.status_code == 422
    assert "2001 characters" in response.json()["error"] and "up to 2000" in response.json()["error"]
    assert "long" not in service.sessions


async def test_a_conversation_past_its_length_is_refused_and_another_sender_still_works(bot):
    client, service = bot
    for _ in range(2):
        assert (await post(client, "chatty", "where is my order ORD-1003? " + "z" * 1_900)).status_code == 200
    refused = await post(client, "chatty", "and " + "z" * 1_900)
    assert refused.status_code == 422
    assert "over 5000 characters" in refused.json()["error"] and "another sender" in refused.json()["error"]
    assert (await post(client, "fresh", "hello")).status_code == 200


async def test_sessions_together_stay_under_the_memory_bound(bot):
    client, service = bot
    for n in range(12):
        assert (await post(client, f"s{n}", "track ORD-1003 " + "w" * 1_900)).status_code == 200
        assert service.held_chars <= 12_000
    assert "s11" in service.sessions and "s0" not in service.sessions  # the least recently used went first


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"sender": "\ud800", "message": "hi"}, ["body", "sender"]),
        ({"sender": "x", "message": "hi \ud800"}, ["body", "message"]),
        ({"sender": "x", "message": "hi", "metadata": {"customer_id": "C-100\udfff"}}, ["body", "metadata", "customer_id"]),
    ],
)
async def test_a_lone_surrogate_is_422_naming_the_field(bot, body, loc):
    client, service = bot
    response = await client.post(WEBHOOK_PATH, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == loc
    assert service.sessions == {}


@pytest.mark.parametrize("today", ["0001-01-01", "9999-12-31"])
async def test_a_date_the_order_database_cannot_count_from_is_422(bot, today):
    client, service = bot
    response = await post(client, "old", "hi", today=today)
    assert response.status_code == 422, response.text
    assert f"metadata.today: {today} is a date a World cannot hold" in response.json()["error"]
    assert service.sessions == {}


@pytest.mark.parametrize("command", [["serve-bot"], ["mockapi"]])
def test_today_options_refuse_dates_the_database_cannot_hold(command):
    result = CliRunner().invoke(cli, [*command, "--today", "0001-01-01"])
    assert result.exit_code == 2
    assert "0001-01-01 is outside the dates the order database can count from" in result.output
