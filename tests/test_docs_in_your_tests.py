"""The page "parley in your tests" (docs/in-your-tests.md) runs as written: its Python files are written where a user
would keep them, and its commands (`python check_bot.py`, `parley run ...`, `pytest --parley ...`)
run there in processes of their own, each doing what the page says it does."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from parley.core.store import Store
from tests.docs_examples import output_pattern, read_blocks
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
FILE_NAME = re.compile(r"^# (\S+\.(?:py|yaml)): ")
DEV_ONLY_PLUGINS = ("-p", "no:schemathesis", "-p", "no:hypothesispytest", "-p", "no:textual-snapshot", "-p", "no:syrupy")


PAGE = ROOT / "docs" / "in-your-tests.md"


def section() -> str:
    return PAGE.read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(section()) if lang == language]


def commands() -> list[list[str]]:
    """Each command line of the section's shell blocks, its comment dropped."""
    lines = [line.split("   #")[0].strip() for body in blocks("sh") for line in body.splitlines()]
    return [shlex.split(line) for line in lines if line]


def run_as_user(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`parley ...`, `pytest ...` or `python ...` as the user types it, with this environment's Python."""
    program = {
        "parley": [sys.executable, "-m", "parley.tui.cli.main"],
        # parley's plugin loads by its entry point, as in a user's project; this environment's own
        # test plugins, which a user's has not, are left out (their start-up is seconds a run)
        "pytest": [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *DEV_ONLY_PLUGINS],
    }
    command = program.get(argv[0], [sys.executable] if argv[0] == "python" else [argv[0]]) + argv[1:]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARLEY_", "PYTEST_"))}
    env["PARLEY_DB"] = str(cwd / "sessions" / "parley.db")  # `parley run` without --db: the user's own folder
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=PATIENCE_S * 3)


def test_the_page_has_a_bot_an_api_script_a_test_file_and_their_commands():
    names = [FILE_NAME.match(body).group(1) for body in blocks("python")]  # type: ignore[union-attr]
    assert names == ["my_bot.py", "check_bot.py", "test_my_bot.py"]
    assert [FILE_NAME.match(body).group(1) for body in blocks("yaml")] == ["track_then_cancel.yaml", "rules/short.yaml"]  # type: ignore[union-attr]
    bot = blocks("python")[0]
    assert len(bot.strip().splitlines()) <= 20 and "tools." in bot  # the short bot using the order API's tools
    assert "checkpoint([" in blocks("python")[1] and "- judge:" in blocks("yaml")[0]  # a checkpoint in code and in a playbook
    assert [c[:2] for c in commands()] == [["parley", "run"], ["pytest", "--parley"], ["pytest", "--parley"], ["pytest", "--parley"]]


def test_the_pages_code_runs_as_written(tmp_path: Path):
    for body in blocks("python") + blocks("yaml"):
        path = tmp_path / FILE_NAME.match(body).group(1)  # type: ignore[union-attr]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    (tmp_path / "profiles").symlink_to(ROOT / "profiles")
    db = tmp_path / "sessions" / "parley.db"

    [session] = [block for block in read_blocks(PAGE) if block.kind == "console"]
    [(command, shown)] = session.sessions()  # `python check_bot.py` and what the page says it prints
    api = run_as_user(shlex.split(command), tmp_path)
    assert api.returncode == 0, api.stdout + api.stderr
    assert output_pattern(shown).fullmatch(api.stdout.rstrip("\n")), api.stdout

    ran = {}
    for argv in commands():
        done = run_as_user(argv, tmp_path)
        ran[" ".join(argv)] = done
        assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    suite = ran["parley run profiles/ --bot python:my_bot:answer"]
    assert suite.returncode in (0, 1), suite.stderr  # 1: the short bot fails some of the shipped checks, a verdict
    mine = ran["pytest --parley test_my_bot.py --parley-db=sessions/parley.db"]
    assert mine.returncode == 0 and "2 passed" in mine.stdout, mine.stdout[-3000:]
    shipped = ran["pytest --parley profiles/ --junitxml parley.xml"]
    assert shipped.returncode == 0 and re.search(r"= 22 passed, 5 skipped in ", shipped.stdout), shipped.stdout[-3000:]
    assert (tmp_path / "parley.xml").is_file()
    ruled = ran["pytest --parley track_then_cancel.yaml profiles/ --parley-rules rules/"]
    # the rule holds on every conversation: a check asked for, so the suite's unverified ones pass too
    assert ruled.returncode == 0 and re.search(r"= 28 passed in ", ruled.stdout), ruled.stdout[-3000:]

    with Store.open(db, read_only=True) as store:
        rows = store.list_batches()
        bots = [row.batch.options.models.bot for row in reversed(rows)]
        assert bots == ["python:my_bot:answer", "python:my_bot:answer", "offline", "offline", "offline"]  # type: ignore[comparison-overlap]
        assert [row.batch.sources for row in reversed(rows)][:2] == [["python"], ["profiles"]]
        for row in rows:
            conversations = list(store.iter_conversations(row.batch.id))
            assert conversations and all(c.conversation.stop_reason != "bot_error" for c in conversations)
        ruled_batch = rows[0].batch
        assert ruled_batch.options.rules == str(tmp_path / "rules")
        [playbook] = [c for c in store.iter_conversations(ruled_batch.id) if c.spec.name == "track_then_cancel"]
        at_steps = {c.name: c.outcome for c in playbook.verdict.checks if c.name.startswith("at step ")}  # type: ignore[union-attr]
        assert at_steps == {
            "at step 2: The bot says where the parcel is and who carries it": "not_run",
            "at step 4: The bot asks the customer to confirm before it cancels anything": "not_run",
        }
