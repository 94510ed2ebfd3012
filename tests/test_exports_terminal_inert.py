"""What the exports write to stdout (a pipe, a CI log, `| less`) holds no raw character that acts
on a terminal: a bot's C1 control (U+009B acts as ESC [) and bidi override are written as the
format's own escapes, so every reader parses the same text back. On main `sessions export`,
`report --format junit`, `ndjson` and `json` kept them raw."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.api import run_sync
from parley.tui.cli.main import cli
from tests.python_bots import TERMINAL_TRICKS, terminal_tricks_bot
from tests.test_python_bot import track

RAW = ("\u009b", "\u202e", "\x1b")


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inert") / "p.db"
    run_sync(track(), bot=terminal_tricks_bot, db=path)
    return path


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def stdout_of(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def test_json_ndjson_and_a_session_export_escape_what_acts_on_a_terminal(db):
    ident = json.loads(stdout_of("report", "latest", "--format", "json", "--db", str(db)))["results"][0]["session_id"]
    for text in (
        stdout_of("report", "latest", "--format", "json", "--db", str(db)),
        stdout_of("report", "latest", "--format", "ndjson", "--db", str(db)),
        stdout_of("sessions", "export", ident[:12], "--db", str(db)),
    ):
        assert not any(raw in text for raw in RAW)
        assert "\\u009b2J" in text and "\\u202eevil" in text
        parsed = [json.loads(line) for line in text.splitlines()] if text.startswith('{"') else [json.loads(text)]
        assert any(TERMINAL_TRICKS in text for text in strings(parsed))  # the same text, read back


def test_junit_writes_them_as_character_references(db):
    text = stdout_of("report", "latest", "--format", "junit", "--db", str(db))
    assert not any(raw in text for raw in RAW)
    assert "&#x9b;2J" in text and "&#x202e;evil" in text
    assert "\u009b2J \u202eevil" in ET.tostring(ET.fromstring(text.split("\n", 1)[1]), encoding="unicode")
