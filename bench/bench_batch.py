"""How fast is an offline batch, and how much memory does a large one take?

Run: .venv/bin/python bench/bench_batch.py [--trials 371] [--concurrency 8]

Runs `parley run profiles/ --trials K` (27 x K conversations, all offline) in a child process
on a fresh database, and prints conversations per second (as the command reports them) and
the child's peak resident memory. --trials 371 is a 10,017-conversation batch: results stream
to SQLite, so the peak stays flat however many conversations there are.
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    parley = Path(sys.executable).parent / "parley"
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        out = subprocess.run(
            [str(parley), "run", str(ROOT / "profiles"), "--trials", str(args.trials),
             "-c", str(args.concurrency), "--db", str(Path(tmp) / "bench.db")],
            capture_output=True, text=True,
        )
        wall = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    ran = re.search(r"Ran (\d+) conversations in ([\d.]+) s \(([\d.]+)/s\)", out.stdout)
    if out.returncode != 0 or ran is None:
        print(out.stdout[-2000:], out.stderr[-2000:], sep="\n")
        raise SystemExit(f"parley run exited {out.returncode}")
    print(
        f"{ran.group(1)} conversations in {ran.group(2)} s: {ran.group(3)} conversations/s "
        f"(concurrency {args.concurrency}); {wall:.1f} s with start-up and report; peak RSS {peak_mb:.0f} MB"
    )


if __name__ == "__main__":
    main()
