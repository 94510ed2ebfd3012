"""The live chat core: bot turns, streaming, and every slash command's structured result."""

from __future__ import annotations

import json

import pytest

from parley.core.bots.api import BotTurn, TextDelta, ToolCallFinished, TurnCompleted
from parley.core.chat.commands import COMMANDS, CommandResult, parse_command, suggest
from parley.core.chat.session import ChatSession
from parley.core.errors import ProviderError
from parley.core.records.chat_export import ChatExport
from parley.worlds.orders.chat import normalize_customer_id, normalize_order_id
from tests.test_bot_order_loop import ScriptedModel, calls, text


@pytest.fixture
async def session(today, tmp_path):
    async with ChatSession(customer_id="C-100", today=today, export_dir=tmp_path / "sessions") as s:
        yield s


async def test_a_message_gets_a_bot_turn(session):
    turn = await session.send("where is ORD-1003?")
    assert isinstance(turn, BotTurn)
    assert "UPS" in turn.text and [r.name for r in turn.tool_calls] == ["track_order"]
    assert [m.role for m in session.transcript] == ["user", "assistant", "tool", "assistant"]


async def test_streaming_a_turn(session):
    events = [e async for e in session.send_stream("list my orders")]
    assert isinstance(events[-1], TurnCompleted)
    assert any(isinstance(e, ToolCallFinished) and e.record.name == "list_my_orders" for e in events)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == events[-1].turn.text and "ORD-1007" in shown


async def test_database_lists_every_order_with_eligibility(session):
    result = await session.send("/database")
    assert result.kind == "table" and result.command == "/database"
    assert result.columns[0] == "Order" and "Cancellable" in result.columns
    rows = {row[0]: row for row in result.rows}
    assert len(rows) == 18
    cancellable = result.columns.index("Cancellable")
    why = result.columns.index("Why")
    assert rows["ORD-1004"][cancellable] == "yes"
    assert (rows["ORD-1005"][cancellable], rows["ORD-1005"][why]) == ("no", "too_old")
    assert rows["ORD-1006"][why] == "delivered" and rows["ORD-1007"][why] == "already_cancelled"


async def test_orders_of_a_customer(session):
    result = await session.send("/orders C-200")
    assert result.kind == "table" and "C-200" in result.title
    assert [r[0] for r in result.rows] == ["ORD-2001", "ORD-2002", "ORD-2003", "ORD-2004"]
    mine = await session.send("/orders")
    assert [r[0] for r in mine.rows][:1] == ["ORD-1001"] and "C-100" in mine.title


async def test_orders_of_an_unknown_customer_is_a_helpful_error(session):
    result = await session.send("/orders C-999")
    assert result.kind == "error"
    assert "There is no customer C-999" in result.text and "C-100, C-200, C-300, C-400" in result.text


async def test_order_details(session):
    result = await session.send("/order ord 1003")
    assert result.kind == "json" and result.title == "Order ORD-1003"
    assert result.data["tracking"]["carrier"] == "UPS" and result.data["cancellation"]["eligible"] is True
    assert "shipped" in result.text
    missing = await session.send("/order ORD-9999")
    assert missing.kind == "error" and "There is no order ORD-9999" in missing.text


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("/order", "/order needs an order id, e.g. /order ORD-1003"),
        ("/customer", "/customer needs a customer id, e.g. /customer C-200"),
        ("/order banana", "not an order id"),
    ],
)
async def test_missing_or_bad_arguments(session, line, says):
    result = await session.send(line)
    assert result.kind == "error" and says in result.text


@pytest.mark.parametrize(("line", "guess"), [("/databse", "/database"), ("/metric", "/metrics"), ("/rest", "/reset"), ("/exitt", "/exit")])
async def test_near_miss_commands_get_a_did_you_mean(session, line, guess):
    result = await session.send(line)
    assert result.kind == "error" and f"Did you mean {guess}?" in result.text and "/help" in result.text


async def test_unknown_command_points_to_help(session):
    result = await session.send("/xyzzy")
    assert result.kind == "error" and "Unknown command /xyzzy" in result.text and "Did you mean" not in result.text


async def test_help_lists_every_command(session):
    result = await session.send("/help")
    assert result.kind == "text"
    for name in COMMANDS:
        assert f"/{name}" in result.text


@pytest.mark.parametrize("line", ["/exit", "/quit", "/QUIT"])
async def test_exit_and_quit(session, line):
    result = await session.send(line)
    assert result.kind == "exit"


async def test_metrics_count_tokens_tool_calls_and_latency(today, tmp_path):
    model = ScriptedModel(calls(("list_my_orders", "{}"), tokens=(120, 8)), text("You have 7 orders.", tokens=(200, 6)))
    async with ChatSession(model=model, today=today, export_dir=tmp_path) as session:
        await session.send("what are my orders?")
        result = await session.send("/metrics")
    assert result.kind == "table" and result.columns == ["Metric", "Value"]
    values = dict(result.rows)
    assert values["Bot model"] == "fake/llm"
    assert (values["Input tokens"], values["Output tokens"], values["Total tokens"]) == ("320", "14", "334")
    assert values["Tool calls"] == "1" and values["Tool calls by name"] == "list_my_orders 1"
    assert values["Turns"] == "1" and float(values["Bot latency, total (s)"]) > 0


