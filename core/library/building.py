"""Conversations built in code: the same `ConversationSpec` a profile or a playbook makes, so the one
harness runs it, the store keeps it and every report reads it.

    conversation("cancel_recent", goals=["cancel order ORD-1004"], personality="formal-user",
                 orders={"ORD-1004": "cancelled"}, tools_called=["cancel_order"])

A conversation runs on the order world unless `world` names another (`world="returns"`, or a
profile's whole `world:` mapping: `{"name": ..., "customer_id": ..., "rows": {...}}`); tools, tables
and customers are checked against that world, as a file's are.

With `steps`, a conversation is a playbook written in code: fixed customer lines (`say`), the
simulated customer going on for a few turns (`simulate`), assertions on the bot's last answer
(`expect_reply`) or the tools it called in it (`expect_tool`), injected context (`inject_reply`,
`inject_tool`), and judge checkpoints (`checkpoint`: criteria an LLM judge decides on the
conversation as it stands at that step); the steps are parley.core.specs' playbook steps, run by the
playbook machinery (parley.core.engine.playbook_run). Without steps, the simulated customer talks
from its goals to the end, as a profile's does.

Every problem is one ProfileError naming the field (`conversation 'x': goals: ...`), before
anything runs.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from parley.core.errors import ProfileError
from parley.core.evaluation import check_target
from parley.core.records import (
    PYTHON_SOURCE,
    CheckLimits,
    ConversationSpec,
    Expectations,
    PythonCheck,
    WorldFacts,
    WorldSpec,
    derive_seed,
    first_error,
    make_spec_id,
    read_python_checks,
)
from parley.core.specs import (
    SHIPPED_DIR,
    ExpectBotRegexStep,
    ExpectToolStep,
    InjectBotResponseStep,
    InjectToolStep,
    JudgeStep,
    PlaybookStep,
    SimulateStep,
    UserStep,
    did_you_mean,
    read_personality,
    steps_problem,
)

__all__ = [
    "DEFAULT_ROLE",
    "checkpoint",
    "conversation",
    "expect_reply",
    "expect_tool",
    "inject_reply",
    "inject_tool",
    "say",
    "simulate",
]

DEFAULT_ROLE = "you are a customer of an online shop talking to its support assistant."


def say(text: str) -> UserStep:
    """The customer says `text`; the bot answers it (one bot turn)."""
    return UserStep(text=text)


def simulate(turns: int) -> SimulateStep:
    """The simulated customer goes on for up to `turns` turns, from the conversation's goals (it
    may stop sooner; the steps after it then go on)."""
    return SimulateStep(turns=turns)


def expect_tool(name: str, **arguments: Any) -> ExpectToolStep:
    """The bot called the tool `name` in its last answer (with these arguments too, when given).
    The name is checked against the conversation's world when the conversation is built."""
    return ExpectToolStep(name=name, arguments=arguments or None)


def expect_reply(pattern: str) -> ExpectBotRegexStep:
    """The bot's last answer matches the regular expression `pattern` (searched, case-insensitive)."""
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ProfileError(f"expect_reply: invalid regular expression {pattern!r}: {exc}") from None
    return ExpectBotRegexStep(pattern=pattern)


def inject_reply(text: str) -> InjectBotResponseStep:
    """An assistant message put in the transcript as context (no model is called; never judged as the bot's)."""
    return InjectBotResponseStep(text=text)


def inject_tool(name: str, result: str, **arguments: Any) -> InjectToolStep:
    """A tool call and its result put in the transcript as if the bot had made it (not run). The
    name is checked against the conversation's world when the conversation is built."""
    return InjectToolStep(name=name, arguments=arguments, result=result)


