"""How far do worker processes take a batch past one process's CPU ceiling?

Run: .venv/bin/python bench/bench_workers.py [--concurrency 64 256 512] [--workers 1 2 4] [--calls 4000]

Serves the fake OpenAI-compatible server (tests/fake_openai_server.py's) in its own process,
answering every call after --delay-ms (200), with the bot and the simulated customer on it and
the offline judge. Then, all in one run, for each concurrency C (a batch of a multiple of C
conversations of one shipped profile, about --calls model calls):
- ideal: the latency-bound figure, C / delay;
- bare: the calls through one `openai.AsyncOpenAI` with C in flight (bench_llm_overhead.py's);
- 1 process: `parley run` as it is, one asyncio runner (no Ray);
- N workers: the same batch sharded over N worker processes of a local Ray instance
  (parley.core.engine.distributed), C being the total.
For each it prints calls/s and, over the same span, the CPU time per second of wall time
(cores busy) of the coordinating process, of the workers, of the fake server, and of the whole
machine (/proc/stat: every process, other users' included). A figure whose process is near one
core is CPU-bound there; the machine near its core count means nothing more can be had on it.

The last lines say, per C, whether 2 workers reached 1.5x one process, and what the per-call
CPU costs measured here would give on a machine with enough cores (each worker and the server
on their own core): min(ideal, workers x 1000 / worker ms per call, 1000 / server ms per call,
1000 / coordinator ms per call).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

FAKE = "openai-api/fake/m"
PROFILE = ROOT / "profiles" / "track_shipped_order.yaml"
TICK = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_busy_s() -> float:
    """CPU seconds every core of the machine has spent busy so far."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICK


@dataclass
class Measured:
    calls: int
    wall_s: float
    coordinator_s: float
    workers_s: float
    server_s: float
    machine_s: float
    errors: int = 0

    @property
    def rate(self) -> float:
        return self.calls / self.wall_s

    def cores(self, cpu_s: float) -> float:
        return cpu_s / self.wall_s

    def ms_per_call(self, cpu_s: float) -> float:
        return cpu_s * 1000 / self.calls


class Span:
    """CPU of this process, the workers, the server and the machine over a stretch of wall time."""

    def __init__(self, server_pid: int, worker_pids: list[int]) -> None:
        self.server_pid, self.worker_pids = server_pid, worker_pids

    def __enter__(self) -> Span:
        self.wall, self.own = time.perf_counter(), time.process_time()
        self.workers = sum(process_cpu_s(p) for p in self.worker_pids)
        self.server, self.machine = process_cpu_s(self.server_pid), machine_busy_s()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall_s = time.perf_counter() - self.wall
        self.own_s = time.process_time() - self.own
        self.workers_s = sum(process_cpu_s(p) for p in self.worker_pids) - self.workers
        self.server_s = process_cpu_s(self.server_pid) - self.server
        self.machine_s = machine_busy_s() - self.machine

    def measured(self, calls: int, errors: int = 0) -> Measured:
        return Measured(calls, self.wall_s, self.own_s, self.workers_s, self.server_s, self.machine_s, errors)


async def bare(base_url: str, server_pid: int, calls: int, concurrency: int) -> Measured:
    from bench_llm_overhead import bare_sdk

    with Span(server_pid, []) as span:
        await bare_sdk(base_url, calls, concurrency)
    return span.measured(calls)


