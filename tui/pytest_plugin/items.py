"""Profile, playbook and scenario files as pytest items, and how a conversation's outcome becomes a
pytest result.

The files under pytest's paths are read once, together, as `parley run PATHS` reads them (so
spec ids and seeds are the very ones `parley run` gives); each file pytest meets that made
conversations is a `ParleyFile`, with one `ParleyItem` per spec and trial (`SPEC_ID[TRIAL]`).
Files that are something else (personalities, connectors, rule files...) are not collected; a
file with problems is a collection error listing each as file:line:col.

Outcomes map honestly:

| outcome | pytest |
|---|---|
| passed | passed |
| failed, bot_error | failed: the failing checks with their reasons and evidence, the last turns |
| unverified, user_fault, cancelled | skipped with the reason (`--parley-strict`: unverified and user_fault fail) |
| infrastructure_error, user_error, evaluation_error, error, unevaluated | error (at setup): the run broke, nobody's verdict on the bot |

so pytest's `--junitxml` carries them to CI as failures, skips and errors (the `pytest` column of
parley.core.records.OUTCOME_KINDS).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import concurrent.futures

    from parley.core.errors import ProfileError
    from parley.core.library import ConversationResult
    from parley.core.records import ConversationSpec

__all__ = ["ParleyFile", "ParleyItem", "collect_file", "pytest_result"]

_PLAN = pytest.StashKey["Plan"]()


@dataclass
class FilePlan:
    specs: list[ConversationSpec] = field(default_factory=list)
    errors: list[ProfileError] = field(default_factory=list)


@dataclass
class Plan:
    """What the session's paths make, by file (real paths)."""

    files: dict[str, FilePlan] = field(default_factory=dict)


def _real(path: str | Path, base: Path) -> str:
    return os.path.realpath(base / path)


def _roots(config: pytest.Config) -> list[str]:
    """pytest's paths (its arguments without `::` node parts), as given."""
    roots = []
    for arg in config.args:
        path = str(arg).split("::", 1)[0]
        if path and path not in roots:
            roots.append(path)
    return roots


def plan(config: pytest.Config) -> Plan:
    """The files' conversations, read once per session (see the module doc)."""
    if _PLAN in config.stash:
        return config.stash[_PLAN]
    from parley.core.records import LoadOptions
    from parley.core.specs import load_specs_as
    from parley.tui.pytest_plugin.options import read_options

    base = config.invocation_params.dir
    found = load_specs_as(_roots(config), LoadOptions(), seed=read_options(config).seed)
    result = Plan()
    for spec in found.specs:
        result.files.setdefault(_real(spec.source, base), FilePlan()).specs.append(spec)
    for error in found.errors:
        if error.file:
            result.files.setdefault(_real(error.file, base), FilePlan()).errors.append(error)
    config.stash[_PLAN] = result
    return result


def collect_file(file_path: Path, parent: pytest.Collector) -> ParleyFile | None:
    """The file as a collector when it made conversations (or has problems); else not collected."""
    if os.path.realpath(file_path) not in plan(parent.config).files:
        return None
    return ParleyFile.from_parent(parent, path=file_path)


class FileProblems(Exception):
    """A collected file's problems, each as file:line:col: field: reason."""


class ParleyFile(pytest.File):
    """A profile, playbook or scenario file: its conversations, each trial an item."""

    def collect(self) -> Iterator[ParleyItem]:
        from parley.tui.pytest_plugin.options import read_options

        found = plan(self.config).files[os.path.realpath(self.path)]
        if found.errors:
            raise FileProblems("\n".join(error.render() for error in found.errors))
        trials = read_options(self.config).trials
        for spec in found.specs:
            for trial in range(1, trials + 1):
                yield ParleyItem.from_parent(self, name=f"{spec.spec_id}[{trial}]", spec=spec, trial=trial)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, FileProblems):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ConversationFailed(Exception):
    """A conversation the bot failed (its explanation is the message)."""


def pytest_result(outcome: str, *, strict: bool) -> str:
    """What a conversation's outcome is in pytest: passed, failed, skipped or error (see the module
    doc; each outcome's row in parley.core.records.OUTCOME_KINDS says it); `strict` fails what
    `parley run --strict` fails."""
    from parley.core.records import pytest_kind

    return pytest_kind(outcome, strict=strict)


def _skip(item: pytest.Item, reason: str) -> None:
    try:  # reported at the item's file, not at this line of the plugin
        raise pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:  # a pytest without the keyword
        pytest.skip(reason)


class ParleyItem(pytest.Item):
    """One trial of one spec: its conversation runs in the session's batch (submitted when the
    session starts, or when the item runs under xdist) and the item reports its outcome."""

    def __init__(self, *, spec: ConversationSpec, trial: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.trial = trial
        self.future: concurrent.futures.Future[ConversationResult] | None = None
        self.result: ConversationResult | None = None

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.spec.spec_id} trial {self.trial}"

    def setup(self) -> None:
        from parley.tui.pytest_plugin.options import read_options
        from parley.tui.pytest_plugin.session import result_of

        self.result = result_of(self)
        outcome = self.result.outcome
        verdict = pytest_result(outcome, strict=read_options(self.config).strict)
        if verdict == "error":  # the run broke: an error of the session, not a verdict on the bot
            pytest.fail(self.result.explain(), pytrace=False)
        if verdict == "skipped":
            _skip(self, _skip_reason(self.result))

    def runtest(self) -> None:
        assert self.result is not None
        if pytest_result(self.result.outcome, strict=bool(self.config.getoption("parley_strict"))) == "failed":
            raise ConversationFailed(self.result.explain())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ConversationFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


def _skip_reason(result: ConversationResult) -> str:
    """One line: the outcome and why (the simulator's first fault, a cancelled run's error)."""
    reason = result.explain().splitlines()[0]
    verdict = result.verdict
    if verdict is not None and verdict.blamed_faults:
        fault = verdict.blamed_faults[0]
        reason += f": {fault.kind}: {fault.reason}"
    elif result.conversation.error:
        reason += f": {result.conversation.error}"
    return reason
