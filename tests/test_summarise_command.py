"""`parley summarise FILE`: a results file summarised as the simulation service's
summarise_results.py did (its options: --format csv|json, --output, --histogram, --quiet), with
the one summary every surface of parley shows.

parley's three export formats give the numbers the stored batch's own summary gives; a file in
the service's shape (written here from its README's result fields) gets outcomes by parley's
rules; the histogram is a real PNG whose bars are the counts; a file of another shape, or an
empty one, is one line saying so.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from parley.core.reports import HISTOGRAM_SIZE_PX
from parley.core.reports.charts import SCORE_COLOURS
from parley.core.store import Store
from parley.tui.cli.main import cli
from tests.test_store_fixtures import T0, batch, conversation, spec, verdict

# spec -> outcomes of its trials (and the score each gets)
MIX = {
    "track": [("passed", 3), ("failed", 1), ("passed", 2)],
    "cancel": [("bot_error", None), ("passed", 3), ("unverified", None)],
    "list": [("passed", 3), ("passed", 3), ("evaluation_error", None)],
}
SUMMARY_FIELDS = (
    "done",
    "passed",
    "failed",
    "bot_errors",
    "unverified",
    "evaluation_errors",
    "errors",
    "broken",
    "pass_rate",
    "pass_rate_interval",
    "pass_rate_denominator",
    "score_statistics",
    "score_distribution",
    "unscored",
    "turn_statistics",
    "cost_usd",
    "flaky_specs",
)


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, str, dict]:
    """A stored batch of MIX exported as JSON, NDJSON and CSV; its JSON report's summary."""
    folder = tmp_path_factory.mktemp("summarise")
    db = folder / "parley.db"
    with Store.open(db) as store:
        b = store.create_batch(batch(trials=3, planned=9, status="completed", started_at=T0))
        for index, (name, outcomes) in enumerate(MIX.items()):
            for trial, (outcome, score) in enumerate(outcomes, 1):
                stop = "bot_error" if outcome == "bot_error" else None
                conv = conversation("track", stop_reason=stop)
                error = "the judge timed out" if outcome == "evaluation_error" else None
                store.save_conversation(b.id, spec(name, index), conv, verdict(conv, outcome, score, error=error), trial)
    for fmt in ("json", "ndjson", "csv"):
        result = parley("report", b.id, "--db", db, "--output", folder / f"results.{fmt}")
        assert result.exit_code == 0, result.output
    stored = json.loads((folder / "results.json").read_text())["summary"]
    return folder, b.id, stored


