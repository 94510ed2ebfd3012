"""A tau2 task's gold actions replayed on a fresh world copy, and what each task can tell a user.

- `replay_gold`: the task's gold actions in order, each run through the world's tools as a bot's
  call would be (the same result text, refusal and record); each action's outcome, and the final
  state: the task's expected state.
- `check_tasks`: every task replayed. A task is **valid** when every gold action succeeds; an
  invalid one is named with its failing action, its arguments and the world's refusal. The **null
  agent** (a bot that never calls a tool) leaves the initial state: it passes a task's state check
  exactly when the expected state equals the initial one (the gold actions write nothing), and
  passes the task under tau2's default reward basis (DB and COMMUNICATE) when, besides, the task
  has nothing the agent must communicate.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from parley.core.records import ToolCall
from parley.core.world import StateComparison, WorldCopy, WorldDefinition, WorldTemplate, WorldTools, compare_states
from parley.worlds.tau2 import authenticated_users
from parley.worlds.tau2.source import Tau2SourceError
from parley.worlds.tau2.tasks import Tau2Task
from parley.worlds.tau2.tau2_db import tau2_hash

__all__ = ["ActionOutcome", "GoldReplay", "TaskCheck", "TaskCheckReport", "check_tasks", "compare_to_expected", "replay_gold"]


class ActionOutcome(BaseModel):
    """One gold action as the world answered it."""

    action_id: str
    name: str
    arguments: dict[str, object]
    ok: bool
    writes: bool = False
    """The tool is one that changes the world (a failed write leaves the expected state without the change the task meant)."""
    refused: bool = False
    """The world's policy refused it (False for a wrong request, such as an unknown record)."""
    error: str | None = None
    """The refusal's or error's reason code."""
    result: str
    """What the bot would read: the result, or the refusal's text."""
    violations: list[str] = Field(default_factory=list)
    """The world's rules (those it leaves to the bot) the action broke."""

    def describe(self) -> str:
        return f"{self.name}({json.dumps(self.arguments, ensure_ascii=False)}) -> {self.result}"


@dataclass
class GoldReplay:
    """A task's gold actions replayed: each one's outcome, and the copy holding the expected state
    (close it when done; `with` does)."""

    task_id: str
    outcomes: list[ActionOutcome]
    copy: WorldCopy
    customers: list[str] = field(default_factory=list)
    """The users the gold actions acted for (authenticated, or whose records they showed or changed)."""

    @property
    def valid(self) -> bool:
        return all(outcome.ok for outcome in self.outcomes)

    @property
    def failed(self) -> ActionOutcome | None:
        """The first gold action that did not succeed."""
        return next((outcome for outcome in self.outcomes if not outcome.ok), None)

    @property
    def writes(self) -> bool:
        """Whether the expected state differs from the initial one."""
        return any(not change.log for change in self.copy.changes_since(0))

    def close(self) -> None:
        self.copy.close()

    def __enter__(self) -> GoldReplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def replay_gold(world: WorldDefinition, template: WorldTemplate, task: Tau2Task) -> GoldReplay:
    """`task`'s gold actions run in order on a fresh copy of `template` (see the module doc);
    `Tau2SourceError` for a task parley cannot replay as tau2 would (an initial state to set up,
    an action of the user's own tools: no retail or airline task of tau2 26.3 has either)."""
    if task.initial_state is not None:
        raise Tau2SourceError(f"task {task.id!r}: initial_state: parley replays tasks from the world's initial state only")
    for action in task.actions:
        if action.requestor != "assistant":
            raise Tau2SourceError(
                f"task {task.id!r}: action {action.action_id}: requestor {action.requestor!r}: the user's own tools are not in parley's tau2 worlds"
            )
    copy = template.new_copy()
    tools = WorldTools(world, copy, customer_id="")
    outcomes: list[ActionOutcome] = []
    for number, action in enumerate(task.actions):
        record = await tools.execute(ToolCall(id=f"gold-{number}", name=action.name, arguments=json.dumps(action.arguments)))
        outcomes.append(
            ActionOutcome(
                action_id=action.action_id,
                name=action.name,
                arguments=dict(action.arguments),
                ok=record.ok,
                writes=bool((tool := world.tool(action.name)) and tool.changes_state),
                refused=record.refused,
                error=record.error,
                result=record.result,
                violations=[v.message for v in record.violations],
            )
        )
    authenticate = getattr(world.identity, "authenticate", ())
    owners = {c.owner for r in tools.records for c in r.changes if c.owner and not c.log}
    owners |= {ref.owner for r in tools.records for ref in r.reads if ref.owner}
    customers = sorted(authenticated_users(tools.records, authenticate) | owners)
    return GoldReplay(task_id=task.id, outcomes=outcomes, copy=copy, customers=customers)


