"""Checks over a bot's text take bounded time whatever the bot sends: the suite's regexes run on a
linear-time engine past a few thousand characters (a `[^.]*` pattern spun for minutes on 30 MB
without a full stop), a pattern only a backtracking engine can run is not decided on such a
text (never held), and parley's own heuristics read a bounded view of it. SIGTERM stops
`parley run` wherever it is, as Ctrl-C does."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parley.core.evaluation.checks import bot_never_says_checks, bot_says_checks
from parley.core.reading import heuristic_view
from parley.core.specs import BACKTRACKING_MAX_CHARS, TooLongToMatch, compile_pattern
from tests.hostile_servers import hostile_server

ROOT = Path(__file__).resolve().parent.parent
PROFILE = ROOT / "profiles" / "track_shipped_order.yaml"
PARLEY = str(Path(sys.executable).parent / "parley")
SHIPPED_PATTERN = r"(?i)\bORD-1003\b[^.]*\b(has been|was|is now) cancell?ed"  # profiles/track_shipped_order.yaml


def run_python(code: str, timeout: float = 120) -> str:
    """`code` in a child interpreter (a regex that spins holds the GIL: only a process can be
    stopped); its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_shipped_never_says_pattern_on_a_30_mb_reply_is_decided_at_once():
    out = run_python(
        "from parley.core.evaluation.checks import bot_never_says_checks\n"
        f"text = 'ORD-1003 is on its way and ' * (30 * 1024 * 1024 // 27)\n"
        f"[check] = bot_never_says_checks([{SHIPPED_PATTERN!r}], ['Hello', text])\n"
        "print(check.outcome, '|', check.reason)\n",
        timeout=120,  # it took over five minutes; it now takes well under a second
    )
    assert out == "pass | No bot message matches (2 messages checked)."


def test_a_long_reply_is_still_matched_where_the_match_is():
    text = "Your order ships soon and " * 2000 + "ORD-1003 has been cancelled, as you asked."
    [says] = bot_says_checks([r"ORD-1003 has been cancell?ed"], [text])
    [never] = bot_never_says_checks([SHIPPED_PATTERN], [text])
    assert says.outcome == "pass" and "ORD-1003 has been cancelled" in says.reason
    assert never.outcome == "fail" and never.details == {"messages": [1]}


def test_a_pattern_only_backtracking_can_run_is_not_decided_on_a_long_reply():
    lookahead = r"cancel(?!led)"
    long_text = "the order is fine " * 1000
    [never] = bot_never_says_checks([lookahead], [long_text])
    [says] = bot_says_checks([lookahead], [long_text])
    assert never.outcome == "error" and says.outcome == "error"  # never held, never failed on a guess
    assert "bot message 1 could not be checked" in never.reason and "lookaround or a backreference" in never.reason
    [short] = bot_never_says_checks([lookahead], ["I can cancel it for you."])
    assert short.outcome == "fail"  # short texts are matched as before


def test_short_texts_keep_pythons_unicode_word_boundaries():
    pattern = compile_pattern(r"\bannulée\b")
    assert pattern.search("Votre commande est annulée.") is not None
    assert pattern.search("x" * (BACKTRACKING_MAX_CHARS + 1) + " commande annulée") is not None  # on RE2 too
    with pytest.raises(TooLongToMatch):
        compile_pattern(r"(\w+) \1").search("word " * BACKTRACKING_MAX_CHARS)


def test_parleys_own_heuristics_read_a_bounded_view_of_a_long_reply():
    out = run_python(
        "import time\n"
        "from parley.core.evaluation.user_faults import asks_the_user\n"
        "from parley.core.reading import is_confirmation_question\n"
        "text = 'are you sure ' * 100_000 + 'Shall I cancel ORD-1003 for you?'\n"
        "print(asks_the_user(text), is_confirmation_question(text))\n",
        timeout=60,  # 52 KB of `are you sure` took 18 s before
    )
    assert out == "True True"
    view = heuristic_view("a" * 10_000 + "Shall I cancel it?")
    assert len(view) < 5_000 and view.endswith("Shall I cancel it?")


def test_the_claims_check_reads_a_long_sentence_of_many_claims_in_time_proportional_to_it():
    out = run_python(
        "from parley.core.evaluation.claims import find_claims\n"
        "claims = find_claims('I have cancelled your order ORD-1003 and ' * 7500)\n"
        "print(len(claims), claims[0].action, len(claims[0].quote) <= 200)\n",
        timeout=90,  # 300 KB took about 100 s when each claim quoted the whole sentence anew; now a few
    )
    assert out == "7500 cancel True"


# -- SIGTERM ------------------------------------------------------------------------------------


def start(args: list[object]) -> subprocess.Popen[str]:
    return subprocess.Popen([PARLEY, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())


def wait_until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_mid_conversation_stores_it_cancelled_and_the_batch_can_resume(tmp_path):
    db = tmp_path / "p.db"
    with hostile_server(trickle_s=5.0) as server:  # the bot's answer would take 90 s
        proc = start(["run", PROFILE, "--bot", f"rasa:{server.base_url}/slow-body", "--bot-timeout", 300, "--grace", 0, "--db", db])
        wait_until(lambda: any(method == "POST" for method, _, _ in server.requests))
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "continue it with: parley run --resume" in out
    conn = sqlite3.connect(db)
    try:
        [(status,)] = conn.execute("SELECT status FROM batches").fetchall()
        [(stop,)] = conn.execute("SELECT stop_reason FROM conversations").fetchall()
    finally:
        conn.close()
    assert (status, stop) == ("cancelled", "cancelled")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_during_the_check_before_launch_is_an_interruption(tmp_path):
    db = tmp_path / "p.db"
    with hostile_server(trickle_s=2.0) as server:
        proc = start(["run", PROFILE, "--bot", f"rasa:{server.base_url}/trickle", "--db", db])
        wait_until(lambda: bool(server.requests))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "interrupted"