def checkpoint(criteria: Sequence[str]) -> JudgeStep:
    """A judge checkpoint: `criteria` in words (a list of sentences), each decided by an LLM judge
    on the conversation as it stands at this step (what comes later is not shown), each its own
    check named `at step N: CRITERION`, with its evidence. Offline they are not run, never passed."""
    if isinstance(criteria, str):
        raise ProfileError('checkpoint: criteria are a list of sentences, not one string: checkpoint(["The bot asked for the order id"])')
    try:
        return JudgeStep.model_validate({"criteria": list(criteria) if isinstance(criteria, (list, tuple)) else criteria})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors())
        raise ProfileError(f"checkpoint: {problems}") from None


CheckArg = Callable[..., Any] | str | PythonCheck
"""A check written in Python as code names it: the callable itself, `MODULE:NAME`, a shipped
check's name, or a PythonCheck (its target and arguments)."""


def _python_check(check: CheckArg, where: str) -> PythonCheck:
    if isinstance(check, PythonCheck):
        return check
    if isinstance(check, str):
        try:
            return read_python_checks([check])[0]
        except ValidationError as exc:  # the YAML reader's problem: what the target should be
            raise ProfileError(f"{where}: checks: {first_error(exc, 'checks').message}") from None
    if callable(check):
        return PythonCheck(target=check_target(check))
    raise ProfileError(f"{where}: checks: expected a function, MODULE:NAME or a PythonCheck, got {type(check).__name__}")


def _personality(name: str | Path) -> list[str]:
    """A personality's context lines: a file, or the name of a shipped one (`formal-user`)."""
    path = Path(name)
    if not path.suffix:
        path = SHIPPED_DIR / "personalities" / f"{name}.yml"
        if not path.is_file():
            shipped = sorted(p.stem for p in (SHIPPED_DIR / "personalities").glob("*.yml"))
            hint = did_you_mean(str(name), shipped) or f"; the shipped ones are {', '.join(shipped)}"
            raise ProfileError(f"personality: no shipped personality {str(name)!r}{hint}; or give a file's path")
    lines, errors = read_personality(path)
    if errors:
        raise errors[0]
    return lines


def _world(
    world: str | Sequence[Mapping[str, Any]] | Mapping[str, Any] | None, customer_id: str | None, today: datetime.date | None, where: str
) -> tuple[WorldSpec, WorldFacts]:
    """The conversation's world from `world` (a world's name, a profile's `world:` mapping, or rows
    of the default world's state table) and the `customer_id` and `today` given beside it (which
    must agree with the mapping's); every problem checked against that world, as a file's."""
    from parley.core.specs import world_problems_of
    from parley.core.world import load_world, world_facts

    if world is None or (not isinstance(world, (str, Mapping)) and not world):
        mapping: dict[str, Any] = {}
    elif isinstance(world, str):
        mapping = {"name": world}
    elif isinstance(world, Mapping):
        mapping = dict(world)
    else:
        default = world_facts(load_world())
        table = next(iter(default.state_tables()), None)
        given_rows = list(world)
        if table is None or not all(isinstance(row, Mapping) for row in given_rows):
            raise ProfileError(f"{where}: world: expected a world's name, a world mapping, or rows of its records, got {world!r}")
        mapping = {table: [dict(row) for row in given_rows]}
    for name, given in (("customer_id", customer_id), ("today", today)):
        if given is not None and name in mapping and mapping[name] != given:
            raise ProfileError(f"{where}: {name} {given!r} and world.{name} {mapping[name]!r} differ: give one of them")
        if given is not None:
            mapping[name] = given
    definition, problems = world_problems_of(mapping, None)
    if problems:
        at, why = problems[0]
        place = ".".join(str(part) for part in at)
        raise ProfileError(f"{where}: world{'.' + place if place else ''}: {why}")
    facts = world_facts(definition)
    rows: dict[str, list[dict[str, Any]]] = {}
    for key, value in mapping.items():
        if key not in ("name", "path", "customer_id", "today", "rows") and isinstance(value, list):
            rows.setdefault(key, []).extend(dict(r) for r in value)
    for key, value in (mapping.get("rows") or {}).items():
        rows.setdefault(key, []).extend(dict(r) for r in value)
    spec = WorldSpec(
        name=mapping.get("name"),
        path=mapping.get("path"),
        customer_id=mapping.get("customer_id") or facts.default_customer,
        today=mapping.get("today"),
        rows=rows,
    )
    return spec, facts


