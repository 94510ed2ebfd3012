"""A batch sharded over worker processes on Ray: this machine's (`--workers N`) or a cluster's
(`--ray ADDRESS`).

- `placement`: where the workers run (a local Ray instance started for the batch, or an
  existing cluster) and the one-line message when the `parley[ray]` extra is missing;
- `worker`: what one worker process does: runs the conversations it is handed with the batch's
  own per-conversation path (parley.core.engine.batch_conversation.run_planned) and tells how its
  model calls went (successes, 429s);
- `pool`: the worker processes as Ray actors, shared by the batches of one process, a worker
  that dies replaced;
- `sharded_runner`: the coordinating process's BatchRunner: it launches every conversation under
  the batch's one adaptive limit, hands each to the least busy worker, stores what comes back
  (it alone writes SQLite) and runs again elsewhere what a dead worker had.

Nothing here imports Ray at module level: `import ray` happens when a sharded batch starts, so
parley's start-up and the app never load it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.engine.distributed.placement import Placement, import_ray
    from parley.core.engine.distributed.pool import WorkerPool
    from parley.core.engine.distributed.sharded_runner import ShardedRunner

__all__ = ["Placement", "ShardedRunner", "WorkerPool", "import_ray"]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
