"""The world API: tools declared once from typed functions, tables with owners, a cheap private copy
per conversation that knows what changed, tool calls run and recorded, rules the API leaves to the
bot, worlds found by name or path, and every mistake in a world a user wrote found with its place."""

from __future__ import annotations

import datetime
import json
import textwrap
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

from parley.api import ConversationIdentity, Refused, Rule, Table, ToolContext, WorldDefinition, load_world, tool
from parley.core.records import ToolCall
from parley.core.world import WorldError, WorldTemplate, WorldTools, world_problems

TODAY = datetime.date(2026, 11, 21)


@tool
def find_guest(ctx: ToolContext, email: Annotated[str, Field(max_length=80, examples=["ann@example.com"])]) -> dict:
    """Find a guest by email.

    Args:
        email: The guest's email address.
    """
    rows = ctx.db.find("guests", email=email.strip().lower())
    if not rows:
        raise Refused(f"No guest has the email {email}.", reason="guest_not_found", kind="request", status=404)
    return {"guest_id": rows[0]["id"]}


@tool
def get_booking(ctx: ToolContext, booking_id: str) -> dict:
    """One booking: its guest, status and nights."""
    row = ctx.db.get("bookings", booking_id)
    if row is None:
        raise Refused(f"There is no booking {booking_id}.", reason="booking_not_found", kind="request", status=404)
    return row


@tool(changes_state=True, needs_confirmation=True)
def cancel_booking(ctx: ToolContext, booking_id: str, refund_to: str = "original") -> dict:
    """Cancel a booking and refund it."""
    row = ctx.db.get("bookings", booking_id)
    if row is None:
        raise Refused("There is no such booking.", reason="booking_not_found", kind="request")
    if row["status"] == "cancelled":
        raise Refused(f"Booking {booking_id} is already cancelled.", reason="already_cancelled")
    ctx.db.update("bookings", booking_id, status="cancelled", refund_to=refund_to)
    ctx.db.insert("log", {"id": f"L-{booking_id}", "booking_id": booking_id, "what": "cancelled"})
    return {"booking_id": booking_id, "status": "cancelled"}


@tool
def list_rooms(ctx: ToolContext) -> list:
    """The hotel's rooms."""
    return ctx.db.select("rooms")


def _refund_to_original(call) -> str | None:
    if (call.record.arguments or {}).get("refund_to", "original") != "original":
        return "refunds go to the original payment method"
    return None


def hotel() -> WorldDefinition:
    return WorldDefinition(
        name="hotel",
        description="A small hotel's bookings",
        policy="Cancel bookings on request; refunds go to the original method.",
        tables=[
            Table(
                "guests",
                columns={"id": "text", "email": "text", "name": "text"},
                owner="key",
                id_pattern=r"G-[0-9]+",
                rows=[{"id": "G-1", "email": "ann@example.com", "name": "Ann"}, {"id": "G-2", "email": "bob@example.com", "name": "Bob"}],
            ),
            Table(
                "bookings",
                columns={"id": "text", "guest_id": "text", "status": "text", "refund_to": "text", "nights": "integer"},
                owner="guest_id",
                id_pattern=r"BK-[0-9]+",
                choices={"status": ["confirmed", "cancelled"]},
                rows=[
                    {"id": "BK-1", "guest_id": "G-1", "status": "confirmed", "nights": 2},
                    {"id": "BK-2", "guest_id": "G-2", "status": "confirmed", "nights": 1},
                ],
            ),
            Table("rooms", columns={"id": "text", "kind": "text"}, rows=[{"id": "R1", "kind": "double"}]),
            Table("log", columns={"id": "text", "booking_id": "text", "what": "text"}, log=True),
        ],
        tools=[find_guest, get_booking, cancel_booking, list_rooms],
        identity=ConversationIdentity(customers="guests", authenticate=["find_guest"], credentials=["email"]),
        rules=[Rule("refund_to_original", "Refunds go to the original payment method.", _refund_to_original)],
        actions={"cancel_booking": "cancel"},
    )


async def run(tools: WorldTools, name: str, arguments: dict | str):
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return await tools.execute(ToolCall(id="c1", name=name, arguments=raw))


def test_a_tools_schema_is_made_from_its_type_hints_and_docstring():
    assert find_guest.spec.description == "Find a guest by email."
    assert find_guest.parameters == {
        "type": "object",
        "properties": {"email": {"type": "string", "maxLength": 80, "description": "The guest's email address."}},
        "required": ["email"],
        "additionalProperties": False,
    }
    assert cancel_booking.parameters["properties"]["refund_to"] == {"type": "string", "default": "original"}
    assert cancel_booking.changes_state and cancel_booking.needs_confirmation and not get_booking.changes_state
    assert list_rooms.parameters == {"type": "object", "properties": {}, "additionalProperties": False}


