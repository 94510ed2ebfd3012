"""How fast is `parley rescore`: a stored batch judged again, offline and with an LLM judge?

Run: .venv/bin/python bench/bench_rescore.py [--conversations 1000] [--repeat 3]
                                              [--concurrency 32] [--calls 1600] [--delay-ms 200]

The stored batch is the shipped suite's conversations (profiles/, run once offline), each stored
under as many trials as it takes to reach --conversations, on a fresh SQLite file. Then:

1. offline: the batch re-scored with the offline judge, the wall time of planning it
   (`prepare_rescore`) and running it (`BatchRunner.run()`: every stored conversation loaded,
   evaluated and stored again as a new batch), median of --repeat. The goal: under 5 s for 1,000.
   The same judge and expectations decide as the batch's own run did: every re-scored verdict is
   checked equal to its parent's (outside the timing); a difference stops the bench.
2. an LLM judge on the fake OpenAI server (tests/fake_openai_server.py, in a child process,
   answering every request after --delay-ms): the re-score of a batch of conversations at
   --concurrency, two judge calls each (the score, then every criterion in one call: the
   built-in one here), measured in calls/s, beside the bare openai SDK's calls/s with the same
   number of calls in flight (bench/bench_llm_overhead.py's `bare_sdk`), medians of --repeat.
   The bare SDK sends the very requests the re-score sends (caught once beforehand by a fake
   server in this process): a judge's prompt holds a whole transcript, and the SDK's own cost
   grows with it. It is also timed with a one-word request per call, printed beside.
   The goal: the ratio parley / bare >= 0.90.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_llm_overhead import Figures, bare_sdk  # noqa: E402  (the bare SDK, measured as there)

if TYPE_CHECKING:
    from parley.core.records import Verdict
    from parley.core.store import Store

JUDGE = "openai-api/fake/judge"
ANSWER = json.dumps(
    {
        "score": 3,
        "comment": "Fine.",
        "criteria": [{"criterion": 1, "verdict": "not applicable", "turns": [], "quote": "", "reasoning": "Nothing claimed."}],
    }
)
"""What the fake judge answers every call: the score's reader takes `score`, the criteria's reader `criteria`."""


async def stored_batch(store: Store, conversations: int) -> str:
    """A completed batch of `conversations` stored conversations: the shipped suite run once
    offline, its conversations stored again under trials 1, 2, ... until there are enough."""
    from parley.core.engine import BatchRunner, prepare_batch
    from parley.core.records import BatchOptions, BatchRecord

    suite = await prepare_batch(store, [ROOT / "profiles"], BatchOptions(seed=7))
    await BatchRunner(store, suite).run()
    originals = list(store.iter_conversations(suite.id))
    trials = math.ceil(conversations / len(originals))
    options = suite.batch.options.model_copy(update={"trials": trials})
    record = BatchRecord(status="completed", sources=suite.batch.sources, options=options, planned=conversations)
    store.create_batch(record)
    n = 0
    for trial in range(1, trials + 1):
        for stored in originals:
            if n == conversations:
                break
            conv = stored.conversation.model_copy(update={"id": uuid.uuid4().hex})
            verdict = stored.verdict.model_copy(update={"conversation_id": conv.id})
            store.save_conversation(record.id, stored.spec, conv, verdict, trial)
            n += 1
    return record.id


async def rescore(store: Store, parent: str, *, judge: str = "offline", concurrency: int = 4) -> tuple[float, float, int, int, str]:
    """(wall s of planning and running, CPU s, conversations, judge calls, the new batch's id) of one re-score."""
    from parley.core.engine import BatchRunner, prepare_rescore
    from parley.core.models import aclose_clients

    started, cpu = time.perf_counter(), time.process_time()
    try:
        prepared = await prepare_rescore(store, parent, judge=judge, concurrency=concurrency)
        result = await BatchRunner(store, prepared).run()
    finally:
        await aclose_clients()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if result.status != "completed" or result.done != prepared.total:
        raise SystemExit(f"the re-score did not complete: {result}")
    from parley.core.store import role_usage

    judge_calls = sum(u.calls for u in role_usage(store, result.batch_id) if u.role == "judge")
    return wall, cpu, result.done, judge_calls, result.batch_id


def judge_requests(store: Store, parent: str, concurrency: int) -> list[dict[str, object]]:
    """The request bodies a re-score of `parent` posts to its judge (the score's and the
    criteria's), caught by a fake server in this process that answers ANSWER: what the bare SDK
    is then given to send, so that both sides carry the same requests."""
    from tests.fake_openai_server import FakeOpenAIServer, TextReply, run_fake_server

    catcher = FakeOpenAIServer()
    catcher.default = TextReply(ANSWER)
    with run_fake_server(catcher) as server:
        os.environ["FAKE_BASE_URL"] = server.base_url
        asyncio.run(rescore(store, parent, judge=JUDGE, concurrency=concurrency))
    return [request.body for request in catcher.requests if request.path.endswith("/chat/completions")]


def differing_verdicts(store: Store, parent: str, child: str) -> int:
    """How many of the re-score's verdicts differ from its parent's (conversation ids aside)."""
    before = {(c.spec.spec_id, c.trial): c.verdict for c in store.iter_conversations(parent)}
    after = {(c.spec.spec_id, c.trial): c.verdict for c in store.iter_conversations(child)}
    if before.keys() != after.keys():
        return len(before.keys() ^ after.keys())

    def seen(verdict: Verdict | None) -> dict[str, object] | None:
        return verdict.model_dump(exclude={"conversation_id"}) if verdict is not None else None

    return sum(1 for key, verdict in before.items() if seen(verdict) != seen(after[key]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1000, help="conversations of the offline re-score")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--calls", type=int, default=1600, help="judge calls of the LLM measurement (about)")
    parser.add_argument("--delay-ms", type=int, default=200)
    args = parser.parse_args()
    from parley.core.store import Store
    from tests.fake_openai_server import fake_server_process

    print("python bench/bench_rescore.py " + " ".join(sys.argv[1:]), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db")
        try:
            parent = asyncio.run(stored_batch(store, args.conversations))
            runs = [asyncio.run(rescore(store, parent)) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            differing = differing_verdicts(store, parent, runs[-1][4])
            if differing:
                raise SystemExit(
                    f"{differing} of {args.conversations} re-scored verdicts differ from the parent's: the re-score judged differently"
                )
            print(
                f"offline re-score of {args.conversations} stored conversations: median {wall:.2f} s "
                f"({args.conversations / wall:.0f} conversations/s; runs {', '.join(f'{r[0]:.2f}' for r in runs)} s; "
                f"CPU {statistics.median(r[1] for r in runs):.2f} s; every verdict equal to the parent's); "
                f"goal under 5 s: {'met' if wall < 5 else 'NOT met'}"
            )

            c = args.concurrency
            per_conversation = 2
            size = max(1, round(args.calls / (c * per_conversation))) * c  # a multiple of C: no longer tail than bare's
            parent = asyncio.run(stored_batch(store, size))
            bodies = judge_requests(store, parent, c)
            with fake_server_process(delay_ms=args.delay_ms, text=ANSWER) as base_url:
                os.environ["FAKE_BASE_URL"] = base_url
                hello: list[Figures] = []
                bare: list[Figures] = []
                ours: list[Figures] = []
                for _ in range(args.repeat):
                    hello.append(asyncio.run(bare_sdk(base_url, size * per_conversation, c)))
                    bare.append(asyncio.run(bare_sdk(base_url, size * per_conversation, c, bodies=bodies)))
                    wall_s, cpu_s, done, calls, _ = asyncio.run(rescore(store, parent, judge=JUDGE, concurrency=c))
                    if calls != done * per_conversation:
                        raise SystemExit(f"the re-score made {calls} judge calls for {done} conversations")
                    ours.append(Figures(calls=calls, wall_s=wall_s, cpu_s=cpu_s, conversations=done))
            hello_med = statistics.median(f.calls_per_s for f in hello)
            bare_med = statistics.median(f.calls_per_s for f in bare)
            ours_med = statistics.median(f.calls_per_s for f in ours)
            ratios = ", ".join(f"{o.calls_per_s / b.calls_per_s:.2f}" for o, b in zip(ours, bare, strict=True))
            print(
                f"LLM judge at {args.delay_ms} ms per call, concurrency {c}: {size} conversations, {size * per_conversation} judge calls; "
                f"ideal {c * 1000 / args.delay_ms:.0f} calls/s, bare SDK with the same {len(bodies)} requests {bare_med:.0f} calls/s "
                f"(with a one-word request instead: {hello_med:.0f}), parley rescore {ours_med:.0f} calls/s: "
                f"ratio {ours_med / bare_med:.2f} (runs {ratios}; to the one-word requests {ours_med / hello_med:.2f}); "
                f"CPU ms per call bare {statistics.median(f.cpu_ms_per_call for f in bare):.2f} "
                f"(one-word {statistics.median(f.cpu_ms_per_call for f in hello):.2f}), "
                f"parley {statistics.median(f.cpu_ms_per_call for f in ours):.2f}; goal >= 0.90: "
                f"{'met' if ours_med / bare_med >= 0.9 else 'NOT met'}"
            )
        finally:
            store.close()


if __name__ == "__main__":
    main()
