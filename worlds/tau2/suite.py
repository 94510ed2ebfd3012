"""A tau2 domain's tasks written as a parley suite: one profile per task, and the world file they
all name (`parley import tau2 SOURCE --domain D --out DIR`).

The world file records SOURCE (its path, tau2's version, a hash of the domain's files) and builds
the world from it when a batch runs: nothing of tau2 is copied, and a SOURCE whose files changed
since the import is one line asking for a new import (the expected states were computed on the
old files). Each task becomes a profile:

- the simulated customer: `reason_for_call` is its goal, `known_info` what it may say,
  `unknown_info` what it does not know (and is told it does not know), `task_instructions` how it
  behaves, a persona its role; tau2's rules for a simulated user, in parley's words: say things a
  step at a time, invent nothing, end the conversation when the request is done or it is
  transferred to a human;
- the expected final state (DB in the task's reward basis): the state its gold actions leave,
  replayed on a fresh copy, as `expect: records:` (each changed record's changed fields, checked
  whatever the order of a list's elements) and `unchanged_others: true` (no other record changes);
  tau2's own hash of that state is written beside it, in the file's head;
- `communicate_info` (COMMUNICATE in the basis): must-say checks (`bot_says`), matched as tau2
  matches them (case aside, and the commas of the bot's numbers: "1,093.34" says 1093.34);
- `nl_assertions`: criteria when the basis names NL_ASSERTION; otherwise (every task of 26.3)
  written in the file's head, shown but not counted, as tau2 does not count them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from parley.core.world import WorldDefinition, WorldTemplate
from parley.worlds.tau2.gold import GoldReplay, replay_gold
from parley.worlds.tau2.source import SourceRecord
from parley.worlds.tau2.tasks import RewardType, Tau2Task
from parley.worlds.tau2.tau2_db import tau2_hash

__all__ = ["ImportReport", "ImportedTask", "must_say_pattern", "task_id_of", "test_name_of", "write_suite"]

_ROLES = {
    "retail": "a customer of an online shop, writing to its customer service",
    "airline": "a customer of an airline, writing to its customer service",
}
SIMULATED_USER_RULES: tuple[str, ...] = (
    "Say what you need a step at a time, as the conversation asks for it: never give all your details in your first message.",
    "Use only what you are told here. Asked for something you were not given, say you do not know or do not remember it; "
    "never make up an id, an address, a payment detail or anything else.",
    "When your request is done, or the assistant transfers you to a human agent, end the conversation.",
)
"""tau2's rules for a simulated user where they matter, in parley's words (each a context line)."""


def test_name_of(world: str, task_id: str) -> str:
    """The test name of a task's profile: `tau2-retail-task-5`."""
    return f"{world}-task-{task_id}"


def task_id_of(world: str, test_name: str) -> str | None:
    """The task a profile's test name (or a conversation's spec id, `NAME#INDEX`) names, None for another name."""
    name = test_name.partition("#")[0]
    prefix = test_name_of(world, "")
    return name[len(prefix) :] if name.startswith(prefix) and len(name) > len(prefix) else None


def must_say_pattern(info: str) -> str:
    """A regular expression matching a bot message that says `info` as tau2 reads it: case aside,
    and the commas of the message ignored between digits."""
    parts: list[str] = []
    for i, char in enumerate(info):
        parts.append(re.escape(char))
        if char.isdigit() and i + 1 < len(info) and info[i + 1].isdigit():
            parts.append(",?")
    return "(?i)" + "".join(parts)


class ImportedTask(BaseModel):
    """One task as it was written."""

    task_id: str
    file: str
    valid: bool
    failed_action: str | None = None
    """The first gold action that failed (name, arguments, the world's answer)."""
    writes: bool
    must_say: int
    expected_hash: str
    """tau2's hash of the expected state."""


class ImportReport(BaseModel):
    """What `write_suite` wrote."""

    world: str
    split: str | None
    source: SourceRecord
    out: str
    world_file: str
    tasks: list[ImportedTask] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def describe(self) -> list[str]:
        """The report as lines: what was written where, and the tasks whose gold replay fails."""
        invalid = [t for t in self.tasks if not t.valid]
        lines = [
            f"{len(self.tasks)} {self.world} tasks{f' ({self.split})' if self.split else ''} written to {self.out}: "
            f"{len(self.tasks) - len(invalid)} valid, {len(invalid)} invalid (`parley tau2 check` says why)",
            f"world: {self.world_file} reads {self.source.describe()}",
            *self.warnings,
        ]
        return lines


def _line(text: str | None) -> str:
    return " ".join((text or "").split())


def _user(task: Tau2Task) -> dict[str, Any]:
    scenario = task.user_scenario
    said = scenario.instructions
    context: list[str] = []
    if said.known_info:
        context.append(f"What you know, to say when it is needed: {_line(said.known_info)}")
    if said.unknown_info:
        context.append(f"What you do not know (if you are asked, say so): {_line(said.unknown_info)}")
    context.append(f"How you behave: {_line(said.task_instructions)}")
    context += SIMULATED_USER_RULES
    return {
        "role": _line(scenario.persona) or _ROLES.get(said.domain, "a customer writing to customer service"),
        "context": context,
        "goals": [_line(said.reason_for_call)],
    }


