"""`--workers N` and `--ray ADDRESS`: a batch over several processes or machines (parley run,
parley serve). Ray, the optional extra parley[ray], is imported only when one of them is given;
without it, one line says how to install it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from parley.core.errors import ConfigError

if TYPE_CHECKING:
    from parley.core.engine.distributed import Placement

F = TypeVar("F", bound=Callable[..., Any])

WORKERS_HELP = (
    "Run the batch over N worker processes (a local Ray instance started for it; needs parley[ray]). "
    "--concurrency stays the total over all workers. With RAY_ADDRESS set, the workers run on that Ray cluster."
)
RAY_HELP = (
    "Run the batch on the Ray cluster at ADDRESS (e.g. ray://head:10001; its nodes need parley installed), "
    "one worker per CPU unless --workers says how many. Needs parley[ray]."
)


def workers_options(command: F) -> F:
    """--workers N, --ray ADDRESS."""
    command = click.option("--ray", "ray_address", metavar="ADDRESS", help=RAY_HELP)(command)
    return click.option("--workers", type=click.IntRange(1, 1024), metavar="N", help=WORKERS_HELP)(command)


def placement_or_exit(workers: int | None, ray_address: str | None) -> Placement | None:
    """The placement asked for (parley.core.engine.distributed.placement.Placement), None for one
    process; when Ray is missing, one line saying how to install it and exit 1."""
    from parley.core.engine.distributed import Placement, import_ray

    try:
        placement = Placement.from_options(workers, ray_address)
        if placement is not None:
            import_ray()
    except ConfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    return placement
