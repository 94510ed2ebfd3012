"""What the batch service shows of a batch, read from the store: status and progress, the list,
the summary and the cost. Blocking (SQLite): the app calls these through `asyncio.to_thread`.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from parley.core.evaluation import BatchSummary
from parley.core.records import BatchRecord, UnreadableBatch
from parley.core.reports import BatchReport, summarize
from parley.core.service.models import BatchCost, BatchCountsView, BatchList, BatchListItem, BatchStatusView, RoleCost
from parley.core.store import BatchRow, unpriced_models

if TYPE_CHECKING:
    from parley.core.records import Progress
    from parley.core.store import Store


def is_partial(batch: BatchRecord) -> bool:
    """Results are partial unless the batch completed: still running, or stopped short."""
    return batch.status != "completed"


def _elapsed(batch: BatchRecord) -> float | None:
    if batch.started_at is None:
        return None
    end = batch.finished_at if batch.status not in ("pending", "running") and batch.finished_at else None
    end = end or datetime.datetime.now(datetime.UTC)
    return max(0.0, (end - batch.started_at).total_seconds())


def status_view(row: BatchRow, progress: Progress | None, owner: str | None) -> BatchStatusView:
    """GET /batches/{id}: counts from the stored conversations' summary; in-flight and ETA from
    the runner when this service runs the batch."""
    batch, summary = row.batch, row.summary
    fraction = min(1.0, summary.done / batch.planned) if batch.planned else 0.0
    return BatchStatusView(
        batch_id=batch.id,
        status=batch.status,
        progress=round(100.0 * fraction, 1),
        progress_fraction=round(fraction, 6),
        total_scenarios=batch.planned,
        **BatchCountsView.of(summary).model_dump(),
        in_flight=progress.in_flight if progress else 0,
        created_at=batch.created_at,
        started_at=batch.started_at,
        completed_at=batch.finished_at if batch.status not in ("pending", "running") else None,
        elapsed_s=_elapsed(batch),
        eta_s=progress.eta_s if progress else None,
        running_here=progress is not None,
        owner=owner,
        sources=batch.sources,
        options=batch.options.model_dump(mode="json"),
        error=batch.error,
    )


def list_view(store: Store, limit: int, offset: int) -> BatchList:
    listed = store.list_batches(limit=limit, offset=offset)
    rows = [r for r in listed if isinstance(r, BatchRow)]
    return BatchList(
        batches=[
            BatchListItem(
                batch_id=r.batch.id,
                status=r.batch.status,
                total_scenarios=r.batch.planned,
                **BatchCountsView.of(r.summary).model_dump(),
                created_at=r.batch.created_at,
                started_at=r.batch.started_at,
                completed_at=r.batch.finished_at if r.batch.status not in ("pending", "running") else None,
            )
            for r in rows
        ],
        total_count=store.count_batches(),
        limit=limit,
        offset=offset,
        unreadable=[r for r in listed if isinstance(r, UnreadableBatch)],
    )


class BatchSummaryView(BatchReport):
    """The report's statistics (pass rate, pass^k, scores, usage, failures), with 003's summary
    fields first. `failed_scenarios` is 003's: conversations whose run broke (`broken`), never
    the failed checks (`failed`)."""

    batch_id: str
    status: str
    partial: bool
    total_scenarios: int
    successful_scenarios: int
    failed_scenarios: int
    success_rate: float | None


def summary_view(store: Store, batch_id: str) -> BatchSummaryView:
    report = summarize(store, batch_id)
    return report.extended(
        BatchSummaryView,
        **{name: getattr(report, name) for name in BatchReport.model_fields if name not in BatchSummary.model_fields},
        batch_id=report.batch.id,
        status=report.batch.status,
        partial=is_partial(report.batch),
        total_scenarios=report.planned,
        successful_scenarios=report.passed,
        failed_scenarios=report.broken,
        success_rate=report.pass_rate,
    )


def cost_view(store: Store, batch_id: str) -> BatchCost:
    """Tokens and cost per role. A role with any unpriced call has cost null, and so has the
    total; `unpriced_models` and `note` say which models lack a price."""
    summary = summarize(store, batch_id, max_listed=0)
    roles = [
        RoleCost(
            role=u.role,
            models=u.models,
            calls=u.calls,
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            total_tokens=u.input_tokens + u.output_tokens,
            unreported_calls=u.unreported_calls,
            cost_usd=u.cost_usd,
        )
        for u in summary.usage
    ]
    total = summary.total_usage
    models = unpriced_models(store, summary.batch.id)
    note = None
    if models:
        note = (
            f"no price is known for {', '.join(models)}: the cost of the roles using "
            f"{'it' if len(models) == 1 else 'them'} and the total are unknown (null), not 0"
        )
    if total.unreported_calls:
        extra = f"{total.unreported_calls} call(s) reported no token counts; their tokens are not included"
        note = f"{note}; {extra}" if note else extra
    return BatchCost(
        batch_id=summary.batch.id,
        status=summary.batch.status,
        partial=is_partial(summary.batch),
        roles=roles,
        total_cost_usd=total.cost_usd,
        total_tokens=total.input_tokens + total.output_tokens,
        total_requests=total.calls,
        average_cost_per_request=(total.cost_usd / total.calls) if total.cost_usd is not None and total.calls else None,
        unpriced_models=models,
        note=note,
    )
