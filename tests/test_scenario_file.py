"""Scenario files: both JSON forms, prompt templates filled with str.format, errors before any run."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from parley.core.errors import ProfileError
from parley.core.records.spec import derive_seed
from parley.core.specs.scenario_file import (
    SHIPPED_TEMPLATES_DIR,
    check_scenario_file,
    load_scenario_file,
    load_templates,
    validate_scenario_file,
)

SAMPLE = Path(__file__).parent.parent / "profiles" / "scenarios" / "sample_scenarios.json"
UNFILLED = re.compile(r"(?<!\{)\{[A-Za-z_][A-Za-z0-9_]*\}(?!\})")

VARIABLES = {
    "PERSONALITY": "calm",
    "AMB_LEVEL": 0,
    "PATIENCE": 2,
    "ORDER_GOAL": "Track order ORD-1003",
    "CURRENT_DATE": "2026-11-21 Saturday",
    "LOCATIONS": "Lisbon, Porto",
    "DELIVERY_DAYS": "1-2 business days",
    "PURCHASE_HISTORY": "ORD-1003: running shoes",
}


def write_json(tmp_path: Path, data, name: str = "scenarios.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def template(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_bare_list_and_scenarios_mapping_give_the_same_specs(tmp_path):
    scenarios = [{"name": "calm_track", "variables": VARIABLES}, {"name": "other", "variables": {**VARIABLES, "PATIENCE": 0}}]
    bare = load_scenario_file(write_json(tmp_path, scenarios, "bare.json"), seed=3)
    wrapped = load_scenario_file(write_json(tmp_path, {"scenarios": scenarios}, "wrapped.json"), seed=3)

    assert [s.spec_id for s in bare] == ["calm_track#0", "other#0"]
    assert [s.model_dump(exclude={"source"}) for s in bare] == [s.model_dump(exclude={"source"}) for s in wrapped]
    spec = bare[0]
    assert spec.kind == "scenario" and spec.index == 0 and bare[1].index == 1
    assert spec.goals == ["Track order ORD-1003"]
    assert spec.variables["PATIENCE"] == "2" and spec.variable_values["PATIENCE"] == 2
    assert spec.world.today == dt.date(2026, 11, 21) and spec.world.customer_id is None  # the world's default customer
    for key in ("agent_prompt", "client_prompt", "evaluator_prompt"):
        assert spec.extra[key] and not UNFILLED.search(spec.extra[key]), key


def test_shipped_templates_carry_the_scenario_into_each_prompt(tmp_path):
    (spec,) = load_scenario_file(write_json(tmp_path, [{"name": "calm_track", "variables": VARIABLES}]))
    agent, client, judge = (spec.extra[k] for k in ("agent_prompt", "client_prompt", "evaluator_prompt"))
    assert "Lisbon, Porto" in agent and "1-2 business days" in agent and "2026-11-21 Saturday" in agent
    assert "end_call" in agent and "calm_track#0" in agent  # session_id is the spec id
    assert "Track order ORD-1003" in client and "ORD-1003: running shoes" in client and "calm" in client
    assert spec.role.startswith("You are a customer") and spec.role in client
    assert spec.context and all(line in client for line in spec.context)
    # The judge's JSON example keeps its literal braces ({{ }} in the template).
    assert '{"score": 1, "comment": "..."}' in judge
    for word in ("Professionalism", "accuracy", "satisfaction", "Efficiency", "resolution"):
        assert word in judge


def test_a_missing_variable_names_the_scenario_and_the_variable(tmp_path):
    lacking = {k: v for k, v in VARIABLES.items() if k != "PATIENCE"}
    path = write_json(tmp_path, [{"name": "fine", "variables": VARIABLES}, {"name": "impatient_cancel", "variables": lacking}])
    specs, errors = check_scenario_file(path)

    assert specs == []  # nothing runs while any scenario is broken
    (error,) = errors
    assert error.reason.startswith("scenario 1 'impatient_cancel' does not define PATIENCE, which the client template (")
    assert str(SHIPPED_TEMPLATES_DIR / "client.txt") in error.reason
    assert (error.file, error.line, error.field_path) == (str(path), 17, "[1].variables")
    with pytest.raises(ProfileError, match="does not define PATIENCE"):
        load_scenario_file(path)


def test_a_misspelt_variable_gets_a_suggestion(tmp_path):
    variables = {**{k: v for k, v in VARIABLES.items() if k != "LOCATIONS"}, "LOCATION": "Lisbon"}
    errors = validate_scenario_file(write_json(tmp_path, [{"name": "typo", "variables": variables}]))
    assert [e.reason.endswith("did you mean 'LOCATION'?") for e in errors] == [True]


def test_escaped_braces_stay_literal_and_values_are_not_reformatted(tmp_path):
    agent = template(tmp_path, "agent.txt", 'Session {session_id}. Reply as JSON: {{"done": true}}. Goal: {ORDER_GOAL}')
    client = template(tmp_path, "client.txt", "You want {ORDER_GOAL} with patience {PATIENCE:d}.")
    judge = template(tmp_path, "judge.txt", 'Answer {{"score": 1|2|3, "comment": "..."}}')
    goal = '[{"name": "fillet", "qty": 2}]'  # 003 wrote goals as JSON text: braces in a value
    path = write_json(tmp_path, [{"name": "json_goal", "variables": {"ORDER_GOAL": goal, "PATIENCE": 3}}])
    (spec,) = load_scenario_file(path, agent_template=agent, client_template=client, evaluator_template=judge)

    assert spec.extra["agent_prompt"] == f'Session json_goal#0. Reply as JSON: {{"done": true}}. Goal: {goal}'
    assert spec.extra["client_prompt"] == f"You want {goal} with patience 3."
    assert spec.extra["evaluator_prompt"] == 'Answer {"score": 1|2|3, "comment": "..."}'
    assert spec.extra["templates"]["agent"] == str(agent)


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        ("line one\nHello {NAME} and }", (2, 18), "single '}'"),
        ("Use {} here", (1, 5), "has no variable name"),
        ("Open { brace", (1, 6), "unmatched '{'"),
    ],
)
def test_a_broken_template_is_an_error_at_its_position(tmp_path, text, where, reason):
    broken = template(tmp_path, "agent.txt", text)
    path = write_json(tmp_path, [{"name": "x", "variables": VARIABLES}])
    errors = validate_scenario_file(path, agent_template=broken)
    assert errors and errors[0].file == str(broken)
    assert (errors[0].line, errors[0].column) == where and reason in errors[0].reason


def test_seed_comes_from_SEED_when_given_else_from_the_batch_seed(tmp_path):
    path = write_json(
        tmp_path, [{"name": "seeded", "variables": {**VARIABLES, "SEED": 12345}}, {"name": "derived", "variables": VARIABLES}]
    )
    first = load_scenario_file(path, seed=1)
    second = load_scenario_file(path, seed=2)
    assert first[0].seed == second[0].seed == 12345
    assert first[1].seed == derive_seed(1, "derived", 0) != second[1].seed
    assert load_scenario_file(path, seed=1) == first  # deterministic


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([{"name": "x", "variables": {**VARIABLES, "PATIENCE": 5}}], "PATIENCE must be a whole number from 0 to 3"),
        ([{"name": "x", "variables": {**VARIABLES, "SEED": "abc"}}], "SEED must be a whole number"),
        ([{"name": "x", "variables": {**VARIABLES, "CUSTOMER_ID": 5}}], "CUSTOMER_ID must be a customer id (text), got 5"),
        ([{"name": "x", "variables": VARIABLES}, {"name": "x", "variables": VARIABLES}], "scenario name 'x' is used twice"),
        ([{"name": "x", "varibles": VARIABLES}], "unknown key 'varibles'; did you mean 'variables'?"),
        ({"scenario": []}, "unknown key 'scenario'; did you mean 'scenarios'?"),
        ([], "must not be empty"),
        ([{"name": "x", "variables": {**VARIABLES, "bad-name": 1}}], "must be letters, digits and _"),
    ],
)
def test_invalid_scenarios_say_what_is_wrong(tmp_path, data, reason):
    errors = validate_scenario_file(write_json(tmp_path, data))
    assert any(reason in e.reason for e in errors), [e.render() for e in errors]


def test_invalid_json_points_at_the_syntax_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"name": "x",\n   "variables": {"A": 1,}}\n]\n', encoding="utf-8")
    (error,) = validate_scenario_file(path)
    assert error.reason.startswith("invalid JSON") and (error.line, error.column) == (3, 25)


def test_customer_and_date_come_from_the_scenario(tmp_path):
    data = [{"name": "x", "variables": {**VARIABLES, "CUSTOMER_ID": "C-300", "CURRENT_DATE": "2026-12-01 Tuesday"}}]
    (spec,) = load_scenario_file(write_json(tmp_path, data))
    assert spec.world.customer_id == "C-300" and spec.world.today == dt.date(2026, 12, 1)


def test_the_shipped_sample_scenarios_load_with_the_shipped_templates():
    specs = load_scenario_file(SAMPLE)
    assert len(specs) >= 4
    assert len({s.variables["PERSONALITY"] for s in specs}) == len(specs)
    assert {s.variable_values["PATIENCE"] for s in specs} >= {0, 3}
    assert {s.variable_values["AMB_LEVEL"] for s in specs} >= {0, 3}
    assert any(re.search("track|where", s.goals[0], re.I) for s in specs) and any("cancel" in s.goals[0].lower() for s in specs)
    for spec in specs:
        for key in ("agent_prompt", "client_prompt", "evaluator_prompt"):
            assert not UNFILLED.search(spec.extra[key]), (spec.spec_id, key)
    templates = load_templates()
    assert set(templates.agent.field_names) == {"session_id", "CURRENT_DATE", "LOCATIONS", "DELIVERY_DAYS"}
    assert set(templates.client.field_names) == {
        "session_id",
        "CURRENT_DATE",
        "PERSONALITY",
        "ORDER_GOAL",
        "PATIENCE",
        "AMB_LEVEL",
        "PURCHASE_HISTORY",
    }


def test_a_scenario_carries_an_expect_block_as_a_profile_does(tmp_path):
    """Offline, a scenario with only criteria is always unverified: an `expect:` gives it checks
    the offline roles decide."""
    import json as _json

    from click.testing import CliRunner

    from parley.tui.cli.main import cli

    scenario = {
        "name": "calm_track",
        "variables": {
            "PERSONALITY": "calm",
            "PATIENCE": 2,
            "AMB_LEVEL": 0,
            "ORDER_GOAL": "track order ORD-1003",
            "CURRENT_DATE": "2026-11-21",
            "LOCATIONS": "the US",
            "DELIVERY_DAYS": "3-5 days",
            "PURCHASE_HISTORY": "ORD-1003: shoes",
        },
        "expect": {"tools_called": ["track_order"], "bot_says": ["ORD-1003"]},
        "criteria": ["The agent gives the tracking number"],
    }
    path = tmp_path / "s.json"
    path.write_text(_json.dumps([scenario]), encoding="utf-8")
    done = CliRunner().invoke(cli, ["run", str(path), "--db", str(tmp_path / "p.db")], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "1 passed" in done.stdout and "1 criterion not run (need an LLM judge)" in done.stdout
    scenario["expect"] = {"tools_called": ["track"]}
    path.write_text(_json.dumps([scenario]), encoding="utf-8")
    bad = CliRunner().invoke(cli, ["profiles", "validate", str(path)], catch_exceptions=False)
    assert "[0].expect.tools_called[0]: unknown tool 'track'; did you mean 'track_order'?" in bad.output
