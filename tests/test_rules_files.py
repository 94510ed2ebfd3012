"""Rule files and Sensei conversation files: read as Sensei reads them (PyYAML's typing), every
problem one located line, `file:line: rule.field: reason`."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from parley.core.rules import ConversationFileError, conversation_files, load_rules, parse_conversation, sensei_variables
from tests.rules_support import conversation_text, write_rules


def errors_of(tmp_path: Path, text: str) -> list[str]:
    rule_set = load_rules(write_rules(tmp_path, {"r.yaml": text}))
    assert not rule_set.rules
    return [error.render().removeprefix(f"{tmp_path}/") for error in rule_set.errors]


def test_a_hostile_oracle_is_refused_at_its_line(tmp_path) -> None:
    text = "name: sneaky\ndescription: d\nwhen: True\noracle: |\n  cost == 1 and (\n    __import__('os').system('rm -rf ~'))\n"
    assert errors_of(tmp_path, text) == [
        "r.yaml:6: sneaky.oracle: the name __import__ is not allowed in a rule (names starting with '__' are Python's internals)"
    ]


def test_each_field_is_checked_and_every_problem_listed(tmp_path) -> None:
    text = "name: r\ndescription: d\nconversations: 3\nactive: maybe\nwhen: open('x')\nif:\noracle: x ==\nyields: f'{x.__class__}'\n"
    found = errors_of(tmp_path, text)
    assert found[:2] == [
        "r.yaml:4: r.active: must be true or false, not text",
        "r.yaml:3: r.conversations: must be 1 (each conversation), 2 (each ordered pair) or all (the batch), not 3",
    ]
    assert found[2] == "r.yaml:5: r.when: open() is not a function rules may call: it reads and writes files (a rule only computes)"
    assert found[3:] == [
        "r.yaml:6: r.if: empty: remove the key or write an expression",
        "r.yaml:7: r.oracle: not a Python expression: invalid syntax",
        "r.yaml:8: r.yields: the attribute .__class__ is not allowed in a rule (attributes starting with '_' are internals)",
    ]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("description: d\noracle: 'True'\n", "r.yaml:1: r.yaml.name: the rule has no name"),
        ("name: r\ndescription: d\n", "r.yaml:1: r.oracle: the rule has no oracle"),
        ("name: r\ndescription: d\noracle: x\nthen: y\n", "r.yaml:4: r.then: give the oracle once"),
        ("name: on\ndescription: d\noracle: x\n", "r.yaml:1: r.yaml.name: must be text, not true/false (YAML reads yes, no, on, off"),
        ("name: r\ndescription: d\noracle: 1\n", "r.yaml:3: r.oracle: must be a Python expression in text, not a number"),
        ("name: r\ndescription: ''\noracle: x\n", "r.yaml:2: r.description: is empty"),
        ("- a list\n", "r.yaml:1: a rule file is one mapping (name, description, oracle, ...); this one is not a mapping"),
        ("", "r.yaml:1: a rule file is one mapping (name, description, oracle, ...); this one is empty"),
        ("name: r\n  bad: indent\n", "r.yaml:2:6: invalid YAML"),
    ],
)
def test_a_bad_rule_file_is_one_located_line(tmp_path, text: str, error: str) -> None:
    (found,) = errors_of(tmp_path, text)
    assert found.startswith(error)


def test_unknown_keys_are_warned_about_not_refused(tmp_path) -> None:
    rule_set = load_rules(write_rules(tmp_path, {"r.yaml": "name: r\ndescription: d\noracle: x > 1\nyeilds: f'{x}'\n"}))
    assert [rule.name for rule in rule_set.rules] == ["r"]
    (warning,) = rule_set.warnings
    assert warning.startswith(f"{tmp_path}/r.yaml:4: r: the key 'yeilds' is not part of a rule and is ignored")


def test_rule_files_are_found_in_subfolders_and_named_by_their_path(tmp_path) -> None:
    write_rules(tmp_path, {"kuki/a.yaml": "name: a\ndescription: d\noracle: x\n", "b.yml": "name: b\ndescription: d\noracle: x\n"})
    (tmp_path / "notes.txt").write_text("not a rule")
    write_rules(tmp_path, {".hidden/c.yaml": "- not a rule\n"})
    rule_set = load_rules(tmp_path)
    assert [rule.rule_file for rule in rule_set.rules] == ["b.yml", "kuki/a.yaml"]
    assert rule_set.errors == []


def test_a_conversation_is_read_with_pyyamls_types() -> None:
    text = conversation_text(ask_about={"size": ["small"]}, outputs={"cost": "$5"}) + ""
    text = text.replace('- cost: "$5"', "- cost: $5\n- date: 2024-10-28\n- answer: yes\n- code: 1e3\n- total: 1,500")
    conversation = parse_conversation(text, "c.yml", "c.yml")
    names = sensei_variables(conversation)
    assert names["date"] == datetime.date(2024, 10, 28)
    assert names["answer"] is True  # YAML 1.1, as PyYAML (and Sensei) reads it
    assert names["code"] == "1e3"  # PyYAML wants a dot in a float
    assert names["total"] == "1,500"
    assert names["size"] == ["small"]
    assert names["data_output_cost"] == names["cost"] == "$5"
    assert names["steps"] == names["conversation_goal_style_steps"] == 4


def test_the_variables_a_rule_sees_follow_sensei() -> None:
    text = conversation_text(
        ask_about={"number": [7]},
        outputs={"result": 11},
        turns=[("User", "Hi"), ("Assistant", "Hello"), ("User", "Bye")],
    )
    names = sensei_variables(parse_conversation(text, "c.yml", "c.yml"))
    assert names["number"] == 1  # `conversation`'s number comes after ask_about and wins, as in Sensei
    assert names["chatbot_phrases"] == ["Hello"]
    assert names["user_phrases"] == ["Hi", "Bye"]
    assert names["data_output"] == [{"result": 11}]
    assert names["interaction"][1] == {"Assistant": "Hello"}


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda t: t.replace("serial: s000001\n", ""), "c.yml:1: serial: missing"),
        (lambda t: t.replace("serial: s000001", "serial: 123"), "c.yml:1: serial: must be text, not a number"),
        (lambda t: t.replace("data_output: []", "data_output:"), "c.yml:14: data_output: must be a list, not empty"),
        (lambda t: t.replace("ask_about:\n- ask something", "ask_about: nothing"), "c.yml:5: ask_about: must be a list, not text"),
        (lambda t: t.split("---")[0], "c.yml: a Sensei conversation file holds three YAML documents"),
        (lambda t: t.replace("conversation time: 3.2", "time: 3.2"), "c.yml:16: the second document (times) must be a mapping"),
        (lambda t: t.replace("interaction: []", "interaction:"), "c.yml:21: interaction: is empty"),
        (
            lambda t: t.replace("interaction: []", "interaction:\n- just text Assistant"),
            "c.yml:21: interaction: each turn must be a mapping",
        ),
        (lambda t: t.replace("- number: 1", "- 7: 1"), "c.yml:8: conversation: a key that is not text"),
        (lambda t: t.replace("language: English", "language: [English"), "c.yml:3:8: invalid YAML: expected ',' or ']'"),
        (lambda t: t + "\x00", "c.yml:21:1: invalid YAML: the character U+0000"),
    ],
)
def test_a_conversation_sensei_could_not_read_is_one_located_line(change, error: str) -> None:
    with pytest.raises(ConversationFileError) as caught:
        parse_conversation(change(conversation_text()), "c.yml", "c.yml")
    assert caught.value.render().startswith(error)


def test_sensei_report_files_and_other_files_are_not_conversations(tmp_path) -> None:
    for name in ("b.yml", "a/c.yaml", "__report__/stats.yml", "__report__x.yml", ".cache/d.yml", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(conversation_text())
    assert [name for _, name in conversation_files(tmp_path)] == ["a/c.yaml", "b.yml"]
    assert [name for _, name in conversation_files(tmp_path / "b.yml")] == ["b.yml"]


def test_a_conversation_file_of_nested_aliases_is_refused_before_it_expands() -> None:
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)
    )
    with pytest.raises(ConversationFileError, match="aliases expand to more than"):
        parse_conversation(laughs + "---\n---\n", "c.yml", "c.yml")
