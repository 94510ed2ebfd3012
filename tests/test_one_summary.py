"""One summary, computed once: every place a person reads a batch's counts shows the same numbers,
under the same words, for every mix of outcomes.

Each batch below is stored with a known mix; the numbers expected are counted from the mix by
hand (not by parley), then read back from every surface: `parley run`'s end lines and `parley
batches show`, `parley batches list` (table and JSON), the markdown report, the JSON, CSV and
NDJSON exports (their per-conversation rows summarised again with `BatchSummary.from_rows`),
the batch service's GET /api/batches, /api/batches/ID and /api/batches/ID/summary, the app's
list and status line (stored, and live from the runner's progress), `parley compare`, the JUnit
report, the library's RunResult and its exit-code rule, and what `parley run --rerun WHAT` picks
(`errors`: exactly what the summary calls errors).
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.engine import BatchRunner, prepare_batch
from parley.core.evaluation import BatchSummary
from parley.core.library import read_results
from parley.core.records import (
    BROKEN_STOPS,
    ERRORS,
    OUTCOME_KINDS,
    OUTCOMES,
    UNEVALUATED,
    BatchFinished,
    BatchOptions,
    Progress,
    RoleModels,
    SummaryRow,
    rerun_outcomes,
)
from parley.core.reports import batch_summary
from parley.core.store import BatchRow, Store
from parley.tui.app.panes.batches_pane import BatchesPane, live_cells
from parley.tui.app.widgets.row_table import RowTable
from parley.tui.cli.main import cli
from tests.service_support import service
from tests.test_store_fixtures import T0, batch, conversation, spec, verdict
from tests.test_tui_support import SIZE, db_path, make_app, settle  # noqa: F401  (fixture)

PROFILE = Path(__file__).resolve().parent.parent / "profiles" / "track_shipped_order.yaml"

BROKEN = ("bot_error", "user_error", "infrastructure_error", "cancelled", "error")
"""Outcomes whose run broke: the stop reason is the outcome."""
WORDS = {
    "passed": "passed",
    "failed": "failed",
    "bot_error": "bot error",
    "unverified": "unverified",
    "user_fault": "simulator fault",
    "user_error": "simulator error",
    "infrastructure_error": "infrastructure error",
    "cancelled": "cancelled",
    "evaluation_error": "evaluation error",
    "error": "legacy error",
    "unevaluated": "unevaluated",
}
"""Each outcome's name in words, the same on every surface that spells it out."""

# Each mix: spec name -> the outcomes of its trials, in order.
MIXES = {
    "all passed": {"track": ["passed"], "cancel": ["passed"], "list": ["passed"]},
    "only bot errors (the run of the issue)": {"track": ["bot_error"], "cancel": ["bot_error"]},
    "every outcome once": {o: [o] for o in WORDS},
    "trials that disagree": {
        "track": ["passed", "failed", "passed"],
        "cancel": ["bot_error", "passed", "passed"],
        "list": ["passed", "passed", "unverified"],
    },
    "nothing judged": {"track": ["unverified"], "cancel": ["user_fault"], "list": ["cancelled"], "ask": ["unevaluated"]},
}


def store_mix(path: Path, mix: dict[str, list[str]]) -> str:
    trials = max(len(t) for t in mix.values())
    with Store.open(path) as store:
        b = store.create_batch(batch(trials=trials, planned=sum(len(t) for t in mix.values()) + 1, status="completed", started_at=T0))
        for index, (name, outcomes) in enumerate(mix.items()):
            for trial, outcome in enumerate(outcomes, start=1):
                stop = outcome if outcome in BROKEN else "user_stop"
                conv = conversation(stop_reason=stop, error="it broke" if outcome in BROKEN else None)
                if outcome == "unevaluated":
                    found = None
                else:  # an evaluation error is a judge that failed: a judge error too
                    error = "the judge timed out" if outcome == "evaluation_error" else None
                    found = verdict(conv, outcome, 3 if outcome == "passed" else (1 if outcome == "failed" else None), error=error)
                store.save_conversation(b.id, spec(name, index), conv, found, trial)
        return b.id


def expected_counts(mix: dict[str, list[str]]) -> Counter[str]:
    """Counted by hand from the mix: every outcome, done, and what the summary derives."""
    counts = Counter({o: 0 for o in WORDS})
    counts.update(o for outcomes in mix.values() for o in outcomes)
    counts["done"] = sum(len(t) for t in mix.values())
    counts["judged"] = counts["passed"] + counts["failed"] + counts["bot_error"]
    counts["errors"] = counts["user_error"] + counts["infrastructure_error"] + counts["cancelled"] + counts["error"]
    counts["broken"] = counts["bot_error"] + counts["errors"]  # 003's failed_scenarios
    counts["apart"] = counts["unverified"] + counts["user_fault"] + counts["evaluation_error"] + counts["unevaluated"]
    return counts


