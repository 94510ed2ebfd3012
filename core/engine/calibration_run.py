"""Calibrating judges: the labelled conversations judged again by each judge, and each judge
measured against the labels (`parley judge calibrate`).

`calibrate_judges(store, judges, labels)`:
1. loads every stored conversation the labels are on (a label on a check measures no judge);
2. for each judge (a model, or a jury `jury:A,B,C`): checks its key and endpoint before anything
   is asked (as a batch does), then judges each conversation again as the re-score does
   (parley.core.engine.rescore.judge_again: no bot or customer is called; with `cache`, through
   the store's reply cache, so calibrating again costs nothing), `concurrency` at a time;
3. measures it against the labels (parley.core.evaluation.calibration.measure_judge) and stores
   the calibration under the judge's key (model, endpoint, prompt version, generation settings).
Several judges are calibrated on the same labels one after the other, so their figures compare.
Nothing is stored as a batch: the judgements are kept in the calibration itself (its
disagreements) and, with `cache`, in the reply cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from parley.core.engine.batch_models import BatchModels
from parley.core.engine.rescore import judge_again
from parley.core.errors import ParleyError
from parley.core.evaluation import measure_judge
from parley.core.records import Calibration, ConversationSpec, Label, RoleModels, StoredConversation, Verdict
from parley.core.store import Store, save_calibration

__all__ = ["JudgedProgress", "calibrate_judges"]

JudgedProgress = Callable[[str, int, int], None]
"""Told after each conversation a judge judged: (judge, judged so far, to judge)."""


async def _labelled(store: Store, labels: Sequence[Label]) -> list[StoredConversation]:
    ids = list(dict.fromkeys(label.conversation_id for label in labels if label.kind != "check"))
    if not ids:
        raise ParleyError("no label on a criterion or a rubric: a calibration measures a judge on those (label some first)")
    return await asyncio.to_thread(store.load_conversations, ids)


async def _parent_models(store: Store, stored: Sequence[StoredConversation]) -> dict[str | None, RoleModels]:
    """The models of the batch each conversation was run in (how its bot is judged again)."""
    found: dict[str | None, RoleModels] = {None: RoleModels()}
    for batch_id in {s.batch_id for s in stored if s.batch_id is not None}:
        batch = await asyncio.to_thread(store.get_batch, batch_id)
        found[batch_id] = batch.options.models
    return found


async def _calibrate_one(
    store: Store,
    name: str,
    labels: Sequence[Label],
    stored: Sequence[StoredConversation],
    parents: dict[str | None, RoleModels],
    *,
    source: str,
    cache: bool,
    concurrency: int,
    timeout_s: float,
    on_judged: JudgedProgress | None,
) -> Calibration:
    models = BatchModels(RoleModels(judge=name), store=store, cache=cache, judge_timeout_s=timeout_s)
    try:
        key = models.judge_key()
        if key is None:
            raise ParleyError(
                "the offline judge decides no criterion and gives no score: calibrate a model (--judge MODEL or --jury A,B,C)"
            )
        models.check_keys()
        await models.preflight([s.spec for s in stored])
        key = models.judge_key() or key  # its context as the endpoint reported it
        limit = asyncio.Semaphore(concurrency)
        judge = models.judge()
        done = 0

        async def one(item: StoredConversation) -> tuple[str, tuple[ConversationSpec, Verdict]]:
            nonlocal done
            async with limit:
                verdict = await judge_again(item.conversation, item.spec, judge=judge, parent_bot=parents.get(item.batch_id, RoleModels()))
            done += 1
            if on_judged is not None:
                on_judged(name, done, len(stored))
            return item.conversation.id, (item.spec, verdict)

        judged = dict(await asyncio.gather(*(one(item) for item in stored)))
    finally:
        await models.aclose()
    calibration = await asyncio.to_thread(measure_judge, labels, judged, key, source=source)
    await asyncio.to_thread(save_calibration, store, calibration)
    return calibration


async def calibrate_judges(
    store: Store,
    judges: Sequence[str],
    labels: Sequence[Label],
    *,
    source: str = "",
    cache: bool = False,
    concurrency: int = 4,
    timeout_s: float = 90.0,
    on_judged: JudgedProgress | None = None,
) -> list[Calibration]:
    """Calibrate each of `judges` on `labels` and store the calibrations (see the module doc).
    Raises, with nothing stored for that judge and those after it: ParleyError (no label on a
    criterion or rubric, the offline judge), ConfigError (a judge name that is not one, a missing
    key), UnreachableEndpoint / CredentialsRefused (the check of the judge's endpoint)."""
    if not judges:
        raise ParleyError("name a judge to calibrate (--judge MODEL, or --jury A,B,C)")
    stored = await _labelled(store, labels)
    parents = await _parent_models(store, stored)
    out = []
    for name in judges:
        out.append(
            await _calibrate_one(
                store,
                name,
                labels,
                stored,
                parents,
                source=source,
                cache=cache,
                concurrency=concurrency,
                timeout_s=timeout_s,
                on_judged=on_judged,
            )
        )
    return out
