"""Fixtures shared across the suite."""

from __future__ import annotations

import datetime as dt

import pytest

# Every test pins "today" so that order ages, and so the 10-day policy, never depend on the
# calendar the suite happens to run on.
PINNED_TODAY = dt.date(2026, 11, 21)


@pytest.fixture
def today() -> dt.date:
    return PINNED_TODAY
