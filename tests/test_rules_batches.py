"""Sensei rule files in a batch (`parley run --rules`): each conversation's rules are checks of
its verdict, decided as it ends; pair and batch rules are decided once every conversation is in,
stored apart, shown in the report, the JSON, `parley run`'s last lines and its exit code."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.engine.batch_runner import BatchRunner, prepare_batch, prepare_resume
from parley.core.models.openai_provider import aclose_clients
from parley.core.records import ConversationFinished
from parley.core.records.batch import BatchOptions, RoleModels
from parley.core.reports import render_markdown, summarize, write_html
from parley.core.reports.exports import export_json
from parley.core.store import batch_rule_summaries, iter_rule_results
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.rules_support import TRACKING_PROFILE, rule_text, write_rules

FAKE = "openai-api/fake/m"


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    path = tmp_path / "suite" / "tracking.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(TRACKING_PROFILE, encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "parley.db")
    yield s
    s.close()


def rules(tmp_path: Path, files: dict[str, str]) -> str:
    return str(write_rules(tmp_path / "rules", files))


async def run_batch(store, sources, options, **runner_kw):
    prepared = await prepare_batch(store, sources, options)
    runner = BatchRunner(store, prepared, **runner_kw)
    try:
        result = await runner.run()
    finally:
        await aclose_clients()
    return result


def verdicts(store, batch_id) -> dict[str, object]:
    return {stored.spec.spec_id: stored.verdict for stored in store.iter_conversations(batch_id)}


def rule_check(verdict, rule_file: str):
    [check] = [c for c in verdict.checks if c.name == f"rule:{rule_file}"]
    return check


# -- rules about one conversation --------------------------------------------------------------------


async def test_without_rules_a_sensei_profile_is_unverified_and_a_held_rule_makes_it_pass(tmp_path, store, profile):
    plain = await run_batch(store, [profile], BatchOptions())
    assert {v.outcome for v in verdicts(store, plain.batch_id).values()} == {"unverified"}

    folder = rules(tmp_path, {"bot/answers.yaml": rule_text("len(chatbot_phrases) > 0 and order[0] in chatbot_phrases[0]", name="answers")})
    result = await run_batch(store, [profile], BatchOptions(rules=folder))

    stored = verdicts(store, result.batch_id)
    assert {v.outcome for v in stored.values()} == {"passed"}, "a rule is a check the author asked for: held, it passes"
    check = rule_check(stored["tracking#0"], "bot/answers.yaml")
    assert check.kind == "rule" and check.outcome == "pass" and not check.by_default
    assert check.reason.startswith("answers: held") and check.details["rule"] == "answers"
    assert result.ok() and result.rule_failures == 0


async def test_a_failed_rule_fails_its_conversation_with_the_yields_text(tmp_path, store, profile):
    folder = rules(
        tmp_path,
        {
            "tracking.yaml": rule_text(
                "'1Z999AA10123456784' in tracking",
                name="has_tracking",
                yields='f"no tracking number for {order[0]}: got {tracking}"',
            )
        },
    )
    result = await run_batch(store, [profile], BatchOptions(rules=folder))

    stored = verdicts(store, result.batch_id)
    shipped, pending = rule_check(stored["tracking#0"], "tracking.yaml"), rule_check(stored["tracking#1"], "tracking.yaml")
    assert shipped.outcome == "pass" and stored["tracking#0"].outcome == "passed"
    assert pending.outcome == "fail" and stored["tracking#1"].outcome == "failed"
    assert pending.reason == "has_tracking: no tracking number for ORD-1001: got ORD-1001"
    assert pending.details["yields"] == "no tracking number for ORD-1001: got ORD-1001"
    assert not result.ok()


async def test_inactive_rules_are_skipped_and_a_rule_whose_when_does_not_hold_is_not_applicable(tmp_path, store, profile):
    folder = rules(
        tmp_path,
        {
            "off.yaml": rule_text("False", name="inactive", active="false"),
            "only_shipped.yaml": rule_text("True", name="only_shipped", when="order[0] == 'ORD-1003'"),
        },
    )
    result = await run_batch(store, [profile], BatchOptions(rules=folder))

    stored = verdicts(store, result.batch_id)
    assert not [c for v in stored.values() for c in v.checks if c.name == "rule:off.yaml"]
    assert rule_check(stored["tracking#0"], "only_shipped.yaml").outcome == "pass"
    other = rule_check(stored["tracking#1"], "only_shipped.yaml")
    assert other.outcome == "not_applicable" and "when is false" in other.reason
    assert stored["tracking#1"].outcome == "unverified", "a rule that did not apply decides nothing"


async def test_a_model_helper_offline_is_not_run_never_passed(tmp_path, store, profile):
    folder = rules(tmp_path, {"tone.yaml": rule_text("'NEGATIVE' not in tone(chatbot_phrases)", name="tone")})
    result = await run_batch(store, [profile], BatchOptions(rules=folder))

    for verdict in verdicts(store, result.batch_id).values():
        check = rule_check(verdict, "tone.yaml")
        assert check.outcome == "not_run" and "tone() needs a model" in check.reason
        assert verdict.outcome == "unverified"


async def test_a_model_helper_asks_the_judges_model_and_its_tokens_are_the_judges(tmp_path, store, profile, server, monkeypatch):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    score = '{"score": 3, "comment": "fine"}'
    no_claim = '{"criteria": [{"criterion": 1, "verdict": "not applicable", "turns": [], "quote": "", "reasoning": "No claim."}]}'
    # concurrency 1: per conversation the judge's score, its built-in claims criterion, then the rule
    server.push_text(score).push_text(no_claim).push_text("NO").push_text(score).push_text(no_claim).push_text("YES")
    folder = rules(
        tmp_path,
        {
            "polite.yaml": rule_text(
                "semantic_content(chatbot_phrases[0], 'a tracking number')", name="polite", yields='"no tracking number"'
            )
        },
    )
    options = BatchOptions(rules=folder, concurrency=1, models=RoleModels(judge=FAKE))
    result = await run_batch(store, [profile], options)

    stored = verdicts(store, result.batch_id)
    first, second = rule_check(stored["tracking#0"], "polite.yaml"), rule_check(stored["tracking#1"], "polite.yaml")
    assert (first.outcome, second.outcome) == ("fail", "pass")
    assert stored["tracking#0"].outcome == "failed" and first.reason == "polite: no tracking number"
    asked = [r for r in server.requests if "Does the text below convey this content" in json.dumps(r.body)]
    assert len(asked) == 2 and "a tracking number" in json.dumps(asked[0].body)
    assert stored["tracking#0"].judge.usage.calls == 3, "the rule's question counts as the judge's call (score, criteria, rule)"


async def test_conversations_that_ended_early_are_not_judged_by_rules(tmp_path, store, profile, slow_bot):
    folder = rules(
        tmp_path,
        {"each.yaml": rule_text("True", name="each"), "pairs.yaml": rule_text("True", name="pairs", conversations=2)},
    )
    options = BatchOptions(rules=folder, models=RoleModels(bot=slow_bot), timeout_s=0.05, concurrency=2)
    result = await run_batch(store, [profile], options)

    for verdict in verdicts(store, result.batch_id).values():
        check = rule_check(verdict, "each.yaml")
        assert check.outcome == "not_run" and "ended early (timeout)" in check.reason
        assert verdict.outcome == "failed", "the timeout still fails the conversation"
    decided = list(iter_rule_results(store, result.batch_id, "pairs.yaml"))
    assert {(r.kind, r.outcome) for r in decided} == {("conversation", "not_run")} and len(decided) == 2
    assert all("ended early (timeout)" in r.reason for r in decided)


# -- rules about pairs and the batch -----------------------------------------------------------------

GROUP_RULES = {
    "pairs/differ.yaml": rule_text(
        "conv[0].tracking != conv[1].tracking", name="differ", conversations=2, yields='f"both said {conv[0].tracking}"'
    ),
    "pairs/same.yaml": rule_text("conv[0].tracking == conv[1].tracking", name="same", conversations=2, yields='"they differ"'),
    "batch/some.yaml": rule_text("exists(\"'1Z' in tracking\")", name="some", conversations="all"),
}


async def test_pair_and_batch_rules_are_decided_once_every_conversation_is_in(tmp_path, store, profile):
    result = await run_batch(store, [profile], BatchOptions(rules=rules(tmp_path, GROUP_RULES)))

    summaries = {s.rule_file: s for s in batch_rule_summaries(store, result.batch_id)}
    assert list(summaries) == ["batch/some.yaml", "pairs/differ.yaml", "pairs/same.yaml"]
    assert summaries["pairs/differ.yaml"].counts == {"pass": 2}
    same = summaries["pairs/same.yaml"]
    assert same.counts == {"fail": 2} and same.failed and same.failures[0].yields == "they differ"
    assert summaries["batch/some.yaml"].decision.outcome == "pass" and len(summaries["batch/some.yaml"].decision.conversations) == 2
    assert result.rule_failures == 1 and not result.ok(), "a failed pair rule fails the run"
    # they are not checks of any one conversation
    assert not [c for v in verdicts(store, result.batch_id).values() for c in v.checks if c.kind == "rule"]

    report = summarize(store, result.batch_id)
    text = render_markdown(report)
    assert "## Rules over pairs and the batch" in text
    assert "| pairs/same.yaml | same | each ordered pair | 0 | 2 | 0 | 0 |" in text
    assert re.search(r"`pairs/same.yaml` \(same\) failed: tracking#\d trial 1 → tracking#\d trial 1: they differ", text)
    page = io.StringIO()
    write_html(store, result.batch_id, page)
    assert re.search(r"<code>pairs/same.yaml</code></td><td>same</td><td>each ordered pair</td><td>0</td><td>2</td>", page.getvalue())
    assert re.search(
        r"<code>pairs/same.yaml</code> \(same\) failed: tracking#\d trial 1 → tracking#\d trial 1: they differ", page.getvalue()
    )

    document = json.loads(export_json(store, result.batch_id))
    ids = {r["spec_id"]: r["session_id"] for r in document["results"]}
    same_json = document["rules"]["pairs/same.yaml"]
    assert sorted(map(tuple, same_json["fail"])) == sorted([(ids["tracking#0"], ids["tracking#1"]), (ids["tracking#1"], ids["tracking#0"])])
    assert same_json["failures"][0]["yields"] == "they differ" and same_json["pass"] == []
    assert sorted(document["rules"]["batch/some.yaml"]["pass"][0]) == sorted(ids.values())


def test_parley_run_with_rules_prints_them_and_exits_1_on_a_failed_pair(tmp_path, profile):
    db = tmp_path / "cli.db"
    folder = rules(tmp_path, GROUP_RULES)
    result = CliRunner().invoke(cli, ["run", str(profile), "--rules", folder, "--db", str(db)], catch_exceptions=False)

    assert result.exit_code == 1, result.output
    assert "Rules over pairs and the batch: 3 rules, 1 failed" in result.stdout
    assert "pairs/same.yaml (same), each ordered pair: pass 0, fail 2, not applicable 0" in result.stdout
    assert "trial 1: they differ" in result.stdout
    batch_id = re.search(r"batch ([0-9a-f]{32}) started", result.stdout).group(1)
    shown = CliRunner().invoke(cli, ["batches", "show", batch_id, "--db", str(db)], catch_exceptions=False)
    assert "Rules over pairs and the batch: 3 rules, 1 failed" in shown.stdout


def test_a_bad_rule_file_stops_the_run_before_anything_is_stored(tmp_path, profile):
    db = tmp_path / "cli.db"
    folder = rules(tmp_path, {"bad.yaml": rule_text("__import__('os').system('true')", name="bad")})
    result = CliRunner().invoke(cli, ["run", str(profile), "--rules", folder, "--db", str(db)], catch_exceptions=False)

    assert result.exit_code == 1
    assert re.search(r"bad\.yaml:\d+: bad\.oracle: ", result.stderr), result.stderr
    assert "Traceback" not in result.output
    with Store.open(db) as store:
        assert store.count_batches() == 0


async def test_a_stopped_batch_decides_its_pair_and_batch_rules_when_it_is_resumed(tmp_path, store, profile):
    options = BatchOptions(rules=rules(tmp_path, GROUP_RULES), concurrency=1)
    prepared = await prepare_batch(store, [profile], options)
    runner = BatchRunner(store, prepared)
    runner.subscribe(lambda event: runner.stop(grace_s=0) if isinstance(event, ConversationFinished) else None)
    first = await runner.run()
    assert first.status == "cancelled" and first.done == 1
    assert batch_rule_summaries(store, first.batch_id) == [], "not decided over half a batch"

    resumed = await prepare_resume(store, first.batch_id)
    assert [rule.rule_file for rule in resumed.rules] == ["batch/some.yaml", "pairs/differ.yaml", "pairs/same.yaml"]
    second = await BatchRunner(store, resumed).run()
    assert second.status == "completed" and second.done == 2
    summaries = {s.rule_file: s for s in batch_rule_summaries(store, first.batch_id)}
    assert summaries["pairs/same.yaml"].counts == {"fail": 2} and second.rule_failures == 1


def test_a_re_run_can_bring_rules_to_a_batch_that_had_none(tmp_path, profile):
    db = tmp_path / "cli.db"
    first = CliRunner().invoke(cli, ["run", str(profile), "--db", str(db)], catch_exceptions=False)
    assert first.exit_code == 0 and "2 unverified" in first.stdout
    parent = re.search(r"batch ([0-9a-f]{32}) started", first.stdout).group(1)

    folder = rules(tmp_path, {"answers.yaml": rule_text("len(chatbot_phrases) > 0", name="answers")})
    again = CliRunner().invoke(cli, ["run", "--rerun", "unverified", parent, "--rules", folder, "--db", str(db)], catch_exceptions=False)
    assert again.exit_code == 0, again.output
    child = re.search(r"batch ([0-9a-f]{32}) started", again.stdout).group(1)
    with Store.open(db) as store:
        assert store.get_batch(child).options.rules == folder and store.get_batch(parent).options.rules is None
        assert {v.outcome for v in verdicts(store, child).values()} == {"passed"}
