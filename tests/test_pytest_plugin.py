"""parley's pytest plugin, run as a user runs it: pytest in a process of its own. Inert without
`--parley`; with it, the shipped suite's specs are test items whose outcomes map honestly
(pass, fail with the checks and the last turns, skip with the reason, error); the session is one
stored batch (one per xdist worker); the `parley` fixture runs hand-written conversations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from parley.core.library import load_specs
from parley.core.store import Store
from parley.tui.pytest_plugin.items import pytest_result
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"


def pytest_run(*args: str, cwd: Path = ROOT, autoload: bool = False, plugins: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """pytest in a process of its own. Without `autoload`, only parley's plugin (and `plugins`) are
    loaded, as in a project that has parley and nothing else: the dev environment's other plugins
    (hypothesis, schemathesis...) take seconds to import and are not what is tested here."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARLEY_", "PYTEST_"))}
    extra: list[str] = []
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        for plugin in ("parley.tui.pytest_plugin", *plugins):
            extra += ["-p", plugin]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *extra, *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=PATIENCE_S * 3)


def batches(db: Path) -> list[tuple[str, list[str], int, int]]:
    with Store.open(db, read_only=True) as store:
        return [(row.batch.status, row.batch.sources, row.batch.planned, row.summary.done) for row in store.list_batches()]  # type: ignore[union-attr]


