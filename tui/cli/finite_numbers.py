"""Numbers a command line takes: finite ones only.

click's FloatRange takes `inf`, `nan` and `1e309` (which Python reads as inf): `nan` passes
every bound (each comparison with it is false) and `inf` passes an open upper bound, so a
`--timeout inf` used to reach the engine and the database (as null, which no listing could read
back). `FiniteFloatRange` refuses them as a usage error (exit 2) in one line naming the option.
`TokenCount` takes a whole number of tokens only (a context length): `inf` and `nan` are
refused the same way, `8.5k`, 0 and negative numbers as any other bad value.
"""

from __future__ import annotations

import math
from typing import Any

import click


class NotFinite(click.ClickException):
    """A number that is not finite: one line (`Error: --timeout: 'inf' is not a finite number.`),
    exit 2 as for any usage error."""

    exit_code = 2


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that takes finite numbers only."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):  # before the bounds, which nan passes and -inf fails with a vaguer message
            if param is None or ctx is None:  # converted outside a command (the pytest plugin names the option)
                self.fail(f"{value!r} is not a finite number.", param, ctx)
            option = param.get_error_hint(ctx).strip("'")
            raise NotFinite(f"{option}: {value!r} is not a finite number.")
        return super().convert(number, param, ctx)


class TokenCount(click.ParamType):
    """A whole number of tokens, 1 to parley.core.settings.MAX_CONTEXT_TOKENS: anything else
    (inf, nan, 0, -5, 8.5k) is a usage error saying what to give."""

    name = "tokens"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from parley.core.settings import MAX_CONTEXT_TOKENS  # the settings' own bound, loaded when a value is read

        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip().replace("_", "")
            if text.lower().lstrip("+-") in ("inf", "infinity", "nan"):
                name = param.get_error_hint(ctx).strip("'") if param is not None and ctx is not None else "a number of tokens"
                raise NotFinite(f"{name}: {value!r} is not a finite number.")
            if not text.isascii() or not text.isdigit():
                self.fail(f"{value!r} is not a number of tokens: give a whole number such as 8192", param, ctx)
            number = int(text)
        if not 1 <= number <= MAX_CONTEXT_TOKENS:
            self.fail(f"{number} tokens is not a context length: give 1 to {MAX_CONTEXT_TOKENS}", param, ctx)
        return number
