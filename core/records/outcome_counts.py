"""A batch's counts, defined once: conversations per outcome, and every figure derived from them.

`OutcomeCounts` is the one value behind every count a person or CI reads about a batch: the
runner's live progress and its result, the summary (parley.core.evaluation.BatchSummary, which
is one), the batch service's views, the library's RunResult, JUnit, `compare` and the app. Each
figure is a property here, under the one name every surface uses:
- *passed*, *failed* (a check about the bot failed) and *bot_errors* (the bot under test broke):
  whether the bot did its job; *bot_failures* = failed + bot_errors; the pass rate is passed /
  *pass_rate_denominator* (passed + bot_failures);
- *errors*: the runs that broke on the simulator's or parley's side (simulator errors,
  infrastructure errors, cancelled, legacy errors), what `parley run --rerun errors` picks;
- *broken*: every run that broke, whoever broke it (bot_errors + errors): the batch service's
  `failed_scenarios`;
- *apart*: neither passed nor failed, and the run did not break (unverified, simulator faults,
  evaluation errors, unevaluated); done = passed + bot_failures + errors + apart;
- `ok(strict)`: what `parley run`'s exit code 0 says of the conversations.

Which outcome falls in which figure is the table parley.core.records.outcome_classes.OUTCOME_KINDS
(whose docstring says how to add an outcome); a count per outcome is a property named after its
row's `field`. The counts are computed fields: they are in every JSON the counts are part of.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, computed_field, model_serializer

from parley.core.records.batch import RerunSelection
from parley.core.records.outcome_classes import BOT_FAILURES, ERRORS, JUDGED, OUTCOME_KINDS, PASSED, outcome_kind, rerun_outcomes

__all__ = ["OutcomeCounts"]

_COUNT_FIELDS = (
    *(kind.field for kind in OUTCOME_KINDS.values() if kind.field != "unevaluated"),
    "errors",
    "broken",
    "unevaluated",
    "pass_rate",
    "pass_rate_denominator",
)


class OutcomeCounts(BaseModel):
    """Conversations per outcome, and the figures every surface derives from them (see the module
    doc). Build it with `of`; it never changes once built."""

    model_config = ConfigDict(frozen=True)

    outcomes: dict[str, int] = Field(default_factory=dict)
    """Every outcome's count: all of OUTCOME_KINDS in their order (0 when none), then any other
    the store held."""

    serialized_first: ClassVar[tuple[str, ...]] = ()
    """A subclass's own fields that come before the counts in its JSON (the summary's `planned`)."""

    @model_serializer(mode="wrap")
    def _counts_first(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The counts lead the JSON (after `serialized_first`), in the order a person reads them:
        done, each outcome's count, then the figures made of them."""
        data = handler(self)
        if not isinstance(data, dict):
            return data
        first = [*self.serialized_first, "done", "outcomes", *_COUNT_FIELDS]
        return {**{name: data.pop(name) for name in first if name in data}, **data}

    @classmethod
    def of(cls, outcomes: Mapping[str, int] | Iterable[str] = ()) -> OutcomeCounts:
        """The counts of these outcomes: a count per outcome, or one outcome per conversation."""
        given = Counter(outcomes) if not isinstance(outcomes, Mapping) else Counter(dict(outcomes))
        counts = {name: given.pop(name, 0) for name in OUTCOME_KINDS}
        counts.update(sorted(given.items()))
        return cls(outcomes=counts)

    def count(self, names: Iterable[str]) -> int:
        """How many conversations have one of these outcomes."""
        return sum(self.outcomes.get(name, 0) for name in names)

    # -- one count per outcome (OUTCOME_KINDS' `field`) -------------------------------------------

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> int:
        return self.outcomes.get("passed", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def failed(self) -> int:
        """Conversations in which a check about the bot failed."""
        return self.outcomes.get("failed", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bot_errors(self) -> int:
        """Conversations the bot under test broke (bot_error): failures of the bot too."""
        return self.outcomes.get("bot_error", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unverified(self) -> int:
        """Ran to an end, nothing failed, nothing about the bot checked: neither passed nor failed."""
        return self.outcomes.get("unverified", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def user_faults(self) -> int:
        """Simulator faults: the simulated user misbehaved (empty turn, repeating itself...)."""
        return self.outcomes.get("user_fault", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def user_errors(self) -> int:
        """Simulator errors: the simulated user's run broke."""
        return self.outcomes.get("user_error", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def infrastructure_errors(self) -> int:
        """Runs that broke on parley's own side (its providers, a bug)."""
        return self.outcomes.get("infrastructure_error", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cancelled(self) -> int:
        return self.outcomes.get("cancelled", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def evaluation_errors(self) -> int:
        """Runs that did not break but a check could not be decided."""
        return self.outcomes.get("evaluation_error", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def legacy_errors(self) -> int:
        """Stop reason `error`: stored before parley told who failed, and not attributable."""
        return self.outcomes.get("error", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unevaluated(self) -> int:
        """Stored without a verdict, and the run did not break."""
        return self.outcomes.get("unevaluated", 0)

    # -- the figures derived from them --------------------------------------------------------------

    @computed_field  # type: ignore[prop-decorator]
    @property
    def done(self) -> int:
        """Conversations counted (stored), whatever their outcome."""
        return sum(self.outcomes.values())

    @computed_field  # type: ignore[prop-decorator]
    @property
    def errors(self) -> int:
        """The runs that broke on the simulator's or parley's side: user_errors +
        infrastructure_errors + cancelled + legacy_errors. What `--rerun errors` picks."""
        return self.count(ERRORS)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def broken(self) -> int:
        """Conversations whose run broke, whoever broke it: bot_errors + errors. The batch
        service's `failed_scenarios`."""
        return self.bot_errors + self.errors

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate_denominator(self) -> int:
        """Conversations judged: passed + failed + bot_errors."""
        return self.count(JUDGED)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        """passed / (passed + failed + bot_errors); None before anything was judged."""
        judged = self.pass_rate_denominator
        return self.count(PASSED) / judged if judged else None

    @property
    def bot_failures(self) -> int:
        """Failed checks and bot errors: the pass rate's failures."""
        return self.count(BOT_FAILURES)

    @property
    def apart(self) -> int:
        """Neither passed nor failed, and the run did not break: unverified, simulator faults,
        evaluation errors, unevaluated (and any outcome this parley does not know)."""
        return sum(n for name, n in self.outcomes.items() if outcome_kind(name).group == "apart")

    @property
    def not_passed(self) -> int:
        """Every conversation that neither passed nor was merely unverified (the report's failures)."""
        return self.done - self.passed - self.unverified

    def selected(self, selections: list[RerunSelection]) -> int:
        """How many conversations `parley run --rerun` with these selections picks."""
        return self.count(rerun_outcomes(selections))

    def ok(self, *, strict: bool = False) -> bool:
        """What `parley run`'s exit code 0 says of the conversations: nothing failed and nothing
        broke. Unverified conversations and simulator faults are counted apart, and fail it only
        when `strict` (each outcome's rule: OUTCOME_KINDS' `exit`)."""
        failing = ("fails", "fails_when_strict") if strict else ("fails",)
        return not any(n and outcome_kind(name).exit in failing for name, n in self.outcomes.items())
