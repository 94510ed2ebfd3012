"""Does the Sessions pane stay responsive with 10,000 stored conversations?

Run: .venv/bin/python bench/bench_sessions_pane.py [--rows 10000]

Fills a private database with cloned offline conversations (this part takes a while), then
times, headless at 120x36: opening the Sessions pane until its first page (200 rows) is shown,
loading one more page, a text search over every transcript, and an outcome filter.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parley.core.store import Store  # noqa: E402
from tests.test_store_fixtures import T0, conversation, spec, verdict  # noqa: E402


def fill(db: Path, rows: int) -> None:
    with Store.open(db) as store:
        for i in range(rows):
            conv = conversation("track" if i % 2 else "cancel", started=T0 + dt.timedelta(seconds=i))
            outcome = "passed" if i % 3 else "failed"
            store.save_conversation(None, spec("track_order" if i % 2 else "cancel_recent", i), conv, verdict(conv, outcome))


async def measure(rows: int) -> dict[str, float]:
    from textual.widgets import Input, Select

    from tests.test_tui_support import make_app, settle

    app = make_app(initial_pane="sessions")
    timings: dict[str, float] = {}
    async with app.run_test(size=(120, 36)) as pilot:
        start = time.perf_counter()
        await settle(pilot)
        timings["first page shown"] = time.perf_counter() - start
        table = app.query_one("#sessions-table")
        assert table.row_count == 200, table.row_count

        start = time.perf_counter()
        await pilot.press("l")
        await settle(pilot)
        timings["next page"] = time.perf_counter() - start
        assert table.row_count == 400

        search = app.query_one("#sessions-text", Input)
        search.value = "ORD-1001"
        start = time.perf_counter()
        search.focus()
        await pilot.press("enter")
        await settle(pilot)
        timings["text search (all transcripts)"] = time.perf_counter() - start

        search.value = ""
        await pilot.press("enter")
        await settle(pilot)
        start = time.perf_counter()
        app.query_one("#sessions-outcome", Select).value = "failed"
        await settle(pilot)
        timings["outcome filter"] = time.perf_counter() - start
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "parley.db"
        os.environ["PARLEY_DB"] = str(db)
        started = time.perf_counter()
        fill(db, args.rows)
        print(f"filled {args.rows:,} conversations in {time.perf_counter() - started:.1f} s")
        runs = [asyncio.run(measure(args.rows)) for _ in range(args.runs)]
    print(f"Sessions pane over {args.rows:,} conversations, median of {args.runs} (includes the UI settling):")
    for name in runs[0]:
        print(f"  {name:<32} {statistics.median(r[name] for r in runs) * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
