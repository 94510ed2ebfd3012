"""What a batch request runs from, as files: confined paths and the service's own copies.

A batch's sources are file paths (so `prepare_resume` can re-plan it), so the scenarios and
inline profiles of a request are written under the service's inputs folder, one folder per
request, and kept there. Paths a client names must resolve (symlinks followed) inside one of
the service's profile folders: a client cannot make the service read any other file.

Inline profiles are text from the network, so what they may point at is narrowed too: a
`personality:` or `file:` (a list function's Python file, which is imported) must be a relative
path without `..`; it is then looked up beside the inline file (the inputs folder holds only
.yaml/.json files the service wrote, none importable) or by name in the shipped personalities.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from parley.core.errors import ParleyError, ProfileError
from parley.core.service.models import BatchRequest, ProfileItem, ProfilePath, ScenarioIn

INLINE_SUFFIXES = (".yaml", ".yml", ".json")
_REFERENCE_KEYS = ("personality", "file")


class InputRefused(ParleyError):
    """A request names a file the service will not read (403)."""


class InputInvalid(ParleyError):
    """A request's input is wrong in a way the schema cannot say (422); `loc` names the field."""

    def __init__(self, message: str, loc: Sequence[str | int]) -> None:
        super().__init__(message)
        self.loc = list(loc)


@dataclass
class BatchInputs:
    """The sources of a new batch and, for error messages, which request field each came from."""

    folder: Path | None
    sources: list[str] = field(default_factory=list)
    origins: dict[str, list[str | int]] = field(default_factory=dict)
    """source path -> its location in the request body (e.g. ["body", "profiles", 2])."""

    def discard(self) -> None:
        """Remove the files written for a request that did not make a batch."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def is_inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def confine(text: str, roots: Sequence[Path], *, loc: Sequence[str | int], cwd: Path | None = None) -> Path:
    """The file or folder `text` names, resolved, if it is inside one of `roots` (resolved
    folders). A relative path is tried against the working directory, then each root.
    InputRefused when it lies outside them all (whether or not it exists); InputInvalid when it
    does not exist."""
    try:
        raw = Path(text.strip()).expanduser()
        base = cwd or Path.cwd()
        candidates = [raw] if raw.is_absolute() else [base / raw, *(root / raw for root in roots)]
        inside = [c.resolve() for c in candidates if is_inside(c.resolve(), roots)]
        if not inside:
            shown = ", ".join(str(r) for r in roots) or "none configured"
            raise InputRefused(f"'{text}' is outside the service's profile folders ({shown})")
        for path in inside:
            if path.exists():
                _check_tree(path, roots, text)
                return path
    except (OSError, RuntimeError, ValueError) as exc:  # too long, a symlink loop, a NUL byte
        raise InputInvalid(f"'{text[:200]}' is not a usable path: {type(exc).__name__}", loc) from None
    raise InputInvalid(f"'{text}' not found in the service's profile folders", loc)


def _check_tree(path: Path, roots: Sequence[Path], text: str) -> None:
    """A folder must not lead outside the roots through a symlink inside it."""
    if not path.is_dir():
        return
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            entry = Path(folder) / name
            if entry.is_symlink() and not is_inside(entry.resolve(), roots):
                raise InputRefused(f"'{text}' holds a link leading outside the service's profile folders ({entry})")


def _references(node: Any) -> Iterator[tuple[str, str]]:
    """Every `personality:`/`file:` string in parsed YAML; a node shared through aliases is
    visited once."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if not isinstance(current, (dict, list)) or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, dict):
            for key, value in current.items():
                if key in _REFERENCE_KEYS and isinstance(value, str):
                    yield key, value
                else:
                    stack.append(value)
        else:
            stack.extend(current)


def world_file_problem(request: BatchRequest | list[ScenarioIn], allowed: bool) -> tuple[list[str | int], str] | None:
    """Where a request names a world by the path of a Python file (a world file is code: loading it
    runs it), and why that is refused, unless the server allows Python; None when nothing does. A
    profile sent by its path on the server is read for it too."""
    if allowed:
        return None
    from parley.core.specs import read_yaml

    why = "a world given by path is a Python file, run when it loads: this server does not run Python it was sent (parley serve --allow-python-bots)"
    scenarios = request if isinstance(request, list) else (request.scenarios or [])
    base: list[str | int] = ["body"] if isinstance(request, list) else ["body", "scenarios"]
    for index, scenario in enumerate(scenarios):
        if isinstance(scenario.world, dict) and scenario.world.get("path") is not None:
            return [*base, index, "world", "path"], why
    for index, item in enumerate([] if isinstance(request, list) else request.profiles or []):
        loc: list[str | int] = ["body", "profiles", index]
        try:
            if isinstance(item, ProfilePath) or (isinstance(item, str) and "\n" not in item):
                continue  # a file of the server's own: its world path is the server's to trust
            data = read_yaml(item if isinstance(item, str) else item.yaml, "inline")
        except (ProfileError, OSError):
            continue  # the loader reports it at its place
        world = data.get("world") if isinstance(data, dict) else None
        if isinstance(world, dict) and world.get("path") is not None:
            return [*loc, "world", "path"], why
    return None


