"""The service caps the conversations one request plans (scenarios x trials, and what profiles
expand to) with a 422 that names the cap; nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from service_support import sample_scenarios, service

from parley.core.engine import TooManyConversations, prepare_batch
from parley.core.records import BatchOptions
from parley.core.service.models import MAX_PLANNED
from parley.core.store import Store

PROFILE = Path(__file__).resolve().parent.parent / "profiles" / "track_shipped_order.yaml"


async def test_a_request_planning_more_than_the_cap_is_422_naming_it(tmp_path):
    one = sample_scenarios()[0]
    scenarios = [{**one, "name": f"s{i}"} for i in range(MAX_PLANNED // 100 + 1)]
    body = {"scenarios": scenarios, "trials": 100}
    assert len(json.dumps(body)) < 1024 * 1024  # under the body limit: it is the plan that is refused
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json=body)
        listed = (await client.get("/api/batches")).json()
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert f"at most {MAX_PLANNED:,} may be planned by one request" in problem["msg"]
    assert f"{len(scenarios):,} scenarios x 100 trials plan {len(scenarios) * 100:,} conversations" in problem["msg"]
    assert listed["total_count"] == 0


async def test_what_profiles_expand_to_counts_against_the_cap_before_anything_is_stored(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        with pytest.raises(TooManyConversations) as info:
            await prepare_batch(store, [PROFILE], BatchOptions(trials=5), max_planned=3)
        assert store.count_batches() == 0
    assert str(info.value) == (
        "the batch plans 5 conversations (1 spec x 5 trials); at most 3 may be planned at once: split it into smaller batches"
    )
