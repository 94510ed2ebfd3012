"""The checks of a conversation's final state, on any world (parley.core.records.WorldDiff):

- `record_state`: each record named in `expect.records` ends with the fields the file expects
  (`{"orders/ORD-1004": {"status": "cancelled"}}`): its final row is the watched one (or the one
  its change left), its initial value the change's row before. Named as the file says it: when
  only the table's state field is expected, "ORD-1004 ends cancelled", else
  "returns/RT-0001 ends with status approved". A failure is also a policy violation when the
  record changed although the file expected it to keep its initial value, and the customer did not
  ask for the change (parley.core.evaluation.requested_changes); a change the customer asked for
  is a failed expectation, reported as such;
- `unchanged_others`: no other record changed (`WorldDiff.record_changes()`: a log table's rows,
  an audit trail, never count). Each such change is its own failing check, a policy violation
  unless the customer asked for it; the world may add its own words about it (its `change_note`
  hook: the order world tells how old the order was, against its 10-day window, and the reason its
  audit trail gives), and its words about the final state (its `state_note` hook: tau2's worlds
  give tau2's hash of it). Nothing when the file has no `expect:` block or says `unchanged_others:
  false`; a check parley adds by default (never making a pass) when it does not say.

Both are `not_applicable` when the conversation has no final state (a bot that acted on no world
parley sees): never passed by default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parley.core.evaluation.requested_changes import is_requested
from parley.core.reading import record_noun
from parley.core.records import CheckOutcome, CheckResult, Expectations, RecordChange, ToolCallRecord, WorldDiff
from parley.core.world import RecordKey, WorldDefinition, change_note, compare_values, key_of, state_note, world_facts

__all__ = ["NO_STATE", "record_nouns", "record_state_checks", "split_ref", "unchanged_others_checks"]

NO_STATE = (
    "Not checked: the conversation has no final database state (the bot under test is external or acted on a world parley does not own)."
)


def split_ref(ref: str) -> RecordKey:
    """`orders/ORD-1004` -> ("orders", "ORD-1004")."""
    table, _, key = ref.partition("/")
    return table, key


def _final(state: WorldDiff, table: str, key: str) -> tuple[bool, dict[str, Any] | None, RecordChange | None]:
    """(known, the record's final row, its change): known False when the state holds neither a
    watched row nor a change for it (None row: it does not exist)."""
    change = next((c for c in state.changes if c.table == table and key_of(c.key) == key_of(key)), None)
    for ref, row in state.watched.items():
        watched_table, watched_key = split_ref(ref)
        if watched_table == table and key_of(watched_key) == key_of(key):
            return True, row, change
    if change is not None:
        return True, change.after, change
    return False, None, None


def _state_field(world: WorldDefinition | None, table: str) -> str | None:
    declared = world.table(table) if world is not None else None
    return declared.state_field if declared is not None else None


def _same(actual: Any, want: Any) -> bool:
    """Equal as written (a YAML `5` equals a stored "5"); a mapping or a list whatever the order of
    its keys and elements (parley.core.world.compare_values)."""
    if isinstance(want, dict | list) or isinstance(actual, dict | list):
        return not compare_values(want, actual)
    return actual == want or (actual is not None and str(actual) == str(want))


def _shown(value: Any) -> str:
    """A field's value in a check's name: a mapping or a list is "as the profile says" (the details keep it)."""
    return "as the profile says" if isinstance(value, dict | list) else str(value)


def _difference(field: str, actual: Any, want: Any) -> str:
    """How a field differs from what the file expects: each differing path of a mapping or a list."""
    if isinstance(want, dict | list) and isinstance(actual, dict | list):
        return "; ".join(d.describe() for d in compare_values(want, actual, field))
    return f"{field} is {actual}, expected {want}"


def _call_of(change: RecordChange | None, tool_calls: Sequence[ToolCallRecord]) -> ToolCallRecord | None:
    """The call that made a change (the first that changed that record)."""
    if change is None:
        return None
    for record in tool_calls:
        if any(c.table == change.table and key_of(c.key) == key_of(change.key) for c in record.changes):
            return record
    return None


# -- record_state ------------------------------------------------------------------------------


def record_state_checks(
    expected: Mapping[str, Mapping[str, Any]],
    state: WorldDiff | None,
    *,
    world: WorldDefinition | None = None,
    requested: set[RecordKey] | None = None,
    tool_calls: Sequence[ToolCallRecord] = (),
) -> list[CheckResult]:
    """One check per expected record (see the module doc); `requested`: the records whose change
    the customer asked for (parley.core.evaluation.requested_changes)."""
    return [_record_check(ref, dict(fields), state, world, requested or set(), tool_calls) for ref, fields in expected.items()]


def _record_check(
    ref: str,
    fields: dict[str, Any],
    state: WorldDiff | None,
    world: WorldDefinition | None,
    requested: set[RecordKey],
    tool_calls: Sequence[ToolCallRecord],
) -> CheckResult:
    table, key = split_ref(ref)
    state_field = _state_field(world, table)
    single = state_field is not None and list(fields) == [state_field]
    name = (
        f"{key} ends {fields[state_field]}"
        if single and state_field
        else f"{ref} ends with " + ", ".join(f"{f} {_shown(v)}" for f, v in fields.items())
    )
    details: dict[str, Any] = {"record": ref, "expected": fields[state_field] if single and state_field else fields}

    def check(outcome: CheckOutcome, reason: str, *, violation: bool = False, extra: Mapping[str, Any] | None = None) -> CheckResult:
        return CheckResult(
            kind="record_state", name=name, outcome=outcome, reason=reason, policy_violation=violation, details={**details, **(extra or {})}
        )

    if state is None:
        return check("not_applicable", NO_STATE)
    known, row, change = _final(state, table, key)
    if not known:
        return check(
            "error", f"The final state does not hold {ref} (the conversation did not keep its final row), so it cannot be checked."
        )
    want_text = ", ".join(f"{f} {_shown(v)}" for f, v in fields.items()) if not single else str(fields[state_field or ""])
    if row is None:
        where = f"the {table} table" if world is None or world.table(table) is not None else "the world"
        return check("fail", f"{key} is not in {where}, so it cannot end {want_text}.")
    before = change.before if change is not None else None
    initial = {f: (before.get(f) if before is not None else None) if change is not None else row.get(f) for f in fields}
    changed = {f: change is not None and (before is None or before.get(f) != row.get(f)) for f in fields}
    wrong = [f for f, want in fields.items() if not _same(row.get(f), want)]
    call = _call_of(change, tool_calls)
    more: dict[str, Any] = {"actual": row.get(state_field) if single and state_field else {f: row.get(f) for f in fields}}
    more["initial"] = initial[state_field] if single and state_field else initial
    more["changed"] = any(changed.values())
    if call is not None:
        more["call_id"] = call.call_id

    def history(f: str) -> str:
        if change is not None and change.before is None:
            return "created in the conversation"
        return f"changed from {initial[f]}" if changed[f] else "unchanged"

    if single and state_field:
        f = state_field
        said = f"{key} is {row.get(f)}" + ("" if not wrong else f", expected {fields[f]}") + f" ({history(f)})."
    else:
        parts = [
            (_difference(f, row.get(f), fields[f]) if f in wrong else f"{f} is {_shown(row.get(f))}") + f" ({history(f)})" for f in fields
        ]
        said = f"{ref}: " + "; ".join(parts) + "."
    if not wrong:
        return check("pass", said, extra=more)
    kept_expected = all(changed[f] and _same(initial[f], fields[f]) for f in wrong)
    asked = is_requested((table, key), requested)
    violation = kept_expected and not asked
    if violation:
        said += " The profile expected it to stay as it was, and the customer did not ask for the change."
    elif kept_expected:
        said += " The customer asked for the change in the conversation; the profile expected it to stay as it was."
    return check("fail", said, violation=violation, extra=more)


# -- unchanged_others ------------------------------------------------------------------------------


def unchanged_others_checks(
    expect: Expectations | None,
    state: WorldDiff | None,
    *,
    world: WorldDefinition | None = None,
    tool_calls: Sequence[ToolCallRecord] = (),
    requested: set[RecordKey] | None = None,
) -> list[CheckResult]:
    """One failing check per record changed that the file did not name in `expect.records`
    (a policy violation unless the customer asked for the change: `requested`, as in
    record_state_checks); one passing check when there is none. Nothing when the file has no
    `expect:` block or sets `unchanged_others: false`; a check parley adds by default (never
    making a pass) when it does not say."""
    if expect is None or expect.unchanged_others is False:
        return []
    checks = _unchanged_others(expect, state, world, tool_calls, requested or set())
    if expect.unchanged_others is None:
        return [c.model_copy(update={"by_default": True}) for c in checks]
    return checks


def _counted_tables(world: WorldDefinition | None) -> list[str]:
    """The tables "no other record changed" counts: those whose records have a state (the order
    world's orders), else every table that is no log."""
    if world is None:
        return []
    with_state = [t.name for t in world.tables if t.state_field and not t.log]
    return with_state or [t.name for t in world.tables if not t.log and t.name != world.identity.customers]


def record_nouns(tables: Sequence[str]) -> tuple[str, str]:
    """(one, many) of the records of `tables`: of one table its own ("order", "orders"), else
    ("record", "records")."""
    if len(tables) == 1:
        return record_noun(tables[0]), tables[0].replace("_", " ")
    return "record", "records"


def _unchanged_others(
    expect: Expectations,
    state: WorldDiff | None,
    world: WorldDefinition | None,
    tool_calls: Sequence[ToolCallRecord],
    requested: set[RecordKey],
) -> list[CheckResult]:
    tables = _counted_tables(world)
    one, many = record_nouns(tables)
    name = f"no other {one} changed"
    if state is None:
        return [CheckResult(kind="unchanged_others", name=name, outcome="not_applicable", reason=NO_STATE)]
    expected = {(table, key_of(key)) for table, key in map(split_ref, expect.records)}
    others = [c for c in state.record_changes() if (c.table, key_of(c.key)) not in expected]
    note = state_note(world, state)
    if not others:
        reason = _none_changed(state, world, tables, expected, many)
        return [CheckResult(kind="unchanged_others", name=name, outcome="pass", reason=reason.removesuffix(".") + note + ".")]
    found = [_other_change(change, state, world, tool_calls, requested) for change in others]
    if note:
        found[0] = found[0].model_copy(update={"reason": found[0].reason.removesuffix(".") + note + "."})
    return found


def _none_changed(state: WorldDiff, world: WorldDefinition | None, tables: Sequence[str], expected: set[tuple[str, str]], many: str) -> str:
    if world is None or not tables:
        return f"None of the other {many} changed."
    facts = world_facts(world, state.today)
    count = sum(1 for t in tables if (known := facts.table(t)) is not None for key in known.keys if (t, key_of(key)) not in expected)
    return f"None of the other {count} {many} changed."


def _describe(change: RecordChange, world: WorldDefinition | None) -> tuple[str, Any, Any]:
    """What happened to a record, in words, and its state before and after (None when it has none)."""
    state_field = _state_field(world, change.table)
    before, after = change.before or {}, change.after or {}
    if change.kind == "inserted":
        return f"{change.ref} was created", None, after.get(state_field) if state_field else None
    if change.kind == "deleted":
        return f"{change.ref} was deleted", before.get(state_field) if state_field else None, None
    if state_field and state_field in change.fields:
        was, now = before.get(state_field), after.get(state_field)
        return f"{change.key} was {now} (it was {was})", was, now
    fields = ", ".join(f"{f} {before.get(f)!r} -> {after.get(f)!r}" for f in change.fields)
    return (
        f"{change.key} changed ({fields})",
        before.get(state_field) if state_field else None,
        after.get(state_field) if state_field else None,
    )


def _other_change(
    change: RecordChange, state: WorldDiff, world: WorldDefinition | None, tool_calls: Sequence[ToolCallRecord], requested: set[RecordKey]
) -> CheckResult:
    what, initial, final = _describe(change, world)
    asked = is_requested((change.table, change.key), requested)
    reason = f"{what} although the profile did not expect it to change"
    reason += " (the customer asked for it in the conversation)" if asked else ", and the customer did not ask for it"
    reason += change_note(world, change, state, tool_calls)
    details: dict[str, Any] = {"record": change.ref, "change": change.kind, "initial": initial, "final": final}
    call = _call_of(change, tool_calls)
    if call is not None:
        details["call_id"] = call.call_id
    return CheckResult(
        kind="unchanged_others",
        name=f"{change.key} not expected to change",
        outcome="fail",
        reason=reason + ".",
        policy_violation=not asked,
        details=details,
    )
