"""Secrets never shown: batches run, for real, against a bot and model endpoints on loopback that
echo every credential they receive (in 401 bodies and in replies), with credentials of every
kind: a 7-character API key, a key in a base URL's query, a password in a base URL's user-info,
and values an `http:FILE.yaml` connector takes from variables whose names say nothing of
secrets (a header, the query of its path, a field of its body). Then every output is searched
for each of them: the terminal (the progress bar on a real pseudo-terminal, `--single`
streaming, errors, every view), parley.log, the database's files, every export and report,
and the batch service's responses. None is found; `[redacted]` is, where the echoes were."""

from __future__ import annotations

import base64
import json
import os
import pty
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.connector_servers import serve_app
from tests.credential_echo import EchoState, echo_app
from tests.service_support import free_port, poll
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
PARLEY = str(Path(sys.executable).parent / "parley")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")

SEVEN_CHAR_KEY = "k7Zq9xW"  # STUB_API_KEY: the user's model key, 7 characters
QUERY_KEY = "QueryKey-123"  # ?api_key= in STUB_BASE_URL
JUDGE_PASSWORD = "JudgePass-77"  # user-info in JUDGE_BASE_URL
REFUSED_PASSWORD = "RefusePass-88"  # user-info in REFUSE_BASE_URL, whose endpoint refuses the key
BOT_HEADER = "hdr-Auth-Z9"  # BOT_AUTH: the connector's Authorization header
BOT_QUERY = "qk4Lm9P"  # BOT_QUERY_KEY: ?api_key= in the connector's path (7 characters)
BOT_BODY = "BodyValue-42"  # BOT_BODY: a field of the connector's payload
SERVICE_TOKEN = "svc-token-0042"  # PARLEY_API_TOKEN
SECRETS = [SEVEN_CHAR_KEY, QUERY_KEY, JUDGE_PASSWORD, REFUSED_PASSWORD, BOT_HEADER, BOT_QUERY, BOT_BODY, SERVICE_TOKEN]
# what a client makes of a URL's user-info: HTTP basic credentials
BASIC = base64.b64encode(f"juser:{JUDGE_PASSWORD}".encode()).decode()
FORMS = [*SECRETS, BASIC]

PROFILE = """\
test_name: echo_check
user:
  language: English
  role: you are a customer who wants to know where order ORD-1003 is.
  context:
    - your name is Maya Okafor
  goals:
    - "track order ORD-1003"
chatbot:
  is_starter: false
  fallback: I'm sorry, I didn't understand that.
conversation:
  number: 1
  goal_style:
    steps: 2
  interaction_style:
    - single question
world:
  customer_id: C-100
  today: 2026-11-21
expect:
  bot_says:
    - "ORD-1003"
"""

