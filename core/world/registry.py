"""Finding a world by name or path, the way `python:` bots are found: never by import from the engine.

- a name: a world shipped with parley (BUILT_IN: each a module path, imported on first use), or one
  an installed package registers under the `parley.worlds` entry point group
  (`my-world = "my_package.world:WORLD"`);
- a path to a Python file (`world: {path: my_world.py}`, relative to the file that names it) that
  defines `WORLD`, a `WorldDefinition`, or `make_world(**options)` returning one.

A world is loaded once per process (by name, or by path and modification time); what went wrong
loading one is a `WorldError`: one line naming the file and line where it can.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import traceback
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from parley.core.errors import ParleyError
from parley.core.records import did_you_mean
from parley.core.world.declaration import WorldDefinition

__all__ = ["BUILT_IN", "BUILT_IN_BOTS", "DEFAULT_WORLD", "WorldError", "known_bots", "known_worlds", "load_world", "world_label"]

DEFAULT_WORLD = "orders"
"""The world a file that names none runs on."""

BUILT_IN: dict[str, str] = {
    "orders": "parley.worlds.orders:WORLD",
    "orders-staff": "parley.worlds.orders_staff:WORLD",
    "returns": "parley.worlds.returns:WORLD",
    "tau2-retail": "parley.worlds.tau2:make_world",
    "tau2-airline": "parley.worlds.tau2:make_world",
}
"""The worlds shipped with parley, by name."""

BUILT_IN_BOTS: dict[str, str] = {
    "tau2:gold": "parley.worlds.tau2.bots:GoldBot",
    "tau2:null": "parley.worlds.tau2.bots:null_bot",
}
"""Bots a world ships for its own suites (`--bot tau2:gold`), by name -> the Python bot
(`MODULE:NAME`, as `python:` names one) that plays it: found as worlds are, never imported by the engine."""

ENTRY_POINT_GROUP = "parley.worlds"
BOT_ENTRY_POINT_GROUP = "parley.world_bots"

_lock = threading.Lock()
_loaded: dict[tuple[Any, ...], WorldDefinition] = {}


class WorldError(ParleyError):
    """A world cannot be found or loaded; the message says which and where."""


def known_worlds() -> dict[str, str]:
    """Every world name this installation knows -> where it comes from (`module:NAME`)."""
    found = dict(BUILT_IN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def known_bots() -> dict[str, str]:
    """Every bot a world ships, by the name `--bot` takes -> its Python bot (`MODULE:NAME`): the
    built-in ones and those an installed package registers under the `parley.world_bots` entry
    point group."""
    found = dict(BUILT_IN_BOTS)
    for ep in entry_points(group=BOT_ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def world_label(name: str | None, path: str | None) -> str:
    """How a world reference is named in messages and records."""
    return path if path else (name or DEFAULT_WORLD)


def load_world(
    name: str | None = None,
    *,
    path: str | Path | None = None,
    base_dir: str | Path | None = None,
    options: Mapping[str, Any] | None = None,
) -> WorldDefinition:
    """The world named `name` (default: the order world), or defined in the file `path` (relative
    to `base_dir`, the folder of the file that names it). `options` go to a world's `make_world`."""
    opts = dict(options or {})
    if path is not None:
        file = Path(path)
        if not file.is_absolute() and base_dir is not None:
            file = Path(base_dir) / file
        return _from_file(file.resolve(), opts)
    ref = name or DEFAULT_WORLD
    key = ("name", ref, tuple(sorted((k, repr(v)) for k, v in opts.items())))
    with _lock:
        if key in _loaded:  # before reading the entry points, which takes milliseconds: a world is asked for per conversation
            return _loaded[key]
    worlds = known_worlds()
    if ref not in worlds:
        raise WorldError(
            f"no world named {ref!r}{did_you_mean(ref, worlds)}; the worlds: {', '.join(sorted(worlds))} (or world: {{path: FILE.py}})"
        )
    target = worlds[ref]
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise WorldError(f"world {ref!r}: cannot import {module_name}: {exc}") from exc
    world = checked(_definition(getattr(module, attr or "WORLD", None), module, f"world {ref!r} ({target})", {"name": ref, **opts}))
    with _lock:
        return _loaded.setdefault(key, world)


def _from_file(file: Path, options: dict[str, Any]) -> WorldDefinition:
    if not file.is_file():
        raise WorldError(f"{file}: no such world file")
    if file.suffix != ".py":
        raise WorldError(f"{file}: a world is a Python file defining WORLD (a WorldDefinition)")
    key = ("path", str(file), file.stat().st_mtime_ns, tuple(sorted((k, repr(v)) for k, v in options.items())))
    with _lock:
        if key in _loaded:
            return _loaded[key]
    module_name = f"parley_world_{abs(hash(str(file))):x}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise WorldError(f"{file}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise WorldError(f"{_place_in(file, exc)}: loading the world failed: {type(exc).__name__}: {exc}") from exc
    factory = getattr(module, "make_world", None)
    target = getattr(module, "WORLD", None) if not (options and callable(factory)) else factory
    if target is None and callable(factory):
        target = factory
    world = _definition(target, module, str(file), options)
    if not world.source:
        world.source = str(file)
    if world.base_dir is None:
        world.base_dir = file.parent
        world.__post_init__()
    if options.get("unchecked"):
        return world
    checked(world)
    with _lock:
        return _loaded.setdefault(key, world)


def checked(world: WorldDefinition) -> WorldDefinition:
    """`world`, or WorldError listing what is wrong with its declaration (`parley worlds check` says all)."""
    from parley.core.world.checking import world_problems

    problems = world_problems(world, build=False)
    if problems:
        more = f" (and {len(problems) - 3} more: parley worlds check {world.source or world.name})" if len(problems) > 3 else ""
        raise WorldError("; ".join(problems[:3]) + more)
    return world


def _definition(target: Any, module: Any, where: str, options: dict[str, Any]) -> WorldDefinition:
    if isinstance(target, WorldDefinition):
        return target
    if callable(target):
        try:
            made = target(**options)
        except ParleyError:
            raise
        except Exception as exc:
            raise WorldError(f"{where}: make_world failed: {type(exc).__name__}: {exc}") from exc
        if isinstance(made, WorldDefinition):
            return made
        raise WorldError(f"{where}: make_world returned {type(made).__name__}, not a WorldDefinition")
    raise WorldError(f"{where}: defines no WORLD (a WorldDefinition) nor make_world()")


def _place_in(file: Path, exc: BaseException) -> str:
    """`file:line` of the deepest frame of `file` in the exception's traceback (or the file)."""
    line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == file:
            line = frame.lineno
    return f"{file}:{line}" if line else str(file)
