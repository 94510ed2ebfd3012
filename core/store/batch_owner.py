"""Who is running a batch, and whether that process is still alive.

Every process that stores a batch as `pending` or `running` (a `parley run`, the app, the batch
service) records itself as the batch's owner: host name, pid, the process's start time (so a pid
the system has since given to another program is not mistaken for the owner) and a random token
of this process. A batch left `pending`/`running` by an owner that is gone was killed (kill -9,
a power cut) and is shown as `interrupted` instead (see `Store.interrupt_orphans`).

What "gone" means, on purpose conservative: only an owner on this host can be checked. Its pid
must be running and, where the system tells start times (Linux /proc), have the recorded one.
An owner on another host (a database on a shared disk) is assumed alive: marking a live batch
interrupted would let two processes run it at once, while a wrongly kept `running` costs only
a manual `parley run --resume`.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path

_PROCESS_TOKEN = uuid.uuid4().hex


@dataclass(frozen=True)
class BatchOwner:
    """A process that runs (or ran) a batch."""

    host: str
    pid: int
    started: str | None
    """The process's start time as the system counts it (Linux: clock ticks since boot); None
    when the system does not tell."""
    token: str

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}"


def _stat_fields(pid: int) -> list[str] | None:
    """Fields 3... of /proc/PID/stat (Linux), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces or ")".
    return text[text.rfind(")") + 2 :].split()


def process_start(pid: int) -> str | None:
    """The start time of process `pid` (Linux: field 22 of /proc/PID/stat), or None."""
    fields = _stat_fields(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def current_owner() -> BatchOwner:
    """This process as a batch owner."""
    pid = os.getpid()
    return BatchOwner(host=socket.gethostname(), pid=pid, started=process_start(pid), token=_PROCESS_TOKEN)


def is_current(owner: BatchOwner) -> bool:
    return owner.token == _PROCESS_TOKEN


def pid_running(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by another user
    except OSError:
        return False
    return True


def owner_alive(owner: BatchOwner) -> bool:
    """Whether `owner` may still be running its batch (see the module doc)."""
    if is_current(owner):
        return True
    if owner.host != socket.gethostname():
        return True
    if not pid_running(owner.pid):
        return False
    fields = _stat_fields(owner.pid)
    if fields and fields[0] in ("Z", "X"):
        return False  # killed, not yet reaped by its parent
    if owner.started is not None:
        now = process_start(owner.pid)
        if now is not None and now != owner.started:
            return False  # the pid was reused by another process
    return True


def running_elsewhere(owner: BatchOwner) -> bool:
    """Whether another live process on this host runs the batch (resuming it here would run
    it twice). An owner on another host cannot be checked and does not count (see above)."""
    return not is_current(owner) and owner.host == socket.gethostname() and owner_alive(owner)