def exits_zero(counts: Counter[str], *, strict: bool) -> bool:
    """`parley run`'s exit code rule, by hand: nothing but passed (and, without --strict,
    unverified and simulator faults)."""
    allowed = {"passed"} if strict else {"passed", "unverified", "user_fault"}
    return all(counts[o] == 0 for o in WORDS if o not in allowed)


def in_words(text: str) -> dict[str, int]:
    """`3 passed, 1 bot error, 2 simulator faults` -> {passed: 3, bot_error: 1, user_fault: 2}."""
    names = {words: outcome for outcome, words in WORDS.items()}
    pattern = "|".join(sorted((re.escape(w) for w in names), key=len, reverse=True))
    found: dict[str, int] = {}
    for n, words in re.findall(rf"(\d+) ({pattern})(?:s\b)?", text):
        found[names[words]] = int(n)
    return found


def by_outcome(counts: Counter[str], *, every: bool) -> dict[str, int]:
    return {o: counts[o] for o in WORDS if every or counts[o] or o in ("passed", "failed", "bot_error")}


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def rate(counts: Counter[str]) -> float | None:
    return counts["passed"] / counts["judged"] if counts["judged"] else None


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def assert_summary_fields(view: dict, counts: Counter[str]) -> None:
    """The summary's own field names, as the exports and the service give them."""
    assert (view["done"], view["passed"], view["failed"], view["bot_errors"]) == (
        counts["done"],
        counts["passed"],
        counts["failed"],
        counts["bot_error"],
    )
    assert (view["unverified"], view["user_faults"], view["user_errors"], view["infrastructure_errors"]) == (
        counts["unverified"],
        counts["user_fault"],
        counts["user_error"],
        counts["infrastructure_error"],
    )
    assert (view["cancelled"], view["legacy_errors"], view["evaluation_errors"], view["unevaluated"]) == (
        counts["cancelled"],
        counts["error"],
        counts["evaluation_error"],
        counts["unevaluated"],
    )
    assert (view["errors"], view["broken"], view["pass_rate_denominator"]) == (counts["errors"], counts["broken"], counts["judged"])
    assert view["pass_rate"] == pytest.approx(rate(counts)) if counts["judged"] else view["pass_rate"] is None
    assert view["outcomes"] == {**{o: counts[o] for o in WORDS if o != "unevaluated"}, "unevaluated": counts["unevaluated"]}


def assert_rows_summarise_alike(rows: list[dict], counts: Counter[str], stored: dict, seed: int, *, judge: bool = True) -> None:
    """An export's rows, summarised again with the batch's seed (the JSON document's options
    hold it), give the stored summary's numbers (judge errors only where the rows carry the
    verdict: JSON and NDJSON, not CSV)."""
    again = BatchSummary.from_rows((SummaryRow.model_validate(r) for r in rows), seed=seed).model_dump(mode="json")
    assert_summary_fields(again, counts)
    assert again["judge_errors"] == (stored["judge_errors"] if judge else 0) and stored["judge_errors"] == counts["evaluation_error"]
    for field in ("score_statistics", "score_distribution", "unscored", "cost_usd", "turn_statistics", "pass_k", "flaky_specs"):
        assert again[field] == stored[field], field
    assert again["duration_statistics"]["count"] == stored["duration_statistics"]["count"] == counts["done"]
    assert again["duration_statistics"]["mean"] == pytest.approx(stored["duration_statistics"]["mean"])


