"""What the offline roles will not read in a set of conversations, said once per file:
`parley profiles validate` names every such part at its place (`offline_limits`), `parley run`
says it in one line per file before the batch starts (`offline_limits_by_file`: the files are
not read again, and a suite of many files shows a few and a count).

- the offline judge reads no rubric (`expect.judge`), no criteria (`expect.criteria`, and a
  playbook's `judge` checkpoints) and no scenario evaluator prompt: each is `not_run` with the
  reason NEEDS_LLM_JUDGE, never passed (parley.core.evaluation.judge);
- the offline customer only states the goals it cannot act out (parley.core.users.acted_goals,
  where that knowledge lives).
Nothing is said about a role the batch gives a model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from parley.core.evaluation.judge import NEEDS_LLM_JUDGE
from parley.core.models import OFFLINE
from parley.core.records import ConversationSpec, SourceLocation
from parley.core.specs import FilePlaces, judge_steps
from parley.core.users import ONLY_STATED_ADVICE, PROFILE_MODEL, REPLAY_USER, goals_only_stated, only_stated_advice, simulated_world

__all__ = ["FILES_SHOWN", "offline_limits", "offline_limits_by_file"]

FILES_SHOWN = 3
"""Files `offline_limits_by_file` names before it counts the rest."""

_RUBRIC = f"the offline judge reads no rubric, so this check is not run: it {NEEDS_LLM_JUDGE}"


@dataclass
class _FileParts:
    """What the offline roles will not read in one file."""

    source: str
    kind: str
    rubric: bool = False
    criteria: int = 0
    checkpoints: dict[int, int] = field(default_factory=dict)
    """A playbook's `judge` steps: step index (0-based, as in the file) -> how many criteria."""
    evaluator: str | None = None
    stated: dict[tuple[int, int], str] = field(default_factory=dict)
    """(scenario index, or 0 for a profile; goal index) -> the goal as the first conversation says it."""

    def __bool__(self) -> bool:
        return self.rubric or bool(self.criteria) or bool(self.checkpoints) or self.evaluator is not None or bool(self.stated)


def _user_offline(spec: ConversationSpec, user_model: str) -> bool:
    if spec.kind == "playbook" or user_model == REPLAY_USER:
        return False  # a scripted or replayed customer: no simulator acts anything out
    name = spec.llm.qualified_model if user_model == PROFILE_MODEL else user_model
    return name == OFFLINE


def _parts(specs: Iterable[ConversationSpec], user_model: str, judge_model: str) -> list[_FileParts]:
    by_file: dict[str, list[ConversationSpec]] = {}
    for spec in specs:
        by_file.setdefault(spec.source, []).append(spec)
    found = []
    for source, file_specs in by_file.items():
        parts = _file_parts(source, file_specs, user_model=user_model, judge_offline=judge_model == OFFLINE)
        if parts:
            found.append(parts)
    return found


def _file_parts(source: str, specs: Sequence[ConversationSpec], *, user_model: str, judge_offline: bool) -> _FileParts:
    first = specs[0]
    parts = _FileParts(source=source, kind=first.kind)
    if judge_offline:
        parts.rubric = first.expect is not None and first.expect.judge is not None
        parts.criteria = len(first.expect.criteria) if first.expect is not None else 0
        parts.checkpoints = {number - 1: len(step.criteria) for number, step in judge_steps(first)}
        if first.kind == "scenario":
            parts.evaluator = first.extra.get("templates", {}).get("evaluator")
    # A profile's conversations share its goals (goal i is written once); each scenario of a
    # scenario file has its own (its ORDER_GOAL).
    for spec in specs:
        if _user_offline(spec, user_model) and spec.attack is None:  # an offline attacker speaks its phrasebook, not its goals
            for goal in goals_only_stated(spec.goals, simulated_world(spec)):
                parts.stated.setdefault((spec.index if spec.kind == "scenario" else 0, goal.index), goal.text)
    return parts


