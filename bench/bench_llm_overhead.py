"""How much does parley's engine cost per model call, next to the bare openai SDK?

Run: .venv/bin/python bench/bench_llm_overhead.py [--concurrency 32 128] [--calls 1600] [--delay-ms 200]

Serves the fake OpenAI-compatible server (tests/fake_openai_server.py) in a child process, so
it does not share this process's GIL, answering every request after a fixed delay (`serve`
adds a variant that answers the bot's first round with a tool call). Then, for each concurrency C, side by
side and --repeat times:
- bare: the calls through one `openai.AsyncOpenAI` (parley's pool settings, SDK retries off)
  with C tasks in flight, each sending a one-line chat;
- parley: a batch (`BatchRunner`) of one shipped profile, K x C trials, with the bot and the
  LLM user on the fake server and the offline judge, on a fresh SQLite file; its calls are the
  ones the stored conversations record, its time the wall time of `run()` (worlds, evaluation
  and the commits included; planning the batch is not).
Every conversation makes the same number of calls (the fake answers "ok", so the bot ends its
turn and the user goes on until --max-turns), and the batch has a multiple of C of them, so
its tail is no longer than the bare run's would be with the same calls.

Prints medians: the ideal (C / delay), bare calls/s and its share of the ideal, parley calls/s,
the ratio parley / bare (the target is >= 0.90), parley's conversations per minute, and this
process's CPU time per call for each (all threads). Then the whole shipped suite runs once at
--suite-concurrency (4) with the default max_turns, for conversations per minute as a user
would see them: there, conversations are as long as the simulated customer's limits make them.

--tools makes the bot's first model call of each turn ask for a tool (track_order) before it
answers, so every turn also runs a tool against the conversation's World.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FAKE = "openai-api/fake/m"
DEFAULT_PROFILE = ROOT / "profiles" / "track_shipped_order.yaml"


# -- the server ----------------------------------------------------------------------------------


def serve(port: int, delay_ms: int, tool_round: bool) -> None:
    """Serve the fake (answering "ok" after `delay_ms`) until killed; prints its base URL.

    It listens on tests.fake_openai_server's `loopback_socket` (TCP_NODELAY-capable, see there);
    `--stock-server` measures against that module's own process instead.

    With `tool_round`, a request carrying tools whose last message is the customer's is answered
    with a track_order call (the bot's first round of each turn)."""
    import uvicorn

    from tests.fake_openai_server import FakeOpenAIServer, ToolCallsReply, loopback_socket

    class ToolRoundServer(FakeOpenAIServer):
        def _completion(self, step: Any, body: dict[str, Any], model: str, n: int) -> dict[str, Any]:
            messages = body.get("messages") or [{}]
            if body.get("tools") and messages[-1].get("role") == "user":
                step = ToolCallsReply([("track_order", '{"order_id": "ORD-1003"}')])
            return super()._completion(step, body, model, n)

    server = ToolRoundServer() if tool_round else FakeOpenAIServer()
    server.fixed_delay_ms = delay_ms
    server.record_requests = False
    sock = loopback_socket(port)
    host, bound = sock.getsockname()[:2]
    print(f"fake OpenAI server listening on http://{host}:{bound}/v1", flush=True)
    uvicorn.Server(uvicorn.Config(server.app, log_level="warning", access_log=False, lifespan="off")).run(sockets=[sock])


@contextlib.contextmanager
def server_process(delay_ms: int, tool_round: bool) -> Iterator[str]:
    """`serve` in a child process (not sharing this one's GIL); yields its base URL."""
    from tests.child_process import stop_process

    command = [sys.executable, __file__, "--serve", "--delay-ms", str(delay_ms)]
    proc = subprocess.Popen(command + (["--tools"] if tool_round else []), stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        match = re.search(r"(http://\S+)", line)
        if not match:
            raise RuntimeError(f"the fake server did not start: {line!r}")
        yield match.group(1)
    finally:
        stop_process(proc)


# -- the two measurements ------------------------------------------------------------------------


@dataclass
class Figures:
    calls: int
    wall_s: float
    cpu_s: float
    """This process's CPU time (all threads) over the same span."""
    conversations: int = 0
    errors: int = 0

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.wall_s

    @property
    def cpu_ms_per_call(self) -> float:
        return self.cpu_s * 1000 / self.calls

    @property
    def conversations_per_min(self) -> float:
        return self.conversations * 60 / self.wall_s


async def bare_sdk(base_url: str, calls: int, concurrency: int, *, bodies: Sequence[dict[str, Any]] = ()) -> Figures:
    """`calls` chat completions through one AsyncOpenAI's `create`, `concurrency` at a time: a
    one-word "hello" each, or, given `bodies` (request bodies as a client posted them), each body
    in turn, so the SDK carries the same requests the client did."""
    import httpx2
    from openai import AsyncOpenAI, DefaultAsyncHttpx2Client

    from parley.core.models import CONNECT_TIMEOUT_S, DEFAULT_TIMEOUT_S, POOL_CONNECTIONS, POOL_KEEPALIVE

    client = AsyncOpenAI(
        api_key="unused",
        base_url=base_url,
        max_retries=0,
        http_client=DefaultAsyncHttpx2Client(
            limits=httpx2.Limits(max_connections=POOL_CONNECTIONS, max_keepalive_connections=POOL_KEEPALIVE),
            timeout=httpx2.Timeout(DEFAULT_TIMEOUT_S, connect=CONNECT_TIMEOUT_S, pool=None),
        ),
    )
    hello: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
    requests = [bodies[n % len(bodies)] if bodies else hello for n in range(calls)]

    async def worker() -> None:
        while requests:
            await client.chat.completions.create(**requests.pop())

    try:
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        await client.close()
    return Figures(calls=calls, wall_s=wall, cpu_s=cpu)


async def parley_batch(sources: list[Path], trials: int, concurrency: int, max_turns: int) -> Figures:
    """One batch of `sources` x `trials` (bot and user on the fake server, offline judge)."""
    from parley.core.engine import BatchRunner, prepare_batch
    from parley.core.models import aclose_clients
    from parley.core.records import BatchOptions, RoleModels
    from parley.core.store import Store, role_usage

    options = BatchOptions(
        models=RoleModels(bot=FAKE, user=FAKE, judge="offline"),
        concurrency=concurrency,
        trials=trials,
        seed=7,
        max_turns=max_turns,
        timeout_s=120.0,
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db")
        try:
            prepared = await prepare_batch(store, sources, options)
            runner = BatchRunner(store, prepared)
            started, cpu = time.perf_counter(), time.process_time()
            result = await runner.run()
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            calls = sum(u.calls for u in role_usage(store, result.batch_id))
        finally:
            await aclose_clients()
            store.close()
    return Figures(calls=calls, wall_s=wall, cpu_s=cpu, conversations=result.ran, errors=result.errors)


# -- the run ------------------------------------------------------------------------------------


def calls_per_conversation(profile: Path, max_turns: int) -> int:
    """What one conversation of `profile` costs in calls (a small batch, counted)."""
    figures = asyncio.run(parley_batch([profile], 2, 2, max_turns))
    if figures.errors or figures.calls % 2:
        raise SystemExit(f"a probe batch went wrong: {figures}")
    return figures.calls // 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--calls", type=int, default=1600, help="model calls per measurement (about)")
    parser.add_argument("--delay-ms", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-turns", type=int, default=4, help="bot answers per conversation")
    parser.add_argument("--profile", type=Path, default=DEFAULT_PROFILE)
    parser.add_argument("--tools", action="store_true", help="the bot calls a tool in every turn")
    parser.add_argument(
        "--suite-concurrency",
        type=int,
        default=4,
        help="then run the whole shipped suite once at this concurrency for conversations/min (0: skip)",
    )
    parser.add_argument(
        "--stock-server", action="store_true", help="tests.fake_openai_server's own process instead of this bench's (no --tools)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(0, args.delay_ms, args.tools)
        return

    command = "python bench/bench_llm_overhead.py " + " ".join(sys.argv[1:])
    if args.stock_server:
        if args.tools:
            raise SystemExit("--tools needs the bench's own server")
        from tests.fake_openai_server import fake_server_process

        server = fake_server_process(delay_ms=args.delay_ms)
    else:
        server = server_process(args.delay_ms, args.tools)
    with server as base_url:
        os.environ["FAKE_BASE_URL"] = base_url
        per_conv = calls_per_conversation(args.profile, args.max_turns)
        print(f"{command.strip()}")
        print(
            f"server {base_url}, delay {args.delay_ms} ms; {args.profile.name}, max_turns {args.max_turns}: "
            f"{per_conv} calls per conversation{' (a tool round in every turn)' if args.tools else ''}; "
            f"medians of {args.repeat}"
        )
        print(
            f"{'C':>5} {'calls':>6} {'ideal/s':>8} {'bare/s':>8} {'%ideal':>7} {'parley/s':>9} "
            f"{'ratio':>6} {'conv/min':>9} {'cpu ms/call bare':>17} {'parley':>6}  ratios of the runs"
        )
        for c in args.concurrency:
            conversations = max(1, round(args.calls / (c * per_conv))) * c
            calls = conversations * per_conv
            bare: list[Figures] = []
            ours: list[Figures] = []
            for _ in range(args.repeat):
                bare.append(asyncio.run(bare_sdk(base_url, calls, c)))
                figures = asyncio.run(parley_batch([args.profile], conversations, c, args.max_turns))
                if figures.errors or figures.calls != calls:
                    raise SystemExit(f"the batch made {figures.calls} calls (expected {calls}), {figures.errors} errors")
                ours.append(figures)
            ideal = c * 1000 / args.delay_ms
            bare_med = statistics.median(f.calls_per_s for f in bare)
            ours_med = statistics.median(f.calls_per_s for f in ours)
            conv_min = statistics.median(f.conversations_per_min for f in ours)
            bare_cpu = statistics.median(f.cpu_ms_per_call for f in bare)
            ours_cpu = statistics.median(f.cpu_ms_per_call for f in ours)
            runs = " ".join(f"{o.calls_per_s / b.calls_per_s:.2f}" for o, b in zip(ours, bare, strict=True))
            print(
                f"{c:>5} {calls:>6} {ideal:>8.0f} {bare_med:>8.0f} {bare_med / ideal:>7.0%} {ours_med:>9.0f} "
                f"{ours_med / bare_med:>6.2f} {conv_min:>9.0f} {bare_cpu:>17.2f} {ours_cpu:>6.2f}  {runs}",
                flush=True,
            )
        if args.suite_concurrency > 0:
            from parley.core.records import BatchOptions

            c, max_turns = args.suite_concurrency, BatchOptions().max_turns
            suite = asyncio.run(parley_batch([ROOT / "profiles"], 1, c, max_turns))
            per = suite.calls / max(1, suite.conversations)
            bound = c * 60_000 / (per * args.delay_ms)
            print(
                f"shipped suite (profiles/, default max_turns {max_turns}) at concurrency {c}: "
                f"{suite.conversations} conversations ({suite.errors} errors), {per:.1f} calls each on average, "
                f"{suite.calls_per_s:.1f} calls/s (ideal {c * 1000 / args.delay_ms:.0f}): "
                f"{suite.conversations_per_min:.0f} conversations/min in {suite.wall_s:.1f} s "
                f"(latency-bound for that length: {bound:.0f}/min)"
            )


if __name__ == "__main__":
    main()
