"""`parley run` as a person uses it: output, summary, report, --single, exit codes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.store.store import Store
from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
PLAYBOOKS = PROFILES / "playbooks"


def parley(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def batches(db: Path) -> list:
    if not db.exists():
        return []
    with Store.open(db) as store:
        return store.list_batches()


def test_an_offline_batch_prints_its_id_progress_summary_and_report(tmp_path):
    db = tmp_path / "parley.db"
    result = parley("run", PROFILES, "--db", db)

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    match = re.match(r"batch ([0-9a-f]{32}) started: 27 conversations", lines[0])
    assert match, lines[0]
    batch_id = match.group(1)
    assert sum(1 for line in lines if re.match(r"\[\s*\d+/27\] passed ", line)) == 22
    # the scenario file's 5 conversations have no check parley can run offline: unverified, with a hint
    assert sum(1 for line in lines if re.match(r"\[\s*\d+/27\] unverified ", line)) == 5
    assert "Policy violations: none" in result.stdout
    assert "Pass rate: 100.0% (22 of 22, 95% interval 85.1-100.0%)" in result.stdout
    assert "counted apart: 5 unverified, 0 simulator faults" in result.stdout
    assert "Unverified: 5 conversations had no check about the bot: add an `expect:` block or use an LLM judge" in result.stdout
    assert "Scores: none (no LLM judge scored; the checks decide)" in result.stdout  # the offline judge gives no score
    report = tmp_path / "reports" / f"{batch_id}.md"
    assert f"Report: {report}" in result.stdout
    text = report.read_text(encoding="utf-8")
    assert f"`{batch_id}`" in text and "**100.0%** (22 of 22" in text
    [row] = batches(db)
    assert (row.batch.status, row.summary.done, row.summary.passed, row.summary.unverified) == ("completed", 27, 22, 5)
    # the 14 profiles' notes on where each personality was read from: three, then a count
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 4 and "personality" in notes[0], result.stderr
    assert notes[-1] == "note: and 11 more notes (`parley profiles validate PATH` prints them all)"


def test_strict_makes_unverified_conversations_fail_the_exit_code(tmp_path):
    scenarios = PROFILES / "scenarios"
    assert parley("run", scenarios, "--db", tmp_path / "p.db").exit_code == 0
    strict = parley("run", scenarios, "--strict", "--db", tmp_path / "p.db")
    assert strict.exit_code == 1 and "5 unverified" in strict.stdout


def test_trials_show_pass_hat_k_beside_pass_hat_one(tmp_path):
    result = parley("run", PLAYBOOKS, "--trials", "3", "--db", tmp_path / "p.db")
    assert result.exit_code == 0, result.output
    assert "[21/21]" in result.stdout
    assert "Pass rate: 100.0% (21 of 21, 95% interval 84.5-100.0%)" in result.stdout
    # pass^k with its interval: every playbook passed all 3 trials, so it is Wilson's on the 7 specs
    assert re.search(r"pass\^1 100\.0% \(64\.6-100\.0%\)\s+pass\^2 100\.0% \(64\.6-100\.0%\)\s+pass\^3 100\.0%", result.stdout)
    assert "Flaky specs: none (every spec's trials agree)" in result.stdout


def test_single_streams_the_conversation_then_its_verdict_and_stores_it(tmp_path):
    db = tmp_path / "p.db"
    result = parley("run", PROFILES, "--single", "change_of_mind#0", "--db", db)

    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "── change_of_mind#0 trial 1" in out
    # the customer, the bot and the tools in the order they happened
    first_customer = out.index("customer: ")
    first_tool = out.index("  tool check_cancellation(order_id=ORD-1001) -> ok:")
    first_bot = out.index("bot: ")
    cancel = out.index("  tool cancel_order(order_id=ORD-1001) -> ok:")
    assert first_customer < first_tool < first_bot < cancel
    assert "── ended: user_stop ──" in out
    assert "verdict: passed, no score" in out
    assert "✓ pass           ORD-1001 ends cancelled" in out
    [row] = batches(db)
    assert (row.summary.done, row.batch.planned, row.batch.options.only) == (1, 1, ["change_of_mind#0"])


def test_single_by_position_streams_a_playbook_and_out_of_range_is_a_usage_error(tmp_path):
    ok = parley("run", PLAYBOOKS, "--single", "1", "--db", tmp_path / "p.db")
    assert ok.exit_code == 0 and "── playbook_cancel_delivered_order#0 trial 1" in ok.stdout
    out = ok.stdout
    injected = out.index("bot (injected): Order ORD-1006")
    customer = out.index("customer: I want to cancel order ORD-1006.")
    tool = out.index("  tool check_cancellation(order_id=ORD-1006) -> ok:")
    answer = out.index("bot: I'm sorry, I can't cancel that order.")
    assert injected < customer < tool < answer
    bad = parley("run", PLAYBOOKS, "--single", "7", "--db", tmp_path / "p.db")
    assert bad.exit_code == 2
    assert bad.stderr.strip() == "error: --single 7: the plan has 7 conversations (0-6)"


def test_a_failed_check_exits_1_and_is_listed(tmp_path):
    profile = tmp_path / "wrong_expectation.yaml"
    text = (PROFILES / "cancel_at_eleven_days.yaml").read_text(encoding="utf-8")
    text = re.sub(r"test_name:\s*\S+", "test_name: wrong_expectation", text)
    text = re.sub(r"ORD-1005: \w+", "ORD-1005: cancelled", text)
    profile.write_text(text, encoding="utf-8")
    result = parley("run", profile, "--db", tmp_path / "p.db")

    assert result.exit_code == 1, result.output
    assert "[1/1] failed     wrong_expectation#0" in result.stdout
    assert "Pass rate: 0.0% (0 of 1, 95% interval 0.0-79.3%)" in result.stdout
    assert "wrong_expectation#0 trial 1 (failed, user_stop): ORD-1005 ends cancelled" in result.stdout


def test_broken_files_of_a_folder_are_listed_and_left_out_and_the_rest_runs(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "bad_one.yaml").write_text("test_name: bad_one\nuser:\n  role: x\n  goals: 12\n", encoding="utf-8")
    (folder / "bad_two.yaml").write_text("test_name: bad_two\nuser:\n  goals: [a]\nconversation:\n  number: lots\n", encoding="utf-8")
    db = tmp_path / "p.db"
    result = parley("run", folder, PLAYBOOKS, "--db", db)

    assert result.exit_code == 1  # the batch passed, but files were left out
    located = [line for line in result.stderr.splitlines() if re.match(r"^.+\.yaml:\d+:\d+: ", line)]
    assert any("bad_one.yaml" in line for line in located) and any("bad_two.yaml" in line for line in located)
    assert "left out: 2 files with problems (above); the others run" in result.stderr
    assert "started" in result.stdout and "bad_one" not in result.stdout
    (batch,) = batches(db)
    assert batch.batch.planned == len(list(PLAYBOOKS.glob("*.yaml")))


def test_a_broken_file_named_explicitly_stops_the_batch_before_it_runs(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("test_name: bad\nuser:\n  goals: [a]\nconversation:\n  number: lots\n", encoding="utf-8")
    db = tmp_path / "p.db"
    result = parley("run", bad, PLAYBOOKS, "--db", db)

    assert result.exit_code == 1
    assert f"{bad}:5:11: conversation.number: expected a number" in result.stderr
    assert "nothing was run" in result.stderr
    assert "started" not in result.stdout
    assert batches(db) == []


def test_a_missing_api_key_is_one_line_before_anything_runs(tmp_path):
    db = tmp_path / "p.db"
    env = {"OPENAI_API_KEY": ""}
    result = parley("run", PLAYBOOKS, "--bot", "openai/gpt-4o-mini", "--db", db, env=env)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "error: OPENAI_API_KEY is not set; set it to use openai/gpt-4o-mini for the bot role, "
        "or choose another model (offline needs no key)"
    ]
    assert result.stdout == "" and batches(db) == []
    judge = parley("run", PLAYBOOKS, "--judge", "openrouter/openai/gpt-4o-mini", "--db", db, env={"OPENROUTER_API_KEY": ""})
    assert judge.exit_code == 1 and "OPENROUTER_API_KEY is not set" in judge.stderr and "judge role" in judge.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "missing PATH"),
        (["--bot", "gpt-4o"], "did you mean openai/gpt-4o?"),
        (["--concurrency", "0"], "0 is not in the range"),
        (["--resume", "latest", str(PLAYBOOKS)], "not both"),
    ],
)
def test_usage_errors_exit_2(tmp_path, args, message):
    if "--bot" in args or "--concurrency" in args:
        args = [str(PLAYBOOKS), *args]
    result = parley("run", *args, "--db", tmp_path / "p.db")
    assert result.exit_code == 2
    assert message in result.output


def test_resume_of_an_unknown_batch_exits_1(tmp_path):
    db = tmp_path / "p.db"
    none_yet = parley("run", "--resume", "latest", "--db", db)
    assert none_yet.exit_code == 1 and "there is no batch to resume" in none_yet.stderr
    parley("run", PLAYBOOKS, "--db", db)
    unknown = parley("run", "--resume", "0123456789abcdef", "--db", db)
    assert unknown.exit_code == 1 and unknown.stderr.strip().startswith("error: no batch '0123456789abcdef'")


def test_environment_variables_set_the_defaults_and_parley_db_the_file(tmp_path):
    db = tmp_path / "from_env.db"
    env = {"CONCURRENCY": "2", "MAX_TURNS": "7", "TIMEOUT_SEC": "12.5", "PARLEY_DB": str(db)}
    result = parley("run", PLAYBOOKS, "--seed", "5", env=env)
    assert result.exit_code == 0, result.output
    [row] = batches(db)
    o = row.batch.options
    assert (o.concurrency, o.max_turns, o.timeout_s, o.seed) == (2, 7, 12.5, 5)
    assert "concurrency 2" in result.stdout.splitlines()[0]


def test_resume_continues_the_latest_batch_and_keeps_its_options(tmp_path):
    db = tmp_path / "p.db"
    parley("run", PLAYBOOKS, "--trials", "2", "--db", db)
    again = parley("run", "--resume", "latest", "--trials", "5", "--db", db)
    assert again.exit_code == 0, again.output
    assert "ignoring --trials" in again.stderr
    assert re.match(r"batch [0-9a-f]{32} resumed: 14 conversations, 14 already done, 0 to run", again.stdout)
    assert len(batches(db)) == 1


def test_on_a_terminal_the_progress_is_a_bar(tmp_path, monkeypatch):
    import io

    from parley.tui.cli import run_batch as run_batch_module
    from parley.tui.cli.closed_pipe import PipeConsole

    screen = io.StringIO()
    terminal = PipeConsole(file=screen, force_terminal=True, width=120, color_system=None)
    monkeypatch.setattr(run_batch_module, "console", lambda err=False: terminal)
    result = parley("run", PROFILES, "--db", tmp_path / "p.db")
    assert result.exit_code == 0
    drawn = screen.getvalue()
    assert "27/27" in drawn and "✓22 ✗0 ?5 !0" in drawn and "limit 4" in drawn
    assert "[ 1/27]" not in drawn  # no plain per-conversation lines on a terminal
    assert "Pass rate: 100.0% (22 of 22" in drawn