@pytest.mark.parametrize("mix_name", list(MIXES))
async def test_every_surface_shows_the_same_counts(db_path, mix_name):
    mix = MIXES[mix_name]
    counts = expected_counts(mix)
    batch_id = store_mix(db_path, mix)
    db = db_path

    # parley batches show: what `parley run` prints when a batch ends
    shown = parley("batches", "show", batch_id, "--db", db)
    assert shown.exit_code == 0, shown.output
    [line] = [x for x in shown.stdout.splitlines() if x.startswith("Conversations: ")]
    assert line.startswith(f"Conversations: {counts['done']} of {counts['done'] + 1} done: ")
    assert in_words(line) == by_outcome(counts, every=False) | {
        o: counts[o] for o in ("unverified", "user_fault", "user_error", "infrastructure_error")
    }
    [rate_line] = [x for x in shown.stdout.splitlines() if x.startswith("Pass rate: ")]
    assert rate_line.startswith(f"Pass rate: {pct(rate(counts))} ({counts['passed']} of {counts['judged']}")

    # parley batches list: the table and the JSON
    listed = json.loads(parley("batches", "list", "--json", "--db", db).stdout)[0]
    assert (listed["done"], listed["passed"], listed["failed"], listed["bot_errors"]) == (
        counts["done"],
        counts["passed"],
        counts["failed"],
        counts["bot_error"],
    )
    assert (listed["unverified"], listed["user_faults"], listed["errors"], listed["failed_scenarios"]) == (
        counts["unverified"],
        counts["user_fault"],
        counts["errors"],
        counts["broken"],
    )
    assert listed["pass_rate"] == pytest.approx(rate(counts)) if counts["judged"] else listed["pass_rate"] is None
    table = parley("batches", "list", "--db", db).stdout.splitlines()
    header, row = table[0], table[1]
    assert "Failed  Bot errors  Apart  Errors  Pass rate" in header
    cells = row.split()
    assert cells[-7:] == [
        str(counts["done"]),
        str(counts["passed"]),
        str(counts["failed"]),
        str(counts["bot_error"]),
        str(counts["apart"]),
        str(counts["errors"]),
        pct(rate(counts)) if counts["judged"] else "-",
    ]

    # the markdown report
    report = parley("report", batch_id, "--db", db).stdout
    totals = report.split("## Totals")[1].split("\n\n")[1].splitlines()
    assert totals[0] == (
        "| Planned | Done | Passed | Failed | Bot errors | Unverified | Simulator faults | Errors | Evaluation errors | Judge errors |"
    )
    values = [int(v) for v in totals[2].strip("|").split("|")]
    assert values[1:9] == [
        counts["done"],
        counts["passed"],
        counts["failed"],
        counts["bot_error"],
        counts["unverified"],
        counts["user_fault"],
        counts["errors"],
        counts["evaluation_error"],
    ]
    assert f"**{pct(rate(counts))}** ({counts['passed']} of {counts['judged']}" in report

    # the exports: JSON (003's batch fields, then the summary), NDJSON and CSV rows
    doc = json.loads(parley("report", batch_id, "--format", "json", "--db", db).stdout)
    assert (doc["completed_scenarios"], doc["failed_scenarios"]) == (counts["done"], counts["broken"])
    stored = doc["summary"]
    assert_summary_fields(stored, counts)
    seed = doc["options"]["seed"]
    assert_rows_summarise_alike(doc["results"], counts, stored, seed)
    ndjson = parley("report", batch_id, "--format", "ndjson", "--db", db).stdout
    assert_rows_summarise_alike([json.loads(line) for line in ndjson.splitlines()], counts, stored, seed)
    rows = list(csv.DictReader(io.StringIO(parley("report", batch_id, "--format", "csv", "--db", db).stdout)))
    assert_rows_summarise_alike(rows, counts, stored, seed, judge=False)

    # the batch service
    async with service(db_path.parent) as client:
        status = (await client.get(f"/api/batches/{batch_id}")).json()
        summary = (await client.get(f"/api/batches/{batch_id}/summary")).json()
        [item] = (await client.get("/api/batches")).json()["batches"]
    for view in (status, item):
        assert (view["completed_scenarios"], view["failed_scenarios"], view["passed"], view["failed"], view["bot_errors"]) == (
            counts["done"],
            counts["broken"],
            counts["passed"],
            counts["failed"],
            counts["bot_error"],
        )
        assert (view["unverified"], view["user_faults"], view["errors"], view["evaluation_errors"], view["unevaluated"]) == (
            counts["unverified"],
            counts["user_fault"],
            counts["errors"],
            counts["evaluation_error"],
            counts["unevaluated"],
        )
    assert_summary_fields(summary, counts)
    assert (summary["failed_scenarios"], summary["successful_scenarios"]) == (counts["broken"], counts["passed"])
    assert summary["pass_k"] == stored["pass_k"] and summary["flaky_specs"] == stored["flaky_specs"]

    # parley compare, the batch with itself
    compared = json.loads(parley("compare", batch_id, batch_id, "--format", "json", "--db", db).stdout)
    side = compared["base"]
    assert side["conversations"] == counts["done"]
    assert side["outcomes"] == {o: n for o, n in stored["outcomes"].items() if n}
    assert (side["pass_rate"]["successes"], side["pass_rate"]["n"]) == (counts["passed"], counts["judged"])
    assert side["pass_rate"]["interval"] == stored["pass_rate_interval"] and side["pass_k"] == stored["pass_k"]

    # what `parley run --rerun WHAT BATCH` picks: `errors` exactly the summary's errors, `failed`
    # the bot's failures (failed checks and bot errors), each other word its own outcome
    picks = {
        "errors": counts["errors"],
        "failed": counts["failed"] + counts["bot_error"],
        "unverified": counts["unverified"],
        "user-faults": counts["user_fault"],
        "evaluation-errors": counts["evaluation_error"],
    }
    with Store.open(db) as store:
        for what, n in picks.items():
            assert len(store.run_keys(batch_id, sorted(rerun_outcomes([what])))) == n, what
        [listed_batch] = [r for r in store.list_batches() if isinstance(r, BatchRow)]
        result = read_results(store, batch_id, "completed")
    assert {what: listed_batch.summary.selected([what]) for what in picks} == picks

    # the library: its summary, its words, and the exit code's rule (`parley run`'s, --strict too)
    assert_summary_fields(result.summary.model_dump(mode="json"), counts)
    assert in_words(result.explain().splitlines()[0]) == by_outcome(counts, every=False) | {
        o: counts[o] for o in ("unverified", "user_fault", "user_error", "infrastructure_error")
    }
    assert (result.ok(), result.ok(strict=True)) == (exits_zero(counts, strict=False), exits_zero(counts, strict=True))

    # JUnit: a failed check is a failure, a run that broke or a check not decided an error, the rest skipped
    junit = ET.fromstring(parley("report", batch_id, "--format", "junit", "--db", db).stdout)
    assert {k: int(junit.get(k) or 0) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": counts["done"],
        "failures": counts["failed"],
        "errors": counts["broken"] + counts["evaluation_error"],
        "skipped": counts["unverified"] + counts["user_fault"] + counts["unevaluated"],
    }

    # the app: the batch's row in the list, and the status line under it
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(BatchesPane)
        listed_row = list(pane.query_one("#batches-table", RowTable).full_row(0))
        line = str(pane.query_one("#batches-status").render())
    assert listed_row[4:] == [str(n) for n in (counts["done"] + 1, counts["done"], counts["passed"], counts["failed"])] + [
        str(counts[k]) for k in ("bot_error", "apart", "errors")
    ]
    assert f"{batch_id[:12]}: pass rate {pct(rate(counts))} ({counts['passed']} of {counts['judged']}" in line
    assert in_words(line.split(f"{batch_id[:12]}: ")[1]) == by_outcome(counts, every=False)
    # ... and the same row while it runs, drawn from the runner's live progress
    live = Progress(
        batch_id=batch_id, total=counts["done"] + 1, outcomes=stored["outcomes"], in_flight=0, rate_per_s=0.0, eta_s=None, concurrency=1
    )
    assert list(live_cells(listed_batch, live))[4:] == listed_row[4:]


