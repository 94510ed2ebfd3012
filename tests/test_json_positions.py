"""Scenario files are located with a fast JSON reader (the YAML reader took seconds on a request
of thousands of scenarios): the same positions the YAML reader gives, and no crash on deep
nesting. bench/bench_scenario_positions.py prints the speed."""

from __future__ import annotations

import json

from parley.core.specs.json_positions import load_positioned
from parley.core.specs.scenario_file import parse_scenarios
from parley.core.specs.yaml_reading import read_yaml as parse_yaml

TEXT = """{
  "scenarios": [
    {"name": "a", "variables": {"CURRENT_DATE": "2026-11-21", "n": 3}},
    {
      "name": "b\\u00e9",
      "variables": {"ok": true, "none": null, "x": -1.5e2}
    }
  ]
}
"""


def test_values_and_positions_are_those_the_yaml_reader_gives():
    fast, slow = load_positioned(TEXT), parse_yaml(TEXT, "t.json")
    assert fast == json.loads(TEXT)
    for a, b in ((fast, slow), (fast["scenarios"][1], slow["scenarios"][1])):
        for key in a:
            assert a.lc.key(key) == tuple(b.lc.key(key)), key
    second, second_slow = fast["scenarios"][1]["variables"], slow["scenarios"][1]["variables"]
    for key in second:
        assert second.lc.value(key) == tuple(second_slow.lc.value(key)), key
    assert fast["scenarios"].lc.item(1) == tuple(slow["scenarios"].lc.item(1))


def test_an_error_deep_in_a_large_file_is_located():
    scenarios = [{"name": f"s{i}", "variables": {"CURRENT_DATE": "2026-11-21"}} for i in range(5000)]
    scenarios[4321]["variables"]["PATIENCE"] = "lots"
    text = json.dumps({"scenarios": scenarios}, indent=2)
    _, errors = parse_scenarios(text, source="big.json")
    [error] = [e for e in errors if "PATIENCE" in e.reason]
    assert error.line == text[: text.index('"lots"')].count("\n") + 1


def test_deep_nesting_is_an_error_not_a_crash():
    _, errors = parse_scenarios("[" * 100_000 + "]" * 100_000, source="deep.json")
    assert errors and "nested more than" in errors[0].reason


def test_nesting_past_the_limit_that_json_can_still_read_is_refused_too():
    _, errors = parse_scenarios('{"scenarios": ' + "[" * 200 + "]" * 200 + "}", source="deep.json")
    assert errors and "nested more than" in errors[0].reason
