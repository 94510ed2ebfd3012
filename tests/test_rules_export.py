"""A batch's conversations in Sensei's format (`parley report BATCH --format sensei --output DIR`):
the files Sensei's reader (PyYAML) loads to the very values the rules saw while the batch ran,
so `parley rules check` over the export decides what `parley run --rules` decided."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from parley.core.records import ChatMessage, Conversation, ConversationSpec, ExtractedOutput, OutputField, TurnTiming, Verdict
from parley.core.rules import as_sensei_conversation, dump_sensei, parse_conversation, sensei_documents
from parley.core.rules.parley_conversation import sensei_value
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.rules_support import TRACKING_PROFILE, rule_text, write_rules

NOW = datetime.datetime(2026, 11, 21, 9, 0, tzinfo=datetime.UTC)


def parley(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def a_conversation(texts: list[tuple[str, str]], **metadata) -> Conversation:
    return Conversation(
        id="c" * 32,
        customer_id="C-100",
        bot_model="offline",
        user_simulator="offline",
        messages=[ChatMessage(role=role, content=text) for role, text in texts],
        turns=[TurnTiming(index=1, bot_latency_s=0.25)],
        started_at=NOW,
        ended_at=NOW,
        duration_s=1.5,
        stop_reason="user_stop",
        metadata=metadata,
    )


def a_spec(**fields) -> ConversationSpec:
    base = {
        "spec_id": "photos#0",
        "kind": "profile",
        "source": "photos.yaml",
        "name": "photos",
        "index": 0,
        "seed": 1,
        "goals": ["the price to photograph 3 artworks"],
        "variables": {"number_photo": "3"},
        "variable_values": {"number_photo": 3},
        "outputs": [
            OutputField(name="cost", type="money", description="the price"),
            OutputField(name="when", type="time", description="the time"),
            OutputField(name="day", type="date", description="the day"),
            OutputField(name="count", type="int", description="how many"),
            OutputField(name="missing", type="str", description="never said"),
        ],
    }
    return ConversationSpec(**{**base, **fields})


def a_verdict(outputs: list[ExtractedOutput]) -> Verdict:
    return Verdict(conversation_id="c" * 32, outcome="passed", passed=True, outputs=outputs)


OUTPUTS = [
    ExtractedOutput(name="cost", type="money", found=True, value={"amount": 150.0, "currency": "USD"}, raw="$150"),
    ExtractedOutput(name="when", type="time", found=True, value="14:30", raw="2:30 pm"),
    ExtractedOutput(name="day", type="date", found=True, value="2026-11-23", raw="November 23"),
    ExtractedOutput(name="count", type="int", found=True, value=3, raw="three"),
    ExtractedOutput(name="missing", type="str", found=False),
]


def test_outputs_are_typed_as_sensei_types_them_and_variables_are_lists():
    metadata, times, turns = sensei_documents(
        a_spec(), a_conversation([("user", "How much?"), ("assistant", "$150, at 2:30 pm")]), a_verdict(OUTPUTS), serial="b1", number=4
    )
    assert metadata["serial"] == "b1" and metadata["language"] == "English"
    assert metadata["ask_about"] == ["the price to photograph 3 artworks", {"number_photo": [3]}]
    assert metadata["data_output"] == [
        {"cost": "150.00 USD"},
        {"when": "14:30:00"},
        {"day": datetime.date(2026, 11, 23)},
        {"count": 3},
        {"missing": None},
    ]
    assert metadata["errors"] == [{1001: "1 goals left to complete."}]
    assert {"number": 4} in metadata["conversation"]
    assert times == {"conversation time": 1.5, "assistant response time": [0.25]}
    assert turns == {"interaction": [{"User": "How much?"}, {"Assistant": "$150, at 2:30 pm"}]}


def test_a_duration_stays_as_written_and_money_without_an_amount_keeps_its_text():
    duration = ExtractedOutput(name="wait", type="time", found=True, value="PT20M")
    assert sensei_value(OutputField(name="wait", type="time", description="the wait"), duration) == "PT20M"
    odd = ExtractedOutput(name="cost", type="money", found=True, value={"currency": "EUR"}, raw="some euros")
    assert sensei_value(OutputField(name="cost", type="money", description="the price"), odd) == "some euros"


def test_the_file_reads_back_in_sensei_and_in_parley_as_the_rules_saw_it():
    hostile = [
        ("user", "yes"),
        ("assistant", "on"),
        ("user", "12:30:00"),
        ("assistant", "\x1b[2J[bold]cleared[/bold] \x00 'quoted' \"double\" # not a comment\n- not a list"),
        ("assistant", "injected by a playbook"),
        ("tool", "a tool's result"),
    ]
    spec = a_spec(context=["personality: x.yml", "no"], goals=["on", "0755"])
    documents = sensei_documents(spec, a_conversation(hostile, injected_messages=[4]), a_verdict(OUTPUTS), serial="yes", number=1)
    text = dump_sensei(documents)

    assert not text.startswith("%YAML"), "Sensei's files carry no directive"
    assert list(yaml.safe_load_all(text)) == list(documents), "Sensei's reader gets every value back, typed the same"
    assert parse_conversation(text, "f.yml", "f.yml") == as_sensei_conversation(documents, "f.yml")
    interaction = documents[2]["interaction"]
    assert [list(turn)[0] for turn in interaction] == ["User", "Assistant", "User", "Assistant"]
    assert "injected by a playbook" not in text and "a tool's result" not in text


def run_and_export(tmp_path: Path, rule_files: dict[str, str]) -> tuple[Path, Path, Path, str]:
    profile = tmp_path / "suite" / "tracking.yaml"
    profile.parent.mkdir(parents=True)
    profile.write_text(TRACKING_PROFILE, encoding="utf-8")
    folder = write_rules(tmp_path / "rules", rule_files)
    db = tmp_path / "x.db"
    ran = parley("run", profile, "--rules", folder, "--trials", "2", "--db", db)
    batch_id = re.search(r"batch ([0-9a-f]{32}) started", ran.stdout).group(1)
    out = tmp_path / "export"
    exported = parley("report", batch_id, "--format", "sensei", "--output", out, "--db", db)
    assert exported.exit_code == 0, exported.output
    assert f"({'sensei'}, batch {batch_id}, 4 conversation files)" in exported.stderr
    return db, folder, out, batch_id


RULES = {
    "each/tracking.yaml": rule_text("'1Z' in tracking", name="has_tracking", yields='f"got {tracking}"'),
    "each/words.yaml": rule_text("conversation_length('user') >= 1 and not repeated_answers()", name="words"),
    "pairs/same.yaml": rule_text(
        "conv[0].tracking == conv[1].tracking", name="same", conversations=2, if_="conv[0].order == conv[1].order"
    ),
    "batch/some.yaml": rule_text("num_exist(\"'1Z' in tracking\") == 2", name="some", conversations="all"),
}


def test_rules_check_over_the_export_decides_what_the_run_decided(tmp_path):
    db, folder, out, batch_id = run_and_export(tmp_path, RULES)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yml"))
    assert files == ["tracking/tracking_0_t1.yml", "tracking/tracking_0_t2.yml", "tracking/tracking_1_t1.yml", "tracking/tracking_1_t2.yml"]

    checked = parley("rules", "check", "--rules", folder, "--conversations", out, "--format", "json")
    by_file = json.loads(checked.stdout)["rules"]
    with Store.open(db) as store:
        stored = list(store.iter_conversations(batch_id))
        name_of = {s.conversation.id: f"tracking/{s.spec.spec_id.replace('#', '_')}_t{s.trial}.yml" for s in stored}
        for rule_file in ("each/tracking.yaml", "each/words.yaml"):
            ran = {outcome: sorted(name_of[s.conversation.id] for s in stored for c in s.verdict.checks
                                   if c.name == f"rule:{rule_file}" and c.outcome == outcome)
                   for outcome in ("pass", "fail", "not_applicable")}  # fmt: skip
            assert ran == {k: sorted(by_file[rule_file][k]) for k in ran}, rule_file
        assert by_file["each/tracking.yaml"]["fail"] and by_file["each/tracking.yaml"]["pass"], "both outcomes are compared"

        from parley.core.store import iter_rule_results

        for rule_file in ("pairs/same.yaml", "batch/some.yaml"):
            ran = {"pass": [], "fail": [], "not_applicable": []}
            for result in iter_rule_results(store, batch_id, rule_file):
                named = [name_of[cid] for cid in result.conversations]
                ran[result.outcome].append(
                    named[0] if result.kind == "conversation" else sorted(named) if result.kind == "batch" else named
                )
            expected = {k: sorted(json.dumps(x) for x in v) for k, v in ran.items()}
            got = by_file[rule_file]
            if rule_file == "batch/some.yaml":
                got = {**got, "pass": [sorted(x) for x in got["pass"]], "fail": [sorted(x) for x in got["fail"]]}
            assert expected == {k: sorted(json.dumps(x) for x in got[k]) for k in expected}, rule_file


def test_the_export_wants_a_new_or_empty_folder_and_says_so_in_one_line(tmp_path):
    db, folder, out, batch_id = run_and_export(tmp_path, {"each/words.yaml": RULES["each/words.yaml"]})

    again = parley("report", batch_id, "--format", "sensei", "--output", out, "--db", db)
    assert again.exit_code == 1
    assert again.stderr.strip() == f"error: --output {out} is a folder that is not empty: give a new (or empty) folder for the Sensei files"
    assert len(list(out.rglob("*.yml"))) == 4, "what was there is left as it was"

    missing = parley("report", batch_id, "--format", "sensei", "--db", db)
    assert missing.exit_code == 2 and "give it with --output DIR" in missing.stderr

    empty = tmp_path / "empty"
    empty.mkdir()
    assert parley("report", batch_id, "--format", "sensei", "--output", empty, "--db", db).exit_code == 0
    assert len(list(empty.rglob("*.yml"))) == 4
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")], "no half-written folder is left behind"


@pytest.mark.parametrize(
    ("name", "expected"),
    [("qa/bikeshop#0", "qa_bikeshop_0"), ("__report__x", "_report_x"), ("..hidden", "hidden"), ("日本", "_"), ("", "conversation")],
)
def test_file_names_are_safe_on_any_file_system_and_never_skipped_by_sensei(name, expected):
    from parley.core.reports.sensei_export import safe_name

    assert safe_name(name) == expected