def test_every_outcome_has_one_row_and_the_figures_add_up():
    assert set(OUTCOME_KINDS) == {*OUTCOMES, UNEVALUATED}
    assert {o: k.one for o, k in OUTCOME_KINDS.items()} == WORDS  # the words the surfaces above are read with
    assert BROKEN_STOPS == ERRORS | {"bot_error"}  # a run that broke: the bot's error, or an error
    for mix in MIXES.values():
        s = BatchSummary.from_rows(
            SummaryRow(spec_id=name, trial=t, outcome=o) for name, outcomes in mix.items() for t, o in enumerate(outcomes, 1)
        )
        assert s.done == s.passed + s.bot_failures + s.errors + s.apart
        assert s.broken == s.bot_errors + s.errors and s.pass_rate_denominator == s.passed + s.bot_failures


async def test_the_runners_progress_and_result_are_the_stored_summary(db_path):
    """A real run with a bot whose cancelling raises: passes, bot errors and what the simulator
    makes of a bot that never lists orders, counted live by the runner as the summary counts them."""
    sources = [PROFILE.parent / f"{name}.yaml" for name in ("track_shipped_order", "cancel_eligible_order", "list_my_orders")]
    options = BatchOptions(models=RoleModels(bot="python:tests.python_bots:cancel_breaks_bot"))
    with Store.open(db_path) as store:
        prepared = await prepare_batch(store, sources, options)
        events: list = []
        result = await BatchRunner(store, prepared, on_event=events.append).run()
        stored = batch_summary(store, prepared.id)
    [finished] = [e for e in events if isinstance(e, BatchFinished)]
    progress = [e for e in events if isinstance(e, Progress)][-1]
    assert stored.done == prepared.total and stored.passed and stored.bot_errors and stored.done > stored.passed + stored.bot_errors
    figures = ("done", "passed", "failed", "bot_errors", "unverified", "user_faults", "errors", "broken", "apart", "pass_rate")
    for name in figures:
        assert getattr(result, name) == getattr(finished, name) == getattr(progress, name) == getattr(stored, name), name
    assert (result.ok(), result.ok(strict=True)) == (stored.ok(), stored.ok(strict=True)) == (False, False)
