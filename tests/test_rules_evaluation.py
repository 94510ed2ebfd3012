"""Rules over conversations: per conversation, per ordered pair, over a batch, with `when`, `if`
and `yields`, decided as Sensei's checker decides them."""

from __future__ import annotations

from parley.core.rules import load_rules
from tests.rules_support import conversation_text, evaluate, outcomes, rule_text, write_rules

KUKI = {
    "add.yml": conversation_text(ask_about={"operation": ["adding"], "n1": [10], "n2": [1]}, outputs={"result": 11}),
    "add_wrong.yml": conversation_text(ask_about={"operation": ["adding"], "n1": [2], "n2": [2]}, outputs={"result": 5}),
    "times.yml": conversation_text(ask_about={"operation": ["multiplying"], "n1": [2], "n2": [10]}, outputs={"result": 20}),
    "capital.yml": conversation_text(ask_about={"country": ["Spain"]}, outputs={"result": "Madrid"}),
}


def test_a_property_rule_decides_each_conversation_its_when_keeps(tmp_path) -> None:
    rule = rule_text(
        "n1[0] + n2[0] == result",
        when="operation[0] == 'adding'",
        yields='f"Wrong result for adding {n1} and {n2}: expected {n1[0] + n2[0]} but got {result}"',
    )
    report = evaluate(tmp_path, {"sum.yaml": rule}, KUKI)["sum.yaml"]
    assert outcomes(report) == {
        "pass": ["add.yml"],
        "fail": ["add_wrong.yml"],
        "not_applicable": ["capital.yml", "times.yml"],
        "not_run": [],
    }
    failure = report.of("fail")[0]
    assert failure.yields == "Wrong result for adding [2] and [2]: expected 4 but got 5"
    assert failure.check_name == "rule:sum.yaml"
    # capital.yml has no `operation`: the NameError makes `when` not hold, and says so
    assert {r.conversations[0]: r.reason for r in report.of("not_applicable")} == {
        "capital.yml": "when raised NameError: name 'operation' is not defined",
        "times.yml": "when is false",
    }


def test_if_is_a_second_condition_after_when(tmp_path) -> None:
    rule = rule_text("result == 20", when="operation[0] == 'multiplying'", if_="n1[0] > 5")
    report = evaluate(tmp_path, {"r.yaml": rule}, KUKI)["r.yaml"]
    assert outcomes(report)["pass"] == []
    assert [r.reason for r in report.of("not_applicable") if r.conversations == ["times.yml"]] == ["if is false"]


def test_an_oracle_passes_only_what_equals_true(tmp_path) -> None:
    rules = {
        "one.yaml": rule_text("len(chatbot_phrases)"),  # 1 == True: a pass, as in Sensei
        "list.yaml": rule_text("chatbot_returns('Hi')"),  # a non-empty list is not True: a fail
        "text.yaml": rule_text("'yes'"),
    }
    talk = conversation_text(turns=[("User", "Hello"), ("Assistant", "Hi there")])
    reports = evaluate(tmp_path, rules, {"a.yml": talk})
    assert outcomes(reports["one.yaml"])["pass"] == ["a.yml"]
    assert outcomes(reports["list.yaml"])["fail"] == ["a.yml"]
    assert reports["list.yaml"].results[0].reason == "oracle returned [1]"
    assert reports["text.yaml"].results[0].reason == "yes"


def test_an_oracle_that_raises_on_one_conversation_does_not_apply_to_it(tmp_path) -> None:
    rule = rule_text("extract_float(cost) == 50 * int(number_photo[0])", yields="f'got {cost}'")
    conversations = {
        "ok.yml": conversation_text(ask_about={"number_photo": [1]}, outputs={"cost": "50 dollars"}),
        "number.yml": conversation_text(ask_about={"number_photo": [1]}, outputs={"cost": 50}),  # not text
    }
    report = evaluate(tmp_path, {"r.yaml": rule}, conversations)["r.yaml"]
    assert outcomes(report)["pass"] == ["ok.yml"]
    assert outcomes(report)["not_applicable"] == ["number.yml"]
    assert report.of("not_applicable")[0].reason.startswith("the oracle raised TypeError")


PHOTOS = {
    "p1.yml": conversation_text(ask_about={"number_photo": [1]}, outputs={"cost": "$50"}),
    "p3.yml": conversation_text(ask_about={"number_photo": [3]}, outputs={"cost": "$150"}),
    "p3_eur.yml": conversation_text(ask_about={"number_photo": [3]}, outputs={"cost": "140 EUR"}),
    "p5.yml": conversation_text(ask_about={"number_photo": [5]}, outputs={"cost": "$120"}),
}


