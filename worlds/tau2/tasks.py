"""tau2's task records (tasks.json) and task splits (split_tasks.json), read from a SOURCE.

A task is a simulated customer (`user_scenario`: the reason for the call, what they know and do
not know, how to behave, maybe a persona) and how the conversation is judged
(`evaluation_criteria`: the gold actions whose replay gives the expected final state, what the
agent must communicate, assertions in words, and the `reward_basis` saying which of these count;
tau2's default is DB and COMMUNICATE). Records are read as tau2 reads them (fields tau2 does not
know are ignored); a task whose schema differs is one line naming the file, the task and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from parley.worlds.tau2.source import Tau2Source, Tau2SourceError, first_error

__all__ = [
    "DEFAULT_REWARD_BASIS",
    "RewardType",
    "Tau2Action",
    "Tau2Criteria",
    "Tau2Instructions",
    "Tau2Task",
    "Tau2UserScenario",
    "in_split",
    "read_splits",
    "read_tasks",
]


class RewardType(StrEnum):
    """What counts towards a task's reward in tau2."""

    DB = "DB"
    ENV_ASSERTION = "ENV_ASSERTION"
    NL_ASSERTION = "NL_ASSERTION"
    ACTION = "ACTION"
    COMMUNICATE = "COMMUNICATE"


DEFAULT_REWARD_BASIS: tuple[RewardType, ...] = (RewardType.DB, RewardType.COMMUNICATE)
"""tau2's reward basis for a task that names none (every retail and airline task of 26.3)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Tau2Instructions(_Record):
    """The simulated customer's situation."""

    domain: str
    reason_for_call: str
    """What they call about: the customer's goal."""
    known_info: str | None = None
    """What they know and may say (their name, zip code, user id, order numbers)."""
    unknown_info: str | None = None
    """What they do not know (the simulated customer is told it does not know it)."""
    task_instructions: str
    """How they behave."""


class Tau2UserScenario(_Record):
    persona: str | None = None
    instructions: Tau2Instructions


class Tau2Action(_Record):
    """One gold action: a tool call the agent is expected to make."""

    action_id: str
    requestor: Literal["assistant", "user"] = "assistant"
    name: str
    arguments: dict[str, Any]
    info: str | None = None
    compare_args: list[str] | None = None


class Tau2Criteria(_Record):
    actions: list[Tau2Action] | None = None
    env_assertions: list[dict[str, Any]] | None = None
    communicate_info: list[str] | None = None
    """What the agent must say to the customer (a number, a fact)."""
    nl_assertions: list[str] | None = None
    """Assertions in words about the conversation."""
    reward_basis: list[RewardType] = Field(default_factory=lambda: list(DEFAULT_REWARD_BASIS))


class Tau2Description(_Record):
    purpose: str | None = None
    relevant_policies: str | None = None
    notes: str | None = None


class Tau2Task(_Record):
    """One tau2 task (see the module doc)."""

    id: str
    description: Tau2Description | None = None
    user_scenario: Tau2UserScenario
    ticket: str | None = None
    initial_state: dict[str, Any] | None = None
    """tau2's initial state (data updates, actions, a message history); no retail or airline task of 26.3 has one."""
    evaluation_criteria: Tau2Criteria | None = None

    @property
    def actions(self) -> list[Tau2Action]:
        """The gold actions, in order (none when the task names none)."""
        criteria = self.evaluation_criteria
        return list(criteria.actions or []) if criteria is not None else []

    @property
    def instructions_domain(self) -> str:
        return self.user_scenario.instructions.domain

    @property
    def communicate_info(self) -> list[str]:
        criteria = self.evaluation_criteria
        return list(criteria.communicate_info or []) if criteria is not None else []

    @property
    def reward_basis(self) -> list[RewardType]:
        criteria = self.evaluation_criteria
        return list(criteria.reward_basis) if criteria is not None else list(DEFAULT_REWARD_BASIS)


def read_tasks(source: Tau2Source, domain: str, split: str | None = None) -> list[Tau2Task]:
    """The domain's tasks in file order, all of them or one split's (`base`, `train`, `test`, as
    split_tasks.json names them); `Tau2SourceError` naming the file, the task and the field."""
    path = source.file(domain, "tasks.json")
    data = source.read_json(domain, "tasks.json")
    if not isinstance(data, list):
        raise Tau2SourceError(f"{path}: expected a list of tasks, found {type(data).__name__}")
    tasks: list[Tau2Task] = []
    seen: set[str] = set()
    for index, raw in enumerate(data):
        label = f"task {raw.get('id')!r}" if isinstance(raw, dict) and raw.get("id") is not None else f"task #{index}"
        try:
            task = Tau2Task.model_validate(raw)
        except ValidationError as exc:
            raise Tau2SourceError(f"{path}: {label}: {first_error(exc)}") from exc
        if task.instructions_domain != domain:
            raise Tau2SourceError(f"{path}: {label}: user_scenario.instructions.domain: {task.instructions_domain!r}, not {domain!r}")
        if task.id in seen:
            raise Tau2SourceError(f"{path}: {label}: id: a second task with this id")
        seen.add(task.id)
        tasks.append(task)
    return in_split(tasks, source, domain, split)


def in_split(tasks: Sequence[Tau2Task], source: Tau2Source, domain: str, split: str | None) -> list[Tau2Task]:
    """The tasks of one split (all of them for None), in their order; `Tau2SourceError` for a split
    split_tasks.json does not name."""
    if split is None:
        return list(tasks)
    splits = read_splits(source, domain)
    if split not in splits:
        raise Tau2SourceError(f"{source.file(domain, 'split_tasks.json')}: no split {split!r} (its splits: {', '.join(splits)})")
    wanted = set(splits[split])
    return [task for task in tasks if task.id in wanted]


def read_splits(source: Tau2Source, domain: str) -> dict[str, list[str]]:
    """split_tasks.json: each split's name -> its task ids."""
    path = source.file(domain, "split_tasks.json")
    data = source.read_json(domain, "split_tasks.json")
    if not isinstance(data, dict):
        raise Tau2SourceError(f"{path}: expected a mapping of split name to task ids, found {type(data).__name__}")
    for name, ids in data.items():
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise Tau2SourceError(f"{path}: {name}: expected a list of task ids")
    return {str(name): list(ids) for name, ids in data.items()}