def _records(replay: GoldReplay) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The expected state as `records:` (each changed record's changed fields), and what it cannot say."""
    records: dict[str, dict[str, Any]] = {}
    unsaid: list[str] = []
    for change in replay.copy.changes_since(0):
        if change.log:
            continue
        if change.after is None:
            unsaid.append(f"{change.ref} is deleted by the gold actions: a profile's records cannot expect a deletion")
            continue
        fields = change.fields
        records[change.ref] = {name: change.after.get(name) for name in fields}
    return records, unsaid


def _expect(task: Tau2Task, replay: GoldReplay) -> tuple[dict[str, Any], list[str]]:
    basis = set(task.reward_basis)
    expect: dict[str, Any] = {}
    notes: list[str] = []
    if RewardType.DB in basis:
        records, unsaid = _records(replay)
        notes += unsaid
        if records:
            expect["records"] = records
        expect["unchanged_others"] = True
    else:
        expect["unchanged_others"] = False
    if RewardType.COMMUNICATE in basis and task.communicate_info:
        expect["bot_says"] = [must_say_pattern(info) for info in task.communicate_info]
    criteria = task.evaluation_criteria
    assertions = list(criteria.nl_assertions or []) if criteria is not None else []
    if RewardType.NL_ASSERTION in basis and assertions:
        expect["criteria"] = [_line(a) for a in assertions]
    for kind in sorted(basis - {RewardType.DB, RewardType.COMMUNICATE, RewardType.NL_ASSERTION}):
        notes.append(f"the reward basis names {kind}, which parley does not check")
    return expect, notes


def _head(task: Tau2Task, world: str, split: str | None, source: SourceRecord, replay: GoldReplay, expected_hash: str) -> list[str]:
    basis = ", ".join(task.reward_basis)
    lines = [
        f"tau2-bench {source.domain} task {task.id}{f' ({split} split)' if split else ''}, imported by `parley import tau2`",
        f"from {source.describe()}",
        f"reward basis: {basis}",
    ]
    failed = replay.failed
    if failed is None:
        lines.append(f"gold replay: valid ({len(replay.outcomes)} actions)")
    else:
        lines.append(f"gold replay: INVALID at {failed.describe()}")
    lines.append(f"tau2's hash of the expected state: {expected_hash}")
    criteria = task.evaluation_criteria
    assertions = list(criteria.nl_assertions or []) if criteria is not None else []
    if assertions and RewardType.NL_ASSERTION not in task.reward_basis:
        lines.append(f"nl_assertions, shown and not counted (the reward basis is {basis}, as in tau2):")
        lines += [f"  - {_line(a)}" for a in assertions]
    if task.communicate_info and RewardType.COMMUNICATE not in task.reward_basis:
        lines.append("communicate_info, not counted: " + "; ".join(task.communicate_info))
    return lines


def _world_file(world: str, root: str, source: SourceRecord) -> str:
    return (
        f'"""tau2-bench\'s {source.domain} domain for the suite beside this file, read when a batch runs from\n'
        f"{source.describe()}.\n\n"
        "Written by `parley import tau2`: the profiles' expected states were computed on these files, so\n"
        'a SOURCE whose files changed since is refused (import again)."""\n\n'
        "from parley.worlds.tau2 import imported_world\n\n"
        f"WORLD = imported_world({world!r}, source={root!r}, files_sha256={source.files_sha256!r})\n"
    )


def _dump(head: Sequence[str], profile: dict[str, Any]) -> str:
    comment = "".join(f"# {line}\n" for line in head)
    return comment + yaml.safe_dump(profile, sort_keys=False, allow_unicode=True, width=120)


async def write_suite(
    world: WorldDefinition, template: WorldTemplate, tasks: Sequence[Tau2Task], out: Path, split: str | None
) -> ImportReport:
    """Every task of `tasks` written under `out` as a profile, with the world file they name (see the module doc)."""
    source: SourceRecord = world.hooks["tau2_source"]
    root: str = world.hooks["tau2_root"]
    out.mkdir(parents=True, exist_ok=True)
    world_file = out / f"{world.name.replace('-', '_')}.py"
    world_file.write_text(_world_file(world.name, root, source), encoding="utf-8")
    report = ImportReport(
        world=world.name, split=split, source=source, out=str(out), world_file=str(world_file), warnings=list(world.hooks["tau2_warnings"])
    )
    for task in tasks:
        with await replay_gold(world, template, task) as replay:
            expected_hash = tau2_hash(replay.copy)
            expect, notes = _expect(task, replay)
            world_ref: dict[str, Any] = {"path": world_file.name}
            if len(replay.customers) == 1:
                world_ref["customer_id"] = replay.customers[0]
            profile = {"test_name": test_name_of(world.name, task.id), "user": _user(task), "world": world_ref, "expect": expect}
            head = _head(task, world.name, split, source, replay, expected_hash) + [f"not expected: {note}" for note in notes]
            file = out / f"task_{re.sub(r'[^A-Za-z0-9_.-]', '_', task.id)}.yaml"
            file.write_text(_dump(head, profile), encoding="utf-8")
            failed = replay.failed
            report.tasks.append(
                ImportedTask(
                    task_id=task.id,
                    file=str(file),
                    valid=replay.valid,
                    failed_action=failed.describe() if failed is not None else None,
                    writes=replay.writes,
                    must_say=len(expect.get("bot_says", [])),
                    expected_hash=expected_hash,
                )
            )
            report.warnings += [f"{file}: {note}" for note in notes]
    return report