async def test_each_call_is_recorded_with_what_it_changed_read_and_broke():
    world = hotel()
    copy = WorldTemplate(world, TODAY).new_copy()
    tools = WorldTools(world, copy, "G-1")

    found = await run(tools, "find_guest", {"email": "ANN@example.com "})
    assert found.ok and found.result == '{"guest_id":"G-1"}' and [r.ref for r in found.reads] == ["guests/G-1"]

    other = await run(tools, "get_booking", {"booking_id": "BK-2"})
    assert other.ok and {(r.ref, r.owner) for r in other.reads} == {("bookings/BK-2", "G-2"), ("guests/G-2", "G-2")}

    cancel = await run(tools, "cancel_booking", {"booking_id": "BK-1", "refund_to": "voucher"})
    assert cancel.ok and [c.describe() for c in cancel.changes] == [
        "bookings/BK-1: refund_to None -> 'voucher', status 'confirmed' -> 'cancelled'",
        "log/L-BK-1: inserted",
    ]
    assert [(v.rule, v.message) for v in cancel.violations] == [("refund_to_original", "refunds go to the original payment method")]

    again = await run(tools, "cancel_booking", {"booking_id": "BK-1"})
    assert again.refused and again.result == "REFUSED [already_cancelled] Booking BK-1 is already cancelled." and not again.changes
    missing = await run(tools, "get_booking", {"booking_id": "BK-9"})
    assert (
        not missing.refused and missing.http_status == 404 and missing.result == "ERROR [404 booking_not_found] There is no booking BK-9."
    )
    assert tools.records == [found, other, cancel, again, missing]

    diff = copy.diff(["bookings/BK-2", "bookings/BK-404"])
    assert [c.describe() for c in diff.record_changes()] == [
        "bookings/BK-1: refund_to None -> 'voucher', status 'confirmed' -> 'cancelled'"
    ]
    assert diff.final_row("bookings", "BK-1")["status"] == "cancelled"
    assert diff.watched["bookings/BK-2"]["status"] == "confirmed" and diff.watched["bookings/BK-404"] is None


@pytest.mark.parametrize(
    ("name", "raw", "error", "says"),
    [
        ("get_booking", '{"booking_id": "BK-1"', "invalid_json", 'Send a JSON object such as {"booking_id": "..."}'),
        ("get_booking", '["BK-1"]', "invalid_arguments", "must be a JSON object"),
        ("get_booking", "{}", "invalid_arguments", "get_booking needs a booking_id. Ask the customer"),
        ("find_guest", "{}", "invalid_arguments", 'needs an email, e.g. {"email": "ann@example.com"}'),
        ("find_guest", '{"email": "' + "x" * 90 + '"}', "invalid_arguments", "at most 80 characters"),
        ("refund", "{}", "unknown_tool", "There is no tool named 'refund'. The tools are: cancel_booking, find_guest"),
    ],
)
async def test_a_wrong_call_is_a_text_the_bot_reads_and_changes_nothing(name, raw, error, says):
    world = hotel()
    copy = WorldTemplate(world, TODAY).new_copy()
    record = await run(WorldTools(world, copy, "G-1"), name, raw)
    assert not record.ok and record.error == error and says in record.result
    assert record.result.startswith(f"ERROR [{error}]")
    assert copy.diff().changes == []


async def test_a_bug_in_a_world_is_an_error_the_bot_reads_never_a_crash(caplog):
    @tool
    def broken(ctx: ToolContext) -> dict:
        """Always fails."""
        raise KeyError("oops")

    world = hotel()
    world.tools = [*world.declared_tools, broken]
    record = await run(WorldTools(world, WorldTemplate(world, TODAY).new_copy(), "G-1"), "broken", "{}")
    assert record.error == "world_error" and "The broken tool failed (KeyError)" in record.result
    assert "tool broken failed" in caplog.text


def test_copies_are_private_and_the_template_is_built_once():
    world = hotel()
    template = WorldTemplate(world, TODAY)
    first, second = template.new_copy(), template.new_copy()
    first.db.update("bookings", "BK-1", status="cancelled")
    assert second.db.get("bookings", "BK-1")["status"] == "confirmed"
    assert [c.key for c in first.diff().changes] == ["BK-1"] and second.diff().changes == []


