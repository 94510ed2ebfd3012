"""Limits as checks: each with the measured figure as its evidence. Latency is measured on a Python
bot with set delays and wide margins (a fast reply of ~0 s against a limit of 2 s; a slow one of
1.5 s against 0.5 s), and is not decided for the offline bot; cost and tokens on a model bot of
the fake server, priced; turns until every check held on the offline bot."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from parley.api import conversation, run_sync, say
from parley.core.records import CheckLimits
from parley.tui.cli.main import cli
from tests import python_checks_support as support
from tests.html_reading import at, marked_numbers, parse


def limit_checks(stored) -> dict[str, object]:
    return {c.details["limit"]: c for c in stored.verdict.checks if c.kind == "limit"}


def run_one(steps, *, limits=None, bot="offline", db, **more):
    spec = conversation("limits", steps=steps, limits=limits, **more)
    [stored] = run_sync(spec, bot=bot, db=db).conversations
    return stored


def test_a_slow_reply_fails_its_limit_with_the_time_measured(tmp_path):
    steps = [say("Hello, wait 0"), say("And now wait 15")]  # the second reply comes after 1.5 s
    stored = run_one(steps, bot=support.delayed_bot, limits={"reply_seconds": 0.5, "p95_reply_seconds": 0.5}, db=tmp_path / "p.db")
    checks = limit_checks(stored)
    each, p95 = checks["reply_seconds"], checks["p95_reply_seconds"]
    assert each.name == "each bot reply within 0.5 s (timing-dependent)"
    assert each.outcome == "fail" and each.details["bot_turn"] == 2 and each.details["measured"] >= 1.5
    assert re.fullmatch(r"The slowest of 2 replies took 1\.\d\d s \(bot turn 2\), over 0\.5 s\.", each.reason), each.reason
    assert p95.outcome == "fail" and re.fullmatch(r"The 95th percentile of 2 replies is 1\.\d\d s, over 0\.5 s\.", p95.reason)
    assert each.details["timing_dependent"] is True
    assert stored.verdict.outcome == "failed"  # a slow bot fails the gate as a wrong one does


def test_fast_replies_hold_their_limit(tmp_path):
    stored = run_one([say("Hello, wait 0")], bot=support.delayed_bot, limits={"reply_seconds": 2}, db=tmp_path / "p.db")
    check = limit_checks(stored)["reply_seconds"]
    assert check.outcome == "pass" and check.details["measured"] < 2
    assert re.fullmatch(r"The slowest of 1 replies took \d\.\d\d s \(bot turn 1\), within 2 s\.", check.reason)


def test_latency_is_not_decided_for_the_offline_bot(tmp_path):
    stored = run_one([say("Where is ORD-1003?")], limits={"reply_seconds": 0.000001}, db=tmp_path / "p.db")
    check = limit_checks(stored)["reply_seconds"]
    assert (check.outcome, check.reason) == ("not_applicable", "Not decided: the offline bot answers without a model.")


def test_cost_and_tokens_are_measured_on_the_bots_model_calls(server, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    server.push_text("ORD-1003 is shipped.", usage=(1000, 200))
    spec = conversation("spend", steps=[say("Where is ORD-1003?")], limits={"cost_usd": 0.001, "tokens": 1000})
    result = run_sync(spec, bot="openai-api/fake/m", price={"openai-api/fake/m": (1.0, 2.0)}, db=tmp_path / "p.db")
    checks = limit_checks(result.conversations[0])
    cost, tokens = checks["cost_usd"], checks["tokens"]
    assert (cost.outcome, cost.reason) == ("fail", "The bot's 1 model calls cost $0.0014, over $0.001.")  # 1000 x $1/M + 200 x $2/M
    assert cost.details["measured"] == 0.0014
    assert (tokens.outcome, tokens.reason) == ("fail", "The bot's 1 model calls used 1,200 tokens (1,000 in, 200 out), over 1,000.")


def test_cost_is_not_measured_without_a_price_or_a_model(server, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    spec = conversation("spend", steps=[say("Where is ORD-1003?")], limits={"cost_usd": 1})
    [unpriced] = run_sync(spec, bot="openai-api/fake/m", db=tmp_path / "p.db").conversations
    assert limit_checks(unpriced)["cost_usd"].reason == (
        "Not measured: the price of openai-api/fake/m is unknown (give it: --price openai-api/fake/m=INPUT/OUTPUT)."
    )
    [python] = run_sync(spec, bot=support.repeating_bot, db=tmp_path / "q.db").conversations
    assert limit_checks(python)["cost_usd"].outcome == "not_applicable"
    [offline] = run_sync(spec, db=tmp_path / "r.db").conversations
    assert (limit_checks(offline)["cost_usd"].outcome, limit_checks(offline)["cost_usd"].details["measured"]) == ("pass", 0)


def test_turns_until_every_check_held(tmp_path):
    steps = [say("Hello"), say("Where is my order ORD-1003?")]
    late = run_one(steps, says=["shipped"], limits={"turns_to_pass": 1}, db=tmp_path / "a.db")
    check = limit_checks(late)["turns_to_pass"]
    assert check.outcome == "fail" and check.details["measured"] == 2
    assert check.reason == "The one check asked for, 'bot says /shipped/', held by bot turn 2, past turn 1."
    in_time = run_one(steps, says=["shipped"], limits={"turns_to_pass": 2}, db=tmp_path / "b.db")
    assert limit_checks(in_time)["turns_to_pass"].outcome == "pass" and in_time.verdict.outcome == "passed"
    never = run_one(steps, says=["refund"], limits={"turns_to_pass": 5}, db=tmp_path / "c.db")
    assert limit_checks(never)["turns_to_pass"].reason == "Not every check held: bot says /refund/."


def test_a_runs_limits_apply_to_every_conversation_and_a_specs_own_win(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "own.yaml").write_text(
        "name: own\nsteps:\n  - user: Where is ORD-1003?\nexpect:\n  bot_says: [shipped]\n  limits: {turns_to_pass: 3}\n", encoding="utf-8"
    )
    (tmp_path / "plain.yaml").write_text(
        "name: plain\nsteps:\n  - user: Where is ORD-1003?\nexpect:\n  bot_says: [shipped]\n", encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["run", "own.yaml", "plain.yaml", "--limit", "turns_to_pass=1", "--limit", "tokens=0", "--db", "p.db"])
    assert result.exit_code == 0, result.output
    from parley.core.store.store import Store

    with Store.open(tmp_path / "p.db") as store:
        [row] = store.list_batches()
        stored = {s.spec.name: s for s in store.iter_conversations(row.batch.id)}
    assert row.batch.options.limits == CheckLimits(turns_to_pass=1, tokens=0)
    assert limit_checks(stored["own"])["turns_to_pass"].details["allowed"] == 3
    assert limit_checks(stored["plain"])["turns_to_pass"].details["allowed"] == 1
    assert limit_checks(stored["plain"])["tokens"].outcome == "pass"  # the offline bot uses no tokens
    bad = CliRunner().invoke(cli, ["run", "own.yaml", "--limit", "speed=3", "--db", "p.db"])
    assert bad.exit_code == 2 and "'speed=3': give KEY=VALUE, KEY one of reply_seconds, p95_reply_seconds" in bad.stderr


def test_the_report_marks_a_latency_check_as_timing_dependent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "slow.yaml").write_text("name: slow\nsteps:\n  - user: please wait 10\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["run", "slow.yaml", "--bot", "python:tests.python_checks_support:delayed_bot", "--limit", "reply_seconds=0.3", "--db", "p.db"]
    )
    assert result.exit_code == 1
    report = CliRunner().invoke(cli, ["report", "latest", "--db", "p.db"]).stdout
    assert "each bot reply within 0.3 s (timing-dependent)" in report
    assert "## Limits" in report
    assert re.search(r"\| each bot reply within 0\.3 s \(timing-dependent\) \| 0 \| 1 \| 0 \| 1\.\d\d s \|", report), report


def test_the_reports_limits_count_each_limit_once_over_every_conversation(tmp_path):  # markdown and HTML
    ran = CliRunner().invoke(
        cli, ["run", "profiles/playbooks", "--limit", "turns_to_pass=3", "--limit", "reply_seconds=10", "--db", str(tmp_path / "p.db")]
    )
    assert ran.exit_code == 0, ran.output
    report = CliRunner().invoke(cli, ["report", "latest", "--db", str(tmp_path / "p.db")]).stdout
    rows = [line for line in report.split("## Limits")[1].split("\n## ")[0].splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == [  # the seven playbooks: one row per limit, the offline bot's latency not decided
        "| each bot reply within 10 s (timing-dependent) | 0 | 0 | 7 | - |",
        "| every check held by bot turn 3 | 7 | 0 | 0 | turn 2 |",
    ], report
    db = str(tmp_path / "p.db")
    assert CliRunner().invoke(cli, ["report", "latest", "--db", db, "--output", str(tmp_path / "r.html")]).exit_code == 0
    document = json.loads(CliRunner().invoke(cli, ["report", "latest", "--db", db, "--format", "json"]).stdout)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    section = html.split('<section id="limits">')[1].split("</section>")[0]
    numbers = {field: text for field, _, _, text in marked_numbers(parse(section))}
    assert numbers == {
        f"summary.limits.{i}.{k}": str(at(document, f"summary.limits.{i}.{k}")) for i in (0, 1) for k in ("held", "over", "not_decided")
    }
    assert [numbers[f"summary.limits.{i}.not_decided"] for i in (0, 1)] == ["7", "0"]
    assert "every check held by bot turn 3" in section and "<td>turn 2</td>" in section
    assert '<a href="#limits">Limits</a>' in html
