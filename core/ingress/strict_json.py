"""Request bodies read strictly: JSON that Python would accept but parley cannot store, encode
or compare is a 422 naming the field, before any model sees it.

Python's json module takes `NaN`, `Infinity`, `-Infinity` and numbers such as `1e400` (which
become infinite floats), and `"\\ud800"`: a lone UTF-16 surrogate, a str that cannot be encoded
as UTF-8, so writing it to a file, to SQLite or into a reply fails later with a 500. Here each is
refused where it is, with its location (`["body", "timeout_s"]`); a body nested too deeply for the
parser is refused as a whole.

`StrictJsonRoute` is the APIRoute class of the routers whose bodies are read this way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

Loc = list[str | int]


class _NotFinite:
    """A number JSON cannot carry, kept as written until its location is known."""

    def __init__(self, text: str) -> None:
        self.text = text


def _number(text: str) -> float | _NotFinite:
    value = float(text)
    return value if math.isfinite(value) else _NotFinite(text)


def loads_strict(body: bytes | str) -> Any:
    """The JSON document, or HTTPException 422 listing each value it may not hold (400 when it
    is not JSON at all)."""
    try:
        data = json.loads(body, parse_constant=_NotFinite, parse_float=_number)
    except RecursionError:
        raise HTTPException(422, [_problem(["body"], "the JSON body is nested too deeply", "json_too_deep")]) from None
    problems = list(_problems(data))
    if problems:
        raise HTTPException(422, problems[:20])
    return data


def _problems(data: Any) -> Any:
    stack: list[tuple[Any, Loc]] = [(data, ["body"])]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, _NotFinite):
            yield _problem(loc, f"{value.text} is not a number this API takes: give a finite number", "finite_number")
        elif isinstance(value, str):
            if not _encodable(value):
                yield _problem(loc, "text with a lone UTF-16 surrogate (such as \\ud800) is not valid Unicode", "string_unicode")
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                if not _encodable(key):
                    yield _problem(loc, "a key with a lone UTF-16 surrogate (such as \\ud800) is not valid Unicode", "string_unicode")
                    continue
                stack.append((item, [*loc, key]))
        elif isinstance(value, list):
            stack.extend((item, [*loc, index]) for index, item in reversed(list(enumerate(value))))


def encodable(value: Any) -> Any:
    """`value` (plain JSON data) with what JSON or UTF-8 cannot carry turned into text: a
    non-finite float as written (`inf`), a lone surrogate as its escape (`\\ud800`)."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return value if _encodable(value) else value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {encodable(key): encodable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [encodable(item) for item in value]
    return value


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _problem(loc: Loc, msg: str, kind: str) -> dict[str, Any]:
    return {"loc": loc, "msg": msg, "type": kind}


class StrictJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = loads_strict(await self.body())
        return self._json


class StrictJsonRoute(APIRoute):
    """An APIRoute whose request body is read with loads_strict."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            return await handler(StrictJsonRequest(request.scope, request.receive))

        return strict_handler
