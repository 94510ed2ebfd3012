"""`parley rules check` as a sensei-check user meets it: the JSON of sensei-check's results, a
table per rule with each failure's `yields` text, exit codes, and bad files named in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from parley.tui.cli.main import cli
from tests.rules_support import conversation_text, rule_text, write_conversations, write_rules

RULES = {
    "kuki/sum.yaml": rule_text(
        "n1[0] + n2[0] == result",
        name="adding",
        when="operation[0] == 'adding'",
        yields='f"Wrong result for adding {n1} and {n2}: got {result}"',
    ),
    "photo/price_order.yaml": rule_text(
        "extract_float(conv[0].cost) > extract_float(conv[1].cost)",
        name="prices",
        conversations=2,
        when="conv[0].n1[0] > conv[1].n1[0]",
    ),
    "photo/some_high.yaml": rule_text("exists('result > 10')", name="some_high", conversations="all"),
    "tone.yaml": rule_text("'NEGATIVE' not in tone(chatbot_phrases)", name="tone"),
    "off.yaml": rule_text("False", name="disabled", active="false"),
}
CONVERSATIONS = {
    "a.yml": conversation_text(
        ask_about={"operation": ["adding"], "n1": [10], "n2": [1]},
        outputs={"result": 11, "cost": "$20"},
        turns=[("User", "10+1?"), ("Assistant", "11")],
    ),
    "b.yml": conversation_text(
        ask_about={"operation": ["adding"], "n1": [2], "n2": [2]},
        outputs={"result": 5, "cost": "$30"},
        turns=[("User", "2+2?"), ("Assistant", "5")],
    ),
}


def folders(tmp_path: Path, rules: dict[str, str] = RULES, conversations: dict[str, str] = CONVERSATIONS) -> list[str]:
    return [
        "--rules",
        str(write_rules(tmp_path / "rules", rules)),
        "--conversations",
        str(write_conversations(tmp_path / "conversations", conversations)),
    ]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["rules", "check", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_has_sensei_checks_shape_keyed_by_rule_file(tmp_path) -> None:
    code, out, _ = run(*folders(tmp_path), "--format", "json")
    assert code == 1  # b.yml's sum is wrong
    got = json.loads(out)["rules"]
    assert list(got) == ["kuki/sum.yaml", "photo/price_order.yaml", "photo/some_high.yaml", "tone.yaml"]  # off.yaml is inactive
    assert got["kuki/sum.yaml"] == {"name": "adding", "pass": ["a.yml"], "fail": ["b.yml"], "not_applicable": []}
    assert got["photo/price_order.yaml"] == {
        "name": "prices",
        "pass": [],
        "fail": [["a.yml", "b.yml"]],
        "not_applicable": [["b.yml", "a.yml"]],
    }
    assert got["photo/some_high.yaml"] == {"name": "some_high", "pass": [["a.yml", "b.yml"]], "fail": [], "not_applicable": []}
    tone = got["tone.yaml"]
    assert tone["pass"] == [] and tone["not_run"] == ["a.yml", "b.yml"]
    assert "needs a model" in tone["not_run_reason"]


def test_the_table_shows_each_failure_with_its_yields_text(tmp_path) -> None:
    code, out, _ = run(*folders(tmp_path))
    assert code == 1
    assert "kuki/sum.yaml  adding (each conversation): pass 1, fail 1, not applicable 0" in out
    assert "Wrong result for adding [2] and [2]: got 5" in out
    assert "a.yml → b.yml" in out  # a pair, in order
    assert "tone.yaml  tone (each conversation): pass 0, fail 0, not applicable 0, not run 2" in out
    assert "4 rules over 2 conversations: 2 with failures, 1 not run (they need a model: --judge MODEL); 1 inactive rule skipped" in out


def test_bot_text_is_shown_as_text_never_as_markup_or_terminal_codes(tmp_path) -> None:
    rule = rule_text("False", name="'[bold]x[/bold]'", yields="chatbot_phrases[0]")
    talk = conversation_text(turns=[("User", "hi"), ("Assistant", "[red]alarm[/red] \x1b[2J cleared")])
    code, out, _ = run(*folders(tmp_path, {"r.yaml": rule}, {"[b]c.yml": talk}))
    assert code == 1
    assert "[bold]x[/bold]" in out
    assert "[b]c.yml" in out
    assert "[red]alarm[/red] \\x1b[2J cleared" in out
    assert "\x1b" not in out


def test_no_failure_exits_0_and_strict_counts_rules_not_run(tmp_path) -> None:
    rules = {"ok.yaml": rule_text("len(chatbot_phrases) == 1"), "tone.yaml": RULES["tone.yaml"]}
    args = folders(tmp_path, rules)
    assert run(*args)[0] == 0
    assert run(*args, "--strict")[0] == 1


def test_a_bad_rule_file_is_an_error_of_its_own_and_every_other_rule_is_decided(tmp_path) -> None:
    rules = {
        "ok.yaml": RULES["kuki/sum.yaml"],
        "evil.yaml": rule_text("__import__('os').system('touch pwned')", name="evil"),
        "reads.yaml": rule_text("len(open('/etc/passwd').read()) > 0", name="reads"),
        "attr.yaml": rule_text("getattr(conv[0], 'serial') == 's1'", name="attr"),
    }
    code, out, err = run(*folders(tmp_path, rules), "--format", "json")
    assert code == 2
    decided = json.loads(out)["rules"]
    assert decided["ok.yaml"]["pass"] == ["a.yml"]
    evil = f"{tmp_path}/rules/evil.yaml:5: evil.oracle: the name __import__ is not allowed in a rule"
    reads = f"{tmp_path}/rules/reads.yaml:5: reads.oracle: open() is not a function rules may call: it reads and writes files"
    attr = f"{tmp_path}/rules/attr.yaml:5: attr.oracle: getattr() is not a function rules may call: it reads any attribute"
    assert decided["evil.yaml"]["error"].startswith(evil) and evil in err
    assert decided["reads.yaml"]["error"].startswith(reads) and reads in err
    assert decided["attr.yaml"]["error"].startswith(attr) and attr in err
    assert "3 rule files could not be used and were left out; every other rule was decided" in err
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    code, out, _ = run(*folders(tmp_path / "table", rules))
    assert code == 2 and "ok.yaml" in out and "pass 1" in out


def test_an_unreadable_conversation_is_named_left_out_and_exits_2(tmp_path) -> None:
    conversations = {**CONVERSATIONS, "broken.yml": "serial: s1\n---\n"}
    code, out, err = run(*folders(tmp_path, {"ok.yaml": RULES["kuki/sum.yaml"]}, conversations), "--format", "json")
    assert code == 2
    assert json.loads(out)["rules"]["ok.yaml"]["pass"] == ["a.yml"]
    assert f"{tmp_path}/conversations/broken.yml: a Sensei conversation file holds three YAML documents" in err
    assert "1 conversation file could not be read and was left out" in err


def test_usage_errors_exit_2(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    args = folders(tmp_path)
    assert run("--rules", str(tmp_path / "missing"), *args[2:])[0] == 2
    code, _, err = run("--rules", str(tmp_path / "empty"), *args[2:])
    assert (code, err.strip()) == (2, f"error: no rule files (.yaml, .yml) in {tmp_path / 'empty'}")
    code, _, err = run(*args[:2], "--conversations", str(tmp_path / "empty"))
    assert (code, err.strip()) == (2, f"error: no conversation files (.yaml, .yml) in {tmp_path / 'empty'}")
    code, _, err = run(*args, "--judge", "nonsense model")
    assert code == 2 and "--judge" in err


def test_the_installed_command_runs_as_a_subprocess(tmp_path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "parley.tui.cli.main", "rules", "check", *folders(tmp_path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["rules"]["kuki/sum.yaml"]["fail"] == ["b.yml"]


def test_help_documents_the_exit_codes() -> None:
    result = CliRunner().invoke(cli, ["rules", "check", "--help"])
    assert result.exit_code == 0
    assert "0 no rule failed; 1 a rule failed" in result.output
    assert "2 usage error or invalid input" in result.output


def test_with_a_judge_model_the_model_helpers_are_decided(tmp_path, server, monkeypatch) -> None:
    # The fake OpenAI-compatible server answers the tone of each bot message: one negative.
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    server.push_text("NEUTRAL").push_text("NEGATIVE")
    code, out, err = run(*folders(tmp_path, {"tone.yaml": RULES["tone.yaml"]}), "--judge", "openai-api/fake/m", "--format", "json")
    assert code == 1, err
    assert json.loads(out)["rules"]["tone.yaml"] == {"name": "tone", "pass": ["a.yml"], "fail": ["b.yml"], "not_applicable": []}
    assert len(server.requests) == 2
    assert server.requests[1].messages[0]["content"].startswith("What is the tone of this text?\n5\n")


# Values cheap to build and enormous to compare, hash or show: each ran inside one call of
# Python's own, holding the interpreter (signals too) for as long as it took: hours.
HUGE = "[[[[1]*1000]*1000]*1000]*1000"
ENORMOUS = {
    "compare.yaml": f"{HUGE} == {HUGE}",
    "show.yaml": f"len(str({HUGE})) > 0",
    "hash.yaml": f"len({{tuple({HUGE})}}) == 1",
    "order.yaml": f"max({HUGE}, {HUGE}) is None",
    "member.yaml": f"{HUGE} in [{HUGE}]",
    "format.yaml": f"len(f'{{{HUGE}}}') > 0",
    "sort.yaml": f"sorted([{HUGE}, {HUGE}]) == []",
    "key.yaml": f"{{{HUGE[:-5]}: 1}}.get(tuple({HUGE})) == 1",
}


def test_values_enormous_to_compare_hash_or_show_stop_within_the_bound(tmp_path) -> None:
    rules = {name: rule_text(oracle, name=name[:-5]) for name, oracle in ENORMOUS.items()}
    rules["returns.yaml"] = rule_text(HUGE, name="returns", yields=HUGE)  # its reason and yields are shown
    result = subprocess.run(
        [sys.executable, "-m", "parley.tui.cli.main", "rules", "check", *folders(tmp_path, rules), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=90,  # each was killed at 60 s on main, still computing
    )
    decided = json.loads(result.stdout)["rules"]
    for name in ENORMOUS:
        assert decided[name]["not_run"] == ["a.yml", "b.yml"], name
        assert decided[name]["not_run_reason"].startswith("stopped: the evaluation built or took"), name
    returned = decided["returns.yaml"]
    assert returned["fail"] == ["a.yml", "b.yml"]
    code, out, _ = run(*folders(tmp_path / "table", {"returns.yaml": rules["returns.yaml"]}))
    assert code == 1 and "oracle returned [[[[1, 1, 1, 1, ...], [1, 1, 1, 1, ...]," in out  # abbreviated, never converted whole
    assert len(out) < 5_000


def test_a_rule_using_python_s_builtins_as_sensei_s_do_is_decided(tmp_path):
    # Sensei's examples/rules/mutation_eval/photography/charge.yaml: `when: hasattr(conv[0], 'charge')`;
    # on main it was refused, and with it every other rule of the folder.
    rules = {
        "charge.yaml": rule_text("extract_float(cost) > 0", name="charge", when="hasattr(conv[0], 'cost') and isinstance(n1[0], int)"),
        "nothing.yaml": rule_text("True", name="nothing", when="hasattr(conv[0], 'charge')"),
        "sorted.yaml": rule_text("sorted(map(str.lower, ['B', 'a'])) == ['a', 'b'] and divmod(7, 2) == (3, 1)", name="sorted"),
    }
    code, out, _ = run(*folders(tmp_path, rules), "--format", "json")
    decided = json.loads(out)["rules"]
    assert code == 0
    assert decided["charge.yaml"]["pass"] == ["a.yml", "b.yml"]
    assert decided["nothing.yaml"]["not_applicable"] == ["a.yml", "b.yml"]
    assert decided["sorted.yaml"]["pass"] == ["a.yml", "b.yml"]