class TaskCheck(BaseModel):
    """What the gold replay and the null agent say of one task."""

    task_id: str
    actions: int
    valid: bool
    failed_action: ActionOutcome | None = None
    writes: bool
    """The gold actions change the state (the null agent fails the state check)."""
    communicate_info: int
    """How many facts the agent must communicate."""
    customers: list[str] = Field(default_factory=list)
    violations: list[str] = Field(default_factory=list)
    """Rules the gold actions themselves break."""
    expected_hash: str = ""
    """tau2's hash of the expected state (the state the gold actions leave)."""

    def describe(self) -> str:
        """One line: `task 5: valid, 3 actions, writes, 1 must-say; null agent fails (state); expected state tau2 hash 1a2b3c4d5e6f`."""
        failed = self.failed_action
        verdict = "valid" if self.valid else f"INVALID at {failed.describe() if failed else '?'}"
        what = ", ".join(
            [
                f"{self.actions} action{'s' if self.actions != 1 else ''}",
                "writes" if self.writes else "no write",
                f"{self.communicate_info} must-say",
            ]
        )
        null = (
            "passes without acting"
            if self.null_agent_pass
            else "fails (state)"
            if not self.null_agent_state_pass
            else "fails (nothing said)"
        )
        return f"task {self.task_id}: {verdict}; {what}; null agent {null}; tau2 hash of the expected state {self.expected_hash[:12]}"

    @property
    def null_agent_state_pass(self) -> bool:
        return not self.writes

    @property
    def null_agent_pass(self) -> bool:
        """Passes under tau2's default reward basis: no write, nothing to communicate."""
        return not self.writes and self.communicate_info == 0


class TaskCheckReport(BaseModel):
    """Every task of a domain checked."""

    world: str
    split: str | None = None
    checks: list[TaskCheck]

    @property
    def valid(self) -> list[TaskCheck]:
        return [c for c in self.checks if c.valid]

    @property
    def invalid(self) -> list[TaskCheck]:
        return [c for c in self.checks if not c.valid]

    @property
    def failed_writes(self) -> list[TaskCheck]:
        """Invalid tasks whose failing gold action is a write (not a lookup the task's authors may have meant to fail)."""
        return [c for c in self.invalid if c.failed_action is not None and c.failed_action.writes]

    @property
    def null_agent_state_passes(self) -> list[TaskCheck]:
        return [c for c in self.checks if c.null_agent_state_pass]

    @property
    def null_agent_passes(self) -> list[TaskCheck]:
        return [c for c in self.checks if c.null_agent_pass]

    def describe(self, *, per_task: bool = False) -> list[str]:
        """The report as lines: counts, each invalid task with its failing action, the null agent's
        passes; `per_task`: first a line per task."""
        lines = [
            f"{self.world}{f' ({self.split})' if self.split else ''}: {len(self.checks)} tasks, "
            f"{len(self.valid)} valid, {len(self.invalid)} invalid ({len(self.failed_writes)} at a write); "
            f"the null agent passes the state check of "
            f"{len(self.null_agent_state_passes)} and the whole task of {len(self.null_agent_passes)}"
        ]
        if per_task:
            lines = [check.describe() for check in self.checks] + [""] + lines
        for check in self.invalid:
            failed = check.failed_action
            kind = "write" if failed is not None and failed.writes else "lookup"
            lines.append(f"  task {check.task_id} invalid at a {kind}: {failed.describe() if failed else '?'}")
        if self.null_agent_passes:
            lines.append("  passes without acting (no write, nothing to say): " + ", ".join(c.task_id for c in self.null_agent_passes))
        return lines


async def check_tasks(
    world: WorldDefinition, template: WorldTemplate, tasks: Sequence[Tau2Task], split: str | None = None
) -> TaskCheckReport:
    """Every task's gold replay and the null agent's outcome (see the module doc)."""
    checks: list[TaskCheck] = []
    for task in tasks:
        with await replay_gold(world, template, task) as replay:
            checks.append(
                TaskCheck(
                    task_id=task.id,
                    actions=len(replay.outcomes),
                    valid=replay.valid,
                    failed_action=replay.failed,
                    writes=replay.writes,
                    communicate_info=len(task.communicate_info),
                    customers=replay.customers,
                    violations=[v for outcome in replay.outcomes for v in outcome.violations],
                    expected_hash=tau2_hash(replay.copy),
                )
            )
    return TaskCheckReport(world=world.name, split=split, checks=checks)


def compare_to_expected(replay: GoldReplay, actual: WorldCopy) -> StateComparison:
    """The actual final state against the task's expected one, record by record."""
    return compare_states(replay.copy, actual)
