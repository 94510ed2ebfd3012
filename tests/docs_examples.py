"""The documentation's code blocks, read and run as a user would run them.

Every fenced block of the README and of docs/ is one of:
- a command block (```sh): each line a command, run in order in the page's own folder (a
  continued line, ending in a backslash, is one command; `# ...` is bash's comment);
- a session (```console): `$ command` lines, each followed by the output the page shows, matched
  exactly but for the placeholders of PLACEHOLDERS;
- a file (```python, ```yaml or ```json whose first line is `# NAME.EXT: what it is`): written to
  NAME in the page's folder when the reader reaches it, and used by a command of the page;
- a Python snippet (```python without a file name): run with the page's folder as its working one;
- text (```text, or no language): not code;
- or marked as not run, with the reason, by an HTML comment on the line before it:
  `<!-- not run: REASON -->`.
`<!-- exits: 0 1 -->` before a command block gives each command's exit code (default 0).

A page's blocks run in one fresh folder holding the shipped suite as `profiles/`, its database
the default `sessions/parley.db` there, with this environment's `parley`, `python` and `pytest`
first on PATH and no key or PARLEY_ setting of the caller's. A command that serves (`parley
serve`, `parley serve-bot`, `parley mockapi`) runs in the background until its block ends, the
next commands of the block talking to it; the page then runs in a network namespace of its own
(`unshare -n`), so the ports the page names are its own. In commands, BATCH_ID, BATCH and NEW
stand for the newest stored batch's id and BASE for the one before it, as the pages say.

Run as a script (`python tests/docs_examples.py PAGE FOLDER`), it runs one page and prints what
each command did as JSON, for tests/test_docs_examples.py.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\S*)\s*$")
MARKER = re.compile(r"^<!-- (not run|exits): (.+?) -->$")
FILE_NAME = re.compile(r"^# (\S+\.(?:py|yaml|yml|json)): ")
SERVERS = {("parley", "serve"): 5000, ("parley", "serve-bot"): 5005, ("parley", "mockapi"): 8000}
COMMAND_TIMEOUT_S = 300

# What varies from run to run, written on a page as these placeholders; everything else is
# matched exactly.
PLACEHOLDERS = {
    "<batch id>": r"[0-9a-f]{32}",
    "<seconds>": r"[0-9]+(?:\.[0-9]+)?",
    "<rate>": r"[0-9]+(?:\.[0-9]+)?",
    "<path>": r"\S+",
}


@dataclass
class Block:
    """One fenced block of a page: where it starts, its language, its text and its marker."""

    page: str
    line: int
    language: str
    body: str
    not_run: str | None = None
    exits: list[int] | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def file_name(self) -> str | None:
        found = FILE_NAME.match(self.body)
        return found.group(1) if found and self.language in ("python", "yaml", "json") else None

    @property
    def kind(self) -> str:
        """command, console, file, snippet, text, or not run."""
        if self.not_run is not None:
            return "not run"
        if self.language in ("", "text"):
            return "text"
        if self.language == "sh":
            return "command"
        if self.language == "console":
            return "console"
        if self.file_name:
            return "file"
        if self.language == "python":
            return "snippet"
        return "unclassified"

    def commands(self) -> list[str]:
        """A command block's commands; a console block's `$` lines."""
        if self.language == "console":
            return [line[2:] for line in self.body.splitlines() if line.startswith("$ ")]
        joined = self.body.replace("\\\n", " ")
        return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]

    def sessions(self) -> list[tuple[str, str]]:
        """A console block's (command, the output the page shows) pairs."""
        found: list[tuple[str, list[str]]] = []
        for line in self.body.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            elif found:
                found[-1][1].append(line)
        return [(command, "\n".join(lines)) for command, lines in found]


def read_blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, in order, with the marker on the line before it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(ROOT).as_posix()
    blocks: list[Block] = []
    n = 0
    while n < len(lines):
        opened = FENCE.match(lines[n])
        if not opened:
            n += 1
            continue
        end = n + 1
        while end < len(lines) and lines[end] != "```":
            end += 1
        block = Block(name, n + 1, opened.group(1), "\n".join(lines[n + 1 : end]) + "\n")
        before = lines[n - 1] if n > 0 else ""
        marked = MARKER.match(before)
        if marked and marked.group(1) == "not run":
            block.not_run = marked.group(2)
        elif marked:
            block.exits = [int(code) for code in marked.group(2).split()]
        blocks.append(block)
        n = end + 1
    return blocks


