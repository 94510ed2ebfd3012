"""A batch as a list of batches shows it: the record and its summary so far."""

from __future__ import annotations

from pydantic import BaseModel

from parley.core.evaluation import BatchSummary
from parley.core.records import BatchRecord


class BatchRow(BaseModel):
    """One batch of `Store.list_batches` (or `Store.batch_row`): its record and its summary
    (parley.core.evaluation.BatchSummary: every count a person reads of it, under one name
    each). The summary's pass^k is computed only if read, so a long list stays cheap."""

    batch: BatchRecord
    summary: BatchSummary

    @property
    def id(self) -> str:
        return self.batch.id
