"""Text from files, bots and users is data on the terminal: names with Rich markup in them print as
written (a playbook named `closing[/bold]tag` used to end `sessions list` and `profiles expand`
with MarkupError; `[red]…[link=…]` was drawn), and control characters in a bot's reply or error
(clear screen, colours, OSC 8 hyperlinks) are spelled out in every output that reaches a
terminal, while the database keeps the text as it was received. A Rasa-shaped stub on loopback
plays the hostile bot."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from parley.tui.cli.main import cli
from parley.tui.terminal_text import for_rich, one_line, visible
from tests.connector_servers import serve_app

ROOT = Path(__file__).resolve().parent.parent
PLAYBOOK = ROOT / "profiles" / "playbooks" / "track_pending_order.yaml"
NAME = "closing[/bold]tag [red]red[/red] [link=https://evil.example]here[/link] :warning:"
CLEAR = "\x1b[2J\x1b[H"
COLOUR = "\x1b[31mred\x1b[0m"
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
REPLY = f"{CLEAR}Your order ORD-1001 is pending. {COLOUR} {LINK}\u202eevil"
RAW = re.compile("[\x1b\x07\x9b\u202e]")


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def conversation_ids(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM conversations ORDER BY started_at, rowid")]


def hostile_bot() -> FastAPI:
    app = FastAPI()

    @app.post("/ok")
    async def ok(request: Request) -> JSONResponse:
        sender = (await request.json()).get("sender", "s")
        return JSONResponse([{"recipient_id": sender, "text": REPLY}])

    @app.post("/broken")
    async def broken() -> PlainTextResponse:
        return PlainTextResponse(f"{CLEAR}overloaded {COLOUR}", status_code=500)

    @app.get("/{path:path}")
    async def probe(path: str) -> PlainTextResponse:  # the check before launch: anything answers
        return PlainTextResponse("ok")

    return app


@pytest.fixture
def suite(tmp_path) -> Path:
    """A folder whose name and whose playbook's name are Rich markup."""
    folder = tmp_path / "[red]suite"
    folder.mkdir()
    text = PLAYBOOK.read_text(encoding="utf-8").replace("name: playbook_track_pending_order", f"name: {json.dumps(NAME)}")
    (folder / "hostile.yaml").write_text(text, encoding="utf-8")
    return folder


def test_the_module_spells_out_controls_and_escapes_markup():
    assert visible(REPLY) == (
        "\\x1b[2J\\x1b[HYour order ORD-1001 is pending. \\x1b[31mred\\x1b[0m "
        "\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\\\u202eevil"
    )
    assert visible("a\tb\nc") == "a\tb\nc" and one_line("a\tb\r\nc") == "a\\tb\\r\\nc"
    from rich.console import Console

    console = Console(width=200, color_system=None, emoji=False)  # as every console of the CLI (command_io)
    with console.capture() as captured:
        console.print("[bold]" + for_rich(NAME + "\\") + "[/bold]")  # inside markup, as every caller uses it
    assert captured.get() == NAME + "\\\n"


def test_names_with_markup_print_as_written_in_every_listing(suite, tmp_path, monkeypatch):
    db = tmp_path / "p.db"
    monkeypatch.chdir(tmp_path)  # the batch's sources are then "[red]suite", short enough for the table
    suite = Path(suite.name)
    expanded = parley("profiles", "expand", suite)
    assert expanded.exit_code == 0, expanded.output
    assert "closing[/bold]tag" in " ".join(expanded.stdout.split()) and ":warning:" in expanded.stdout
    ran = parley("run", suite, "--db", db)
    assert ran.exit_code == 0, ran.output
    listed = parley("sessions", "list", "--db", db)
    assert listed.exit_code == 0, listed.output
    flat = " ".join(listed.stdout.split())
    assert "closing[/bold]tag" in flat and "[red]red[/red]" in flat and "[link=https://evil.example]" in flat and ":warning:" in flat
    batches = parley("batches", "list", "--db", db)
    assert batches.exit_code == 0 and "[red]suite" in " ".join(batches.stdout.split())
    shown = parley("sessions", "show", conversation_ids(db)[0], "--db", db)
    assert shown.exit_code == 0 and "closing[/bold]tag" in shown.stdout
    validated = parley("profiles", "validate", suite)
    assert validated.exit_code == 0, validated.output


def test_a_hostile_reply_is_spelled_out_on_the_terminal_and_kept_as_received(suite, tmp_path):
    db = tmp_path / "p.db"
    with serve_app(hostile_bot()) as url:
        single = parley("run", suite / "hostile.yaml", "--bot", f"rasa:{url}/ok", "--single", "0", "--db", db)
        assert not RAW.search(single.output), single.output
        assert "bot: \\x1b[2J\\x1b[HYour order ORD-1001 is pending." in single.stdout
        assert "\\x1b]8;;https://evil.example" in single.stdout and "\\u202eevil" in single.stdout
        failed = parley("run", suite, "--bot", f"rasa:{url}/broken", "--db", db)
    assert failed.exit_code == 1, failed.output
    progress = [line for line in failed.stdout.splitlines() if "bot_error" in line and "trial 1:" in line]
    assert progress and "HTTP 500" in progress[0] and "\\x1b[2J\\x1b[Hoverloaded \\x1b[31mred" in progress[0]
    assert not RAW.search(failed.output)
    shown = parley("sessions", "show", conversation_ids(db)[0], "--db", db)  # the --single one (the first)
    assert shown.exit_code == 0 and not RAW.search(shown.output)
    assert "bot: \\x1b[2J\\x1b[HYour order ORD-1001 is pending." in shown.stdout
    report = parley("report", "latest", "--db", db)
    assert report.exit_code == 0 and not RAW.search(report.output)
    assert "\\x1b[2J\\x1b[Hoverloaded" in report.stdout
    batches = parley("batches", "show", "latest", "--db", db)
    assert batches.exit_code == 0 and not RAW.search(batches.output) and "\\x1b[31mred" in batches.stdout
    with sqlite3.connect(db) as conn:
        stored = [row[0] for row in conn.execute("SELECT content FROM messages WHERE role = 'assistant'")]
        errors = [row[0] for row in conn.execute("SELECT error FROM conversations WHERE error IS NOT NULL")]
    assert REPLY in stored, "the database keeps the reply as received"
    assert any(CLEAR + "overloaded" in e for e in errors)
