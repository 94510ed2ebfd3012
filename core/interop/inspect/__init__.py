"""inspect_ai: batches as eval logs, profiles as an inspect task."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.interop.inspect.export import export_batch, require_inspect

__all__ = ["export_batch", "require_inspect"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
