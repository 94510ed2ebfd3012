"""Stored batches made to order for the comparison's tests and benchmark (this module holds no
tests): each conversation's outcome, score and failed checks are chosen by hand, on real
offline transcripts (tests.test_store_fixtures)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from parley.core.evaluation import CRITERION_KIND
from parley.core.records.batch import BatchOptions, BatchRecord, RoleModels
from parley.core.records.chat import Usage
from parley.core.store.store import Store
from tests.test_store_fixtures import T0, check, conversation, spec, verdict


@dataclass(frozen=True)
class Result:
    """What one conversation of a made-up batch ends as."""

    outcome: str = "passed"
    score: int | None = 3
    failed: tuple[str, ...] = ()
    stop_reason: str | None = None
    cost_usd: float | None = 0.001
    tokens: tuple[int, int] = (100, 20)
    met: tuple[str, ...] = ()
    """Criteria in words the judge found met."""


PASS = Result()
FAIL = Result(outcome="failed", score=1, failed=("ORD-1001 ends cancelled",))


def make_batch(
    store: Store,
    results: Mapping[tuple[str, int], Result],
    *,
    minutes: int = 0,
    sources: tuple[str, ...] = ("profiles/",),
    bot: str = "offline",
    trials: int = 1,
    **record: object,
) -> BatchRecord:
    """A completed batch holding one conversation per (spec_id `name#index`, trial) -> Result."""
    batch = store.create_batch(
        BatchRecord(
            created_at=T0 + dt.timedelta(minutes=minutes),
            status="completed",
            sources=list(sources),
            options=BatchOptions(models=RoleModels(bot=bot), trials=trials, seed=7),
            planned=len(results),
            **record,  # type: ignore[arg-type]
        )
    )
    for (spec_id, trial), result in results.items():
        name, _, index = spec_id.partition("#")
        usage = {"bot": Usage(input_tokens=result.tokens[0], output_tokens=result.tokens[1], calls=1, cost_usd=result.cost_usd)}
        conv = conversation("track", started=T0 + dt.timedelta(minutes=minutes, seconds=trial), usage=usage, stop_reason=result.stop_reason)
        checks = [check(name, "fail", "it did not") for name in result.failed]
        checks += [check("conversation completed", kind="conversation_completed")]
        checks += [check(text, "pass", "Met.", kind=CRITERION_KIND) for text in result.met]
        store.save_conversation(
            batch.id, spec(name, int(index or 0)), conv, verdict(conv, result.outcome, result.score, checks=checks), trial
        )
    return batch
