"""The first thing pydantic found wrong with a value, as parley's messages say it: where (the
field's dotted path, `choices.0.message.content`) and why (pydantic's own words)."""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import ValidationError

__all__ = ["FirstError", "first_error"]


class FirstError(NamedTuple):
    where: str
    """The dotted path of the field, or the caller's word for the whole value when it is the value itself."""
    message: str
    """Pydantic's message ("Field required", "Input should be a valid string")."""
    type: str
    """Pydantic's error type ("missing", "extra_forbidden", ...)."""
    input: Any
    """The value found there."""


def first_error(err: ValidationError, whole: str) -> FirstError:
    """The first of `err`'s errors; `whole` names the value when the error is about all of it."""
    first = err.errors()[0]
    return FirstError(".".join(str(part) for part in first["loc"]) or whole, first["msg"], first["type"], first.get("input"))
