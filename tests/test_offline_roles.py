"""What the offline roles will not read is said before anything runs, once per file, at its place
(`parley profiles validate`, the start of `parley run`), and the goals the offline customer only
stated travel with the conversation's verdict: `--single`, `sessions show`, the markdown report
and the app's session detail. Information, never a fault: nothing fails because of it."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from parley.core.evaluation import NEEDS_LLM_JUDGE, offline_limits, offline_limits_by_file
from parley.core.specs import load_specs
from parley.core.store.store import Store
from parley.tui.app.panes.session_detail import SessionScreen
from parley.tui.cli.main import cli
from tests.test_tui_support import SIZE, db_path, make_app, settle  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
PIZZA = """
    test_name: pizza_and_order
    user:
      role: a customer
      goals:
        - track order ORD-1003
        - a medium pizza with cheese
        - size:
            function: forward()
            type: string
            data: [small, large]
        - ask whether the shop delivers a {{size}} one on Sundays
    conversation:
      number: 2
    expect:
      tools_called: [track_order]
      judge:
        rubric: The bot must answer only in French.
        min_score: 3
    """


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def test_validate_warns_once_per_file_at_each_part_the_offline_roles_will_not_read(tmp_path):
    profile = write(tmp_path, "pizza.yaml", PIZZA)
    result = parley("profiles", "validate", profile, ROOT / "profiles" / "scenarios")
    assert result.exit_code == 0, result.output  # information, not a problem
    warnings = [line for line in result.output.splitlines() if line.endswith("(warning)")]
    assert warnings == [
        f"{profile}:6:7: user.goals[1]: the offline customer will only state this goal, not act it out "
        "(use `--user MODEL` or a playbook to test it): 'a medium pizza with cheese' (warning)",
        # two conversations (small, large), one warning: the goal as the first one says it
        f"{profile}:11:7: user.goals[3]: the offline customer will only state this goal, not act it out "
        "(use `--user MODEL` or a playbook to test it): 'ask whether the shop delivers a small one on Sundays' (warning)",
        f"{profile}:16:3: expect.judge: the offline judge reads no rubric, so this check is not run: it {NEEDS_LLM_JUDGE} (warning)",
        f"{ROOT / 'profiles' / 'scenarios' / 'sample_scenarios.json'}: the offline judge does not read the evaluator prompt "
        f"{ROOT / 'profiles' / 'scenarios' / 'templates' / 'evaluator.txt'}, so it is not run: it {NEEDS_LLM_JUDGE} (warning)",
    ]
    assert result.output.splitlines()[-1].startswith("ok: 2 files checked")


def test_a_role_given_a_model_is_not_warned_about(tmp_path):
    specs = load_specs([write(tmp_path, "pizza.yaml", PIZZA)], seed=0).specs
    assert len(offline_limits(specs)) == 3
    judged = offline_limits(specs, judge_model="openai/gpt-4o-mini")
    assert len(judged) == 2 and all("offline customer" in line for line in judged)
    simulated = offline_limits(specs, user_model="openai/gpt-4o-mini")
    assert len(simulated) == 1 and "rubric" in simulated[0]
    # `--user profile`: the profile's own llm plays the customer (Sensei's default, openai/gpt-4o)
    assert offline_limits(specs, user_model="profile") == simulated


def test_playbooks_and_acted_out_goals_give_no_warning():
    specs = load_specs([ROOT / "profiles" / "playbooks", ROOT / "profiles" / "change_of_mind.yaml"], seed=0).specs
    assert specs and offline_limits(specs) == [] and offline_limits_by_file(specs) == []


def test_run_names_a_few_files_then_counts_the_rest(tmp_path):
    for n in range(5):
        write(tmp_path, f"p{n}.yaml", f"test_name: pizza_{n}\nuser:\n  role: r\n  goals:\n    - a pizza with cheese\n")
    lines = offline_limits_by_file(load_specs([tmp_path], seed=0).specs)
    assert [line.split(": ")[0] for line in lines[:3]] == [str(tmp_path / f"p{n}.yaml") for n in range(3)]
    assert lines[3] == "and 2 more files with parts the offline roles will not read (`parley profiles validate PATH` lists every one)"


def test_run_warns_once_per_file_before_the_batch_and_the_verdict_carries_the_note(tmp_path):
    profile = write(tmp_path, "pizza.yaml", PIZZA)
    db = tmp_path / "parley.db"
    result = parley("run", profile, "--db", db, "--trials", "2")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [  # 2 conversations x 2 trials, one file: one line, before the batch starts
        f"warning: {profile}: the offline judge reads no rubric (expect.judge): it {NEEDS_LLM_JUDGE}; the offline customer "
        "will only state 2 goals, not act them out (use `--user MODEL` or a playbook to test them) "
        f"(`parley profiles validate {profile}` says where)"
    ]
    batch_id = re.search(r"batch ([0-9a-f]{32}) started", result.stdout).group(1)

    with Store.open(db) as store:
        stored = list(store.iter_conversations(batch_id))
    assert {tuple(s.conversation.metadata["goals_only_stated"]) for s in stored} == {
        ("a medium pizza with cheese", "ask whether the shop delivers a small one on Sundays"),
        ("a medium pizza with cheese", "ask whether the shop delivers a large one on Sundays"),
    }
    shown = parley("sessions", "show", stored[0].conversation.id, "--db", db)
    assert shown.exit_code == 0, shown.output
    note = [line.strip() for line in shown.output.splitlines() if line.strip().startswith("note: ")]
    assert note == [
        "note: the offline customer only stated these 2 goals, it did not act them out (use `--user MODEL` or a playbook "
        f'to test them): "a medium pizza with cheese"; "ask whether the shop delivers a {stored[0].spec.variables["size"]} one on Sundays"'
    ]

    report = (tmp_path / "reports" / f"{batch_id}.md").read_text(encoding="utf-8")
    assert "## Goals only stated" in report
    assert "| pizza_and_order#0 | 2 | a medium pizza with cheese; ask whether the shop delivers a small one on Sundays |" in report


def test_single_shows_the_note_with_the_verdict(tmp_path):
    profile = write(tmp_path, "pizza.yaml", PIZZA)
    result = parley("run", profile, "--db", tmp_path / "parley.db", "--single", "0")
    assert result.exit_code == 0, result.output
    assert "  note: the offline customer only stated these 2 goals" in result.stdout
    # and the customer said them in its own words
    assert "Could you tell me whether the shop delivers a small one on Sundays?" in result.stdout


def test_a_conversation_whose_goals_are_all_acted_out_carries_no_note(tmp_path):
    db = tmp_path / "parley.db"
    result = parley("run", ROOT / "profiles" / "change_of_mind.yaml", "--db", db)
    assert result.exit_code == 0, result.output
    assert "warning:" not in result.stderr
    with Store.open(db) as store:
        [stored] = list(store.iter_conversations(store.list_batches()[0].batch.id))
    assert "goals_only_stated" not in stored.conversation.metadata


@pytest.fixture
def stated_db(db_path, tmp_path):
    """The app's database holding one conversation whose offline customer only stated goals
    (run before the test's event loop: parley run has its own, and its signal handlers)."""
    ran = parley("run", write(tmp_path, "pizza.yaml", PIZZA), "--db", db_path, "--single", "1")
    assert ran.exit_code == 0, ran.output
    return db_path


async def test_the_apps_session_detail_shows_the_note(stated_db):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#sessions-table").focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        verdict = str(app.screen.query_one("#detail-verdict").render())
        assert "Note: the offline customer only stated these 2 goals, it did not act them out" in verdict
        assert "a large one on Sundays" in verdict
