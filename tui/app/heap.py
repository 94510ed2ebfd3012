"""The app's long-lived objects kept out of Python's full garbage collections.

A full collection walks every container object alive, and the app holds a lot of them that live
as long as it does: the imported modules (the engine's pydantic models among them), the widget
tree, the styles. While a big batch is drawn those collections came every few seconds and froze
the UI loop for 100-300 ms each (bench/bench_app_batch.py --stacks shows them). `settle()`
collects once, then freezes what survived (gc.freeze): later collections only walk objects made
after it. Objects frozen are still freed when nothing refers to them; only a reference cycle
among them would outlive its use, which is why a collection runs first.

While a batch runs, its rows pile up by the thousand and would make each full collection longer
than the last: `freeze_young()` (once a second while it runs) collects the young generations,
which is quick, and freezes what survived them. Cycles that become garbage after that stay
frozen (about six objects per conversation), so the next batch's launch, a pause anyway, calls
`settle(thaw=True)`: everything is put back, collected once (100-200 ms after a 10,000-
conversation batch) and frozen again.
"""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger("parley.tui.heap")


def settle(*, thaw: bool = False) -> None:
    """Collect, then freeze every object that survived (when a pause does not matter: it takes
    tens of milliseconds). `thaw` first puts the frozen objects back, so that garbage frozen by
    freeze_young() is found."""
    started = time.perf_counter()
    if thaw:
        gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    spent_ms = (time.perf_counter() - started) * 1000
    log.debug("froze %d objects in %.0f ms; %d unreachable were found", gc.get_freeze_count(), spent_ms, found)


def freeze_young() -> None:
    """Collect the young generations (milliseconds), then freeze what survived them."""
    gc.collect(1)
    gc.freeze()
