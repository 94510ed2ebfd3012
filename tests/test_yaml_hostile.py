"""Hostile and broken YAML: alias bombs, deep nesting and impossible dates are located errors,
answered at once, wherever parley reads YAML (profiles, playbooks, personalities, scenario
files, connector files) and from every command that reads them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.bots.bot_names import parse_bot_spec
from parley.core.errors import ConfigError, ProfileError
from parley.core.specs.profile_loader import validate_profile
from parley.core.specs.scenario_file import parse_scenarios
from parley.core.specs.sources import load_specs
from parley.core.specs.yaml_reading import MAX_DEPTH, YamlLimitError, read_yaml
from parley.tui.cli.main import cli

# "Billion laughs": each level lists the one above ten times. 10^7 values once expanded, from a
# few hundred bytes (the was 470 bytes: 10^7 nodes took 8.8 s, 10^8 took 81 s).
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{above}'] * 10)}]\n" for above, name in zip("abcdef", "bcdefg", strict=True)
)
ALIAS_BOMB_10_8 = ALIAS_BOMB + "h: &h [" + ", ".join(["*g"] * 10) + "]\n"

PROFILE_HEAD = """\
test_name: hostile
user:
  role: a customer
  goals:
    - where is my order
"""


def deep_flow(depth: int) -> str:
    return "x: " + "[" * depth + "]" * depth + "\n"


def deep_block(depth: int) -> str:
    return "x:\n" + "".join("  " * level + "- \n" for level in range(1, depth))


def test_the_alias_bomb_is_small():
    assert len(ALIAS_BOMB.encode()) < 470


@pytest.mark.parametrize("text", [ALIAS_BOMB, ALIAS_BOMB_10_8], ids=["10^7", "10^8"])
def test_an_alias_bomb_is_refused_at_once_where_it_goes_off(text):
    started = time.perf_counter()
    with pytest.raises(YamlLimitError) as caught:
        read_yaml(PROFILE_HEAD + text, "bomb.yaml")
    assert time.perf_counter() - started < 1.0
    error = caught.value
    assert (error.file, error.line) == ("bomb.yaml", 5 + 5)  # line of `e:`, the first level past the budget
    assert "aliases expand to more than" in error.render()


def test_aliases_within_the_budget_still_work():
    data = read_yaml("base: &b {role: a customer}\ncopy: *b\nmerged:\n  <<: *b\n  extra: 1\n", "ok.yaml")
    assert data["copy"]["role"] == "a customer"
    assert data["merged"]["role"] == "a customer" and data["merged"]["extra"] == 1


@pytest.mark.parametrize("depth", [500, 2000, 20_000])
@pytest.mark.parametrize("shape", [deep_flow, deep_block], ids=["flow", "block"])
def test_deep_nesting_is_a_located_error_not_a_recursion_error(shape, depth):
    started = time.perf_counter()
    with pytest.raises(YamlLimitError) as caught:
        read_yaml(shape(min(depth, 700) if shape is deep_block else depth), "deep.yaml")
    assert time.perf_counter() - started < 1.0
    assert caught.value.line is not None and caught.value.column is not None
    assert f"nested more than {MAX_DEPTH} levels deep" in caught.value.render()


def test_nesting_up_to_the_limit_is_read():
    assert read_yaml(deep_flow(MAX_DEPTH - 1), "ok.yaml")["x"] is not None


def test_an_unquoted_impossible_date_is_a_located_error(tmp_path):
    path = tmp_path / "bad_date.yaml"
    path.write_text(PROFILE_HEAD + "world:\n  today: 2026-13-40\n", encoding="utf-8")
    [error] = validate_profile(path)
    assert (error.line, error.column) == (7, 10)
    assert "'2026-13-40' is not a date" in error.reason


def test_a_nul_character_is_a_located_error():
    with pytest.raises(ProfileError) as caught:
        read_yaml("test_name: a\x00b\n", "nul.yaml")
    assert (caught.value.line, caught.value.column) == (1, 13)
    assert "U+0000" in caught.value.reason


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("profile.yaml", PROFILE_HEAD + ALIAS_BOMB),
        ("playbook.yaml", "name: p\nsteps:\n  - user: hi\n" + ALIAS_BOMB),
        ("personalities/p.yml", "name: p\ncontext:\n  - calm\n" + ALIAS_BOMB),
        ("deep.yaml", PROFILE_HEAD + deep_flow(2000)),
    ],
)
def test_every_kind_of_file_is_read_through_the_limits(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    result = load_specs([tmp_path], seed=0)
    assert time.perf_counter() - started < 2.0
    [error] = result.errors
    assert error.file == str(path) and error.line is not None


def test_a_scenario_file_nested_too_deeply_is_an_error_not_a_traceback():
    deep = '{"scenarios": [{"name": "a", "variables": {"X": ' + "[" * 5000 + "]" * 5000 + "}}]}"
    scenarios, errors = parse_scenarios(deep, source="deep.json")
    assert scenarios == []
    assert "nested more than" in errors[0].render()
    scenarios, errors = parse_scenarios(json.dumps({"scenarios": [{"name": "a", "variables": {"X": [[[1]]]}}]}), source="ok.json")
    assert errors == [] and len(scenarios) == 1


def test_a_connector_file_with_an_alias_bomb_is_one_config_error_line(tmp_path):
    path = tmp_path / "bot.yaml"
    path.write_text("base_url: http://127.0.0.1:5005\n" + ALIAS_BOMB, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        parse_bot_spec(f"http:{path}")
    assert str(caught.value).startswith(f"{path}:")
    assert "aliases expand" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "command",
    [["profiles", "validate"], ["profiles", "expand"], ["run"]],
    ids=["validate", "expand", "run"],
)
@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        (PROFILE_HEAD + "world:\n  today: 2026-13-40\n", ":7:10:", "'2026-13-40' is not a date"),
        (PROFILE_HEAD + ALIAS_BOMB, ":10:", "aliases expand to more than"),
        (PROFILE_HEAD + deep_flow(2000), ":6:", "nested more than"),
    ],
    ids=["impossible-date", "alias-bomb", "deep"],
)
def test_commands_print_a_located_error_and_exit_1(tmp_path, command, text, where, says):
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    args = [*command, str(path)] + (["--db", str(tmp_path / "p.db")] if command == ["run"] else [])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"{path}{where}" in result.output and says in result.output
    assert "Traceback" not in result.output


def test_shipped_profiles_are_far_inside_the_limits():
    root = Path(__file__).parent.parent / "profiles"
    result = load_specs([root], seed=0)
    assert result.ok and result.specs


SHIPPED_PROFILE = Path(__file__).resolve().parent.parent / "profiles" / "track_shipped_order.yaml"


def with_test_name(tmp_path: Path, written: str) -> Path:
    text = SHIPPED_PROFILE.read_text(encoding="utf-8")
    path = tmp_path / "surrogate.yaml"
    path.write_text("\n".join(f"test_name: {written}" if line.startswith("test_name:") else line for line in text.splitlines()) + "\n")
    return path


def test_a_surrogate_pair_escape_is_the_character_it_stands_for(tmp_path):
    # How JSON and json.dumps write an emoji: on main, UnicodeEncodeError in `profiles validate` and `run`.
    profile = with_test_name(tmp_path, '"emoji\\ud83d\\ude00"')
    assert read_yaml(profile.read_text(encoding="utf-8"), "p.yaml")["test_name"] == "emoji\U0001f600"
    ran = CliRunner().invoke(cli, ["run", str(profile), "--db", str(tmp_path / "p.db")])
    assert ran.exit_code == 0, ran.output


def test_a_lone_surrogate_escape_is_a_located_error(tmp_path):
    profile = with_test_name(tmp_path, '"lone\\ud83d here"')
    with pytest.raises(ProfileError) as caught:
        read_yaml(profile.read_text(encoding="utf-8"), "p.yaml")
    assert caught.value.render().startswith("p.yaml:3:12: invalid YAML: the text holds a lone surrogate escape (\\ud83d)")
    for command in (["profiles", "validate", str(profile)], ["run", str(profile), "--db", str(tmp_path / "p.db")]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 1, result.output
        assert "surrogate.yaml:3:12: invalid YAML: the text holds a lone surrogate escape" in result.output
        assert "Traceback" not in result.output and "UnicodeEncodeError" not in result.output
