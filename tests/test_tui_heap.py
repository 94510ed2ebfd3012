"""The app keeps its long-lived objects out of full garbage collections (tui/app/heap.py), and
still collects the garbage it froze while a batch ran."""

from __future__ import annotations

import gc
import weakref

from parley.tui.app import heap


class Node:
    other: Node | None = None


def test_a_cycle_frozen_while_a_batch_ran_is_collected_when_the_next_one_settles():
    try:
        heap.settle(thaw=True)
        a, b = Node(), Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        heap.freeze_young()  # as while a batch runs: the pair is alive, and frozen
        del a, b
        gc.collect()
        assert alive() is not None  # frozen: a full collection no longer walks it
        heap.settle(thaw=True)  # as the next batch's launch does
        assert alive() is None
    finally:
        gc.unfreeze()
