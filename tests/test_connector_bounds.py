"""Calls to a deployed bot are bounded in time and size, against real sockets on loopback: a
reply that trickles ends at `--bot-timeout` (connect to last byte), a reply that never ends or
is larger than the cap ends at the cap without being held in memory, a redirect is not taken
for an answer; each is the conversation's bot_error with its reason. A bot URL holding a tab is
one line from the CLI and a 422 from the service."""

from __future__ import annotations

import re
import sqlite3
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from service_support import service

from parley.core.bots import BotContext, parse_bot_spec
from parley.core.bots.connectors.base import ConnectorError
from parley.core.bots.connectors.rasa import RasaConnector
from parley.core.errors import ConfigError
from parley.core.records import ChatMessage
from parley.core.store import Store
from parley.tui.cli.main import cli
from tests.hostile_servers import hostile_server

PROFILES = Path(__file__).resolve().parent.parent / "profiles"
PROFILE = PROFILES / "track_shipped_order.yaml"


def parley(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def ask(connector: RasaConnector) -> list[ChatMessage]:
    return [ChatMessage(role="user", content="Where is my order ORD-1003?")]


async def answer(connector: RasaConnector) -> str:
    import datetime

    ctx = BotContext(customer_id="C-100", today=datetime.date(2026, 11, 21))
    try:
        turn = await connector.respond(ask(connector), ctx)
    finally:
        await connector.aclose()
    return turn.text


async def test_a_reply_that_trickles_ends_at_the_bots_timeout_not_when_it_would_finish():
    with hostile_server(trickle_s=0.5) as server:  # 18 bytes: 9 s to the last one
        connector = RasaConnector(f"{server.base_url}/slow-body", timeout_s=1.0)
        started = time.monotonic()
        with pytest.raises(ConnectorError) as info:
            await answer(connector)
        elapsed = time.monotonic() - started
    assert f"no answer to POST {server.base_url}/slow-body within 1 s" in str(info.value)
    assert elapsed < 4  # the deadline covers the body, not each byte


async def test_a_reply_without_end_stops_at_the_cap_and_is_not_kept():
    with hostile_server() as server:
        connector = RasaConnector(f"{server.base_url}/endless", timeout_s=30.0)
        tracemalloc.start()
        try:
            with pytest.raises(ConnectorError) as info:
                await answer(connector)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert "the reply is larger than 1 MiB (it went on past that); it was not read further" in str(info.value)
    assert "--bot-max-reply-bytes" in str(info.value)
    assert peak < 16 * 1024 * 1024  # the cap, not the body, bounds what was held


async def test_a_huge_reply_is_refused_at_the_cap_and_accepted_when_the_cap_is_raised():
    with hostile_server(huge_bytes=3 * 1024 * 1024) as server:
        with pytest.raises(ConnectorError) as info:
            await answer(RasaConnector(f"{server.base_url}/huge"))
        raised = await answer(RasaConnector(f"{server.base_url}/huge", max_reply_bytes=4 * 1024 * 1024))
    assert re.search(r"HTTP 200 from POST \S+/huge: the reply is larger than 1 MiB \(it declares 3,1\d\d,\d{3} bytes\)", str(info.value))
    assert raised.startswith("ORD-1003 is on its way") and len(raised) > 3_000_000


async def test_a_redirect_is_not_taken_for_the_bots_answer():
    with hostile_server() as server:
        with pytest.raises(ConnectorError) as info:
            await answer(RasaConnector(f"{server.base_url}/redirect"))
    assert str(info.value) == (
        f"rasa:{server.base_url}/redirect: HTTP 302 from POST {server.base_url}/redirect: redirect to /elsewhere not followed"
    )
    assert info.value.status == 302


@pytest.mark.parametrize("url", ["http://127.0.0.1:5005/web\thook", "http://127.0.0.1:5005/web hook", "http://127.0.0.1:5005/\x00"])
def test_a_bot_url_with_an_invalid_character_is_a_config_error(url):
    with pytest.raises(ConfigError) as info:
        parse_bot_spec(f"rasa:{url}")
    assert "which a URL cannot hold" in str(info.value)


def test_a_bot_url_with_a_tab_is_one_line_from_the_cli(tmp_path):
    result = parley("run", PROFILE, "--bot", "rasa:http://127.0.0.1:5005/web\thook", "--db", tmp_path / "p.db")
    assert result.exit_code == 2  # a usage error
    assert "Traceback" not in result.output
    [line] = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert "holds a tab, which a URL cannot hold" in line


async def test_a_bot_url_with_a_tab_is_422_from_the_service(tmp_path):
    async with service(tmp_path, allowed_bot_hosts=["127.0.0.1:5005"]) as client:
        response = await client.post(
            "/api/batches", json={"profiles": ["profiles/playbooks"], "models": {"bot": "rasa:http://127.0.0.1:5005/web\thook"}}
        )
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["loc"][:3] == ["body", "models", "bot"] and "holds a tab" in problem["msg"]


def test_a_huge_reply_in_a_batch_is_the_bots_error_and_is_not_stored(tmp_path):
    db = tmp_path / "p.db"
    with hostile_server(huge_bytes=30 * 1024 * 1024) as server:
        result = parley("run", PROFILE, "--bot", f"rasa:{server.base_url}/huge", "--db", db)
    assert result.exit_code == 1  # the bot failed
    conn = sqlite3.connect(db)
    try:
        [(outcome, error)] = conn.execute(
            "SELECT v.outcome, c.error FROM conversations c JOIN verdicts v ON v.conversation_id = c.id"
        ).fetchall()
        [(longest,)] = conn.execute("SELECT MAX(LENGTH(content)) FROM messages").fetchall()
    finally:
        conn.close()
    assert outcome == "bot_error"
    assert "the reply is larger than 1 MiB" in error
    assert (longest or 0) < 10_000  # no 30 MB message reached the database
    assert db.stat().st_size < 5 * 1024 * 1024


def test_the_reply_cap_is_an_option_of_parley_run(tmp_path):
    db = tmp_path / "p.db"
    with hostile_server(huge_bytes=2 * 1024 * 1024) as server:
        result = parley(
            "run", PROFILE, "--bot", f"rasa:{server.base_url}/huge", "--bot-max-reply-bytes", 3 * 1024 * 1024, "--max-turns", 1, "--db", db
        )
    with Store.open(db) as store:
        batch = store.get_batch("latest")
    assert batch.options.models.bot_max_reply_bytes == 3 * 1024 * 1024
    assert "larger than" not in result.output
