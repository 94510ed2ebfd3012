"""What parley's HTTP servers accept: a body size limit and strictly read JSON bodies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.ingress.body_limit import DEFAULT_MAX_BODY_BYTES, BodyLimit
    from parley.core.ingress.strict_json import StrictJsonRoute, encodable

__all__ = ["BodyLimit", "DEFAULT_MAX_BODY_BYTES", "StrictJsonRoute", "encodable"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
