"""Numbers a command line takes: finite ones only.

click's FloatRange takes `inf`, `nan` and `1e309` (which Python reads as inf): `nan` passes
every bound (each comparison with it is false) and `inf` passes an open upper bound, so a
`--timeout inf` used to reach the engine and the database (as null, which no listing could read
back). `FiniteFloatRange` refuses them as the usage error any other bad value is (exit 2).
"""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that takes finite numbers only."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):  # before the bounds, which nan passes and -inf fails with a vaguer message
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)
