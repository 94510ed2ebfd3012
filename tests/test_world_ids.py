"""Ids a profile, playbook or scenario file names are checked against the order world it runs in:
`parley profiles validate` and `parley run` stop on one that is not there, at its place, with
did-you-mean, instead of failing the bot on the setup's typo."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from parley.core.specs import load_specs
from parley.tui.cli.main import cli


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def validate(*paths: Path):
    return CliRunner().invoke(cli, ["profiles", "validate", *map(str, paths)], catch_exceptions=False)


BAD_PROFILE = """
    test_name: bad_ids
    user:
      role: a customer
      goals:
        - track order ORD-1003
    world:
      customer_id: C-30
      orders:
        - id: ORD-10044
          status: shipped
        - id: ORD-1002
          customer_id: C-999
    expect:
      orders:
        ORD-10003: shipped
        ORD-1003: shipped
    """


def test_a_profile_naming_a_customer_and_orders_the_world_lacks_is_invalid_at_each_place(tmp_path):
    bad = write(tmp_path, "bad_ids.yaml", BAD_PROFILE)
    result = validate(bad)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == (f"{bad}:7:16: world.customer_id: customer 'C-30' is not in world orders; did you mean 'C-300'?")
    assert lines[1].startswith(f"{bad}:9:11: world.orders[0].id: order 'ORD-10044' is not in world orders")
    assert lines[1].endswith("it cannot add one; did you mean 'ORD-1004'?")
    assert lines[2].startswith(f"{bad}:12:20: world.orders[1].customer_id: customer 'C-999'")
    assert lines[2].endswith("its customers are C-100, C-200, C-300, C-400")  # nothing close: the list
    assert lines[3].startswith(f"{bad}:15:5: expect.orders.ORD-10003: order 'ORD-10003' is not in world orders")
    assert lines[3].endswith("so its expected status can never hold; did you mean 'ORD-1003'?")
    assert lines[4] == "4 errors in 1 file; 1 file checked (1 profile)"  # ORD-1003 exists: no error


def test_run_stops_before_anything_runs_and_stores_nothing(tmp_path):
    bad = write(tmp_path, "bad_ids.yaml", BAD_PROFILE)
    db = tmp_path / "parley.db"
    result = CliRunner().invoke(cli, ["run", str(bad), "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 1, result.output  # invalid input files
    assert "customer 'C-30' is not in world orders" in result.output
    assert result.output.strip().splitlines()[-1] == "error: 4 problems in the input files; nothing was run"
    from parley.core.store import Store

    store = Store.open(db)
    try:
        assert store.count_batches() == 0
    finally:
        store.close()


def test_a_folder_leaves_the_file_out_and_runs_the_others(tmp_path):
    write(tmp_path, "bad_ids.yaml", BAD_PROFILE)
    write(tmp_path, "good.yaml", "test_name: good\nuser:\n  role: r\n  goals:\n    - track order ORD-1003\n")
    result = load_specs([tmp_path], seed=0)
    assert [s.name for s in result.specs] == ["good"]
    assert {e.file for e in result.errors} == {str(tmp_path / "bad_ids.yaml")}


def test_a_playbook_checks_its_customer_expected_orders_and_tool_arguments_nobody_said(tmp_path):
    playbook = write(
        tmp_path,
        "pb.yaml",
        """
        name: pb
        customer_id: C-500
        steps:
          - user: "Where is ORD-9999?"
          - expect_tool: {name: track_order, arguments: {order_id: ORD-9999}}
          - user: "And the other one?"
          - expect_tool: {name: track_order, arguments: {order_id: ORD-1008}}
        expect:
          orders: {ORD-1003: shipped, ORD-2005: pending}
        """,
    )
    result = validate(playbook)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith(f"{playbook}:2:14: customer_id: customer 'C-500'")
    # ORD-9999 is what the customer asks about (a test of an unknown order): not an error.
    assert lines[1].startswith(f"{playbook}:7:60: steps[3].expect_tool.arguments.order_id: order 'ORD-1008'")
    assert "and no user step names it; did you mean 'ORD-1007'?" in lines[1]
    assert lines[2].startswith(f"{playbook}:9:31: expect.orders.ORD-2005: order 'ORD-2005'")
    assert lines[3].startswith("3 errors in 1 file")


def test_a_scenario_file_checks_its_customer_and_variables_that_are_order_ids(tmp_path):
    variables = {
        "CUSTOMER_ID": "C-30",
        "ORDER_ID": "ORD-10003",
        "ORDER_GOAL": "track order ORD-9999, which does not exist",  # said by the customer: not checked
        "PERSONALITY": "calm",
        "AMB_LEVEL": 0,
        "PATIENCE": 1,
        "CURRENT_DATE": "2026-11-21",
        "LOCATIONS": "x",
        "DELIVERY_DAYS": "x",
        "PURCHASE_HISTORY": "x",
    }
    path = tmp_path / "scenarios.json"
    path.write_text(json.dumps([{"name": "a", "variables": variables}], indent=2), encoding="utf-8")
    result = validate(path)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith(f"{path}:5:22: [0].variables.CUSTOMER_ID: customer 'C-30'")
    assert lines[1].startswith(f"{path}:6:19: [0].variables.ORDER_ID: order 'ORD-10003'")
    assert lines[1].endswith("did you mean 'ORD-1003'?")
    assert lines[2].startswith("2 errors in 1 file")


def test_the_shipped_suite_names_only_ids_its_world_holds():
    root = Path(__file__).parent.parent / "profiles"
    result = load_specs([root], seed=0)
    assert result.ok, [e.render() for e in result.errors]
