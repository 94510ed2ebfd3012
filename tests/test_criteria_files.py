"""Criteria in words as people write them: `expect.criteria` in a profile and a playbook,
`criteria` in a scenario file's entry; mistakes located, and `validate`'s one warning."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from parley.core.specs import load_specs
from parley.tui.cli.main import cli

PROFILE = """\
test_name: late_order
user:
  role: a customer whose order is late
  goals:
    - "where is my order ORD-1003?"
expect:
  criteria:
    - The bot apologises   for the delay
    - The bot gives the tracking number
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_profiles_criteria_reach_its_specs_as_written_one_space_apart(tmp_path):
    loaded = load_specs([write(tmp_path, "p.yaml", PROFILE)], seed=0)
    assert loaded.ok, [e.render() for e in loaded.errors]
    [spec] = loaded.specs
    assert spec.expect.criteria == ["The bot apologises for the delay", "The bot gives the tracking number"]


def test_mistakes_in_criteria_are_located(tmp_path):
    text = PROFILE + "    - The bot apologises for the delay\n    - 42\n    - " + "x" * 501 + "\n"
    loaded = load_specs([write(tmp_path, "p.yaml", text)], seed=0)
    shown = [e.render().replace(f"{tmp_path}/", "") for e in loaded.errors]
    assert shown == [
        "p.yaml:10:7: expect.criteria[2]: criterion 3 repeats criterion 1: each is its own check, named by its text",
        "p.yaml:11:7: expect.criteria[3]: expected a criterion in words (one sentence), got 42",
        "p.yaml:12:7: expect.criteria[4]: a criterion is a sentence or two, at most 500 characters; this one has 501",
    ]


def test_a_playbooks_expect_block_takes_criteria(tmp_path):
    playbook = """\
    name: apology_playbook
    steps:
      - user: "Where is ORD-1003?"
    expect:
      criteria: [The bot apologises for the delay]
    """
    loaded = load_specs([write(tmp_path, "pb.yaml", playbook)], seed=0)
    assert loaded.ok and loaded.specs[0].expect.criteria == ["The bot apologises for the delay"]


SAMPLE = Path(__file__).parent.parent / "profiles" / "scenarios" / "sample_scenarios.json"


def test_a_scenario_entry_takes_criteria_and_locates_their_mistakes(tmp_path):
    variables = json.loads(SAMPLE.read_text(encoding="utf-8"))[0]["variables"]
    scenarios = [
        {"name": "calm", "variables": variables, "criteria": ["The agent is polite"]},
        {"name": "plain", "variables": variables},
    ]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenarios, indent=1), encoding="utf-8")
    loaded = load_specs([path], seed=0)
    assert loaded.ok, [e.render() for e in loaded.errors]
    by_name = {s.name: s for s in loaded.specs}
    assert by_name["calm"].expect.criteria == ["The agent is polite"] and by_name["plain"].expect is None

    scenarios[0]["criteria"] = "The agent is polite"
    path.write_text(json.dumps(scenarios, indent=1), encoding="utf-8")
    [error] = load_specs([path], seed=0).errors
    assert error.render().endswith("[0].criteria: expected a list of criteria in words (one sentence each), got 'The agent is polite'")
    written = path.read_text(encoding="utf-8").splitlines()
    assert written[error.line - 1].lstrip().startswith('"criteria"')


def test_validate_says_once_per_file_that_criteria_and_rubrics_need_an_llm_judge(tmp_path):
    write(tmp_path, "p.yaml", PROFILE + "  judge:\n    rubric: Be kind.\n")
    write(tmp_path, "plain.yaml", PROFILE.replace("late_order", "plain").split("expect:")[0])
    result = CliRunner().invoke(cli, ["profiles", "validate", str(tmp_path)])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if "LLM judge" in line]
    assert warnings == [
        f"{tmp_path / 'p.yaml'}:7:3: expect.criteria: the offline judge reads no criteria, so these 2 criteria are not run: "
        "each needs an LLM judge (`--judge MODEL`) (warning)",
        f"{tmp_path / 'p.yaml'}:10:3: expect.judge: the offline judge reads no rubric, so this check is not run: "
        "it needs an LLM judge (`--judge MODEL`) (warning)",
    ]