def output_pattern(shown: str) -> re.Pattern[str]:
    """The output a page shows as a pattern: its placeholders as what they stand for, the rest literal."""
    names = "|".join(re.escape(name) for name in PLACEHOLDERS)
    parts = re.split(f"({names})", shown)
    return re.compile("".join(PLACEHOLDERS[part] if part in PLACEHOLDERS else re.escape(part) for part in parts))


# ---- running a page (in the process `python tests/docs_examples.py PAGE FOLDER` starts) ----


@dataclass
class Ran:
    """What one command of a page did."""

    where: str
    command: str
    exit_code: int
    output: str
    expected_exit: int = 0
    shown: str | None = None  # a console block's output as the page shows it
    kind: str = "command"
    extra: dict[str, str] = field(default_factory=dict)


def user_environment(folder: Path) -> dict[str, str]:
    """The caller's environment without parley's settings, keys or endpoints, this Python's
    commands first on PATH."""
    dropped = ("PARLEY_", "PYTEST_", "OPENAI_", "OPENROUTER_", "OLLAMA_", "RAY_", "COLUMNS", "LINES")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped) and not k.endswith(("_API_KEY", "_BASE_URL"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as on a terminal
    env["PWD"] = str(folder)
    return env


def batch_ids(folder: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run(["parley", "batches", "list", "--json"], cwd=folder, env=env, capture_output=True, text=True)
    return [row["id"] for row in json.loads(done.stdout or "[]")] if done.returncode == 0 else []


def with_batch_ids(command: str, folder: Path, env: dict[str, str]) -> str:
    if not re.search(r"\b(BATCH_ID|BATCH|NEW|BASE)\b", command):
        return command
    ids = batch_ids(folder, env) + ["(no batch)", "(no batch)"]
    command = re.sub(r"\bBASE\b", ids[1], command)
    return re.sub(r"\b(BATCH_ID|BATCH|NEW)\b", ids[0], command)


def serves(command: str) -> int | None:
    """The port a serving command listens on, or None for a command that ends by itself."""
    words = command.split()
    for (program, sub), port in SERVERS.items():
        if words[:2] == [program, sub]:
            given = re.search(r"--port[ =](\d+)", command)
            return int(given.group(1)) if given else port
    return None


def wait_for_port(port: int, server: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and server.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)


def run_page(page: Path, folder: Path) -> list[Ran]:
    env = user_environment(folder)
    (folder / "profiles").symlink_to(ROOT / "profiles")
    ran: list[Ran] = []
    for block in read_blocks(page):
        if block.kind == "file":
            target = folder / str(block.file_name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body, encoding="utf-8")
        elif block.kind == "snippet":
            done = subprocess.run(
                [sys.executable, "-c", block.body], cwd=folder, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
            )
            ran.append(Ran(block.where, "python (the snippet)", done.returncode, done.stdout + done.stderr, kind="snippet"))
        elif block.kind == "command":
            ran += run_commands(block, folder, env)
        elif block.kind == "console":
            for command, shown in block.sessions():
                done = run_one(with_batch_ids(command, folder, env), folder, env)
                ran.append(Ran(block.where, command, done.returncode, done.stdout, shown=shown, kind="console"))
    return ran


def run_one(command: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )


def run_commands(block: Block, folder: Path, env: dict[str, str]) -> list[Ran]:
    servers: list[subprocess.Popen[bytes]] = []
    ran: list[Ran] = []
    expected = list(block.exits or [])
    try:
        for command in block.commands():
            port = serves(command)
            if port is not None:
                log = open(folder / f"server-{port}.log", "wb")  # noqa: SIM115 - closed with the process
                server = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
                servers.append(server)
                wait_for_port(port, server)
                if server.poll() is not None:
                    ran.append(
                        Ran(block.where, command, server.returncode or 0, (folder / f"server-{port}.log").read_text(), expected_exit=-1)
                    )
                continue
            done = run_one(with_batch_ids(command, folder, env), folder, env)
            ran.append(Ran(block.where, command, done.returncode, done.stdout, expected_exit=expected.pop(0) if expected else 0))
    finally:
        for server in servers:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
    return ran


def main() -> None:
    page, folder = Path(sys.argv[1]), Path(sys.argv[2])
    print(json.dumps([asdict(r) for r in run_page(page, folder)]))


if __name__ == "__main__":
    main()
