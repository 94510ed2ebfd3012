"""How long does `parley mutate` of the shipped suite take offline? The goal: under 60 s here.

Run: .venv/bin/python bench/bench_mutate.py [RUNS]

Runs `parley mutate profiles` (the base batch and one batch per mutant, every mutant, offline) as a
user would, in a fresh database each time, and prints the wall time of each run, the median, and
the score line it printed.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 60.0


def one_run() -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        done = subprocess.run(
            [str(ROOT / ".venv/bin/parley"), "mutate", "profiles", "--db", str(Path(folder) / "parley.db")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        took = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"parley mutate failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    score = next((line for line in done.stdout.splitlines() if line.startswith("mutation score")), "no score line")
    return took, score


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    times = []
    score = ""
    for i in range(runs):
        took, score = one_run()
        times.append(took)
        print(f"run {i + 1}: {took:.1f} s")
    median = statistics.median(times)
    print(
        f"parley mutate profiles (offline, every mutant): median {median:.1f} s over {runs} runs (goal < {GOAL_S:.0f} s: {'met' if median < GOAL_S else 'NOT met'})"
    )
    print(score)


if __name__ == "__main__":
    main()