async def test_reset_clears_history_and_restores_orders(session):
    await session.send("cancel ORD-1004")
    await session.send("yes")
    assert session.world.db.get("orders", "ORD-1004")["status"] == "cancelled"
    result = await session.send("/reset")
    assert result.kind == "text" and "restored" in result.text
    assert session.transcript == [] and session.world.db.get("orders", "ORD-1004")["status"] == "processing"
    assert session.metrics().tool_calls == 0
    database = await session.send("/database")
    assert {r[0]: r[4] for r in database.rows}["ORD-1004"] == "processing"
    # and the bot works on the fresh world
    turn = await session.send("where is ORD-1003?")
    assert "UPS" in turn.text


async def test_customer_switch_changes_who_the_bot_acts_for(session):
    refused = await session.send("cancel ORD-2001")
    assert "There is no order ORD-2001" in refused.text and refused.tool_calls[0].http_status == 403
    result = await session.send("/customer c-200")
    assert result.kind == "text" and "Now chatting as C-200" in result.text
    assert session.customer_id == "C-200" and session.transcript == []
    await session.send("cancel ORD-2001")
    await session.send("yes")
    assert session.world.db.get("orders", "ORD-2001")["status"] == "cancelled"
    assert session.tools.records[-1].customer_id == "C-200"


async def test_customer_switch_to_an_unknown_customer_is_a_helpful_error(session):
    result = await session.send("/customer C-777")
    assert result.kind == "error" and "There is no customer C-777" in result.text and "/customer C-100" in result.text
    assert session.customer_id == "C-100"


async def test_export_writes_json_that_parses_back(session, tmp_path):
    await session.send("cancel ORD-1004")
    await session.send("yes")
    first = await session.send("/export")
    second = await session.send("/export")
    assert first.kind == "text" and first.path and first.path != second.path
    assert first.path.startswith(str(tmp_path / "sessions")) and first.path.endswith(".json")
    record = ChatExport.model_validate(json.loads(open(first.path, encoding="utf-8").read()))
    assert record.customer_id == "C-100" and record.bot_model == "offline"
    assert [m.content for m in record.messages if m.role == "user"] == ["cancel ORD-1004", "yes"]
    assert [r.name for r in record.tool_calls] == ["check_cancellation", "cancel_order"]
    assert record.world_state.final_row("orders", "ORD-1004")["status"] == "cancelled" and record.metrics.turns == 2


async def test_a_failing_model_is_an_error_result_not_a_crash(today, tmp_path):
    model = ScriptedModel(ProviderError("openrouter/x (bot): 401 invalid API key", status=401))
    async with ChatSession(model=model, today=today, export_dir=tmp_path) as session:
        result = await session.send("hello")
        assert isinstance(result, CommandResult) and result.kind == "error" and "401 invalid API key" in result.text
        assert (await session.send("/database")).kind == "table"


async def test_empty_message_is_a_hint(session):
    result = await session.send("   ")
    assert result.kind == "error" and "/help" in result.text


def test_command_parsing_helpers():
    assert parse_command("/Order  ORD-1003 ") == ("order", "ORD-1003")
    assert suggest("tabels") == "tables" and suggest("zzz") is None
    assert normalize_order_id("#1003") == "ORD-1003" and normalize_order_id("0RD-1003") == "ORD-1003"
    assert normalize_customer_id("c200") == "C-200" and normalize_customer_id("C-300") == "C-300"
    assert normalize_customer_id("bob") is None


async def test_a_live_chat_can_talk_to_a_deployed_bot_through_a_connector(tmp_path):
    from tests.connector_servers import serve_bot_process

    with serve_bot_process() as served:
        session = ChatSession(model=f"rasa:{served.webhook}", export_dir=tmp_path)
        try:
            first = await session.send("where is my order ORD-1003?")
            second = await session.send("and ORD-1001?")
        finally:
            await session.aclose()
    assert session.bot_model == f"rasa:{served.webhook}"
    assert "ORD-1003" in first.text and "ORD-1001" in second.text
    assert [m.role for m in session.transcript] == ["user", "assistant", "user", "assistant"]


def test_a_chat_with_a_connector_that_is_not_one_fails_with_one_clear_error(tmp_path):
    from parley.core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown connector 'smtp:'"):
        ChatSession(model="smtp:mail.example.com", export_dir=tmp_path)


async def test_exit_says_whether_the_chat_was_saved(session):
    assert (await session.send("/exit")).text == "Chat ended; nothing was said, so nothing was saved."
    await session.send("where is ORD-1003?")
    assert (await session.send("/exit")).text == "Chat ended; it stays saved."
