"""Does the app stay smooth while a big batch runs in it?

Run: .venv/bin/python bench/bench_app_batch.py [--trials 371] [--concurrency 8]

In one run, on the same machine:
1. `parley run profiles/ --trials K` in a child process (27 x K offline conversations; 371 makes
   10,017): its conversations per second, as the command reports them.
2. The app, headless at 120x36 in a child process on a fresh database: time to first frame,
   then the same batch launched into the Batches pane (as the launch form does) and watched to
   the end. A probe task on the app's event loop asks to wake every 5 ms; how late it wakes is
   how long the loop was stalled. Prints the largest stall, the 99th percentile, the number of
   draws, and the batch's throughput next to `parley run`'s.

Goals: largest stall under 100 ms, p99 under 30 ms, throughput within 20% of `parley run`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import asyncio, collections, gc, json, sys, threading, time, traceback
t0 = time.perf_counter()
from parley.tui.app.app import ParleyApp

TRIALS, CONCURRENCY, PROFILES = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
STACKS = len(sys.argv) > 4 and sys.argv[4] == "stacks"
PROBE_S = 0.005
STALL_S = 0.03  # with --stacks: the UI thread's stack is sampled while the loop is this late


class StallWatch:
    # A thread sampling the UI thread's stack every 2 ms while the loop is stalled: which code
    # the stalls are spent in (each sample is about 2 ms of stall).

    def __init__(self) -> None:
        self.tick = self.t0 = time.perf_counter()
        self.late: list[tuple[float, float, int]] = []  # stalls over 60 ms: length, when, draws by then
        self.ui_thread = threading.get_ident()
        self.inclusive: collections.Counter[str] = collections.Counter()
        self.stacks: collections.Counter[tuple[str, ...]] = collections.Counter()
        self.samples = 0
        self.episodes: list[tuple[int, collections.Counter[str]]] = []  # one per stall: samples, inclusive
        self._episode_tick = -1.0
        self.running = True
        self.collections: list[tuple[int, float, float]] = []  # the collector's runs over 20 ms
        self._gc_start = 0.0
        gc.callbacks.append(self._gc)
        threading.Thread(target=self._watch, daemon=True).start()

    def _gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        elif (spent := time.perf_counter() - self._gc_start) > 0.02:
            self.collections.append((info["generation"], spent, self._gc_start - self.t0))

    def _watch(self) -> None:
        while self.running:
            time.sleep(0.002)
            if time.perf_counter() - self.tick < STALL_S:
                continue
            frame = sys._current_frames().get(self.ui_thread)
            if frame is None:
                continue
            names = ["/".join(f.filename.split("/")[-2:]) + f":{f.name}" for f in traceback.extract_stack(frame)]
            self.samples += 1
            self.inclusive.update(set(names))
            self.stacks[tuple(names[-12:])] += 1
            if self.tick != self._episode_tick:  # a new stall
                self._episode_tick = self.tick
                self.episodes.append((0, collections.Counter()))
            n, seen = self.episodes[-1]
            seen.update(set(names[6:]))  # below the event loop's own frames
            self.episodes[-1] = (n + 1, seen)

    def report(self) -> str:
        lines = [f"{self.samples} samples of 2 ms taken while the UI loop was over {STALL_S * 1000:.0f} ms late", "inclusive:"]
        lines += [f"  {n:6d} {name}" for name, n in self.inclusive.most_common(40)]
        lines.append("garbage collections over 20 ms (generation, length, seconds after launch):")
        lines += [f"  gen {g} {spent * 1000:5.0f} ms at {at:6.2f} s" for g, spent, at in self.collections]
        lines.append("stalls over 60 ms (length, seconds after launch, draws by then):")
        lines += [f"  {lag * 1000:5.0f} ms at {at:6.2f} s, draw {draws}" for lag, at, draws in self.late]
        for n, seen in sorted(self.episodes, key=lambda e: -e[0])[:4]:
            lines.append(f"one of the longest stalls: {n} samples; where:")
            lines += [f"  {k:6d} {name}" for name, k in seen.most_common(24)]
        lines.append("innermost 12 frames, most frequent:")
        for stack, n in self.stacks.most_common(8):
            lines.append(f"  {n} samples:")
            lines += [f"      {name}" for name in stack]
        return "\n".join(lines)


class Bench(ParleyApp):
    def on_mount(self) -> None:
        super().on_mount()
        self.call_after_refresh(self._first_frame)

    def _first_frame(self) -> None:
        self.first_frame_s = time.perf_counter() - t0
        self.run_worker(self._bench(), exclusive=True)

    async def _probe(self, lags: list[float], stop: asyncio.Event, watch: StallWatch | None) -> None:
        while not stop.is_set():
            start = time.perf_counter()
            await asyncio.sleep(PROBE_S)
            now = time.perf_counter()
            lags.append(now - start - PROBE_S)
            if watch is not None:
                watch.tick = now
                if now - start - PROBE_S > 0.06:
                    watch.late.append((now - start - PROBE_S, start - watch.t0, self.query_one("#batches").draws))

    async def _bench(self) -> None:
        from parley.core.engine.batch_runner import prepare_batch
        from parley.core.records.batch import BatchOptions

        store = await asyncio.to_thread(self.store)
        options = BatchOptions(trials=TRIALS, concurrency=CONCURRENCY)
        prepared = await asyncio.to_thread(lambda: asyncio.run(prepare_batch(store, [PROFILES], options)))
        self.action_show_pane("batches")
        await asyncio.sleep(0.5)  # the pane shown and idle before the clock starts
        pane = self.query_one("#batches")
        lags: list[float] = []
        stop = asyncio.Event()
        watch = StallWatch() if STACKS else None
        probe = asyncio.create_task(self._probe(lags, stop, watch))
        started = time.perf_counter()
        pane.start(prepared)
        while pane.running_batch is not None:
            await asyncio.sleep(0.05)
        elapsed = time.perf_counter() - started
        finished = pane.feed_result
        stop.set()
        await probe
        if watch is not None:
            watch.running = False
            print(watch.report(), file=sys.stderr, flush=True)
        lags.sort()
        print("RESULT " + json.dumps({
            "first_frame_s": self.first_frame_s,
            "conversations": prepared.total,
            "rows_shown": pane.results_table.row_count,
            "elapsed_s": elapsed,
            "rate": prepared.total / elapsed,
            "runner_rate": finished.done / finished.elapsed_s,
            "max_stall_ms": lags[-1] * 1000,
            "p99_stall_ms": lags[int(len(lags) * 0.99)] * 1000,
            "p50_stall_ms": lags[len(lags) // 2] * 1000,
            "samples": len(lags),
            "draws": pane.draws,
        }), flush=True)
        self.exit()


Bench(initial_pane="chat").run(headless=True, size=(120, 36))
"""


