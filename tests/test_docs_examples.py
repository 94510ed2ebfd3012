"""Every example of the README and of docs/ is true: each code block is run as written (commands
in the page's own folder, files written where the page puts them, Python snippets run), or is
marked as not run with the reason; a command's output the page shows is matched exactly, but for
the documented placeholders (`<batch id>`...). tests/docs_examples.py says how a page is read."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs_examples import PAGES, PLACEHOLDERS, ROOT, Block, output_pattern, read_blocks, serves

# Pages whose examples a test of their own runs, asserting more than that each command worked.
RUN_ELSEWHERE = {"docs/in-your-tests.md": "tests/test_docs_in_your_tests.py"}
RUNNABLE = [
    page
    for page in PAGES
    if page.relative_to(ROOT).as_posix() not in RUN_ELSEWHERE
    and any(b.kind in ("command", "console", "snippet") for b in read_blocks(page))
]


def name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in read_blocks(page)]


def test_every_code_block_is_run_or_says_why_not():
    unclassified = [f"{b.where}: ```{b.language}" for b in all_blocks() if b.kind == "unclassified"]
    assert not unclassified, "neither run nor marked `<!-- not run: REASON -->`:\n" + "\n".join(unclassified)
    empty_reasons = [b.where for b in all_blocks() if b.not_run is not None and len(b.not_run.split()) < 3]
    assert not empty_reasons, f"a reason in words, please: {empty_reasons}"
    for page, elsewhere in RUN_ELSEWHERE.items():
        assert (ROOT / elsewhere).is_file() and page in (ROOT / elsewhere).read_text(encoding="utf-8")


def test_each_file_a_page_writes_is_used_by_one_of_its_commands():
    for page in PAGES:
        blocks = read_blocks(page)
        used = " ".join(" ".join(b.commands()) for b in blocks if b.kind in ("command", "console"))
        code = " ".join(b.body for b in blocks if b.kind in ("file", "snippet"))
        for block in blocks:
            if block.kind != "file":
                continue
            file = str(block.file_name)
            first = file.split("/")[0]
            module = re.escape(file[:-3])
            # a module imported by the page's code, or named as parley names Python code: `python:MODULE:NAME`, `MODULE:NAME`
            imported = file.endswith(".py") and re.search(rf"\b(from|import) {module}\b|\b{module}:\w", code + " " + used)
            assert file in used or f"{first}/" in used or imported, f"{block.where}: {file} is written but nothing on the page uses it"


def test_exit_codes_given_match_the_commands():
    for block in all_blocks():
        if block.exits is not None:
            ending = [command for command in block.commands() if serves(command) is None]  # a server runs until the block ends
            assert block.kind == "command" and len(block.exits) == len(ending), f"{block.where}: one exit code per command"


def test_output_patterns_hold_the_placeholders_and_nothing_else_loosely():
    pattern = output_pattern("batch <batch id> in <seconds> s (x+y) [1/2]")
    assert pattern.fullmatch("batch " + "a" * 32 + " in 0.31 s (x+y) [1/2]")
    assert not pattern.fullmatch("batch " + "a" * 31 + " in 0.31 s (x+y) [1/2]")
    assert not pattern.fullmatch("batch " + "a" * 32 + " in 0.31 s (xxy) [1/2]")
    assert set(PLACEHOLDERS) <= set((ROOT / "docs" / "contributing.md").read_text(encoding="utf-8").split("`"))


def network_namespace() -> list[str]:
    """`unshare -n` with its loopback up, where this machine allows it: the ports a page names are its own."""
    if shutil.which("unshare") and shutil.which("ip"):
        probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"], capture_output=True)
        if probe.returncode == 0:
            return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    return []


@pytest.mark.parametrize("page", RUNNABLE, ids=name)
def test_the_pages_examples_run_as_written(page: Path, tmp_path: Path):
    done = subprocess.run(
        [*network_namespace(), sys.executable, str(ROOT / "tests" / "docs_examples.py"), str(page), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    problems = []
    for ran in json.loads(done.stdout):
        where = f"{ran['where']}: `{ran['command']}`"
        if "Traceback" in ran["output"]:
            problems.append(f"{where} printed a traceback:\n{ran['output'][-2000:]}")
        elif ran["expected_exit"] == -1:
            problems.append(f"{where} should serve until stopped, but exited {ran['exit_code']}:\n{ran['output'][-2000:]}")
        elif ran["exit_code"] != ran["expected_exit"]:
            problems.append(f"{where} exited {ran['exit_code']}, the page says {ran['expected_exit']}:\n{ran['output'][-2000:]}")
        elif ran["shown"] is not None and not output_pattern(ran["shown"].rstrip("\n")).fullmatch(ran["output"].rstrip("\n")):
            problems.append(f"{where} printed what the page does not show:\n--- the page\n{ran['shown']}\n--- the command\n{ran['output']}")
    assert not problems, "\n\n".join(problems)
