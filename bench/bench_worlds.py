"""How fast are worlds? Copying the database, building apps, and requests through ASGITransport.

Run: .venv/bin/python bench/bench_worlds.py

Prints medians. The figures decide how `parley.mockapi.worlds` serves many worlds: one shared FastAPI
app that finds the world's store in the ASGI scope (`WorldApp`), versus one app per world. The last
lines are the world API's, as the engine runs every conversation since worlds are declared once: a
copy of the order world's database (`WorldTemplate.new_copy`, with its change log) and one tool call
through `WorldTools` (the call a conversation makes), beside the mock API's copy and request above.
"""

from __future__ import annotations

import asyncio
import datetime
import sqlite3
import statistics
import time
from collections.abc import Callable

import httpx
import sqlite_utils

from parley.mockapi.app import create_app
from parley.mockapi.worlds import WorldTemplate

TODAY = datetime.date(2026, 11, 21)
HEADERS = {"X-Customer-Id": "C-100"}


def median_us(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def bench_copies(template: WorldTemplate) -> dict[str, float]:
    image = template.db.conn.serialize()

    def deserialize() -> None:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.deserialize(image)
        conn.close()

    def backup() -> None:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        template.db.conn.backup(conn)
        conn.close()

    def wrap() -> None:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.deserialize(image)
        sqlite_utils.Database(conn).close()

    def new_world() -> None:
        template.new_world().close()

    def new_world_with_own_app() -> None:
        world = template.new_world()
        create_app(world.store)
        world.close()

    return {
        "copy: sqlite3 deserialize() of the template image": median_us(deserialize, 3000),
        "copy: sqlite3 backup() API into :memory:": median_us(backup, 3000),
        "copy + sqlite_utils.Database wrap": median_us(wrap, 3000),
        "template.new_world() (copy + store + WorldApp)": median_us(new_world, 3000),
        "new_world() + create_app() per world": median_us(new_world_with_own_app, 50),
    }


async def request_latency(app: object, runs: int, method: str = "GET", url: str = "/orders/ORD-1003") -> float:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://world") as client:
        for _ in range(50):  # warm-up
            await client.request(method, url, headers=HEADERS)
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            response = await client.request(method, url, headers=HEADERS)
            samples.append(time.perf_counter() - start)
            assert response.status_code < 500, response.text
    return statistics.median(samples) * 1e6


async def throughput(template: WorldTemplate, worlds: int, requests_per_world: int) -> float:
    """Requests per second with many worlds served concurrently on one event loop."""
    opened = [template.new_world() for _ in range(worlds)]

    async def converse(world: object) -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=world.app), base_url="http://w") as client:
            for i in range(requests_per_world):
                url = ("/orders/ORD-1003", "/orders/ORD-1003/tracking", "/orders/ORD-1004/cancellation")[i % 3]
                await client.get(url, headers=HEADERS)

    start = time.perf_counter()
    await asyncio.gather(*(converse(w) for w in opened))
    elapsed = time.perf_counter() - start
    for world in opened:
        world.close()
    return worlds * requests_per_world / elapsed


async def bench_requests(template: WorldTemplate) -> dict[str, float]:
    shared = template.new_world()
    threaded = template.new_world()
    threaded.store.blocking = True  # what a file database does: every store call in the threadpool
    own = template.new_world()
    own_app = create_app(own.store)
    results = {
        "GET /orders/{id}: shared app + WorldApp, store inline": await request_latency(shared.app, 3000),
        "GET /orders/{id}: shared app + WorldApp, store in threadpool": await request_latency(threaded.app, 3000),
        "GET /orders/{id}: one FastAPI app per world, store inline": await request_latency(own_app, 3000),
        "GET /admin/orders (18 orders + eligibility), inline": await request_latency(shared.app, 500, url="/admin/orders"),
    }
    for world in (shared, threaded, own):
        world.close()
    return results


def bench_world_api() -> dict[str, float]:
    from parley.core.records import ToolCall
    from parley.core.world import WorldTemplate as DeclaredTemplate
    from parley.core.world import WorldTools, load_world

    world = load_world("orders")
    template = DeclaredTemplate(world, TODAY)
    copy = template.new_copy()
    tools = WorldTools(world, copy, "C-100")
    call = ToolCall(id="c1", name="track_order", arguments='{"order_id": "ORD-1003"}')
    loop = asyncio.new_event_loop()
    try:
        results = {
            "world API: new_copy() of the order world": median_us(lambda: template.new_copy().close(), 2000),
            "world API: track_order through WorldTools": median_us(lambda: loop.run_until_complete(tools.execute(call)), 2000),
        }
    finally:
        loop.close()
        copy.close()
    return results


def main() -> None:
    start = time.perf_counter()
    template = WorldTemplate(today=TODAY)
    template_ms = (time.perf_counter() - start) * 1e3
    app_us = median_us(create_app, 50)

    print("parley mockapi worlds benchmark (medians)")
    print(f"  WorldTemplate() (fixture load, first in process): {template_ms:9.1f} ms")
    for name, value in bench_copies(template).items():
        print(f"  {name:<58} {value:9.1f} µs")
    print(f"  {'create_app() (FastAPI app construction)':<58} {app_us:9.1f} µs")
    for name, value in asyncio.run(bench_requests(template)).items():
        print(f"  {name:<58} {value:9.1f} µs")
    rps = asyncio.run(throughput(template, worlds=100, requests_per_world=30))
    print(f"  {'throughput, 100 concurrent worlds x 30 requests':<58} {rps:9.0f} req/s")
    for name, value in bench_world_api().items():
        print(f"  {name:<58} {value:9.1f} µs")


if __name__ == "__main__":
    main()
