"""The HTML reports people share: `parley report BATCH --format html` and `parley compare BASE NEW
--format html`. Every number in them is the JSON report's (each read against `--format json`),
text from conversations is text (a bot reply holding `<script>` shows as written and runs
nothing), the page fetches nothing and needs no script, conversations filter by outcome with
plain links, and the failing check is marked and linked to its turn.

Read with the standard library's HTML parser (tests/html_reading.py): the suite needs no browser
(bench/bench_html_report.py looks at the page in Chromium).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.evaluation import CRITERION_KIND
from parley.core.records import ChatMessage
from parley.core.store import Store
from parley.tui.cli.main import cli
from tests.comparison_fixtures import FAIL, PASS, Result, make_batch
from tests.html_reading import Element, at, marked_numbers, parse, written
from tests.test_store_fixtures import T0, batch, check, conversation, spec, verdict

HOSTILE = '<script>alert("x")</script></details><img src=x onerror="alert(1)"> & <b>bold</b>'
HOSTILE_NAME = "<i>hostile</i>"
STATED = "ask whether the shop delivers <b>on Sundays</b>"


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, str]:
    """A batch with every kind of row a report shows: passes, a failure with a policy violation
    whose check quotes a bot message, a bot error, an unverified run, a bot reply and a spec
    name holding markup, two trials."""
    db = tmp_path / "parley.db"
    with Store.open(db) as store:
        b = store.create_batch(batch(trials=2, planned=7, status="completed", started_at=T0))
        track, cancel, hostile = spec("track_order", 0), spec("cancel_recent", 1), spec(HOSTILE_NAME, 2)

        conv = conversation("track")
        unseen = check("track_order called", "not_applicable", "the bot does not show its tool calls", kind="tool_called")
        store.save_conversation(b.id, track, conv, verdict(conv, "passed", 3, checks=[check("ORD-1003 stays shipped"), unseen]), 1)
        conv = conversation("cancel")
        blamed = check("bot never says /cancelled/", "fail", 'turn 1 says "I have cancelled it"', kind="bot_never_says", violation=True)
        blamed.details = {"messages": [1]}
        store.save_conversation(b.id, track, conv, verdict(conv, "failed", 1, checks=[check("ORD-1003 stays shipped"), blamed]), 2)
        conv = conversation("cancel", stop_reason="bot_error", error="HTTP 500 from the bot")
        store.save_conversation(b.id, cancel, conv, verdict(conv, "bot_error", None, checks=[]), 1)
        conv = conversation("track")
        conv.metadata = {**conv.metadata, "goals_only_stated": [STATED]}  # what the offline customer could not act out
        store.save_conversation(b.id, cancel, conv, verdict(conv, "unverified", None, checks=[]), 2)
        conv = conversation("track")
        conv.messages = [*conv.messages, ChatMessage(role="assistant", content=HOSTILE)]
        store.save_conversation(b.id, hostile, conv, verdict(conv, "passed", 2, comment=HOSTILE), 1)
        conv = conversation("track")
        store.save_conversation(b.id, hostile, conv, None, 2)  # stored without a verdict: unevaluated
        return db, b.id


def html_and_json(db: Path, batch_id: str, tmp_path: Path, *, conversations: int = 6) -> tuple[str, dict, Element]:
    out = tmp_path / "report.html"
    written_html = parley("report", batch_id, "--db", db, "--output", out)  # the format from the suffix
    assert written_html.exit_code == 0, written_html.output
    assert f"wrote {out} (html, batch {batch_id}, {conversations} conversations)" in written_html.stderr
    doc = json.loads(parley("report", batch_id, "--db", db, "--format", "json").stdout)
    html = out.read_text(encoding="utf-8")
    return html, doc, parse(html)


def test_every_number_in_the_html_report_is_the_json_reports(stored, tmp_path):
    db, batch_id = stored
    html, doc, root = html_and_json(db, batch_id, tmp_path)
    numbers = marked_numbers(root)
    fields = {f for f, _, _, _ in numbers}
    for field, value, fmt, text in numbers:
        expected = at(doc, field)
        assert value == pytest.approx(expected) if isinstance(expected, float) else value == expected, field
        assert text == written(expected, fmt), (field, text)
    # the summary's counts, rates and figures are all there, each read against the JSON
    for field in (
        "summary.done",
        "summary.planned",
        "summary.passed",
        "summary.failed",
        "summary.bot_errors",
        "summary.errors",
        "summary.judge_errors",
        "summary.pass_rate",
        "summary.pass_rate_denominator",
        "summary.pass_rate_interval.low",
        "summary.pass_rate_interval.high",
        "summary.pass_k.0.value",
        "summary.pass_k.1.value",
        "summary.pass_k.1.interval.low",
        "summary.outcomes.unverified",
        "summary.outcomes.unevaluated",
        "summary.score_statistics.mean",
        "summary.score_distribution.score_1",
        "summary.unscored",
        "summary.turn_statistics.median",
        "summary.duration_statistics.mean",
        "summary.cost_usd",
        "summary.total_usage.input_tokens",
        "summary.policy_violations_total",
        "summary.failed_checks.0.count",
        "summary.not_applicable_checks.0.conversations",
        "summary.passed_with_not_applicable",
        "options.trials",
    ):
        assert field in fields, field
    assert doc["summary"]["passed"] == 2 and doc["summary"]["failed"] == 1 and doc["summary"]["bot_errors"] == 1
    # each conversation's score, turns and duration: the JSON's result at the same place
    assert {f.split(".")[1] for f in fields if f.startswith("results.")} == {str(i) for i in range(6)}


def test_the_outcomes_chart_draws_the_summarys_counts(stored, tmp_path):
    db, batch_id = stored
    html, doc, root = html_and_json(db, batch_id, tmp_path)
    [chart] = [e for e in root.iter() if e.tag == "svg" and e.attrs.get("aria-label") == "Conversations by outcome"]
    labels = [e.all_text().strip() for e in chart.iter() if e.tag == "text"]
    drawn = {name: int(n) for name, n in zip(labels[: len(labels) // 2], labels[len(labels) // 2 :], strict=True)}
    assert drawn == {o: n for o, n in doc["summary"]["outcomes"].items() if n}
    # several charts in one page: no id is used twice
    ids = [e.attrs["id"] for e in root.iter() if "id" in e.attrs]
    assert len(ids) == len(set(ids))
    assert sum(1 for e in root.iter() if e.tag == "svg" and e.attrs.get("role") == "img") == 4


def test_the_pass_rate_per_spec_is_counted_from_the_same_conversations(stored, tmp_path):
    db, batch_id = stored
    html, doc, root = html_and_json(db, batch_id, tmp_path)
    by_spec: dict[str, Counter[str]] = defaultdict(Counter)
    for result in doc["results"]:  # counted here by hand, from the JSON's rows
        outcome = result["outcome"] or ("bot_error" if result["stop_reason"] == "bot_error" else "unevaluated")
        by_spec[result["spec_id"]][outcome] += 1
    rows = [e for e in root.iter() if e.tag == "tr" and "data-spec" in e.attrs]
    assert [r.attrs["data-spec"] for r in rows][0] == "cancel_recent#1"  # worst first: 0 of 1 judged
    assert {r.attrs["data-spec"] for r in rows} == set(by_spec)
    for row in rows:
        counts = by_spec[row.attrs["data-spec"]]
        stats = {e.attrs["data-stat"]: json.loads(e.attrs["data-value"]) for e in row.iter() if "data-stat" in e.attrs}
        judged = counts["passed"] + counts["failed"] + counts["bot_error"]
        assert stats["runs"] == sum(counts.values()) and stats["passed"] == counts["passed"]
        assert stats["failed"] == counts["failed"] and stats["bot_errors"] == counts["bot_error"]
        assert stats["pass_rate"] == (pytest.approx(counts["passed"] / judged) if judged else None)


def test_conversations_are_grouped_by_outcome_and_filter_without_a_script(stored, tmp_path):
    db, batch_id = stored
    html, doc, root = html_and_json(db, batch_id, tmp_path)
    conversations = [e for e in root.iter() if e.tag == "details" and "data-conversation" in e.attrs]
    assert sorted(c.attrs["data-conversation"] for c in conversations) == sorted(r["session_id"] for r in doc["results"])
    shown = Counter(c.attrs["data-outcome"] for c in conversations)
    assert shown == {o: n for o, n in doc["summary"]["outcomes"].items() if n}
    groups = [e for e in root.iter() if e.tag == "section" and "group" in e.classes()]
    assert [g.attrs["id"] for g in groups] == ["g-failed", "g-bot_error", "g-unverified", "g-unevaluated", "g-passed"]
    for outcome in shown:  # a link per outcome, its empty target before the groups, and the rule that shows it alone
        assert any(e.tag == "a" and e.attrs.get("href") == f"#only-{outcome}" for e in root.iter())
        assert any(e.attrs.get("id") == f"only-{outcome}" for e in root.iter())
        assert f"#only-{outcome}:target~.groups .g-{outcome}{{display:block}}" in html


def test_the_failing_check_is_marked_and_links_to_the_turn_it_quotes(stored, tmp_path):
    db, batch_id = stored
    html, doc, root = html_and_json(db, batch_id, tmp_path)
    [failed] = [e for e in root.iter() if e.attrs.get("data-outcome") == "failed"]
    summary = next(e for e in failed.children if e.tag == "summary")
    assert "bot never says /cancelled/" in summary.all_text()  # the reason it failed, on the line that opens it
    [marked] = [e for e in failed.iter() if e.tag == "li" and "fail" in e.classes()]
    assert "(policy violation)" in marked.all_text() and 'turn 1 says "I have cancelled it"' in marked.all_text()
    [link] = [e for e in marked.iter() if e.tag == "a"]
    [turn] = [e for e in failed.iter() if e.attrs.get("id") == link.attrs["href"][1:]]
    assert "blamed" in turn.classes() and "Bot" in turn.all_text()


def test_text_from_conversations_is_text_and_the_page_fetches_and_runs_nothing(stored, tmp_path):
    db, batch_id = stored
    html, doc, root = html_and_json(db, batch_id, tmp_path)
    tags = Counter(e.tag for e in root.iter())
    assert tags["script"] == 0 and tags["img"] == 0 and tags["link"] == 0 and tags["iframe"] == 0
    assert not [
        e for e in root.iter() if (e.tag, e.all_text()) in (("i", "hostile"), ("b", "bold"))
    ]  # the markup in the name and the reply
    assert not [(e.tag, k) for e in root.iter() for k in e.attrs if k.startswith("on")]
    assert all(e.attrs["href"].startswith("#") for e in root.iter() if "href" in e.attrs and e.tag == "a")
    assert not [e for e in root.iter() if "src" in e.attrs]
    assert not re.search(r"(?i)url\((?!#)", html) and "@import" not in html and "http://" not in html.replace("http://www.w3.org/", "")
    [policy] = [e for e in root.iter() if e.tag == "meta" and e.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert policy.attrs["content"].startswith("default-src 'none'")
    # the reply and the name show as written
    text = root.all_text()
    assert HOSTILE in text and HOSTILE_NAME in text
    [hostile] = [e for e in root.iter() if e.tag == "details" and HOSTILE in e.all_text() and "data-conversation" in e.attrs]
    assert hostile.attrs["data-outcome"] == "passed"


def test_the_goals_only_stated_are_listed_and_noted_on_their_conversation(stored, tmp_path):
    db, batch_id = stored
    html, doc, root = html_and_json(db, batch_id, tmp_path)
    [section] = [e for e in root.iter() if e.tag == "section" and e.attrs.get("id") == "stated"]
    [row] = [e for e in section.iter() if e.tag == "tr" and e.children and e.children[0].tag == "td"]
    assert [c.all_text() for c in row.children] == ["cancel_recent#1", "1", STATED]  # as text: no <b> in the page
    assert doc["summary"]["goals_only_stated"] == [{"spec_id": "cancel_recent#1", "conversations": 1, "goals": [STATED]}]
    [noted] = [e for e in root.iter() if e.tag == "details" and "only stated this goal" in e.all_text()]
    assert noted.attrs["data-outcome"] == "unverified" and f'"{STATED}"' in noted.all_text()
    assert not [e for e in root.iter() if e.tag == "b" and e.all_text() == "on Sundays"]


def test_criteria_in_words_show_their_counts_and_the_judges_evidence_linked_to_the_turn_quoted(tmp_path):
    db = tmp_path / "parley.db"
    apologises, quoted = "the bot apologises for the delay", "where is my parcel"
    with Store.open(db) as store:
        b = store.create_batch(batch(trials=2, planned=2, status="completed", started_at=T0))
        for trial, (outcome, state) in enumerate((("passed", "pass"), ("failed", "fail")), 1):
            conv = conversation("track")
            criterion = check(apologises, state, "", kind=CRITERION_KIND)
            if state == "pass":
                criterion.reason, criterion.details = "Met: it said sorry.", {"verdict": "met", "turn": 2, "message": 1}
            else:  # the judge quoted the customer: the evidence, and where the link goes
                evidence = f'turn 1: "{quoted}"'
                criterion.reason = f"Not met: it never apologised. Evidence, {evidence}"
                criterion.details = {"verdict": "not met", "turn": 1, "quote": quoted, "evidence": evidence, "user_message": 1}
            store.save_conversation(b.id, spec("track_order", 0), conv, verdict(conv, outcome, None, checks=[criterion]), trial)
    html, doc, root = html_and_json(db, b.id, tmp_path, conversations=2)
    for field, value, fmt, text in marked_numbers(root):
        assert value == at(doc, field) and text == written(at(doc, field), fmt), field
    [section] = [e for e in root.iter() if e.tag == "section" and e.attrs.get("id") == "criteria"]
    [row] = [e for e in section.iter() if e.tag == "tr" and e.children and e.children[0].tag == "td"]
    assert [c.all_text() for c in row.children] == [apologises, "1", "1", "0", "0", "0", "-"]  # no judge's calibration marked
    assert doc["summary"]["criteria"][0] | {"met": 1, "not_met": 1} == doc["summary"]["criteria"][0]
    [failed] = [e for e in root.iter() if e.attrs.get("data-outcome") == "failed"]
    [marked] = [e for e in failed.iter() if e.tag == "li" and "fail" in e.classes()]
    assert marked.all_text().startswith("✗ not met") and f'Evidence, turn 1: "{quoted}"' in marked.all_text()
    [link] = [e for e in marked.iter() if e.tag == "a"]
    [turn] = [e for e in failed.iter() if e.attrs.get("id") == link.attrs["href"][1:]]
    assert "blamed" in turn.classes() and "Customer" in turn.all_text()  # the customer's first message, which it quotes
    [met] = [e for e in root.iter() if e.attrs.get("data-outcome") == "passed"]
    assert [e.all_text() for e in met.iter() if e.tag == "li" and "pass" in e.classes()][0].startswith("✓ met")


def test_an_empty_batch_has_a_report_too(tmp_path):
    db = tmp_path / "parley.db"
    with Store.open(db) as store:
        b = store.create_batch(batch(planned=3, status="interrupted"))
    out = tmp_path / "empty.html"
    result = parley("report", b.id, "--db", db, "--format", "html", "--output", out)
    assert result.exit_code == 0, result.output
    root = parse(out.read_text(encoding="utf-8"))
    assert "No conversations were stored." in root.all_text()
    assert [e.all_text() for e in root.iter() if e.attrs.get("data-field") == "summary.pass_rate"] == ["n/a"]


# ---- the comparison ---------------------------------------------------------------------------------


def test_the_compare_report_puts_regressions_first_with_both_sides_failing_checks(tmp_path):
    db = tmp_path / "parley.db"
    base_results = {(f"spec_{s}#{s}", t): PASS for s in range(6) for t in (1, 2)}
    base_results[("spec_5#5", 1)] = Result(outcome="failed", score=1, failed=("ORD-1005 ends cancelled",))
    new_results = dict(base_results)
    new_results[("spec_1#1", 1)] = Result(outcome="failed", score=1, failed=("ORD-1001 ends cancelled", "bot never says /<script>/"))
    new_results[("spec_1#1", 2)] = FAIL
    new_results[("spec_5#5", 1)] = PASS
    new_results[("spec_0#0", 1)] = Result(met=("the bot greets <b>by name</b>",))  # a criterion now met
    with Store.open(db) as store:
        base = make_batch(store, base_results, trials=2)
        new = make_batch(store, new_results, minutes=5, trials=2)
    out = tmp_path / "cmp.html"
    result = parley("compare", base.id, new.id, "--db", db, "--output", out)
    assert result.exit_code == 0, result.output
    doc = json.loads(parley("compare", base.id, new.id, "--db", db, "--format", "json").stdout)
    html = out.read_text(encoding="utf-8")
    root = parse(html)
    for field, value, fmt, text in marked_numbers(root):
        expected = at(doc, field)
        assert value == pytest.approx(expected) if isinstance(expected, float) else value == expected, field
        assert text == written(expected, fmt), (field, text)
    sections = [e.attrs["id"] for e in root.iter() if e.tag == "section"]
    assert sections[:3] == ["top", "regressions", "verdict"]
    [regressions] = [e for e in root.iter() if e.attrs.get("id") == "regressions"]
    rows = [e for e in regressions.iter() if e.tag == "tr"][1:]
    assert len(rows) == doc["paired_test"]["regressions"] == 2
    first = rows[0].all_text()
    assert "passed" in first and "failed" in first and "ORD-1001 ends cancelled" in first and "bot never says /<script>/" in first
    [fixes] = [e for e in root.iter() if e.attrs.get("id") == "fixes"]
    assert "ORD-1005 ends cancelled" in fixes.all_text()  # the base's failing check, on the fix
    assert "Changed, within noise" in root.all_text()
    shown = {f for f, *_ in marked_numbers(root)}
    assert {"paired_test.p_value", "paired_test.p_worse", "base.pass_rate.value", "new.pass_rate.value", "new.pass_k.1.value"} <= shown
    assert Counter(e.tag for e in root.iter())["script"] == 0
    assert doc["criterion_changes"] == [{"criterion": "the bot greets <b>by name</b>", "started_being_met": 1, "stopped_being_met": 0}]
    criterion_row, pair_row = [e for e in root.iter() if e.tag == "tr" and "the bot greets <b>by name</b>" in e.all_text()]
    assert [c.all_text() for c in criterion_row.children] == ["the bot greets <b>by name</b>", "1", "0"]
    assert [c.all_text() for c in pair_row.children][:2] + [c.all_text() for c in pair_row.children][3:] == [
        "spec_0#0",
        "1",
        "-",
        "-",
        "the bot greets <b>by name</b>",
        "-",
    ]  # the pair whose only change is the criterion now met
