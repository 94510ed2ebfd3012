"""What `parley run` gives a CI pipeline: `--fail-under` on the pass rate (or its lower bound),
`--dry-run` before spending, `--budget` while spending, and their exit codes."""

from __future__ import annotations

import pytest

from parley.core.models import pricing
from parley.core.store.store import Store
from tests.fake_openai_server import TextReply
from tests.lineage_support import make_suite, parley

FAKE_BOT = "openai-api/fake/bot"


@pytest.fixture
def suite(tmp_path):
    return make_suite(tmp_path / "suite")


@pytest.fixture
def priced(monkeypatch):
    """The fake bot priced at $2 / $10 per 1M tokens, for this test only."""
    monkeypatch.setattr(pricing, "_custom", {})
    pricing.register_price(FAKE_BOT, 2.0, 10.0)


@pytest.fixture
def prompt_file(tmp_path):
    path = tmp_path / "shop.txt"
    path.write_text("You answer customers of an online shop. " * 10 + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "gate, code, line",
    [
        (["--fail-under", "0.7"], 0, "CI gate: pass rate 75.0% (3 of 4), 95% interval [30.1%, 95.4%]; it is at or above 70%"),
        (["--fail-under", "80%"], 1, "it is below 80%"),
        (["--fail-under", "0.3", "--fail-under-lower"], 0, "its lower bound is at or above 30%"),
        (["--fail-under", "50%", "--fail-under-lower"], 1, "its lower bound is below 50%"),
    ],
)
def test_fail_under_gates_on_the_pass_rate_or_its_lower_bound(tmp_path, suite, gate, code, line):
    result = parley("run", suite, *gate, "--db", tmp_path / "p.db")
    assert result.exit_code == code, result.output
    assert line in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--fail-under", "1.5"], "is not a rate between 0 and 1"),
        (["--fail-under", "most"], "is not a rate: give a fraction (0.9) or a percentage (90%)"),
        (["--fail-under-lower"], "--fail-under-lower needs --fail-under RATE"),
        (["--budget", "0"], "0 is not in the range x>0"),
    ],
)
def test_gate_and_budget_mistakes_are_usage_errors(tmp_path, suite, args, message):
    result = parley("run", suite, *args, "--db", tmp_path / "p.db")
    assert result.exit_code == 2 and message in result.output


def test_a_dry_run_plans_and_prices_without_running_or_storing(tmp_path, suite, server, monkeypatch, priced, prompt_file):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    db = tmp_path / "p.db"
    offline = parley("run", suite, "--trials", "2", "--dry-run", "--db", db)
    assert offline.exit_code == 0, offline.output
    assert "Planned: 8 conversations (4 specs, up to 2 trials each)" in offline.stdout
    assert "    track_and_refund#0 x2\n" in offline.stdout and "    list_my_orders#0 x2\n" in offline.stdout
    assert "Total cost: at most $0.0000; expected $0.0000" in offline.stdout
    assert not db.exists() or Store.open(db).count_batches() == 0

    args = ("run", suite, "--bot", FAKE_BOT, "--bot-prompt", prompt_file, "--judge", "openai-api/fake/judge", "--max-turns", "4")
    first = parley(*args, "--dry-run", "--db", db)
    assert first.exit_code == 0, first.output
    out = first.stdout
    bot = next(line for line in out.splitlines() if line.startswith("bot "))
    # a prompt bot: one call per answer; track (limit 8 -> 4), list and cancel (4 each), so 4 x 4 calls at most
    assert bot.split()[1:3] == [FAKE_BOT, "16"]
    judge = next(line for line in out.splitlines() if line.startswith("judge "))
    assert "unknown" in judge, "an unpriced judge has an unknown cost, never $0"
    assert "warning: no price in the price table for judge openai-api/fake/judge: their cost is unknown" in out
    assert "Total cost: at most unknown; expected not measured yet" in out
    assert f"bot ({FAKE_BOT}): never ran these specs" in out
    assert server.requests == [], "a dry run calls no model"

    server.default = TextReply("Thanks for asking. [END]", usage=(1000, 100))
    ran = parley(*args[:-2], "--max-turns", "4", "--db", db)  # without the judge: a priced batch that really runs
    assert ran.exit_code in (0, 1), ran.output
    again = parley(*args[:-4], "--max-turns", "4", "--dry-run", "--db", db)
    bot = next(line for line in again.stdout.splitlines() if line.startswith("bot "))
    assert "~4" in bot and "~4,000 / ~400" in bot and "$0.0120" in bot  # 4 conversations x 1 call x (1000, 100) tokens
    assert f"bot ({FAKE_BOT}): expected from 4 earlier conversation(s) of 4 of these specs" in again.stdout
    assert "Total cost: at most $" in again.stdout and "expected $0.0120" in again.stdout


def test_a_dry_run_of_a_rerun_plans_only_its_conversations(tmp_path, suite):
    db = tmp_path / "p.db"
    assert parley("run", suite, "--trials", "3", "--db", db).exit_code == 1
    result = parley("run", "--rerun", "failed", "latest", "--dry-run", "--db", db)
    assert result.exit_code == 0, result.output
    assert "Planned: 3 conversations (1 spec, up to 3 trials each)" in result.stdout
    assert "    track_and_refund#0 x3\n" in result.stdout and "track_shipped_order#0" not in result.stdout
    with Store.open(db) as store:
        assert store.count_batches() == 1


def test_a_budget_stops_launching_and_keeps_what_finished(tmp_path, suite, server, monkeypatch, priced, prompt_file):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    server.default = TextReply("Thanks for asking. [END]", usage=(1000, 100))  # $0.003 a conversation
    db = tmp_path / "p.db"
    args = ("run", suite, "--bot", FAKE_BOT, "--bot-prompt", prompt_file, "--trials", "3", "--concurrency", "1", "--db", db)
    result = parley(*args, "--budget", "0.005")
    assert result.exit_code == 3, result.output
    assert "stopped at the budget; continue it with: parley run --resume" in result.stdout
    with Store.open(db) as store:
        row = store.list_batches()[0]
    assert row.batch.status == "stopped_budget" and row.batch.options.budget_usd == 0.005
    assert row.summary.done == 2 < row.batch.planned == 12, "the second conversation reached $0.006: no third was launched"
    shown = parley("batches", "show", "latest", "--db", db)
    assert shown.stdout.startswith(f"Batch {row.batch.id}: stopped_budget") and "budget $0.005" in shown.stdout

    more = parley("run", "--resume", "latest", "--budget", "0.011", "--db", db)
    assert more.exit_code == 3, more.output
    with Store.open(db) as store:
        assert store.list_batches()[0].summary.done == 4  # $0.012 >= $0.011 after the fourth

    unpriced = parley("run", suite, "--bot", "openai-api/fake/other", "--bot-prompt", prompt_file, "--budget", "1", "--db", db)
    assert unpriced.exit_code == 1
    assert "--budget needs every model's price, and the price table does not know the bot's openai-api/fake/other" in unpriced.stderr
