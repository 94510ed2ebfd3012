"""Does the batch service stay responsive while it runs batches?

Run: .venv/bin/python bench/bench_service_load.py [--batches 20] [--trials 10] [--pause 0.02]

Starts `parley serve` in a child process on a fresh database, then in one run:
1. idle: one finished batch, GET /api/batches/ID for a few seconds;
2. under load: launches BATCHES batches of profiles/ x TRIALS (27 x TRIALS offline
   conversations each: 20 x 270 by default) and times the same GET on the last one for as long as
   it runs.
Prints p50/p99 (ms) of both, the conversations per second the service kept up meanwhile, and
how long the launches took. The goal on a 2-core machine: p99 under load below 200 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
ACTIVE = ("pending", "running")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def timed_gets(client: httpx.Client, url: str, *, seconds: float, pause: float, while_active: bool) -> list[float]:
    """Milliseconds of each GET `url`, for `seconds` (or, `while_active`, until the batch ends)."""
    times: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        if while_active and response.json()["status"] not in ACTIVE:
            break
        time.sleep(pause)
    return times


def summary(label: str, times: list[float]) -> str:
    return (
        f"{label}: {len(times)} requests, p50 {percentile(times, 50):.1f} ms, p99 {percentile(times, 99):.1f} ms, "
        f"max {max(times):.1f} ms (mean {statistics.fmean(times):.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--trials", type=int, default=10, help="runs of each of profiles/' 27 conversations")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--pause", type=float, default=0.02, help="seconds between timed requests")
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--max-seconds", type=float, default=600.0)
    args = parser.parse_args()
    parley = Path(sys.executable).parent / "parley"
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp, (Path(tmp) / "serve.log").open("wb") as log:
        command = [str(parley), "serve", "--port", str(port), "--db", str(Path(tmp) / "bench.db"),
                   "--profiles-dir", str(ROOT / "profiles"), "--log-level", "warning"]  # fmt: skip
        server = subprocess.Popen(command, cwd=tmp, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "NO_COLOR": "1"})
        base = f"http://127.0.0.1:{port}/api"
        try:
            with httpx.Client(timeout=60) as client:
                for _ in range(300):
                    with contextlib.suppress(httpx.TransportError):
                        if client.get(f"{base}/health").status_code == 200:
                            break
                    time.sleep(0.1)
                body = {"profiles": [str(ROOT / "profiles")], "trials": args.trials, "concurrency": args.concurrency}

                def launch() -> str:
                    response = client.post(f"{base}/batches", json=body)
                    response.raise_for_status()
                    return response.json()["batch_id"]

                first = launch()
                while client.get(f"{base}/batches/{first}").json()["status"] in ACTIVE:
                    time.sleep(0.2)
                idle = timed_gets(client, f"{base}/batches/{first}", seconds=args.idle_seconds, pause=args.pause, while_active=False)

                started = time.perf_counter()
                ids = [launch() for _ in range(args.batches)]
                launches_s = time.perf_counter() - started
                loaded = timed_gets(client, f"{base}/batches/{ids[-1]}", seconds=args.max_seconds, pause=args.pause, while_active=True)
                for batch_id in ids:
                    while client.get(f"{base}/batches/{batch_id}").json()["status"] in ACTIVE:
                        time.sleep(0.2)
                views = [client.get(f"{base}/batches/{batch_id}").json() for batch_id in ids]
        finally:
            server.terminate()
            server.wait(timeout=60)
    began = min(dt.datetime.fromisoformat(v["started_at"]) for v in views)
    ended = max(dt.datetime.fromisoformat(v["completed_at"]) for v in views)
    done = sum(v["completed_scenarios"] for v in views)
    span = (ended - began).total_seconds()
    print(f"command: {sys.executable} bench/bench_service_load.py --batches {args.batches} --trials {args.trials} --pause {args.pause}")
    print(summary("idle         GET /api/batches/ID", idle))
    print(summary("under load   GET /api/batches/ID", loaded))
    print(
        f"load: {args.batches} batches x {27 * args.trials} offline conversations ({done} done, "
        f"{sum(v['status'] == 'completed' for v in views)} batches completed) in {span:.1f} s = {done / span:.0f} conversations/s; "
        f"the {args.batches} POSTs took {launches_s:.1f} s"
    )
    for view in views:
        if view["status"] != "completed":
            print(f"batch {view['batch_id']} {view['status']}: {view['error']}")
    goal = percentile(loaded, 99) < 200
    print(f"goal p99 under load < 200 ms: {'met' if goal else 'NOT met'}")


if __name__ == "__main__":
    main()
