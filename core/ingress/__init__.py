"""What comes in over HTTP: the servers' body size limit and strict JSON, replies fetched from
servers parley does not control, bounded in time and size, and the ports of URLs it is given."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.ingress.body_limit import DEFAULT_MAX_BODY_BYTES, BodyLimit
    from parley.core.ingress.bounded_fetch import FetchedReply, ReplyTooLarge, describe_size, fetch_bounded
    from parley.core.ingress.strict_json import StrictJsonRoute, encodable
    from parley.core.ingress.url_ports import port_problem

__all__ = [
    "BodyLimit",
    "DEFAULT_MAX_BODY_BYTES",
    "FetchedReply",
    "ReplyTooLarge",
    "StrictJsonRoute",
    "describe_size",
    "encodable",
    "fetch_bounded",
    "port_problem",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
