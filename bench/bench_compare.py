"""How long does `parley compare` take on two 1,000-conversation batches? (Goal: under 0.5 s for the
whole command in a fresh process, start-up included.)

Run: .venv/bin/python bench/bench_compare.py [--specs 200] [--trials 5] [--repeat 5]

Fills a private database with two batches of specs x trials conversations (cloned offline
transcripts, outcomes drawn with a fixed seed: about 1 in 10 changes between the batches, with
failed checks and scores to match), then times, each --repeat times, the comparison alone
(parley.core.reports.compare.compare_batches: reading both batches, matching, the paired test,
intervals) and the whole command (`parley compare BASE NEW` in a fresh process: start-up,
comparison, markdown), with the process's CPU time and `parley --help` beside it, since on a
shared machine a fresh process's wall time is mostly everybody else's load. Prints the median
and the worst of each.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parley.core.reports import (
    compare_batches,  # noqa: E402
    render_comparison,  # noqa: E402
)
from parley.core.store import Store  # noqa: E402
from tests.comparison_fixtures import FAIL, PASS, Result, make_batch  # noqa: E402

GOAL_S = 0.5


def outcomes(specs: int, trials: int, rng: random.Random, flip: float, base: dict | None = None) -> dict:
    drawn = {}
    for s in range(specs):
        for t in range(1, trials + 1):
            key = (f"spec_{s:04d}#0", t)
            if base is None:
                drawn[key] = PASS if rng.random() < 0.8 else FAIL
            elif rng.random() < flip:
                drawn[key] = FAIL if base[key].outcome == "passed" else Result(score=2)
            else:
                drawn[key] = base[key]
    return drawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=200)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(16)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        started = time.perf_counter()
        with Store.open(db) as store:
            first = outcomes(args.specs, args.trials, rng, 0.0)
            base = make_batch(store, first, minutes=1, trials=args.trials)
            new = make_batch(store, outcomes(args.specs, args.trials, rng, 0.1, first), minutes=2, trials=args.trials)
        print(f"filled 2 x {len(first)} conversations in {time.perf_counter() - started:.1f} s")

        core_times = []
        for _ in range(args.repeat):
            with Store.open(db) as store:
                start = time.perf_counter()
                comparison = compare_batches(store, base.id, new.id)
                render_comparison(comparison)
                core_times.append(time.perf_counter() - start)
        cli_times, cli_cpu, help_times, help_cpu = [], [], [], []
        for _ in range(args.repeat):
            for command, wall, cpu in (
                (["compare", base.id, new.id, "--db", str(db)], cli_times, cli_cpu),
                (["--help"], help_times, help_cpu),
            ):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "parley.tui.cli.main", *command], capture_output=True, text=True, check=False)
                wall.append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                if done.returncode != 0:
                    raise SystemExit(done.stderr)
    t = comparison.paired_test
    print(
        f"compared {comparison.matched_pairs} pairs: {t.regressions} regressions, {t.fixes} fixes, "
        f"{len(comparison.changes)} changes in all; exact McNemar p = {t.p_value:.3g}"
    )
    for what, times in (("compare_batches + markdown", core_times), ("`parley compare` (fresh process)", cli_times)):
        verdict = "under" if max(times) < GOAL_S else "OVER"
        print(f"{what}: median {statistics.median(times):.3f} s, worst {max(times):.3f} s ({verdict} the {GOAL_S:g} s goal)")
    print(
        f"  the process's CPU time: median {statistics.median(cli_cpu):.3f} s; `parley --help` alone in this run: "
        f"median {statistics.median(help_times):.3f} s wall, {statistics.median(help_cpu):.3f} s CPU "
        f"(wall above CPU: the machine's other load; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(f"command: .venv/bin/python bench/bench_compare.py --specs {args.specs} --trials {args.trials} --repeat {args.repeat}")


if __name__ == "__main__":
    main()