def _expected_records(
    records: Mapping[str, Mapping[str, Any]] | None, tables: Mapping[str, Any], facts: WorldFacts, where: str
) -> dict[str, dict[str, Any]]:
    """`records` and the tables' shorthand (`orders={"ORD-1004": "cancelled"}`: the table's state
    field), checked against the world."""
    found = {str(ref): dict(fields) for ref, fields in (records or {}).items()}
    for table_name, expected in tables.items():
        table = facts.table(table_name)
        if table is None or not table.state_field:
            known = list(facts.state_tables())
            hint = did_you_mean(table_name, known) or (f"; the tables with a state: {', '.join(known)}" if known else "")
            raise ProfileError(f"{where}: unknown keyword {table_name!r}{hint}")
        if not isinstance(expected, Mapping):
            raise ProfileError(
                f"{where}: {table_name}: expected a mapping of {table.singular} ids to their {table.state_field}, got {expected!r}"
            )
        for key, value in expected.items():
            if table.fixed_keys and table.keys and str(key) not in table.keys:
                hint = did_you_mean(str(key), table.keys) or f"; its {table.name} are {', '.join(table.keys)}"
                raise ProfileError(f"{where}: {table_name}: {table.singular} {key!r} is not in world {facts.name}{hint}")
            choices = table.choices.get(table.state_field)
            if choices and value not in choices:
                hint = did_you_mean(str(value), choices) or f"; one of {', '.join(choices)}"
                raise ProfileError(f"{where}: {table_name}.{key}: {value!r} is not {table.singular} {table.state_field}{hint}")
            found.setdefault(f"{table.name}/{key}", {})[table.state_field] = value
    for ref in found:
        table_name, _, key = ref.partition("/")
        if facts.table(table_name) is None or not key:
            raise ProfileError(
                f"{where}: records: {ref!r} is not a record of world {facts.name} (TABLE/KEY, tables: {', '.join(facts.tables)})"
            )
    return found


def _known_tools(names: Sequence[str], facts: WorldFacts, where: str) -> None:
    for name in names:
        if name not in facts.tools:
            hint = did_you_mean(name, facts.tools) or f"; tools are {', '.join(facts.tools)}"
            raise ProfileError(f"{where}: unknown tool {name!r}{hint}")