def offline_limits(specs: Iterable[ConversationSpec], *, user_model: str = OFFLINE, judge_model: str = OFFLINE) -> list[str]:
    """One warning (`file:line:col: field: reason`) per part of each file the offline roles will
    not read. A file with something to say is read again for the places."""
    warnings: list[str] = []
    for parts in _parts(specs, user_model, judge_model):
        places = FilePlaces(parts.source)
        located: list[tuple[SourceLocation, str]] = []
        if parts.rubric:
            located.append((places.at("expect", "judge"), _RUBRIC))
        if parts.criteria:
            many = f"these {parts.criteria} criteria are" if parts.criteria > 1 else "this criterion is"
            located.append(
                (places.at("expect", "criteria"), f"the offline judge reads no criteria, so {many} not run: each {NEEDS_LLM_JUDGE}")
            )
        for index, count in parts.checkpoints.items():
            many = f"its {count} criteria are" if count > 1 else "its criterion is"
            located.append(
                (places.at("steps", index, "judge"), f"the offline judge reads no criteria, so {many} not run: each {NEEDS_LLM_JUDGE}")
            )
        if parts.evaluator is not None:
            reason = f"the offline judge does not read the evaluator prompt {parts.evaluator}, so it is not run: it {NEEDS_LLM_JUDGE}"
            located.append((SourceLocation(file=parts.source), reason))
        for (scenario, index), text in sorted(parts.stated.items()):
            place = _scenario_goal(places, scenario) if parts.kind == "scenario" else places.goal(index)
            located.append((place, f"the offline customer will only state this goal, not act it out ({ONLY_STATED_ADVICE}): {text!r}"))
        located.sort(key=lambda item: (item[0].line or 0, item[0].column or 0))  # in file order
        warnings += [place.render(reason) for place, reason in located]
    return warnings


def offline_limits_by_file(
    specs: Iterable[ConversationSpec], *, user_model: str = OFFLINE, judge_model: str = OFFLINE, shown: int = FILES_SHOWN
) -> list[str]:
    """One warning per file the offline roles will not fully read, saying what; the first
    `shown` files, then how many more. No file is read again."""
    lines = []
    found = _parts(specs, user_model, judge_model)
    for parts in found[:shown]:
        said = []
        if parts.rubric:
            said.append(f"the offline judge reads no rubric (expect.judge): it {NEEDS_LLM_JUDGE}")
        where = ["expect.criteria"] if parts.criteria else []
        if parts.checkpoints:
            steps = ", ".join(str(index + 1) for index in parts.checkpoints)
            where.append(f"the judge step{'s' if len(parts.checkpoints) > 1 else ''} {steps}")
        if where:
            said.append(f"the offline judge reads no criteria ({', '.join(where)}): each {NEEDS_LLM_JUDGE}")
        if parts.evaluator is not None:
            said.append(f"the offline judge does not read the evaluator prompt: it {NEEDS_LLM_JUDGE}")
        if parts.stated:
            n = len(parts.stated)
            goals = "1 goal" if n == 1 else f"{n} goals"
            said.append(f"the offline customer will only state {goals}, not act {'it' if n == 1 else 'them'} out ({only_stated_advice(n)})")
        lines.append(f"{parts.source}: {'; '.join(said)} (`parley profiles validate {parts.source}` says where)")
    if len(found) > shown:
        more = len(found) - shown
        lines.append(
            f"and {more} more file{'s' if more != 1 else ''} with parts the offline roles will not read "
            "(`parley profiles validate PATH` lists every one)"
        )
    return lines


def _scenario_goal(places: FilePlaces, scenario: int) -> SourceLocation:
    """A scenario's goal is its ORDER_GOAL variable."""
    listing: tuple[str, ...] = ("scenarios",) if places.root is not None and places.root.is_map else ()
    return places.at(*listing, scenario, "variables", "ORDER_GOAL", at_key=False)