CONNECTOR = """\
name: Echo bot
base_url: {base}
headers:
  Authorization: "Bearer ${{BOT_AUTH}}"
send_message:
  path: /bot/chat?api_key=${{BOT_QUERY_KEY}}
  method: POST
  payload_template:
    sender: "{{session_id}}"
    message: "{{user_msg}}"
    credential: "${{BOT_BODY}}"
response_path: text
"""

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def found(text: str | bytes) -> list[str]:
    """Every secret (or form of one) in `text`; ANSI sequences are dropped first, so a secret
    drawn in two colours is still found."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    plain = ANSI.sub("", text)
    return [form for form in FORMS if form in text or form in plain]


class Ran:
    """What the batches left behind: outputs by name, and the home folder."""

    def __init__(self, home: Path, echo: EchoState, base: str) -> None:
        self.home = home
        self.echo = echo
        self.base = base
        self.outputs: dict[str, str] = {}

    @property
    def db(self) -> Path:
        return self.home / "sessions" / "parley.db"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_TOKEN"))}
        host = self.base.removeprefix("http://")
        return {
            **env,
            "PARLEY_DB": str(self.db),
            "PARLEY_LOG_LEVEL": "DEBUG",
            "COLUMNS": "120",
            "STUB_BASE_URL": f"{self.base}/v1?api_key={QUERY_KEY}",
            "STUB_API_KEY": SEVEN_CHAR_KEY,
            "JUDGE_BASE_URL": f"http://juser:{JUDGE_PASSWORD}@{host}/v1",
            "REFUSE_BASE_URL": f"http://ruser:{REFUSED_PASSWORD}@{host}/refuse/v1",
            "REFUSE_API_KEY": SEVEN_CHAR_KEY,
            "BOT_AUTH": BOT_HEADER,
            "BOT_QUERY_KEY": BOT_QUERY,
            "BOT_BODY": BOT_BODY,
            "PARLEY_API_TOKEN": SERVICE_TOKEN,
        }

    def run(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        """`parley ARGS` with its stdout and stderr on pipes; both kept as output `name`."""
        done = subprocess.run([PARLEY, *args], capture_output=True, text=True, env=self.env(), cwd=self.home, timeout=PATIENCE_S)
        self.outputs[name] = done.stdout + done.stderr
        return done

    def on_terminal(self, name: str, *args: str) -> tuple[int, str]:
        """`parley ARGS` on a pseudo-terminal of 120 columns (so it draws its progress bar);
        everything it drew is output `name`."""
        master, slave = pty.openpty()
        import fcntl
        import struct
        import termios

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        proc = subprocess.Popen([PARLEY, *args], stdin=slave, stdout=slave, stderr=slave, env=self.env(), cwd=self.home)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side is closed (the command ended)
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        code = proc.wait(timeout=PATIENCE_S)
        text = b"".join(chunks).decode("utf-8", "replace")
        self.outputs[name] = text
        return code, text


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    home = tmp_path_factory.mktemp("secrets")
    echo = EchoState(refuse_every=3)
    with serve_app(echo_app(echo)) as base:
        ran = Ran(home, echo, base)
        suite = home / "suite"
        suite.mkdir()
        (suite / "echo_check.yaml").write_text(PROFILE, encoding="utf-8")
        (home / "echo_bot.yaml").write_text(CONNECTOR.format(base=base), encoding="utf-8")

        # 1. A batch on a terminal: the deployed bot, the user and the judge all echo.
        code, text = ran.on_terminal(
            "run on a terminal",
            "run",
            "suite",
            "--bot",
            "http:echo_bot.yaml",
            "--user",
            "openai-api/stub/m",
            "--judge",
            "openai-api/judge/m",
            "--trials",
            "4",
            "--concurrency",
            "1",
            "--max-turns",
            "2",
        )
        assert "batch " in text and code in (0, 1), text
        # 2. One conversation streamed: the order bot on the echoing model, in pieces of three
        # characters (its first answer comes before a refusal: the count starts again).
        echo.counts.clear()
        ran.run(
            "run --single", "run", "suite", "--bot", "openai-api/stub/m", "--user", "openai-api/stub/m", "--single", "0", "--max-turns", "2"
        )
        # 3. An endpoint that refuses the key before anything runs.
        refused = ran.run("run refused before launch", "run", "suite", "--user", "openai-api/refuse/m")
        assert refused.returncode == 1 and "refused" in refused.stderr, refused.stderr
        # 4. Every view and export of the first batch.
        first = "latest~1"
        for fmt in ("md", "json", "csv", "ndjson", "junit"):
            ran.run(f"report --format {fmt}", "report", first, "--format", fmt)
            ran.run(f"report --format {fmt} --output", "report", first, "--format", fmt, "--output", f"exports/report.{fmt}")
        ran.run("report --format inspect", "report", first, "--format", "inspect", "--output", "exports/inspect")
        ran.run("batches list", "batches", "list")
        ran.run("batches list --json", "batches", "list", "--json")
        ran.run("batches show", "batches", "show", first)
        ran.run("compare", "compare", first, "latest")
        ran.run("sessions list", "sessions", "list")
        conn = sqlite3.connect(ran.db)
        ids = [row[0] for row in conn.execute("SELECT id FROM conversations ORDER BY started_at")]
        conn.close()
        for ident in {ids[0], ids[-1]}:  # a conversation of the batch on a terminal, and the streamed one
            ran.run(f"sessions show {ident}", "sessions", "show", ident)
            ran.run(f"sessions export {ident}", "sessions", "export", ident, "--output", f"exports/{ident}.json")
        yield ran


def test_every_secret_was_sent_and_echoed(ran):
    """The test can fail: each secret really reached the echoing endpoints, and came back."""
    received = "\n".join(ran.echo.received)
    assert set(found(received)) >= set(FORMS) - {REFUSED_PASSWORD, SERVICE_TOKEN, JUDGE_PASSWORD}, received[:2000]
    for path in ("/bot/chat", "/v1/?api_key", "/v1/chat/completions", "/refuse/"):
        assert sum(path in seen for seen in ran.echo.received) >= 1, path
    terminal = ANSI.sub("", ran.outputs["run on a terminal"])
    assert "HTTP 401" in terminal and "(401): Incorrect API key provided: Bearer [redacted]" in terminal, terminal[-3000:]


def test_no_secret_reaches_the_terminal(ran):
    terminal = {name: text for name, text in ran.outputs.items() if not name.startswith("report --format inspect")}
    assert "[redacted]" in ran.outputs["run on a terminal"], "the echoes were shown, redacted"
    assert "[redacted]" in ran.outputs["run --single"]
    for name, text in terminal.items():
        assert not found(text), f"{found(text)} shown by `parley {name}`:\n{text[-3000:]}"


def test_no_secret_in_the_log(ran):
    log = (ran.db.parent / "parley.log").read_bytes()
    assert b"DEBUG" in log or b"INFO" in log
    assert not found(log), found(log)


def test_no_secret_in_the_database_files(ran):
    files = sorted(ran.db.parent.glob("parley.db*"))
    assert files
    assert b"[redacted]" in b"".join(f.read_bytes() for f in files)
    for file in files:
        assert not found(file.read_bytes()), (file.name, found(file.read_bytes()))


def test_no_secret_in_any_export_or_report(ran):
    exports = ran.home / "exports"
    written = [p for p in exports.rglob("*") if p.is_file()]
    reports = [p for p in (ran.db.parent / "reports").glob("*.md")]
    assert len(written) >= 6 and reports
    for path in [*written, *reports]:
        if path.suffix == ".eval":  # the inspect log, a zip inspect_ai compresses its own way: read as inspect reads it
            from inspect_ai.log import read_eval_log

            text = read_eval_log(str(path)).model_dump_json()
            assert "[redacted]" in text
            assert not found(text), (path.name, found(text))
        else:
            assert not found(path.read_bytes()), (path.name, found(path.read_bytes()))


def test_no_secret_in_the_service_responses(ran):
    """`parley serve` for real, with the same secrets in its environment and its own token: a
    batch launched through it on a Rasa bot whose token is `${BOT_QUERY_KEY}` in its URL, the
    echoing user and judge; then every route's answer, and a launch refused before it runs."""
    port = free_port()
    log = ran.home / "serve.log"
    host = ran.base.removeprefix("http://")
    command = [PARLEY, "serve", "--port", str(port), "--profiles-dir", "suite", "--allow-bot-host", host, "--grace", "0.5"]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=ran.home, stdout=out, stderr=subprocess.STDOUT, env=ran.env())
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {SERVICE_TOKEN}"}
    answers: dict[str, str] = {}
    try:
        _wait_up(url, proc, log)
        body = {
            "profiles": ["echo_check.yaml"],
            "models": {
                "bot": f"rasa:{ran.base}/rasa/hook?token=${{BOT_QUERY_KEY}}",
                "user": "openai-api/stub/m",
                "judge": "openai-api/judge/m",
            },
            "trials": 3,
            "concurrency": 1,
            "max_turns": 2,
        }
        launched = httpx.post(f"{url}/api/batches", json=body, headers=headers, timeout=30)
        answers["launch"] = launched.text
        assert launched.status_code == 201, launched.text
        batch_id = launched.json()["batch_id"]
        poll(url, batch_id, headers=headers)
        for route in ("", "/results", "/results?format=csv", "/results?format=ndjson", "/summary", "/cost"):
            answers[route] = httpx.get(f"{url}/api/batches/{batch_id}{route}", headers=headers, timeout=30).text
        answers["list"] = httpx.get(f"{url}/api/batches", headers=headers, timeout=30).text
        answers["health"] = httpx.get(f"{url}/api/health", timeout=30).text
        refused = httpx.post(f"{url}/api/batches", json={**body, "models": {"user": "openai-api/refuse/m"}}, headers=headers, timeout=30)
        answers["refused launch"] = refused.text
        assert refused.status_code == 422 and "refuse" in refused.text, refused.text
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=PATIENCE_S)
    assert "[redacted]" in answers["/results"], "the service's batch met the echoes"
    for route, text in answers.items():
        assert not found(text), f"{found(text)} in the service's answer to {route or 'status'}: {text[:2000]}"
    assert not found(log.read_bytes()), "the service's own output"
    assert not found((ran.db.parent / "parley.log").read_bytes())


def _wait_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    import time

    deadline = time.monotonic() + PATIENCE_S
    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def test_what_a_credential_in_a_bot_url_becomes(ran):
    """A literal credential in a bot's URL is refused (the URL is the bot's name in every
    record); `${NAME}` in its place is taken from the environment at each call."""
    literal = ran.run("literal token", "run", "suite", "--bot", f"rasa:{ran.base}/rasa/hook?token={BOT_QUERY}", "--dry-run")
    assert literal.returncode != 0
    assert "holds a credential" in literal.stderr and "${NAME}" in literal.stderr, literal.stderr
    assert BOT_QUERY not in literal.stderr
    by_name = ran.run("token by name", "run", "suite", "--bot", f"rasa:{ran.base}/rasa/hook?token=${{BOT_QUERY_KEY}}", "--max-turns", "1")
    assert "batch " in by_name.stdout, by_name.stderr
    assert not found(by_name.stdout + by_name.stderr)
    assert any(f"token={BOT_QUERY}" in seen for seen in ran.echo.received)
