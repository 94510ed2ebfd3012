"""The batch REST service (`parley serve`): FastAPI app, routes, jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.service.app import TOKEN_ENV, create_app, default_profile_dirs
    from parley.core.service.bot_hosts import parse_allowed_host
    from parley.core.service.models import check_model_name

__all__ = ["TOKEN_ENV", "check_model_name", "create_app", "default_profile_dirs", "parse_allowed_host"]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
