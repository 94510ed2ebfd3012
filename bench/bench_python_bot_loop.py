"""What does running an async `python:` bot on a loop of its own cost?

Run: .venv/bin/python bench/bench_python_bot_loop.py [--calls 4000] [--concurrency 1 32] [--batch 200]

An async Python bot's coroutines run on a BotLoop (parley.core.bots.bot_loop), so that one that
blocks its loop or swallows its cancellation never holds parley's. Each call then crosses
between two threads twice. This measures that crossing where it is all there is to measure:
- per call: `PythonBot.respond` of an async echo bot, C calls in flight at once, in
  microseconds per call;
- per conversation: a batch of --batch conversations of a shipped profile with the echo bot
  (offline customer and judge) through parley.api, in conversations per second.
Run it on two checkouts (PYTHONPATH pointing at the older one's sources) to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


async def echo_bot(messages: list[dict[str, Any]]) -> str:
    await asyncio.sleep(0)
    return f"You said: {messages[-1]['content']}"


async def per_call(calls: int, concurrency: int) -> float:
    """Microseconds per call, `concurrency` calls in flight."""
    from parley.core.bots import BotContext, PythonBot
    from parley.core.records import ChatMessage

    bot = PythonBot(echo_bot, name="python:bench:echo_bot")
    ctx = BotContext(customer_id="C-100", today=datetime.date(2026, 11, 21))
    messages = [{"role": "user", "content": "where is my order?"}]

    async def one() -> None:
        await bot.respond([ChatMessage(role="user", content=messages[0]["content"])], ctx)

    async def worker(n: int) -> None:
        for _ in range(n):
            await one()

    await one()  # the bot's loop started, the first call's imports done
    start = time.perf_counter()
    await asyncio.gather(*(worker(calls // concurrency) for _ in range(concurrency)))
    return (time.perf_counter() - start) / (calls // concurrency * concurrency) * 1e6


def per_conversation(batch: int) -> float:
    """Conversations per second of a batch with the echo bot."""
    from parley.api import run_sync
    from parley.core.library import load_specs

    specs = load_specs(ROOT / "profiles" / "track_shipped_order.yaml")
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        result = run_sync(specs, bot=echo_bot, trials=batch, db=Path(folder) / "p.db", concurrency=32)
        elapsed = time.perf_counter() - start
    return len(result.conversations) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for concurrency in args.concurrency:
        took = statistics.median(asyncio.run(per_call(args.calls, concurrency)) for _ in range(args.repeat))
        print(f"{concurrency:>4} in flight: PythonBot.respond {took:8.1f} us/call")
    print(f"batch of {args.batch} conversations with the echo bot: {per_conversation(args.batch):.1f} conversations/s")


if __name__ == "__main__":
    main()
