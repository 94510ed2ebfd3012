"""The pytest plugin's overhead: the shipped suite through `pytest --parley profiles/` against
`parley run profiles/`, in the same run. (The goal: within 1.5x the wall time, pytest's start-up
included.)

Run: .venv/bin/python bench/bench_pytest_plugin.py [--runs 5]

Each run is a fresh process from the repository's root, on a database of its own (offline roles:
no key, no network), the three commands interleaved so a busy machine weighs on each alike:
- `parley run profiles/`;
- `pytest --parley profiles/` as a project with parley alone has it (PYTEST_DISABLE_PLUGIN_AUTOLOAD
  and `-p parley.tui.pytest_plugin`): the plugin's own cost;
- `pytest --parley profiles/` with every plugin this environment has installed (pytest-xdist,
  hypothesis, ...), loaded as a bare `pytest` loads them: what a developer here waits.
Prints each command's median and runs, and the ratios to `parley run`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOAL = 1.5


def commands(db: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARLEY_", "PYTEST_"))}
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--parley", "profiles/"]
    return {
        "parley run profiles/": ([sys.executable, "-m", "parley.tui.cli.main", "run", "profiles/", "--db", str(db / "run.db")], env),
        "pytest --parley (parley's plugin alone)": (
            [*pytest, "-p", "parley.tui.pytest_plugin", "--parley-db", str(db / "alone.db")],
            {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        ),
        "pytest --parley (every installed plugin)": ([*pytest, "--parley-db", str(db / "all.db")], env),
    }


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    walls: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            folder = Path(tmp) / f"run-{i}"
            folder.mkdir()
            for name, (argv, env) in commands(folder).items():
                walls.setdefault(name, []).append(timed(argv, env))
    base = statistics.median(walls["parley run profiles/"])
    print(f"the shipped suite (profiles/, offline roles), {args.runs} fresh processes each, wall time:")
    for name, runs in walls.items():
        median = statistics.median(runs)
        print(f"  {name:42} median {median:6.2f} s  x{median / base:4.2f}   runs: {', '.join(f'{r:.2f}' for r in runs)}")
    for name, runs in list(walls.items())[1:]:
        ratio = statistics.median(runs) / base
        print(f"  goal {name} within {GOAL}x parley run: {'ok' if ratio <= GOAL else 'MISSED'} ({ratio:.2f}x)")


if __name__ == "__main__":
    main()
