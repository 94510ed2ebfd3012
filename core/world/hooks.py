"""The hooks a world may offer the engine beyond its declarations (`WorldDefinition.hooks`, where
each is documented), each read through one small function here: the engine never asks a world for
a hook by the world's name, and a world without the hook gets the engine's own generic answer.

- `goal_tools(world)`: which of its tools answer which kind of goal of the simulated customer;
- `misspellings(world)`: the misspelt keywords its offline bot still reads (so a simulated
  customer's typos never change what it asks);
- `change_note(world, change, ...)`: the world's own words about a change nobody expected (the
  order world: how old the order was, past its cancellation window, and the reason its audit
  trail gives);
- `state_note(world, diff)`: the world's own words about a final state, appended to the check
  that no other record changed (tau2's worlds: tau2's hash of the state, beside parley's
  record-by-record comparison);
- `leaderboard(world)`: the benchmark and domain the world is (tau2-bench's retail), whose
  batches report pass^1..4 as that benchmark's leaderboard rows do;
- `customer_knows_credentials(world)`: whether the simulated customer is told its own credentials
  (False on a world whose customers know only what their file tells them: tau2-bench's, whose
  tasks say what the customer knows and what it has forgotten).

(`find_ids`, the world's own reader of ids in free text, is read by parley.core.world.id_reading.)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from parley.core.records import RecordChange, ToolCallRecord, WorldDiff
from parley.core.world.declaration import WorldDefinition

__all__ = [
    "CHANGE_NOTE",
    "CUSTOMER_KNOWS_CREDENTIALS",
    "FIND_IDS",
    "GOAL_TOOLS",
    "MISSPELLINGS",
    "change_note",
    "customer_knows_credentials",
    "goal_tools",
    "leaderboard",
    "misspellings",
    "state_note",
]

log = logging.getLogger("parley.world.hooks")

FIND_IDS = "find_ids"
GOAL_TOOLS = "goal_tools"
CHANGE_NOTE = "change_note"
MISSPELLINGS = "misspellings"
CUSTOMER_KNOWS_CREDENTIALS = "customer_knows_credentials"
LEADERBOARD = "leaderboard"
STATE_NOTE = "state_note"


def goal_tools(world: WorldDefinition | None) -> Mapping[str, tuple[str, ...]]:
    """The kinds of goal the world's tools answer (`track`, `status`, `list`, `policy`, `cancel`,
    `keep`, as parley.core.reading.goals reads goals) -> the tools whose successful call answers one;
    empty when the world declares none (its customers' goals are then free text)."""
    declared = world.hooks.get(GOAL_TOOLS) if world is not None else None
    if not isinstance(declared, Mapping):
        return {}
    return {str(intent): tuple(str(name) for name in tools) for intent, tools in declared.items()}


def misspellings(world: WorldDefinition | None) -> Mapping[str, tuple[str, ...]]:
    """Keyword -> the misspellings of it the world's offline bot reads ("cancel": "cancle"); empty
    when the world declares none (a simulated customer then never misspells a keyword)."""
    declared = world.hooks.get(MISSPELLINGS) if world is not None else None
    if not isinstance(declared, Mapping):
        return {}
    return {str(word): tuple(str(m) for m in spelt) for word, spelt in declared.items()}


def change_note(world: WorldDefinition | None, change: RecordChange, diff: WorldDiff, tool_calls: Sequence[ToolCallRecord]) -> str:
    """The world's words about `change` appended to a reason, as it wrote them (they begin with
    their own punctuation: "; it was 11 days old"); "" when it says nothing or has no such hook. A
    hook that fails is logged and says nothing: a world's bug never decides a verdict."""
    hook = world.hooks.get(CHANGE_NOTE) if world is not None else None
    if not callable(hook):
        return ""
    try:
        note = hook(change, diff, tool_calls)
    except Exception:  # noqa: BLE001 - a world's bug: the reason goes without its note, the log keeps the trace
        log.exception("world %s: its change_note hook failed on %s", world.name if world is not None else "?", change.ref)
        return ""
    return note if isinstance(note, str) else ""


def customer_knows_credentials(world: WorldDefinition | None) -> bool:
    """Whether the simulated customer is told the credentials in its own record (True unless the
    world declares False: its customers then know only what their profile says)."""
    declared = world.hooks.get(CUSTOMER_KNOWS_CREDENTIALS) if world is not None else None
    return declared is not False


def leaderboard(world: WorldDefinition | None) -> tuple[str, str] | None:
    """(benchmark, domain) when the world is another benchmark's domain (its `leaderboard` hook:
    `{"benchmark": "tau2-bench", "domain": "retail"}`), else None."""
    declared = world.hooks.get(LEADERBOARD) if world is not None else None
    if not isinstance(declared, Mapping) or not declared.get("benchmark") or not declared.get("domain"):
        return None
    return str(declared["benchmark"]), str(declared["domain"])


def state_note(world: WorldDefinition | None, diff: WorldDiff) -> str:
    """The world's words about a final state, as it wrote them (beginning with their own
    punctuation: "; tau2's hash of this state: 1a2b..."); "" when it says nothing or has no such
    hook. A hook that fails is logged and says nothing."""
    hook = world.hooks.get(STATE_NOTE) if world is not None else None
    if not callable(hook):
        return ""
    try:
        note = hook(diff)
    except Exception:  # noqa: BLE001 - a world's bug: the reason goes without its note, the log keeps the trace
        log.exception("world %s: its state_note hook failed", world.name if world is not None else "?")
        return ""
    return note if isinstance(note, str) else ""
