"""Dates a World cannot hold are refused when the files are loaded, with file:line:field, never
found out while a batch runs (where a conversation would break on them)."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.specs.playbook import validate_playbook
from parley.core.specs.profile_loader import validate_profile
from parley.core.specs.scenario_file import check_scenario_text
from parley.mockapi.fixture import date_problem
from parley.tui.cli.main import cli

PROFILE = """\
test_name: dated
user:
  role: a customer
  goals:
    - track order ORD-1003
chatbot:
  fallback: sorry
conversation:
  number: 1
  goal_style:
    steps: 2
world:
  customer_id: C-100
  today: {today}
{extra}"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_fixtures_range_is_what_a_world_can_date():
    # the shipped orders go back 40 days and forward 3 (an expected delivery)
    assert date_problem(dt.date(1, 2, 10)) is None and date_problem(dt.date(9999, 12, 28)) is None
    assert "use a date from 0001-02-10 to 9999-12-28" in date_problem(dt.date(1, 1, 1))
    assert date_problem(dt.date(9999, 12, 30)).startswith("9999-12-30 is a date a World cannot hold")
    # an override moving an order further back narrows the range
    assert date_problem(dt.date(2026, 11, 21), [{"id": "ORD-1001", "placed_days_ago": 740_000}]) is not None


@pytest.mark.parametrize("today", ["0001-01-01", "9999-12-31"])
def test_a_profile_whose_world_today_cannot_hold_its_orders_is_refused_at_its_line(tmp_path, today):
    path = write(tmp_path, "p.yaml", PROFILE.format(today=today, extra=""))
    [error] = validate_profile(path, personality_dirs=[])
    assert (error.line, error.field_path) == (14, "world.today")
    assert f"{today} is a date a World cannot hold" in error.reason


def test_an_override_that_dates_an_order_before_year_one_is_refused(tmp_path):
    extra = "  orders:\n    - id: ORD-1001\n      placed_days_ago: 800000\n"
    [error] = validate_profile(write(tmp_path, "p.yaml", PROFILE.format(today="2026-11-21", extra=extra)), personality_dirs=[])
    assert error.field_path == "world.today" and "cannot hold" in error.reason


def test_a_playbook_today_and_a_scenarios_current_date_are_refused_too(tmp_path):
    [error] = validate_playbook(write(tmp_path, "p.yaml", "name: old\ntoday: 0001-01-01\nsteps:\n  - user: hi\n"))
    assert (error.line, error.field_path) == (2, "today") and "cannot hold" in error.reason
    scenario = {"name": "ancient", "variables": {"ORDER_GOAL": "track ORD-1003", "CURRENT_DATE": "0001-01-01 Monday"}}
    _, errors = check_scenario_text(json.dumps([scenario], indent=1), source="s.json")
    [dated] = [e for e in errors if e.field_path and e.field_path.endswith("CURRENT_DATE")]
    assert dated.line == 6 and "0001-01-01 is a date a World cannot hold" in dated.reason
    bad = {"name": "typo", "variables": {"ORDER_GOAL": "x", "CURRENT_DATE": "2026-13-45 Friday"}}
    _, errors = check_scenario_text(json.dumps([bad]), source="s.json")
    assert any("starts with 2026-13-45, which is not a date" in e.reason for e in errors)


def test_parley_run_refuses_before_anything_is_stored(tmp_path):
    path = write(tmp_path, "p.yaml", PROFILE.format(today="0001-01-01", extra=""))
    db = tmp_path / "p.db"
    result = CliRunner().invoke(cli, ["run", str(path), "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"{path}:14:10: world.today: 0001-01-01 is a date a World cannot hold" in result.stderr
    assert "nothing was run" in result.stderr