async def batch(server_pid: int, pool: object | None, conversations: int, concurrency: int, max_turns: int) -> Measured:
    """One batch of PROFILE x `conversations`, here (pool None) or over the pool's workers."""
    from parley.core.engine import BatchRunner, prepare_batch
    from parley.core.models import aclose_clients
    from parley.core.records import BatchOptions, RoleModels
    from parley.core.store import Store, role_usage

    options = BatchOptions(
        models=RoleModels(bot=FAKE, user=FAKE, judge="offline"),
        concurrency=concurrency,
        trials=conversations,
        seed=7,
        max_turns=max_turns,
        timeout_s=120.0,
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db")
        try:
            prepared = await prepare_batch(store, [PROFILE], options)
            if pool is None:
                runner = BatchRunner(store, prepared)
                pids: list[int] = []
            else:
                from parley.core.engine.distributed import ShardedRunner

                runner = ShardedRunner(store, prepared, pool=pool)  # type: ignore[arg-type]
                pids = pool.pids()  # type: ignore[attr-defined]
            with Span(server_pid, pids) as span:
                result = await runner.run()
            calls = sum(u.calls for u in role_usage(store, result.batch_id))
        finally:
            await aclose_clients()
            store.close()
    return span.measured(calls, result.errors)


def serve(delay_ms: int) -> None:
    """tests/fake_openai_server.py's server, answering "ok" after `delay_ms`, until killed. As its
    own `main` serves it, but keeping idle connections a minute (uvicorn's default is 5 s): with
    hundreds of connections on a loaded machine, a connection the server closes while the client
    sends on it is a connection error the bare SDK (retries off) would die of."""
    import uvicorn

    from tests.fake_openai_server import FakeOpenAIServer, loopback_socket

    server = FakeOpenAIServer()
    server.fixed_delay_ms = delay_ms
    server.record_requests = False
    sock = loopback_socket(0)
    host, port = sock.getsockname()[:2]
    print(f"fake OpenAI server listening on http://{host}:{port}/v1", flush=True)
    config = uvicorn.Config(server.app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=60)
    uvicorn.Server(config).run(sockets=[sock])


def start_server(delay_ms: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, __file__, "--serve", "--delay-ms", str(delay_ms)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    line = proc.stdout.readline() if proc.stdout else ""
    match = re.search(r"(http://\S+)", line)
    if not match:
        proc.kill()
        raise SystemExit(f"the fake server did not start: {line!r}")
    return proc, match.group(1)


def row(label: str, c: int, m: Measured, ideal: float) -> str:
    return (
        f"{c:>5} {label:<11} {m.calls:>6} {m.rate:>8.0f} {m.rate / ideal:>7.0%} "
        f"{m.cores(m.coordinator_s):>6.2f} {m.cores(m.workers_s):>8.2f} {m.cores(m.server_s):>7.2f} {m.cores(m.machine_s):>8.2f}"
        f"   {m.ms_per_call(m.coordinator_s):>5.2f} {m.ms_per_call(m.workers_s):>5.2f} {m.ms_per_call(m.server_s):>5.2f}"
        + (f"  ({m.errors} errors)" if m.errors else "")
    )


async def measure_all(args: argparse.Namespace, base_url: str, server_pid: int) -> None:
    from bench_llm_overhead import calls_per_conversation

    from parley.core.engine.distributed import Placement, WorkerPool

    os.environ["FAKE_BASE_URL"] = base_url
    per_conv = await asyncio.to_thread(calls_per_conversation, PROFILE, args.max_turns)
    sizes = {c: max(1, round(args.calls / (c * per_conv))) * c for c in args.concurrency}
    print(f"python bench/bench_workers.py {' '.join(sys.argv[1:])}".strip())
    print(
        f"fake server {base_url} in its own process, {args.delay_ms} ms a call; {PROFILE.name}, max_turns {args.max_turns}: "
        f"{per_conv} calls per conversation (bot and customer on the fake, offline judge); {os.cpu_count()} cores"
    )
    print(
        f"{'C':>5} {'run':<11} {'calls':>6} {'calls/s':>8} {'%ideal':>7} "
        f"{'coord':>6} {'workers':>8} {'server':>7} {'machine':>8}   cpu ms/call: coord workers server"
    )
    print(f"{'':>5} {'':<11} {'':>6} {'':>8} {'':>7} {'(cores busy over the run)':>32}")
    results: dict[tuple[int, str], Measured] = {}
    for c in args.concurrency:
        ideal = c * 1000 / args.delay_ms
        print(f"{c:>5} {'ideal':<11} {'':>6} {ideal:>8.0f}")
        m = await bare(base_url, server_pid, sizes[c] * per_conv, c)
        print(row("bare SDK", c, m, ideal), flush=True)
        m = results[(c, "1 process")] = await batch(server_pid, None, sizes[c], c, args.max_turns)
        print(row("1 process", c, m, ideal), flush=True)
    for n in args.workers:
        pool = WorkerPool(Placement(workers=n))
        started = time.perf_counter()
        await pool.start()
        print(f"({n} worker{'s' if n != 1 else ''} started in {time.perf_counter() - started:.1f} s)", flush=True)
        try:
            for c in args.concurrency:
                label = f"{n} worker{'s' if n != 1 else ''}"
                m = results[(c, label)] = await batch(server_pid, pool, sizes[c], c, args.max_turns)
                print(row(label, c, m, c * 1000 / args.delay_ms), flush=True)
        finally:
            await pool.stop()
    print()
    for c in args.concurrency:
        one, two = results[(c, "1 process")], results.get((c, "2 workers"))
        ideal = c * 1000 / args.delay_ms
        bound = "CPU-bound" if one.cores(one.coordinator_s) > 0.8 and one.rate < 0.9 * ideal else "not CPU-bound"
        line = f"C={c}: 1 process {one.rate:.0f}/s ({bound}: {one.cores(one.coordinator_s):.2f} cores, {one.rate / ideal:.0%} of ideal)"
        if two is not None:
            line += f"; 2 workers {two.rate:.0f}/s = {two.rate / one.rate:.2f}x ({'reaches' if two.rate >= 1.5 * one.rate else 'short of'} 1.5x)"
            line += (
                f"; machine {two.cores(two.machine_s):.2f} of {os.cpu_count()} cores busy, the fake server {two.cores(two.server_s):.2f}"
            )
            more_cores = min(
                ideal,
                2 * 1000 / max(two.ms_per_call(two.workers_s), 1e-9),
                1000 / max(two.ms_per_call(two.server_s), 1e-9),
                1000 / max(two.ms_per_call(two.coordinator_s), 1e-9),
            )
            line += f"; with a core each: {more_cores:.0f}/s ({more_cores / one.rate:.2f}x)"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256, 512])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--calls", type=int, default=4000, help="model calls per measurement (about)")
    parser.add_argument("--delay-ms", type=int, default=200)
    parser.add_argument("--max-turns", type=int, default=4, help="bot answers per conversation")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.delay_ms)
        return
    proc, base_url = start_server(args.delay_ms)
    try:
        asyncio.run(measure_all(args, base_url, proc.pid))
    finally:
        from tests.child_process import stop_process

        stop_process(proc)


if __name__ == "__main__":
    main()
