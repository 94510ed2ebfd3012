"""Batches that other processes run (`parley run`, the service) show in the Batches pane as they
progress, without ctrl+r: the pane looks at the database's data version every few seconds and
lists the batches again only when another connection committed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parley.core.store.store import Store
from parley.tui.app.panes import batches_pane
from tests.test_store_fixtures import batch, conversation, spec, verdict
from tests.test_tui_support import PROFILES, SIZE, db_path, make_app, settle, until  # noqa: F401  (fixture)

PARLEY = Path(sys.executable).parent / "parley"


@pytest.fixture
def quick_polls(monkeypatch):
    """Look every 0.2 s instead of every few seconds: the same looking, sooner."""
    monkeypatch.setattr(batches_pane, "POLL_S", 0.2)


def cells(app, row: int = 0) -> list[str]:
    """Every cell of a row of the batches table (id, created, status, sources, planned, done,
    passed, ...), shown at this width or not."""
    return list(app.query_one("#batches-table").full_row(row))


async def test_a_batch_another_connection_runs_shows_as_it_progresses(db_path, quick_polls):
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one("#batches")
        assert pane.batch_ids == []
        with Store.open(db_path) as other:  # its own connection, as another process has
            running = other.create_batch(batch(planned=3, status="running"))
            await until(pilot, lambda: pane.batch_ids == [running.id], "the new batch to be listed")
            assert cells(app)[2] == "running"
            for index in range(2):
                conv = conversation("track")
                other.save_conversation(running.id, spec("track_order", index), conv, verdict(conv))
                await until(pilot, lambda n=index + 1: cells(app)[5] == str(n), f"Done to show {index + 1}")
                await until(pilot, lambda n=index + 1: len(pane.results.rows) == n, "the results to show the new conversation")
            other.update_batch(running.id, status="completed")
            await until(pilot, lambda: cells(app)[2] == "completed", "the batch to show completed")


async def test_a_parley_run_in_another_process_shows_without_reloading(db_path, quick_polls):
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one("#batches")
        env = {**os.environ, "PARLEY_DB": str(db_path)}
        command = [str(PARLEY), "run", str(PROFILES / "track_shipped_order.yaml"), str(PROFILES / "list_my_orders.yaml")]
        done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        await until(pilot, lambda: len(pane.batch_ids) == 1 and cells(app)[2] == "completed", "the other process's batch")
        await until(pilot, lambda: len(pane.results.rows) == 2, "its two conversations")
        assert cells(app)[5:7] == ["2", "2"]  # done, passed


async def test_while_nothing_changes_the_pane_only_looks(db_path, quick_polls, monkeypatch):
    with Store.open(db_path) as store:
        store.create_batch(batch(planned=1, status="completed"))
    listings = 0
    looks = 0
    list_batches, data_version = Store.list_batches, Store.data_version

    def counted_list(self, *args, **kwargs):
        nonlocal listings
        listings += 1
        return list_batches(self, *args, **kwargs)

    def counted_look(self):
        nonlocal looks
        looks += 1
        return data_version(self)

    monkeypatch.setattr(Store, "list_batches", counted_list)
    monkeypatch.setattr(Store, "data_version", counted_look)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = listings
        await until(pilot, lambda: looks >= first + 5, "five looks")
        assert listings == first  # the same data version: nothing listed again
