"""The app's long-lived objects kept out of Python's full garbage collections.

A full collection walks every container object alive, and the app holds a lot of them that live
as long as it does: the imported modules (the engine's pydantic models among them), the widget
tree, the styles. While a big batch is drawn those collections came every few seconds and froze
the UI loop for 100-300 ms each (bench/bench_app_batch.py --stacks shows them). `settle()`
collects once, then freezes what survived (gc.freeze): later collections only walk objects made
after it. Objects frozen are still freed when nothing refers to them; only a reference cycle
among them would outlive its use, which is why a collection runs first.
"""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger("parley.tui.heap")


def settle() -> None:
    """Collect, then freeze every object that survived (call when the app is idle: the
    collection takes tens of milliseconds)."""
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    log.debug("froze %d long-lived objects in %.0f ms", gc.get_freeze_count(), (time.perf_counter() - started) * 1000)
