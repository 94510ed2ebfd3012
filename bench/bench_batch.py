"""How fast is an offline batch, and how much memory does a large one take?

Run: .venv/bin/python bench/bench_batch.py [--trials 371] [--concurrency 8]

Runs `parley run profiles/ --trials K` (27 x K conversations, all offline) in a child process
on a fresh database, and prints conversations per second (as the command reports them) and
the child's peak resident memory. --trials 371 is a 10,017-conversation batch: results stream
to SQLite, so the peak stays flat however many conversations there are.

With --storm SHARE (e.g. `--storm 0.4 --concurrency 16 --repeat 1`) the bot is an LLM on the
fake OpenAI-compatible server (tests/fake_openai_server.py, in its own process) that answers
SHARE of the calls 429 with `Retry-After: 0.3`: it prints how many conversations ended in an
error (the goal is 0), the rate limits absorbed and how low the concurrency went.
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(
    parley: Path, trials: int, concurrency: int, extra: list[str] | None = None, env: dict | None = None
) -> tuple[int, float, float, float]:
    """One batch in a child process: (conversations, seconds, conversations/s, wall seconds)."""
    global LAST_OUTPUT
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        out = subprocess.run(
            [
                str(parley),
                "run",
                str(ROOT / "profiles"),
                "--trials",
                str(trials),
                "-c",
                str(concurrency),
                "--db",
                str(Path(tmp) / "bench.db"),
                *(extra or []),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        wall = time.perf_counter() - started
    LAST_OUTPUT = out.stdout
    ran = re.search(r"Ran (\d+) conversations in ([\d.]+) s \(([\d.]+)/s\)", out.stdout)
    if ran is None or (out.returncode != 0 and not extra):
        print(out.stdout[-2000:], out.stderr[-2000:], sep="\n")
        raise SystemExit(f"parley run exited {out.returncode}")
    return int(ran.group(1)), float(ran.group(2)), float(ran.group(3)), wall


LAST_OUTPUT = ""


def storm(parley: Path, share: float, trials: int, concurrency: int) -> None:
    """The batch against a fake LLM bot that answers `share` of its calls 429."""
    import os

    sys.path.insert(0, str(ROOT))
    from tests.fake_openai_server import fake_server_process

    with fake_server_process(storm=share, retry_after="0.3") as base_url:
        env = {**os.environ, "FAKE_BASE_URL": base_url}
        count, seconds, _, _ = run_once(parley, trials, concurrency, ["--bot", "openai-api/fake/m"], env)
    out = LAST_OUTPUT
    counts = re.search(
        r"(\d+) bot errors? \(the bot's failures\); counted apart: .*?(\d+) simulator errors?, (\d+) infrastructure errors?", out
    )
    absorbed = re.search(r"(\d+) rate limits \(429\) absorbed, concurrency went down to (\d+)", out)
    if counts is None:
        print(out[-3000:])
        raise SystemExit("no summary in the output")
    errors = sum(int(n) for n in counts.groups())
    print(
        f"command: FAKE_BASE_URL=<fake server, {share:.0%} of calls 429, Retry-After 0.3> {parley} run profiles/ "
        f"--bot openai-api/fake/m --trials {trials} -c {concurrency}"
    )
    print(
        f"{count} conversations in {seconds:.1f} s; conversations ended in an error: {errors} "
        f"(bot, simulator, infrastructure); "
        + (f"{absorbed.group(1)} rate limits absorbed, concurrency down to {absorbed.group(2)}" if absorbed else "no rate limit seen")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of")
    parser.add_argument("--storm", type=float, default=0.0, help="a fake LLM bot answering this share of calls 429")
    args = parser.parse_args()
    parley = Path(sys.executable).parent / "parley"
    if args.storm:
        storm(parley, args.storm, args.trials, args.concurrency)
        return
    runs = [run_once(parley, args.trials, args.concurrency) for _ in range(args.repeat)]
    # ru_maxrss of children is the largest any child reached: the peak of the biggest run
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    count = runs[0][0]
    rates = [r[2] for r in runs]
    print(f"command: {parley} run profiles/ --trials {args.trials} -c {args.concurrency} (x{args.repeat})")
    print(
        f"{count} conversations per run; conversations/s median {statistics.median(rates):.0f} "
        f"(runs: {', '.join(f'{r:.0f}' for r in rates)}); median seconds "
        f"{statistics.median(r[1] for r in runs):.2f} (wall with start-up and report "
        f"{statistics.median(r[3] for r in runs):.2f}); peak RSS {peak_mb:.0f} MB"
    )


if __name__ == "__main__":
    main()
