"""JSON, NDJSON and CSV exports: they parse back with the right counts, columns and values, and
a large batch streams in bounded memory."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc

import pytest

from parley.core.errors import ParleyError
from parley.core.reports.exports import (
    CSV_003_COLUMNS,
    CSV_COLUMNS,
    export_csv,
    export_file,
    export_json,
    export_ndjson,
    iter_ndjson,
)
from parley.core.store.store import Store
from tests.test_store_fixtures import (  # noqa: F401
    batch,
    build_scored_batch,
    conversation,
    real_conversation,
    spec,
    store,
    verdict,
)

RESULT_003_FIELDS = ["session_id", "scenario", "status", "score", "comment", "total_turns", "duration_seconds"]


def _csv(store, batch_id):
    buffer = io.StringIO()
    n = export_csv(store, batch_id, buffer)
    buffer.seek(0)
    reader = csv.DictReader(buffer)
    rows = list(reader)
    assert n == len(rows)
    return reader.fieldnames, rows


def test_csv_has_003s_columns_first_then_parleys_one_row_per_conversation(store):
    b = build_scored_batch(store)
    header, rows = _csv(store, b.id)
    assert header[: len(CSV_003_COLUMNS)] == [
        "session_id",
        "scenario",
        "prompt_version",
        "score",
        "comment",
        "turns",
        "start_ts",
        "status",
        "duration_seconds",
        "evaluation_status",
    ]
    assert header == list(CSV_COLUMNS) and len(set(header)) == len(header)
    for column in (
        "spec_id",
        "name",
        "trial",
        "seed",
        "variables",
        "stop_reason",
        "outcome",
        "passed",
        "tool_calls",
        "bot_input_tokens",
        "user_output_tokens",
        "judge_input_tokens",
        "cost_usd",
        "policy_violations",
        "failed_checks",
    ):
        assert column in header
    assert len(rows) == 12
    assert [(r["spec_id"], r["trial"]) for r in rows[:4]] == [
        ("track_order#0", "1"),
        ("track_order#0", "2"),
        ("track_order#0", "3"),
        ("cancel_recent#1", "1"),
    ]


def test_csv_values_say_what_happened(store):
    b = build_scored_batch(store)
    _, rows = _csv(store, b.id)
    by_key = {(r["spec_id"], r["trial"]): r for r in rows}
    failed = by_key[("track_order#0", "3")]
    assert (failed["score"], failed["outcome"], failed["passed"], failed["status"]) == ("2", "failed", "false", "completed")
    assert failed["failed_checks"] == "bot tracks the order: track_order was never called"
    assert failed["evaluation_status"] == "success" and failed["prompt_version"] == "default"
    broken = by_key[("track_order#2", "2")]
    # a run parley broke is an error, not the bot's failure: the CSV never says "failed" for it
    assert (broken["status"], broken["outcome"], broken["score"], broken["evaluation_status"]) == (
        "error",
        "infrastructure_error",
        "",
        "not_evaluated",
    )
    assert broken["error"] == "provider 503 after 3 retries"
    judge_error = by_key[("cancel_recent#3", "1")]
    assert judge_error["score"] == "" and judge_error["evaluation_status"] == "failed"  # never a score of 1
    unknown = by_key[("track_order#0", "1")]
    assert unknown["cost_usd"] == "" and unknown["bot_input_tokens"] == "100"  # unknown cost: empty, not 0
    assert float(by_key[("track_order#0", "2")]["cost_usd"]) == pytest.approx(0.002 + 0.0005 + 0.002)
    assert by_key[("cancel_recent#3", "2")]["policy_violations"] == "1"
    assert json.loads(unknown["variables"]) == {}
    assert int(unknown["tool_calls"]) == len(real_conversation("track").tool_calls)


def test_comments_with_newlines_stay_on_one_csv_line(store):
    b = store.create_batch(batch())
    conv = conversation()
    store.save_conversation(b.id, spec(), conv, verdict(conv, comment="Good.\nPolite,\r\nquick"))
    buffer = io.StringIO()
    export_csv(store, b.id, buffer)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 2 and "Good. Polite,  quick" in lines[1]


def test_ndjson_is_one_object_per_conversation_with_its_transcript(store):
    b = build_scored_batch(store)
    buffer = io.StringIO()
    assert export_ndjson(store, b.id, buffer) == 12
    lines = buffer.getvalue().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 12
    first = records[0]
    assert list(first)[:7] == RESULT_003_FIELDS
    assert first["batch_id"] == b.id and first["scenario"] == "track_order"
    assert [m["content"] for m in first["messages"]] == [m.content for m in real_conversation("track").messages]
    assert first["tool_calls"][0]["name"] == real_conversation("track").tool_calls[0].name
    assert first["verdict"]["outcome"] == "passed" and first["cost_usd"] is None
    assert first["usage"]["judge"]["input_tokens"] == 300
    assert {r["session_id"] for r in records} == {row.id for row in store.conversation_rows(b.id)}


def test_json_has_003s_batch_fields_summary_and_every_result(store):
    b = build_scored_batch(store)
    doc = json.loads(export_json(store, b.id))
    assert list(doc)[:9] == [
        "batch_id",
        "status",
        "progress",
        "total_scenarios",
        "completed_scenarios",
        "failed_scenarios",
        "created_at",
        "started_at",
        "completed_at",
    ]
    assert (doc["batch_id"], doc["status"], doc["progress"], doc["total_scenarios"]) == (b.id, "completed", 100.0, 12)
    assert doc["completed_scenarios"] == 12 and doc["failed_scenarios"] == 1
    assert doc["summary"]["score_distribution"] == {"score_1": 2, "score_2": 1, "score_3": 6}
    assert doc["summary"]["score_statistics"]["mean"] == pytest.approx(22 / 9)
    assert doc["summary"]["total_usage"]["cost_usd"] is None
    assert doc["total_results"] == len(doc["results"]) == 12
    result = doc["results"][0]
    assert list(result)[:7] == RESULT_003_FIELDS
    assert result["messages"] and result["verdict"]["checks"]
    violating = [r for r in doc["results"] if r["policy_violations"]]
    assert len(violating) == 1 and violating[0]["verdict"]["checks"][0]["policy_violation"] is True


def test_an_empty_batch_exports_valid_empty_documents(store):
    b = store.create_batch(batch(planned=2))
    doc = json.loads(export_json(store, b.id))
    assert doc["results"] == [] and doc["total_results"] == 0 and doc["progress"] == 0.0
    assert list(iter_ndjson(store, b.id)) == []
    header, rows = _csv(store, b.id)
    assert header == list(CSV_COLUMNS) and rows == []


def test_exporting_twice_gives_the_same_bytes(store):
    b = build_scored_batch(store)
    assert export_json(store, b.id) == export_json(store, b.id)


def test_export_file_picks_the_format_from_the_suffix(store, tmp_path):
    b = build_scored_batch(store)
    assert export_file(store, b.id, tmp_path / "out" / "r.csv") == 12
    assert export_file(store, b.id, tmp_path / "r.ndjson") == 12
    assert export_file(store, b.id, tmp_path / "r.json") == 12
    assert (tmp_path / "out" / "r.csv").read_text().startswith("session_id,scenario,prompt_version,")
    assert len((tmp_path / "r.ndjson").read_text().splitlines()) == 12
    assert json.loads((tmp_path / "r.json").read_text())["total_results"] == 12
    with pytest.raises(ParleyError, match="export format"):
        export_file(store, b.id, tmp_path / "r.xlsx")
    with pytest.raises(ParleyError, match="no batch"):
        export_file(store, "nope-nope", tmp_path / "x.csv")


BIG = 3000


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "big.db"
    store = Store.open(path)
    b = store.create_batch(batch(planned=BIG))
    template = real_conversation("track")
    with store.db.atomic():  # one commit for the whole fixture: fast to build
        for i in range(BIG):
            conv = template.model_copy(update={"id": f"{i:08d}" + "0" * 24})
            store.save_conversation(
                b.id,
                spec(f"profile_{i % 50}", i, ORDER=f"ORD-{i}"),
                conv,
                verdict(conv, "passed" if i % 3 else "failed", 3 if i % 3 else 1),
            )
    yield store, b.id
    store.close()


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "json"])
def test_a_large_batch_exports_in_bounded_memory(big_store, tmp_path, fmt):
    store, batch_id = big_store
    out = tmp_path / f"big.{fmt}"
    tracemalloc.start()
    try:
        n = export_file(store, batch_id, out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == BIG
    size = out.stat().st_size
    assert peak < 50 * 2**20
    if fmt != "csv":
        assert peak < size / 3, (peak, size)  # streamed: far less than the whole document
    if fmt == "csv":
        with out.open(newline="") as fh:
            assert sum(1 for _ in csv.DictReader(fh)) == BIG
    elif fmt == "ndjson":
        with out.open() as fh:
            assert sum(1 for line in fh if json.loads(line)["session_id"]) == BIG
    else:
        assert json.loads(out.read_text())["total_results"] == BIG


def test_a_large_batch_lists_a_page_and_summarises_every_conversation(big_store):
    # how long it takes is bench/bench_summary.py's to measure (under 3 s for 3,000 conversations)
    from parley.core.reports.stats import summarize

    store, batch_id = big_store
    s = summarize(store, batch_id)
    rows = store.conversation_rows(batch_id, limit=100, offset=2900)
    assert s.done == BIG and s.passed == 2000 and len(rows) == 100
    assert len(s.profiles) == 50 and s.pass_k[0].value == pytest.approx(2000 / 3000)