def parley_run(trials: int, concurrency: int) -> float:
    parley = Path(sys.executable).parent / "parley"
    with tempfile.TemporaryDirectory() as tmp:
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
                str(Path(tmp) / "run.db"),
            ],
            capture_output=True,
            text=True,
        )
    ran = re.search(r"Ran (\d+) conversations in ([\d.]+) s \(([\d.]+)/s\)", out.stdout)
    if out.returncode != 0 or ran is None:
        print(out.stdout[-2000:], out.stderr[-2000:], sep="\n")
        raise SystemExit(f"parley run exited {out.returncode}")
    return float(ran.group(3))


def app_run(trials: int, concurrency: int, stacks: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"PARLEY_DB": str(Path(tmp) / "app.db"), "PATH": "/usr/bin:/bin", "HOME": tmp}
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(trials), str(concurrency), str(ROOT / "profiles"), "stacks" if stacks else ""],
            capture_output=True,
            text=True,
            cwd=tmp,
            env=env,
        )
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        print(out.stdout[-3000:], out.stderr[-3000:], sep="\n")
        raise SystemExit(f"the app run exited {out.returncode} without a result")
    if stacks:
        print(out.stderr)
    return json.loads(line.removeprefix("RESULT "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=371, help="27 x trials conversations (371: 10,017)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--stacks", action="store_true", help="also print where the UI loop's stalls are spent (sampled stacks)")
    parser.add_argument("--app-only", action="store_true", help="skip the `parley run` comparison")
    args = parser.parse_args()
    started = time.perf_counter()
    cli_rate = float("nan") if args.app_only else parley_run(args.trials, args.concurrency)
    app = app_run(args.trials, args.concurrency, args.stacks)
    ratio = app["rate"] / cli_rate
    print(f"batch: profiles/ --trials {args.trials} -c {args.concurrency} = {app['conversations']:,} conversations, offline")
    print(f"parley run:  {cli_rate:.0f} conversations/s")
    runner_ratio = app["runner_rate"] / cli_rate
    print(
        f"in the app:  {app['runner_rate']:.0f} conversations/s by the runner's clock, as parley run counts"
        f" ({runner_ratio:.0%} of parley run; goal >= 80%)"
    )
    print(f"             {app['rate']:.0f} conversations/s from launch to the last draw ({ratio:.0%}), {app['elapsed_s']:.1f} s")
    print(
        f"UI loop while it ran: largest stall {app['max_stall_ms']:.0f} ms (goal < 100), p99 {app['p99_stall_ms']:.1f} ms"
        f" (goal < 30), median {app['p50_stall_ms']:.1f} ms over {app['samples']:,} probes of 5 ms"
    )
    print(
        f"draws of the running batch: {app['draws']} ({app['draws'] / app['elapsed_s']:.1f}/s); rows shown at the end {app['rows_shown']:,}"
    )
    print(f"time to first frame: {app['first_frame_s'] * 1000:.0f} ms (in-process, cold imports)")
    print(f"(whole benchmark {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
