"""A folder that a command sees as a read-only file system, wherever the checkout lives.

File modes bind every user but root. As root, the command runs in a private mount namespace
(util-linux's `unshare`) in which the folder is bind-mounted read-only: root cannot write there
either, nothing outside the namespace sees the mount, and the command still reads the checkout
and its .venv from wherever they are (a folder made by `mktemp -d` is mode 0700). Only where
the kernel refuses a mount namespace (a container without CAP_SYS_ADMIN) does it run as
`nobody` instead, which then needs a checkout that `nobody` can read."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

NOBODY = 65534

# Bind the folder onto itself, make that bind read-only, then become the command. $0 is the
# folder, "$@" the command.
_REMOUNT = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'


def seal(folder: Path) -> None:
    """Make `folder` and every file in it read-only by mode: it binds any user but root."""
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)


def unseal(folder: Path) -> None:
    """Give `folder` back to its owner (writable again), e.g. to remove it."""
    folder.chmod(0o755)
    for path in folder.iterdir():
        path.chmod(0o644)


@functools.cache
def _mount_namespaces() -> bool:
    unshare = shutil.which("unshare")
    return unshare is not None and subprocess.run([unshare, "--mount", "true"], capture_output=True).returncode == 0


def on_read_only_fs(folder: Path, command: list[str]) -> list[str]:
    """`command` as run with `folder` on a read-only file system (see the module's docstring).
    `seal(folder)` first, for a user other than root."""
    if os.geteuid() != 0:
        return command
    if _mount_namespaces():
        return [str(shutil.which("unshare")), "--mount", "--propagation", "private", "sh", "-c", _REMOUNT, str(folder), *command]
    setpriv = shutil.which("setpriv")
    assert setpriv, "running as root with no mount namespace: setpriv (util-linux) is needed to read as another user"
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