def test_a_bare_pytest_collects_no_profile_and_the_plugin_is_installed(tmp_path):
    (tmp_path / "track.yaml").write_text((PROFILES / "track_shipped_order.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "scenarios.json").write_text("[]", encoding="utf-8")
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    # one pytest with every installed plugin (their start-up is most of the time): parley's is
    # among them, found by its entry point, and collects nothing but the test module
    bare = pytest_run("--collect-only", str(tmp_path), cwd=tmp_path, autoload=True)
    assert bare.returncode == 0, bare.stdout + bare.stderr
    [plugins] = [line for line in bare.stdout.splitlines() if line.startswith("plugins: ")]
    assert "parley-" in plugins, plugins
    collected = [line.strip() for line in bare.stdout.splitlines() if line.strip().startswith("<")]
    assert collected == ["<Dir " + tmp_path.name + ">", "<Module test_plain.py>", "<Function test_plain>"], bare.stdout
    asked = pytest_run("--collect-only", "-q", "--parley", str(tmp_path), cwd=tmp_path)
    assert "track.yaml::track_shipped_order#0[1]" in asked.stdout and "test_plain.py::test_plain" in asked.stdout


def test_the_shipped_suite_collects_every_spec_and_none_fails_offline(tmp_path):
    db, junit = tmp_path / "p.db", tmp_path / "junit.xml"
    collected = pytest_run("--collect-only", "-q", "--parley", "profiles/")
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert sorted(i.split("::")[1] for i in ids) == sorted(f"{s.spec_id}[1]" for s in load_specs(PROFILES))
    assert "profiles/track_shipped_order.yaml::track_shipped_order#0[1]" in ids and len(ids) == 27

    done = pytest_run("--parley", "profiles/", "--parley-db", str(db), f"--junitxml={junit}", "-rs")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "22 passed, 5 skipped" in done.stdout
    assert "calm_track_shipped#0 trial 1: unverified: nothing about the bot was checked" in done.stdout  # the reason
    [(status, sources, planned, stored)] = batches(db)
    assert (status, sources, planned, stored) == ("completed", ["python"], 27, 27)
    batch_id = Store.open(db, read_only=True).latest_batch_id()
    assert f"parley: batch {batch_id} (completed): 27 of 27 conversations stored" in done.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "27",
        "0",
        "0",
        "5",
    )


def test_a_broken_bot_fails_with_its_checks_and_last_turns(tmp_path):
    junit = tmp_path / "junit.xml"
    done = pytest_run(
        "--parley", "profiles/playbooks/", "--parley-bot", "python:tests.python_bots:lying_bot", "--parley-db", str(tmp_path / "p.db"),
        f"--junitxml={junit}",
    )  # fmt: skip
    assert done.returncode == 1 and "7 failed" in done.stdout, done.stdout[-3000:]
    assert "playbook_cancel_recent_order#0 trial 1: failed: a check about the bot failed" in done.stdout
    assert "- fail: claims match actions:" in done.stdout and "Last turns:" in done.stdout
    assert "  bot: I have cancelled ORD-1002 for you." in done.stdout
    assert "Traceback" not in done.stdout  # the explanation, not the plugin's code
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "7"


@pytest.mark.parametrize(
    ("outcome", "plain", "strict"),
    [
        ("passed", "passed", "passed"),
        ("failed", "failed", "failed"),
        ("bot_error", "failed", "failed"),
        ("unverified", "skipped", "failed"),
        ("user_fault", "skipped", "failed"),
        ("cancelled", "skipped", "skipped"),
        ("infrastructure_error", "error", "error"),
        ("user_error", "error", "error"),
        ("evaluation_error", "error", "error"),
        ("unevaluated", "error", "error"),
    ],
)
def test_each_outcome_maps_to_one_pytest_result(outcome, plain, strict):
    assert (pytest_result(outcome, strict=False), pytest_result(outcome, strict=True)) == (plain, strict)


def test_strict_fails_what_nothing_checked_as_parley_run_strict_does(tmp_path):
    done = pytest_run("--parley", "profiles/scenarios/", "--parley-strict", "--parley-db", str(tmp_path / "p.db"))
    assert done.returncode == 1 and "5 failed" in done.stdout, done.stdout[-2000:]
    assert "unverified: nothing about the bot was checked" in done.stdout


def test_a_session_that_cannot_store_its_batch_errors_every_item_with_the_reason(tmp_path):
    (tmp_path / "a_file").write_text("not a folder")
    done = pytest_run(
        "--parley", "profiles/playbooks/", "--parley-db", str(tmp_path / "a_file" / "p.db"), f"--junitxml={tmp_path / 'j.xml'}"
    )
    assert done.returncode == 1 and "7 errors" in done.stdout, done.stdout[-2000:]
    assert "parley could not start this session's batch: cannot create the database" in done.stdout
    assert "Traceback" not in done.stdout
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "7"


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--parley-trials", "0"], "--parley-trials: 0 is not in the range 1<=x<=1000."),
        (["--parley-timeout", "nan"], "--parley-timeout: 'nan' is not a finite number."),
        (["--parley-concurrency", "inf"], "--parley-concurrency: 'inf' is not a valid integer range."),
        (
            ["--parley-bot", "python:tests.python_bots:nope"],
            "--parley-bot: python:tests.python_bots:nope: the module tests.python_bots has no 'nope'",
        ),
        (["--parley-judge", "gpt-4o"], "--parley-judge: "),
    ],
)
def test_a_bad_option_is_a_usage_error_naming_it(option, said):
    done = pytest_run("--parley", "profiles/playbooks/", *option)
    assert done.returncode == 4, done.stdout + done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_trials_make_an_item_each(tmp_path):
    done = pytest_run("--collect-only", "-q", "--parley", "profiles/playbooks/track_shipped_order.yaml", "--parley-trials", "3")
    assert [line.split("::")[1] for line in done.stdout.splitlines() if "::" in line] == [
        "playbook_track_shipped_order#0[1]",
        "playbook_track_shipped_order#0[2]",
        "playbook_track_shipped_order#0[3]",
    ]


