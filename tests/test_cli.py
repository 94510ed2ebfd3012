"""The `parley` command line as a person meets it: help text, exit codes, one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from parley.core.errors import ParleyError
from parley.tui.cli.main import cli

EXPECTED_COMMANDS = [
    "chat",
    "run",
    "report",
    "summarise",
    "init",
    "batches",
    "compare",
    "mutate",
    "rescore",
    "judge",
    "redteam",
    "profiles",
    "sessions",
    "rules",
    "mockapi",
    "serve",
    "serve-bot",
    "worlds",
    "import",
    "tau2",
    "submit",
    "status",
    "fetch",
]


def test_help_lists_every_command_with_one_line_each():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    commands_section = result.output.split("Commands:")[1]
    lines = [line for line in commands_section.splitlines() if line.strip()]
    listed = [line.split()[0] for line in lines]
    assert listed == EXPECTED_COMMANDS
    for line in lines:
        name, _, summary = line.strip().partition(" ")
        assert summary.strip(), f"{name} has no one-line description"


HELP_CHILD = """
import contextlib, io, json, sys
sys.argv = ["parley", "--help"]
from parley.tui.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps({"help": out.getvalue(), "modules": sorted(m for m in sys.modules if m.split(".")[0] == "parley"),
                  "libraries": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def test_help_imports_no_command_and_few_of_parleys_modules():
    """`parley --help` reads each command's line from the registry: it imports no command's
    module (a command added to parley without its line in COMMANDS fails here), and under 15 of
    parley's modules in all, so it stays instant as commands are added."""
    import json

    from parley.tui.cli.main import COMMANDS

    child = subprocess.run([sys.executable, "-c", HELP_CHILD], capture_output=True, text=True, timeout=60, check=True)
    shown = json.loads(child.stdout)
    command_modules = {listed.target.split(":")[0] for listed in COMMANDS.values() if listed.target}
    assert not command_modules & set(shown["modules"]), sorted(command_modules & set(shown["modules"]))
    assert len(shown["modules"]) < 20, shown["modules"]
    heavy = {"pydantic", "rich", "textual", "httpx", "yaml", "openai", "fastapi"}
    assert not heavy & set(shown["libraries"]), sorted(heavy & set(shown["libraries"]))
    commands = shown["help"].split("Commands:")[1].splitlines()
    lines = dict(line.split(None, 1) for line in commands if line.strip())
    for name, listed in COMMANDS.items():  # each line as the registry has it (shortened only where too long)
        assert listed.summary.startswith(lines[name].removesuffix("...")), (name, lines[name])
    assert CliRunner().invoke(cli, ["run", "--help"]).output.count("Run a batch of simulated conversations") == 1


def test_a_client_command_with_no_service_says_so_in_one_line():
    result = CliRunner().invoke(cli, ["status", "0123456789ab", "--api-url", "http://127.0.0.1:9"])
    assert result.exit_code == 1
    assert result.output.strip() == "error: no parley service at http://127.0.0.1:9 (is `parley serve` running?)"


def test_mockapi_rejects_a_bad_date_with_a_clear_message():
    result = CliRunner().invoke(cli, ["mockapi", "--today", "21/11/2026"])
    assert result.exit_code == 2
    assert "use YYYY-MM-DD" in result.output
    assert "Traceback" not in result.output


def test_parley_errors_become_one_line_and_exit_1(monkeypatch):
    def broken_serve(**kwargs):
        raise ParleyError("the database file is locked by another process")

    from parley.mockapi import server as mockapi_server

    monkeypatch.setattr(mockapi_server, "serve", broken_serve)
    result = CliRunner().invoke(cli, ["mockapi"])
    assert result.exit_code == 1
    assert result.output.strip() == "error: the database file is locked by another process"


def test_help_does_not_import_heavy_modules():
    # `parley --help` must stay instant: the UI toolkit, the web stack and the model SDK load
    # only when a command needs them.
    code = (
        "import sys; from parley.tui.cli.main import cli\n"
        "try:\n    cli(['--help'], standalone_mode=False)\nexcept SystemExit: pass\n"
        "print('loaded:' + ','.join(m for m in ('textual', 'fastapi', 'openai', 'uvicorn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "loaded:"


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "parley"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "mockapi" in out.stdout
