"""Where a sharded batch's workers run, and the Ray it needs.

`Placement(workers=N)` starts a local Ray instance for the batch (N worker processes on this
machine, nothing downloaded, no dashboard); `Placement(address=...)` connects to an existing Ray
cluster (`--ray ADDRESS`, or `RAY_ADDRESS` with `--workers`), whose nodes need parley installed.
Ray is the optional extra `parley[ray]`: without it, `import_ray` raises one ConfigError line
that says how to install it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from parley.core.errors import ConfigError

INSTALL_HINT = "--workers and --ray need Ray, which is not installed: pip install 'parley[ray]'"
ADDRESS_ENV = "RAY_ADDRESS"
AUTH_MODE_ENV = "RAY_AUTH_MODE"


def import_ray() -> Any:
    """The `ray` module; ConfigError (how to install it, in one line) when it is missing."""
    try:
        import ray
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    return ray


@dataclass(frozen=True)
class Placement:
    """Where a batch's workers run: `address` None is a local Ray instance started for the batch."""

    workers: int | None = None
    """Worker processes; None with an address: one per CPU of the cluster."""
    address: str | None = None

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {self.workers}")
        if self.address is None and self.workers is None:
            raise ConfigError("a local Ray instance needs --workers N")

    @classmethod
    def from_options(cls, workers: int | None, address: str | None, env: dict[str, str] | None = None) -> Placement | None:
        """The placement `--workers` and `--ray` ask for; None (one process, no Ray) when neither
        is given. `RAY_ADDRESS` is read only with `--workers`: then the workers run on that cluster."""
        env = dict(os.environ) if env is None else env
        address = (address or "").strip() or None
        if workers is None and address is None:
            return None
        if address is None:
            address = (env.get(ADDRESS_ENV) or "").strip() or None
        return cls(workers=workers, address=address)

    @property
    def local(self) -> bool:
        return self.address is None

    def describe(self) -> str:
        count = "one worker per CPU" if self.workers is None else f"{self.workers} worker{'s' if self.workers != 1 else ''}"
        return f"{count} on a local Ray instance" if self.local else f"{count} on the Ray cluster at {self.address}"


def start_ray(placement: Placement) -> bool:
    """Start (local) or join (cluster) Ray in this process; True if this call did it (the caller
    then shuts it down), False if Ray was already up here. Blocking: call it from a thread."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no network: nothing is reported home
    quiet: dict[str, Any] = {"logging_level": "error", "log_to_driver": False, "configure_logging": True}
    if placement.local:
        assert placement.workers is not None
        ray.init(
            address="local",  # never an instance found through RAY_ADDRESS or /tmp/ray
            num_cpus=placement.workers,
            include_dashboard=False,
            object_store_memory=OBJECT_STORE_BYTES,
            **quiet,
        )
    else:
        try:
            ray.init(address=placement.address, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            hint = ""
            if not os.environ.get(AUTH_MODE_ENV):
                hint = f" (a cluster with token authentication also needs {AUTH_MODE_ENV}=token here, and its token)"
            raise ConfigError(f"cannot join the Ray cluster at {placement.address}: {exc}{hint}") from None
    return True


OBJECT_STORE_BYTES = 100 * 1024 * 1024
"""A local instance's shared-memory store: conversations are passed by value, a few kB each."""


def stop_ray() -> None:
    """Leave Ray (a local instance is shut down with its processes). Blocking."""
    ray = import_ray()
    ray.shutdown()