def test_a_file_with_problems_is_a_collection_error_at_its_lines(tmp_path):
    (tmp_path / "bad.yaml").write_text("name: bad\nsteps:\n  - usr: hello\n", encoding="utf-8")
    done = pytest_run("--parley", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert f"{tmp_path / 'bad.yaml'}:3:5: steps[0].usr: unknown step kind 'usr'; did you mean 'user'?" in done.stdout


def test_two_ci_runs_are_two_batches_parley_compares(tmp_path):
    db = tmp_path / "p.db"
    for _ in range(2):
        done = pytest_run("--parley", "profiles/playbooks/", "--parley-db", str(db))
        assert done.returncode == 0, done.stdout[-2000:]
    compared = subprocess.run(
        [sys.executable, "-m", "parley.tui.cli.main", "compare", "latest~1", "latest", "--db", str(db), "--fail-on-regression"],
        capture_output=True,
        text=True,
    )
    assert compared.returncode == 0 and "No change" in compared.stdout, compared.stdout + compared.stderr


def test_under_xdist_each_worker_stores_its_own_batch(tmp_path):
    db = tmp_path / "p.db"
    done = pytest_run("-n", "2", "--parley", "profiles/playbooks/", "--parley-db", str(db), plugins=("xdist.plugin",))
    assert done.returncode == 0 and "7 passed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    named = [line for line in done.stdout.splitlines() if line.startswith("parley: worker gw")]
    assert len(named) == 2
    stored = batches(db)
    assert (
        len(stored) == 2
        and sum(done for _, _, _, done in stored) == 7
        and all(s == ("completed", ["python"]) for s, _ in [(b[:2], 0) for b in stored])
    )
    assert {line.split("batch ")[1].split(" ")[0] for line in named} == {row for row in _ids(db)}


def _ids(db: Path) -> list[str]:
    with Store.open(db, read_only=True) as store:
        return [row.id for row in store.list_batches()]


FIXTURE_TESTS = """
import datetime
from parley.api import say, expect_tool

TODAY = datetime.date(2026, 11, 21)


def my_bot(messages, tools):
    if "ORD-1003" in messages[-1]["content"]:
        tracking = tools.track_order("ORD-1003")
        return f"ORD-1003 is {tracking.data['status']}."
    return "Which order is it about?"


async def my_async_bot(messages, tools):
    tracking = await tools.track_order("ORD-1003")
    return f"ORD-1003 is {tracking.data['status']}."


def test_sync(parley):
    result = parley.converse(bot=my_bot, goals=["track order ORD-1003"], tools_called=["track_order"], today=TODAY)
    assert result.passed, result.explain()


async def test_async(parley):
    result = await parley.aconverse(bot=my_async_bot, steps=[say("Where is ORD-1003?"), expect_tool("track_order")], today=TODAY)
    second = await parley.aconverse(bot=my_async_bot, steps=[say("And now?")], today=TODAY)
    assert result.passed and second.reply == "ORD-1003 is shipped.", result.explain()


def test_bad_argument(parley):
    parley.converse(goals=["x"], personality="nobody")
"""


def test_the_fixture_runs_hand_written_conversations_in_the_session_batch(tmp_path):
    (tmp_path / "test_mine.py").write_text(FIXTURE_TESTS, encoding="utf-8")
    db = tmp_path / "p.db"
    done = pytest_run(
        "--parley", str(PROFILES / "playbooks"), str(tmp_path), "--rootdir", str(tmp_path), "--parley-db", str(db), "-o", "asyncio_mode=auto",
        cwd=tmp_path, plugins=("pytest_asyncio.plugin",),
    )  # fmt: skip
    assert "1 failed, 9 passed" in done.stdout, done.stdout[-3000:]
    assert "parley: conversation 'test_mine.py::test_bad_argument': personality: no shipped personality 'nobody'" in done.stdout
    [(status, sources, planned, stored)] = batches(db)
    assert (status, sources, planned, stored) == ("completed", ["python"], 10, 10)  # 7 playbooks, 3 by hand, one batch
    with Store.open(db, read_only=True) as store:
        ids = {s.spec.spec_id: s for s in store.iter_conversations(store.latest_batch_id() or "")}
    assert {"test_mine.py::test_sync#0", "test_mine.py::test_async#0", "test_mine.py::test_async#1"} <= set(ids)
    assert ids["test_mine.py::test_sync#0"].conversation.bot_model == "python:test_mine:my_bot"
    assert ids["test_mine.py::test_sync#0"].spec.source == "test_mine.py"


def test_json_of_batches_list_names_the_python_source(tmp_path):
    db = tmp_path / "p.db"
    pytest_run("--parley", "profiles/playbooks/track_shipped_order.yaml", "--parley-db", str(db))
    listing = subprocess.run(
        [sys.executable, "-m", "parley.tui.cli.main", "batches", "list", "--json", "--db", str(db)], capture_output=True, text=True
    )
    assert [b["sources"] for b in json.loads(listing.stdout)] == [["python"]]


ONE_TEST = """
def my_bot(messages):
    return "ORD-1003 has shipped with UPS."


def test_tracking(parley):
    result = parley.converse(bot=my_bot, goals=["track order ORD-1003"], says=["UPS"])
    assert result.passed, result.explain()
"""


def test_an_option_value_never_becomes_a_test_path_and_ids_do_not_move(tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "dbs"
    project.mkdir()
    elsewhere.mkdir()
    (project / "test_my_bot.py").write_text(ONE_TEST, encoding="utf-8")
    db = elsewhere / "parley.db"
    first = pytest_run("--parley", "test_my_bot.py", f"--parley-db={db}", cwd=project)
    assert "1 passed" in first.stdout and f"rootdir: {project}" in first.stdout, first.stdout[-2000:]
    # the README's form once the database exists: pytest would take the path for a test path
    # (its rootdir the common folder of both); the run says so and stops, nothing is stored
    spaced = pytest_run("--parley", "test_my_bot.py", "--parley-db", str(db), cwd=project)
    assert spaced.returncode == 4
    assert f"--parley-db {db}: pytest took this value for a test path" in spaced.stderr
    assert f"write --parley-db={db}" in spaced.stderr
    second = pytest_run("--parley", "test_my_bot.py", f"--parley-db={db}", "--rootdir", str(tmp_path), cwd=project)
    assert "1 passed" in second.stdout, second.stdout[-2000:]
    with Store.open(db, read_only=True) as store:
        ids = [{s.spec.spec_id for s in store.iter_conversations(row.id)} for row in store.list_batches()]
    assert ids == [{"test_my_bot.py::test_tracking#0"}] * 2  # the same id, whatever pytest's rootdir was
    compared = subprocess.run(
        [sys.executable, "-m", "parley.tui.cli.main", "compare", "latest~1", "latest", "--db", str(db)], capture_output=True, text=True
    )
    assert "Compared on the 1 conversations (1 specs) both batches ran" in compared.stdout


def test_a_python_bot_that_fails_to_import_is_one_line_and_its_traceback_goes_to_parley_log(tmp_path):
    # On main pytest printed the module's traceback above parley's one-line error.
    (tmp_path / "broken_bot.py").write_text("raise RuntimeError('missing configuration')\n\ndef bot(messages):\n    return 'hi'\n")
    (tmp_path / "track.yaml").write_text((PROFILES / "track_shipped_order.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    done = pytest_run(
        "--parley", "track.yaml", "--parley-bot", "python:broken_bot:bot", "--parley-db", str(tmp_path / "p.db"), cwd=tmp_path
    )
    assert done.returncode == 4, done.stdout + done.stderr
    said = done.stderr.strip()
    assert said == (
        "ERROR: --parley-bot: python:broken_bot:bot: importing broken_bot raised RuntimeError: missing configuration "
        "(the traceback is in parley.log)"
    )
    assert "Traceback" not in done.stdout + done.stderr
    assert "raise RuntimeError('missing configuration')" in (tmp_path / "parley.log").read_text(encoding="utf-8")
