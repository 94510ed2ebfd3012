"""How long until the app shows its first frame (the spec: under 1 s), and how long `parley --help`
takes and how many of parley's modules it imports (under 0.2 s and under 15)?

Run: .venv/bin/python bench/bench_startup.py [--runs 5] [--pane chat]

Each run is a fresh Python process (cold imports, as `parley` starts) that runs ParleyApp
headless at 120x36 on a private, empty database and exits as soon as the first frame has been
painted (`call_after_refresh` from `on_mount`). Prints the median and every run of:
- wall: from spawning the process to the first frame (what a person waits);
- in-process: from the child's first line to the first frame (imports + compose + first paint).
Then `parley --help`, each run a fresh process too: its wall time (spawn to exit), and the parley
modules it imported (listing the commands reads their lines from the registry, importing none).
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

CHILD = r"""
import time
t0 = time.perf_counter()
import sys
from parley.tui.app.app import ParleyApp

class FirstFrame(ParleyApp):
    def on_mount(self) -> None:
        super().on_mount()
        self.call_after_refresh(self._painted)

    def _painted(self) -> None:
        print(f"FIRST_FRAME {time.perf_counter() - t0:.6f}", flush=True)
        self.exit()

FirstFrame(initial_pane=sys.argv[1]).run(headless=True, size=(120, 36))
"""


def one_run(pane: str, db: Path) -> tuple[float, float]:
    env = {**os.environ, "PARLEY_DB": str(db)}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, pane], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    wall = in_process = None
    for line in proc.stdout:
        if line.startswith("FIRST_FRAME"):
            wall = time.perf_counter() - start
            in_process = float(line.split()[1])
            break
    proc.wait(timeout=60)
    if wall is None or in_process is None:
        raise SystemExit(f"the app never painted a frame:\n{proc.stderr.read() if proc.stderr else ''}")
    return wall, in_process


HELP_CHILD = r"""
import contextlib, io, sys
sys.argv = ["parley", "--help"]
from parley.tui.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print("MODULES", len([m for m in sys.modules if m == "parley" or m.startswith("parley.")]))
"""


def help_run() -> tuple[float, int]:
    """One `parley --help` in a fresh process: (wall seconds of the real command, parley modules imported)."""
    parley = Path(sys.executable).parent / "parley"
    start = time.perf_counter()
    subprocess.run([str(parley), "--help"], cwd=REPO, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    counted = subprocess.run([sys.executable, "-c", HELP_CHILD], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return wall, int(counted.split("MODULES")[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pane", default="chat", choices=["chat", "profiles", "batches", "sessions"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [one_run(args.pane, Path(tmp) / f"run-{i}" / "parley.db") for i in range(args.runs)]
    walls = [w for w, _ in runs]
    inner = [p for _, p in runs]
    print(f"parley start-up to first frame ({args.pane} pane, 120x36, headless), {args.runs} fresh processes:")
    print(f"  wall        median {statistics.median(walls) * 1000:6.0f} ms   runs: {', '.join(f'{w * 1000:.0f}' for w in walls)}")
    print(f"  in-process  median {statistics.median(inner) * 1000:6.0f} ms   runs: {', '.join(f'{p * 1000:.0f}' for p in inner)}")
    print(f"  target < 1000 ms: {'ok' if statistics.median(walls) < 1.0 else 'MISSED'}")
    helps = [help_run() for _ in range(args.runs)]
    help_walls = [w for w, _ in helps]
    modules = max(n for _, n in helps)
    print(f"parley --help, {args.runs} fresh processes:")
    print(f"  wall        median {statistics.median(help_walls) * 1000:6.0f} ms   runs: {', '.join(f'{w * 1000:.0f}' for w in help_walls)}")
    print(f"  parley modules imported: {modules}")
    fast = statistics.median(help_walls) < 0.2 and modules < 15
    print(f"  target < 200 ms and < 15 modules: {'ok' if fast else 'MISSED'}")


if __name__ == "__main__":
    main()