def conversation(
    name: str,
    *,
    goals: Sequence[str] = (),
    steps: Sequence[PlaybookStep] = (),
    role: str = DEFAULT_ROLE,
    personality: str | Path | None = None,
    context: Sequence[str] = (),
    language: str = "English",
    customer_id: str | None = None,
    today: datetime.date | None = None,
    world: str | Sequence[Mapping[str, Any]] | Mapping[str, Any] | None = None,
    expect: Expectations | None = None,
    records: Mapping[str, Mapping[str, Any]] | None = None,
    tools_called: Sequence[str] = (),
    tools_attempted: Sequence[str] = (),
    tools_not_called: Sequence[str] = (),
    says: Sequence[str] = (),
    never_says: Sequence[str] = (),
    bot_says: Sequence[str] = (),
    bot_never_says: Sequence[str] = (),
    criteria: Sequence[str] = (),
    checks: Sequence[CheckArg] = (),
    limits: CheckLimits | Mapping[str, float] | None = None,
    seed: int = 0,
    index: int = 0,
    source: str = PYTHON_SOURCE,
    **tables: Mapping[str, Any],
) -> ConversationSpec:
    """One conversation to run (see the module doc).

    `goals` are what the simulated customer asks for; `steps` script it instead (a playbook);
    `role`, `personality` (a shipped personality's name or a file) and `context` say who the
    customer is; `customer_id`, `today` and `world` set up its world: `world` names it (its name, or
    a profile's whole `world:` mapping: name or path, `customer_id`, `today`, rows by table), or is
    rows merged onto the default world's records (the order world's orders, as a profile's
    `world.orders`). What must hold: `expect` whole, or its parts, named as in a profile's `expect:`:
    `records` (`TABLE/KEY` -> fields at the end) and, for a table with a state field, the table's
    name as a keyword (`orders={"ORD-1004": "cancelled"}`), `tools_called` (calls that
    succeeded), `tools_attempted` (any call), `tools_not_called`, `bot_says` and `bot_never_says`
    (regular expressions over the bot's messages; `says` and `never_says` are the same, shorter),
    and `criteria` in words
    (decided by an LLM judge; not run offline, never passed), `checks` written in Python (a
    callable given the conversation, a `MODULE:NAME`, a shipped check's name, or a PythonCheck
    with its arguments: parley.core.evaluation.python_checks) and `limits` (the bot's latency,
    cost, tokens and turns: parley.core.evaluation.limits_as_checks). Its spec id is `name#index`; its
    seed derives from `seed`, `name` and `index` as a profile's does."""
    where = f"conversation {name!r}"
    if not isinstance(name, str) or not name.strip():
        raise ProfileError(f"conversation: a conversation needs a name (its spec id is NAME#{index}), got {name!r}")
    if isinstance(goals, str) or isinstance(context, str) or isinstance(criteria, str):
        raise ProfileError(f"{where}: goals, context and criteria are lists of strings, not one string")
    if not goals and not steps:
        raise ProfileError(f"{where}: give `goals` for the simulated customer, or `steps` to script it")
    problem = steps_problem(steps) if steps else None
    if problem is not None:
        raise ProfileError(f"{where}: steps: {problem}")
    world_spec, facts = _world(world, customer_id, today, where)
    for argument, names in (("tools_called", tools_called), ("tools_attempted", tools_attempted), ("tools_not_called", tools_not_called)):
        _known_tools(names, facts, f"{where}: {argument}")
    _known_tools([s.name for s in steps if isinstance(s, (ExpectToolStep, InjectToolStep))], facts, f"{where}: steps")
    expected_records = _expected_records(records, tables, facts, where)
    lines = list(context)
    if personality is not None:
        try:
            lines = _personality(personality) + lines
        except ProfileError as exc:
            raise ProfileError(f"{where}: {exc}") from None
    parts: dict[str, Any] = {}
    if expected_records:
        parts["records"] = expected_records
    for key, value in (
        ("tools_called", tools_called),
        ("tools_attempted", tools_attempted),
        ("tools_not_called", tools_not_called),
        ("bot_says", [*says, *bot_says]),
        ("bot_never_says", [*never_says, *bot_never_says]),
        ("criteria", criteria),
    ):
        if value:
            parts[key] = list(value)
    if isinstance(checks, (str, PythonCheck)) or callable(checks):
        raise ProfileError(f"{where}: checks is a list of checks, not one: checks=[{checks!r}]")
    if checks:
        parts["python"] = [_python_check(c, where) for c in checks]
    if limits is not None:
        parts["limits"] = limits
    try:
        if parts:
            base = expect.model_dump(exclude_unset=True) if expect is not None else {}
            expect = Expectations.model_validate({**base, **parts})
        spec = ConversationSpec(
            spec_id=make_spec_id(name, index),
            kind="playbook" if steps else "profile",
            source=source,
            name=name,
            index=index,
            seed=derive_seed(seed, name, index),
            goals=list(goals) or [s.text for s in steps if isinstance(s, UserStep)],
            role=role,
            language=language,
            context=lines,
            world=world_spec,
            expect=expect,
            extra={"steps": [s.model_dump() for s in steps]} if steps else {},
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors())
        raise ProfileError(f"{where}: {problems}") from None
    return spec
