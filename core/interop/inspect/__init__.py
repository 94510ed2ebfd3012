"""inspect_ai: batches as eval logs, profiles as an inspect task."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.interop.inspect.export import export_batch, require_inspect

__all__ = ["export_batch", "require_inspect"]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