def test_a_record_changed_and_put_back_is_no_change():
    world = hotel()
    copy = WorldTemplate(world, TODAY).new_copy()
    mark = copy.mark()
    copy.db.update("bookings", "BK-1", status="cancelled")
    copy.db.update("bookings", "BK-1", status="confirmed")
    assert copy.changes_since(mark) == [] and copy.diff().changes == []


def test_overrides_are_checked_against_the_schema_and_merged():
    from parley.core.world import merge_overrides, override_problems

    world = hotel()
    tables = {t.name: t for t in world.tables}
    assert override_problems(tables, {"booking": [{"id": "BK-1"}]}) == [
        (("booking",), "no table 'booking' in this world; did you mean 'bookings'? (its tables: guests, bookings, rooms, log)")
    ]
    assert override_problems(tables, {"bookings": [{"id": "BK-1", "staus": "x"}, {"id": "BK-2", "status": "gone"}]}) == [
        (("bookings", 0, "staus"), "unknown column 'staus' of table bookings; did you mean 'status'?"),
        (("bookings", 1, "status"), "'gone' is not one of confirmed, cancelled"),
    ]
    rows = merge_overrides(
        tables["bookings"], tables["bookings"].fixture_rows(TODAY), [{"id": "BK-1", "nights": 5}, {"id": "BK-3", "guest_id": "G-1"}]
    )
    assert [(r["id"], r.get("nights")) for r in rows] == [("BK-1", 5), ("BK-2", 1), ("BK-3", None)]
    copy = WorldTemplate(world, TODAY, {"bookings": [{"id": "BK-1", "status": "cancelled"}]}).new_copy()
    assert copy.db.get("bookings", "BK-1")["status"] == "cancelled" and copy.diff().changes == []


WORLD_FILE = '''
    from typing import Annotated
    from pydantic import Field
    from parley.api import SessionIdentity, Table, ToolContext, WorldDefinition, tool

    @tool
    def lookup(ctx: ToolContext, item_id) -> dict:
        """Look an item up."""
        return {{}}

    @tool
    def undocumented(ctx: ToolContext, n: int) -> dict:
        return {{}}

    WORLD = WorldDefinition(
        name="shop",
        tables=[
            Table("customers", columns={{"id": "text"}}, owner="key"),
            Table("items", columns={{"id": "text", "customer_id": "txt"}}, owner="customr_id", rows="items.yaml"),
        ],
        tools=[lookup, undocumented],
        identity=SessionIdentity(customers="customers"),
    )
'''


def test_worlds_check_finds_every_mistake_with_its_place(tmp_path: Path):
    world_file = tmp_path / "shop.py"
    world_file.write_text(textwrap.dedent(WORLD_FILE.format()), encoding="utf-8")
    (tmp_path / "items.yaml").write_text("- {id: I-1, customer_id: C-1}\n- {id: I-2, custmer_id: C-1}\n- {id: 3}\n", encoding="utf-8")
    with pytest.raises(WorldError, match=r"shop\.py:6: tool lookup: parameter 'item_id' has no type hint"):
        load_world(path=world_file)
    world = load_world(path=world_file, options={"unchecked": True})
    assert world_problems(world) == [
        f"{world_file}:6: tool lookup: parameter 'item_id' has no type hint (the bot's schema is made from it)",
        f"{world_file}:11: tool undocumented has no docstring: its first line is what the bot is told the tool does",
        f"{world_file}:19: table items: column customer_id: unknown type 'txt'; did you mean 'text'? (one of text, integer, real, boolean, date, json)",
        f"{world_file}:19: table items: owner names a missing column 'customr_id'; did you mean 'customer_id'?"
        ' (a column, "key", a function of the row, or None)',
        f"{tmp_path / 'items.yaml'}:2: custmer_id: unknown column 'custmer_id' of table items; did you mean 'customer_id'?",
        f"{tmp_path / 'items.yaml'}:3: id: expected text, got int 3",
    ]


def test_a_world_is_found_by_name_or_path_and_a_wrong_one_said_in_one_line(tmp_path: Path):
    assert load_world().name == "orders" and load_world("returns").name == "returns"
    with pytest.raises(WorldError, match=r"no world named 'retuns'; did you mean 'returns'\?"):
        load_world("retuns")
    with pytest.raises(WorldError, match="no such world file"):
        load_world(path=tmp_path / "missing.py")
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\nraise RuntimeError('no data')\n", encoding="utf-8")
    with pytest.raises(WorldError, match=rf"{broken}:2: loading the world failed: RuntimeError: no data"):
        load_world(path=broken)
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(WorldError, match="defines no WORLD"):
        load_world(path=empty)
