"""How often do the simulator-fault detectors flag the shipped suite's offline user (the goal: never)?

Run: .venv/bin/python bench/bench_user_faults.py [--seeds 20] [--trials 3]

Runs `parley run profiles/ --seed S --trials K` for S = 0 .. seeds-1, each in a child process on
a fresh database, and prints how many conversations were flagged `user_fault` out of how many
ran. The offline user plays the shipped profiles as they are meant to be played, so every flag
is a false positive of a detector.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(parley: Path, seed: int, trials: int) -> tuple[int, int, str]:
    """(conversations, flagged, the fault lines) of one batch."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                str(parley),
                "run",
                str(ROOT / "profiles"),
                "--seed",
                str(seed),
                "--trials",
                str(trials),
                "-c",
                "8",
                "--db",
                str(Path(tmp) / "b.db"),
            ],
            capture_output=True,
            text=True,
        ).stdout
    done = re.search(r"Conversations: (\d+) of \d+ done", out)
    flagged = re.search(r"(\d+) simulator faults?\b", out)
    if done is None or flagged is None:
        print(out[-3000:])
        raise SystemExit("no summary in the output")
    faults = "\n".join(line for line in out.splitlines() if "user fault (" in line)
    return int(done.group(1)), int(flagged.group(1)), faults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    parley = Path(sys.executable).parent / "parley"
    total = flagged = 0
    for seed in range(args.seeds):
        done, faults, lines = run(parley, seed, args.trials)
        total, flagged = total + done, flagged + faults
        if lines:
            print(f"seed {seed}:\n{lines}")
    print(f"command: {parley} run profiles/ --seed S --trials {args.trials}  (S = 0..{args.seeds - 1})")
    print(f"{flagged} of {total} conversations flagged as a simulator fault: false-positive rate {flagged / total:.2%}")


if __name__ == "__main__":
    main()