def check_inline_references(text: str, loc: Sequence[str | int]) -> None:
    """InputRefused if inline YAML points at a file by an absolute path or through `..`."""
    from parley.core.specs import read_yaml

    try:
        data = read_yaml(text, "inline")
    except ProfileError:
        return  # the loader reports the YAML error with its position
    for key, value in _references(data):
        pure = PurePath(value.strip())
        if value.strip().startswith(("/", "\\", "~")) or pure.is_absolute() or ".." in pure.parts or ":" in value:
            raise InputRefused(
                f"{'.'.join(str(p) for p in loc[1:])}: {key} '{value}' must be a relative path without '..' "
                "in an inline profile (name a shipped personality, or send the profile's path instead)"
            )


def prepare_inputs(request: BatchRequest | list[ScenarioIn], inputs_dir: Path, roots: Sequence[Path]) -> BatchInputs:
    """The sources of a request: confined paths as they resolve, scenarios and inline profiles
    written to a new folder under `inputs_dir`. Raises InputRefused / InputInvalid; on error,
    nothing is left behind."""
    profiles: list[ProfileItem]
    scenarios_loc: list[str | int]
    if isinstance(request, list):
        scenarios_loc = ["body"]
        scenarios, profiles = request, []
    else:
        scenarios_loc = ["body", "scenarios"]
        scenarios, profiles = request.scenarios or [], request.profiles or []
    inputs = BatchInputs(folder=None)
    try:
        written: list[tuple[str, str, list[str | int]]] = []  # (file name, text, loc)
        if scenarios:
            body = {"scenarios": [s.model_dump(mode="json", exclude_none=True) for s in scenarios]}
            written.append(("scenarios.json", json.dumps(body, ensure_ascii=False, indent=2) + "\n", scenarios_loc))
        names: set[str] = {"scenarios.json"} if scenarios else set()
        for index, item in enumerate(profiles):
            loc: list[str | int] = ["body", "profiles", index]
            if isinstance(item, ProfilePath) or (isinstance(item, str) and "\n" not in item):
                path = confine(item.path if isinstance(item, ProfilePath) else item, roots, loc=loc)
                inputs.sources.append(str(path))
                inputs.origins[str(path)] = loc
                continue
            yaml_text, given_name = (item, None) if isinstance(item, str) else (item.yaml, item.name)
            name = given_name or f"profile_{index}.yaml"
            if not name.lower().endswith(INLINE_SUFFIXES):
                raise InputInvalid(f"inline file name '{name}' must end in .yaml, .yml or .json", [*loc, "name"])
            if name in names:
                raise InputInvalid(f"inline file name '{name}' is used twice", [*loc, "name"])
            names.add(name)
            check_inline_references(yaml_text, loc)
            written.append((name, yaml_text, loc))
        if written:
            inputs.folder = inputs_dir.resolve() / uuid.uuid4().hex
            inputs.folder.mkdir(parents=True)
            for name, text, loc in written:
                path = inputs.folder / name
                with path.open("x", encoding="utf-8") as fh:  # exclusive: never through a planted link
                    fh.write(text)
                inputs.sources.append(str(path))
                inputs.origins[str(path)] = loc
    except BaseException:
        inputs.discard()
        raise
    return inputs


def error_loc(error: ProfileError, inputs: BatchInputs) -> list[str | int]:
    """Where in the request body a loader error lies: the input's location, then the field path
    inside it (`scenarios[0].variables.PATIENCE` -> ..., 0, "variables", "PATIENCE")."""
    base = list(inputs.origins.get(error.file or "", ["body"]))
    if not error.field_path:
        return base
    parts: list[str | int] = []
    for piece in error.field_path.replace("]", "").replace("[", ".").split("."):
        if piece:
            parts.append(int(piece) if piece.isascii() and piece.isdigit() else piece)
    if base[-1:] == ["scenarios"] and parts[:1] == ["scenarios"]:
        parts = parts[1:]
    elif base == ["body"] and parts[:1] == ["scenarios"]:
        parts = parts[1:]  # a bare list: the list is the body
    return [*base, *parts]


def error_message(error: ProfileError, inputs: BatchInputs) -> str:
    """The loader's message. For a file the service wrote from the request, its own path and
    line numbers mean nothing to the client: the field path and reason are kept (the location
    is in `loc`); for a file in the profile folders, file:line:col as the CLI shows it."""
    owned = inputs.folder is not None and (error.file or "").startswith(str(inputs.folder))
    if not owned:
        return error.render()
    if error.field_path:
        return error.reason  # `loc` says where
    if error.line is not None and error.file in inputs.origins:
        label = ".".join(str(p) for p in inputs.origins[error.file][1:]) or "body"
        return f"{label} line {error.line}: {error.reason}"
    return error.reason
