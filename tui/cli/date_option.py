"""The `--today YYYY-MM-DD` option's parser, shared by the commands that pin a date."""

from __future__ import annotations

import datetime as dt

import click


def parse_date(ctx: click.Context, param: click.Parameter, value: str | None) -> dt.date | None:
    """A click callback: None stays None; anything but an ISO date is a usage error saying so."""
    if value is None:
        return None
    from parley.mockapi.fixture import today_problem

    try:
        date = dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date; use YYYY-MM-DD, e.g. 2026-11-21") from None
    problem = today_problem(date)
    if problem is not None:
        raise click.BadParameter(problem)
    return date