def test_a_pair_rule_decides_every_ordered_pair(tmp_path) -> None:
    rule = rule_text(
        "extract_float(conv[0].cost) > extract_float(conv[1].cost)",
        conversations=2,
        when="int(conv[0].number_photo[0]) > int(conv[1].number_photo[0])",
        if_="currency(conv[0].cost) == currency(conv[1].cost)",
    )
    report = evaluate(tmp_path, {"more.yaml": rule}, PHOTOS)["more.yaml"]
    got = outcomes(report)
    assert sorted(got["pass"]) == [["p3.yml", "p1.yml"], ["p5.yml", "p1.yml"]]
    assert got["fail"] == [["p5.yml", "p3.yml"]]  # 5 photos for $120, 3 for $150
    assert len(got["not_applicable"]) == 4 * 3 - 3  # every ordered pair of different files is decided once
    assert all(result.kind == "pair" for result in report.results)


def test_a_pair_whose_oracle_raises_fails(tmp_path) -> None:
    rule = rule_text("conv[0].cost > 5", conversations=2, when="conv[0].number_photo[0] == 1")
    report = evaluate(tmp_path, {"r.yaml": rule}, PHOTOS)["r.yaml"]
    assert outcomes(report)["fail"] == [["p1.yml", "p3.yml"], ["p1.yml", "p3_eur.yml"], ["p1.yml", "p5.yml"]]
    assert report.of("fail")[0].reason == "the oracle raised TypeError: '>' not supported between instances of 'str' and 'int'"


def test_a_pair_rule_sees_only_its_two_conversations(tmp_path) -> None:
    rule = rule_text("conversation_length() == 0 and number_photo", conversations=2)
    report = evaluate(tmp_path, {"r.yaml": rule}, {k: PHOTOS[k] for k in ("p1.yml", "p3.yml")})["r.yaml"]
    assert outcomes(report)["fail"] == [["p1.yml", "p3.yml"], ["p3.yml", "p1.yml"]]
    assert "NameError" in (report.results[0].reason or "")


def test_a_batch_rule_decides_once_over_the_conversations_it_keeps(tmp_path) -> None:
    rules = {
        "high.yaml": rule_text("exists('extract_float(cost) > 140')", conversations="all", when="currency(cost) == 'USD'"),
        "none.yaml": rule_text("exists('extract_float(cost) > 1000')", conversations="all", yields="'no price over 1000'"),
        "raises.yaml": rule_text("num_exist('extract_float(price) > 1') > 0", conversations="all"),
    }
    reports = evaluate(tmp_path, rules, PHOTOS)
    assert outcomes(reports["high.yaml"]) == {
        "pass": [["p1.yml", "p3.yml", "p5.yml"]],
        "fail": [],
        "not_applicable": ["p3_eur.yml"],
        "not_run": [],
    }
    assert outcomes(reports["none.yaml"])["fail"] == [["p1.yml", "p3.yml", "p3_eur.yml", "p5.yml"]]
    assert reports["none.yaml"].of("fail")[0].yields == "no price over 1000"
    # the condition names a value no conversation has: the batch is not applicable, as in Sensei
    assert outcomes(reports["raises.yaml"])["not_applicable"] == [["p1.yml", "p3.yml", "p3_eur.yml", "p5.yml"]]


def test_inactive_rules_are_skipped(tmp_path) -> None:
    rules = {"on.yaml": rule_text("True", name="enabled"), "off.yaml": rule_text("False", name="disabled", active="False")}
    reports = evaluate(tmp_path, rules, PHOTOS)
    assert list(reports) == ["on.yaml"]
    rule_set = load_rules(write_rules(tmp_path / "again", {"off.yaml": rule_text("True", active="no")}))
    assert [rule.active for rule in rule_set.rules] == [False]  # `no` is false, as PyYAML reads it


def test_rules_sharing_a_name_are_kept_apart_by_file(tmp_path) -> None:
    rules = {"kuki/m.yaml": rule_text("True", name="multiplication"), "other/m.yaml": rule_text("False", name="multiplication")}
    reports = evaluate(tmp_path, rules, {"a.yml": KUKI["add.yml"]})
    assert {name: outcomes(report)["pass"] for name, report in reports.items()} == {"kuki/m.yaml": ["a.yml"], "other/m.yaml": []}
