"""Functions that take another callable's keywords, written once there: `run`, `run_sync` and
`BatchSession` all take a run's options (parley.core.library.running.RunOptions).

    @keywords_of(RunOptions)
    async def run(specs, **options: Any) -> RunResult: ...

Type checkers see `run(specs, *, bot=..., trials=..., ...)`, RunOptions' keywords with their
types and defaults, and so do `inspect.signature` and `help()`; the function body hands
`options` on as they came.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

__all__ = ["keywords_of"]

P = ParamSpec("P")
A = TypeVar("A")
R = TypeVar("R")


def keywords_of(source: Callable[P, Any]) -> Callable[[Callable[Concatenate[A, ...], R]], Callable[Concatenate[A, P], R]]:
    """A decorator for a function whose last parameter is `**options`: it is typed and shown as
    taking `source`'s parameters in their place (the function's own before them stay)."""

    def decorate(function: Callable[Concatenate[A, ...], R]) -> Callable[Concatenate[A, P], R]:
        own = inspect.signature(function)
        kept = [p for p in own.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        function.__signature__ = own.replace(parameters=[*kept, *inspect.signature(source).parameters.values()])  # type: ignore[attr-defined]
        return cast(Callable[Concatenate[A, P], R], function)

    return decorate
