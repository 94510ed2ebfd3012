"""Builders for the rules tests: rule files and conversation files in Sensei's format, written
into a temporary folder, and evaluation in one call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from parley.core.rules import RuleReport, evaluate_rules, load_rules, parse_conversation
from parley.core.rules.model_helpers import RuleModel

# A Sensei profile as Sensei users write them: goals with a variable, typed outputs, no `expect:`.
TRACKING_PROFILE = """\
test_name: tracking
llm:
  model: gpt-4o-mini
user:
  language: English
  role: you are a customer who wants to know where an order is
  context:
    - your name is Maya
  goals:
    - "track order {{order}}"
    - order:
        function: forward()
        type: string
        data:
          - ORD-1003
          - ORD-1001
chatbot:
  is_starter: false
  fallback: I'm sorry, I didn't understand that.
  output:
    - tracking:
        type: str
        description: the tracking number of the order
conversation:
  number: 2
  goal_style:
    steps: 3
  interaction_style:
    - single question
"""


def conversation_text(
    *,
    serial: str = "s000001",
    ask_about: dict[str, list[Any]] | None = None,
    outputs: dict[str, Any] | None = None,
    turns: list[tuple[str, Any]] | None = None,
    steps: int = 4,
) -> str:
    """A conversation file as Sensei saves it: metadata, times, interaction."""
    lines = [f"serial: {serial}", "language: English", "context:", "- you are a customer", "ask_about:", "- ask something"]
    for name, values in (ask_about or {}).items():
        lines.append(f"- {name}: {json.dumps(values)}")
    lines += ["conversation:", "- interaction_style:", "  - single question: null", "- number: 1", "- goal_style:", f"    steps: {steps}"]
    lines.append("data_output:" if outputs else "data_output: []")
    for name, value in (outputs or {}).items():
        lines.append(f"- {name}: {json.dumps(value)}")
    lines += ["errors: []", "---", "conversation time: 3.2", "assistant response time:", "- 0.4", "---"]
    lines.append("interaction:" if turns else "interaction: []")
    for who, text in turns or []:
        lines.append(f"- {who}: {json.dumps(text)}")
    return "\n".join(lines) + "\n"


def write_conversations(folder: Path, conversations: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in conversations.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def write_rules(folder: Path, rules: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in rules.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def rule_text(oracle: str, *, name: str = "r", conversations: Any = 1, **fields: str) -> str:
    """A rule file; each expression is written as a YAML block scalar, so any text goes in."""
    lines = [f"name: {name}", "description: a rule for a test", f"conversations: {conversations}"]
    for key, value in {**{"when": None, "if": None}, **fields, "oracle": oracle}.items():
        key = key.rstrip("_")
        if value is None:
            continue
        if key in ("active",):
            lines.append(f"{key}: {value}")
            continue
        lines.append(f"{key}: |")
        lines += [f"  {line}" for line in value.splitlines()]
    return "\n".join(lines) + "\n"


def evaluate(tmp_path: Path, rules: dict[str, str], conversations: dict[str, str], model: RuleModel | None = None) -> dict[str, RuleReport]:
    """The reports of `rules` over `conversations`, by rule file."""
    rule_set = load_rules(write_rules(tmp_path / "rules", rules))
    assert not rule_set.errors, [error.render() for error in rule_set.errors]
    read = [parse_conversation(text, name, name) for name, text in sorted(conversations.items())]
    return {report.rule_file: report for report in evaluate_rules(rule_set.rules, read, model)}


def outcomes(report: RuleReport) -> dict[str, list[Any]]:
    """A report as sensei-check's lists (pass, fail, not_applicable, and not_run)."""
    return {outcome: [r.sensei_item() for r in report.of(outcome)] for outcome in ("pass", "fail", "not_applicable", "not_run")}


class ScriptedModel:
    """A RuleModel for unit tests: answers from a function of the prompt, and counts the questions."""

    name = "scripted/model"

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return str(self.answer(prompt))
