"""Numbers a command line takes: finite ones only.

click's FloatRange takes `inf`, `nan` and `1e309` (which Python reads as inf): `nan` passes
every bound (each comparison with it is false) and `inf` passes an open upper bound, so a
`--timeout inf` used to reach the engine and the database (as null, which no listing could read
back). `FiniteFloatRange` refuses them as a usage error (exit 2) in one line naming the option.
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
            name = param.get_error_hint(ctx).strip("'") if param is not None and ctx is not None else "a number"
            raise NotFinite(f"{name}: {value!r} is not a finite number.")
        return super().convert(number, param, ctx)