@pytest.mark.parametrize("fmt", ["json", "ndjson", "csv"])
def test_each_export_summarises_to_the_stored_batchs_numbers(exported, fmt):
    folder, batch_id, stored = exported
    result = parley("summarise", folder / f"results.{fmt}", "--format", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    for field in SUMMARY_FIELDS:
        assert summary[field] == stored[field], field
    assert summary["judge_errors"] == (0 if fmt == "csv" else stored["judge_errors"] == 1)  # the CSV carries no verdict
    assert (summary["file"], summary["format"], summary["shape"], summary["batch_id"]) == (
        str(folder / f"results.{fmt}"),
        fmt,
        "parley",
        batch_id,
    )
    # the simulation service's summary fields, in its one meaning
    assert (summary["total_scenarios"], summary["successful_scenarios"], summary["failed_scenarios"]) == (9, 5, 1)
    assert summary["success_rate"] == pytest.approx(5 / 7)
    # the JSON document holds the batch's seed, so pass^k's intervals are its report's; the rows
    # of NDJSON and CSV do not (their pass^k values are the same)
    assert summary["seeded_by_batch"] == (fmt == "json")
    if fmt == "json":
        assert summary["pass_k"] == stored["pass_k"]
    assert [(p["k"], p["value"], p["specs"]) for p in summary["pass_k"]] == [(p["k"], p["value"], p["specs"]) for p in stored["pass_k"]]


def test_the_terminal_shows_the_lines_batches_show_prints(exported):
    folder, batch_id, stored = exported
    result = parley("summarise", folder / "results.ndjson")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"{folder / 'results.ndjson'}: NDJSON, parley's export, batch {batch_id}"
    shown = parley("batches", "show", batch_id, "--db", folder / "parley.db").stdout.splitlines()
    for start in ("Conversations: ", "Scores: "):  # the same words for the same numbers
        assert next(x for x in lines if x.startswith(start)) == next(x for x in shown if x.startswith(start))
    assert "Conversations: 9 of 9 done: 5 passed, 1 failed, 1 bot error (the bot's failures); counted apart: 1 unverified" in result.stdout
    assert any(line.startswith("Pass rate: 71.4% (5 of 7, 95% interval") for line in lines)
    assert "Scores: mean 2.50, median 3.0, std 0.84, min 1, max 3 (6 scored; 1 judge errors, unscored)" in lines
    histogram = [line.strip() for line in lines if " | " in line]
    assert [h.split(" | ")[0].strip() for h in histogram] == ["3", "2", "1", "no score"]
    assert [int(h.rsplit(" ", 1)[1]) for h in histogram] == [
        stored["score_distribution"]["score_3"],
        stored["score_distribution"]["score_2"],
        stored["score_distribution"]["score_1"],
        stored["unscored"],
    ]
    assert any(line.startswith("Turns: mean ") for line in lines) and any(line.startswith("Cost: $") for line in lines)


# ---- the simulation service's own files ---------------------------------------------------------

SERVICE_ROWS = [
    # its README's result fields: session_id, scenario, status, score, comment, total_turns, duration_seconds
    {
        "session_id": "s1",
        "scenario": "calm_reorder",
        "status": "completed",
        "score": 3,
        "comment": "Отлично",
        "total_turns": 8,
        "duration_seconds": 45.2,
        "cost": 0.02,
        "tokens": 900,
    },
    {
        "session_id": "s2",
        "scenario": "impatient",
        "status": "completed",
        "score": 2,
        "comment": "ok",
        "total_turns": 6,
        "duration_seconds": 30.0,
        "cost": 0.01,
        "tokens": 700,
    },
    {
        "session_id": "s3",
        "scenario": "confused",
        "status": "completed",
        "score": 1,
        "comment": "wrong item",
        "total_turns": 12,
        "duration_seconds": 80.5,
        "cost": 0.03,
        "tokens": 1500,
    },
    {
        "session_id": "s4",
        "scenario": "slow",
        "status": "timeout",
        "score": 1,
        "comment": "",
        "total_turns": 30,
        "duration_seconds": 90.0,
        "cost": 0.05,
        "tokens": 3000,
    },
    {
        "session_id": "s5",
        "scenario": "broken",
        "status": "failed",
        "score": None,
        "comment": "OpenAI error",
        "total_turns": 0,
        "duration_seconds": 1.0,
        "cost": 0.0,
        "tokens": 0,
    },
    {
        "session_id": "s6",
        "scenario": "judge_failed",
        "status": "completed",
        "score": 1,
        "comment": "Evaluation failed",
        "evaluation_status": "failed",
        "total_turns": 5,
        "duration_seconds": 20.0,
        "cost": 0.01,
        "tokens": 500,
    },
]


def write_service_ndjson(path: Path, rows=SERVICE_ROWS) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_file_of_the_simulation_services_shape_gets_outcomes_by_parleys_rules(tmp_path):
    path = write_service_ndjson(tmp_path / "batch_12345_20250608_120000.ndjson")
    result = parley("summarise", path, "--format", "json")
    assert result.exit_code == 0, result.output
    s = json.loads(result.stdout)
    assert s["shape"] == "003" and s["done"] == 6
    # 3 and 2 pass (a judge's minimum is 2), 1 fails, a timeout fails, a broken run is a legacy
    # error (the file does not say who broke it), a failed evaluation is an evaluation error
    assert (s["passed"], s["failed"], s["bot_errors"], s["legacy_errors"], s["evaluation_errors"]) == (2, 2, 0, 1, 1)
    assert (s["broken"], s["failed_scenarios"], s["judge_errors"]) == (1, 1, 1)
    assert s["pass_rate"] == 0.5 and s["pass_rate_denominator"] == 4
    # the failed evaluation's 1 is not a score: 4 scored, 2 without
    assert s["score_distribution"] == {"score_1": 2, "score_2": 1, "score_3": 1} and s["unscored"] == 2
    assert s["score_statistics"]["mean"] == pytest.approx(7 / 4)
    assert s["turn_statistics"]["max"] == 30 and s["duration_statistics"]["mean"] == pytest.approx((45.2 + 30 + 80.5 + 90 + 1 + 20) / 6)
    assert s["cost_usd"] == pytest.approx(0.12)
    text = parley("summarise", path).stdout
    assert "the simulation service's result fields" in text.splitlines()[0]
    assert "a score of 2 or more passes" in text and "Cost: $0.1200" in text


def test_the_services_csv_and_json_documents_read_alike(tmp_path):
    fields = [
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
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in SERVICE_ROWS:
        writer.writerow(
            {
                "session_id": r["session_id"],
                "scenario": r["scenario"],
                "prompt_version": "v1",
                "score": "" if r["score"] is None else r["score"],
                "comment": r["comment"],
                "turns": r["total_turns"],
                "start_ts": "2025-06-08T10:00:00",
                "status": r["status"],
                "duration_seconds": r["duration_seconds"],
                "evaluation_status": r.get("evaluation_status", "success"),
            }
        )
    (tmp_path / "results.csv").write_text(buffer.getvalue(), encoding="utf-8")
    (tmp_path / "results.json").write_text(json.dumps({"batch_id": "b-1", "results": SERVICE_ROWS, "total_results": 6}), encoding="utf-8")
    from_csv = json.loads(parley("summarise", tmp_path / "results.csv", "--format", "json").stdout)
    from_json = json.loads(parley("summarise", tmp_path / "results.json", "--format", "json").stdout)
    for field in ("outcomes", "pass_rate", "score_distribution", "unscored", "turn_statistics", "duration_statistics"):
        assert from_csv[field] == from_json[field], field
    assert (
        from_json["batch_id"] == "b-1" and from_csv["cost_usd"] is None and from_csv["cost_unknown"] == 6
    )  # no cost column: unknown, never 0


# ---- the options ----------------------------------------------------------------------------------


def test_output_format_and_quiet(tmp_path):
    path = write_service_ndjson(tmp_path / "results.ndjson")
    quiet = parley("summarise", path, "--output", tmp_path / "summary.json", "--quiet")
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["passed"] == 2 and saved["file"] == str(path)
    shown = parley("summarise", path, "--format", "csv", "--output", tmp_path / "summary.txt")
    # the --format asked for is the whole answer, in the file: nothing else on stdout
    assert shown.stdout == "" and f"wrote {tmp_path / 'summary.txt'} (the summary as csv)" in shown.stderr
    told = parley("summarise", path, "--output", tmp_path / "told.json")  # no --format: the file, and the lines for people
    assert told.stdout.startswith(f"{path}: NDJSON")
    rows = dict(csv.reader(io.StringIO((tmp_path / "summary.txt").read_text())))
    assert rows["field"] == "value" and rows["passed"] == "2" and rows["score_statistics.mean"] == "1.75"
    assert rows["outcomes.error"] == "1" and rows["pass_k.0.value"] == "0.5"
    by_suffix = parley("summarise", path, "--output", tmp_path / "summary.csv", "-q")
    assert by_suffix.exit_code == 0 and (tmp_path / "summary.csv").read_text().startswith("field,value\n")
    on_stdout = parley("summarise", path, "--format", "csv")
    assert on_stdout.stdout.startswith("field,value\nplanned,6\ndone,6\n")


def bar_heights(png: Path) -> list[int]:
    """Each score bar's height in pixels, found by its colour (1, 2, 3, no score)."""
    image = Image.open(png).convert("RGB")
    width, height = image.size
    pixels = image.load()
    heights = []
    for colour in SCORE_COLOURS:
        rgb = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
        columns = [sum(1 for y in range(height) if pixels[x, y] == rgb) for x in range(0, width, 2)]
        heights.append(max(columns))
    return heights


def test_the_histogram_is_a_png_whose_bars_are_the_counts(tmp_path):
    rows = [dict(SERVICE_ROWS[0], session_id=f"a{i}") for i in range(8)]  # 8 threes
    rows += [dict(SERVICE_ROWS[1], session_id=f"b{i}") for i in range(4)]  # 4 twos
    rows += [dict(SERVICE_ROWS[2], session_id=f"c{i}") for i in range(2)]  # 2 ones
    rows += [dict(SERVICE_ROWS[4], session_id=f"d{i}") for i in range(6)]  # 6 without a score
    path = write_service_ndjson(tmp_path / "$weird [red]name.ndjson", rows)
    png = tmp_path / "score_dist.png"
    result = parley("summarise", path, "--histogram", png)
    assert result.exit_code == 0, result.output
    assert f"wrote {png} (the score distribution of 20 conversations)" in result.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size == HISTOGRAM_SIZE_PX
    ones, twos, threes, unscored = bar_heights(png)
    assert threes > unscored > twos > ones > 0
    for height, count in ((ones, 2), (twos, 4), (unscored, 6)):
        assert height / threes == pytest.approx(count / 8, abs=0.02)
    svg = tmp_path / "score_dist.svg"
    assert parley("summarise", path, "--histogram", svg, "-q").exit_code == 0
    assert svg.read_text().lstrip().startswith("<?xml") and "$weird [red]name.ndjson: 20 conversations" in svg.read_text()


def test_a_histogram_file_must_be_a_picture(tmp_path):
    path = write_service_ndjson(tmp_path / "results.ndjson")
    result = CliRunner().invoke(cli, ["summarise", str(path), "--histogram", str(tmp_path / "scores.jpg")])
    assert result.exit_code == 2 and "the histogram is a .png (or .svg) file" in result.output and "Traceback" not in result.output


# ---- files that are not results -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("empty.ndjson", "", "empty.ndjson is empty: there are no conversations to summarise"),
        ("blank.csv", "\n\n", "blank.csv is empty"),
        ("nothing.json", '{"results": []}', "nothing.json holds no conversations"),
        ("profile.yaml", "user:\n  goals: [track]\n", "profile.yaml:1: not a results file: no `session_id` or `spec_id` column"),
        (
            "people.csv",
            "name,age\nann,3\n",
            "people.csv:1: not a results file: no `session_id` or `spec_id` column (its columns: name, age)",
        ),
        ("other.json", '{"batches": []}', "other.json: not a results file: a JSON document with no `results` list"),
        ("broken.ndjson", '{"session_id": "a", "status": "completed", "score": 3}\n{"session_id": \n', "broken.ndjson:2:16: not JSON"),
        ("nostatus.ndjson", '{"session_id": "a", "score": 3}\n', "nostatus.ndjson:1: no `status`"),
        ("odd.ndjson", '{"session_id": "a", "status": "done", "score": 3}\n', "odd.ndjson:1: status 'done' is not one of"),
        ("five.ndjson", '{"session_id": "a", "status": "completed", "score": 5}\n', "five.ndjson:1: score 5 is not 1, 2 or 3"),
        (
            "many.ndjson",
            '{"session_id": "a", "status": "completed", "score": 3, "turns": "many"}\n',
            "many.ndjson:1: turns: Input should be a valid integer, unable to parse string as an integer (got 'many')",
        ),
        (
            "nan.json",
            '[{"spec_id": "a#0", "outcome": "passed", "duration_s": NaN}]',
            "nan.json: result 1: duration nan is not a finite number",
        ),
        ("list.ndjson", "[1, 2]\n", "list.ndjson:1: not a result: a list where an object was expected"),
        ("latin1.csv", "session_id,status\nq,completed\xe9\n", "latin1.csv: not UTF-8 text"),
    ],
)
def test_a_file_of_another_shape_is_one_line_naming_it_and_what_is_missing(tmp_path, name, content, said):
    path = tmp_path / name
    if name == "latin1.csv":
        path.write_bytes(content.encode("latin-1"))
    else:
        path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(cli, ["summarise", str(path)])
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {tmp_path}/") and said in line, line
    assert result.stdout == ""
