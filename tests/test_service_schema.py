"""Property-based run of the batch service against its own OpenAPI schema (schemathesis 4.x).

Schemathesis generates valid and invalid requests for every route and checks each response:
no 5xx, a documented status code, a body that conforms to the documented schema, the content
type. One batch is stored first, so the per-batch routes also see a real id. Bounded to keep
the run short.
"""

from __future__ import annotations

import json
import tempfile
import zlib
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from property_settings import examples

from parley.core.service.app import create_app
from parley.core.store.store import Store
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
_HOME = Path(tempfile.mkdtemp(prefix="parley-service-schema-"))
_DB = _HOME / "parley.db"


def _seed_batch() -> str:
    """A small completed batch, run before the app starts, whose id the examples use."""
    import asyncio

    from parley.core.engine.batch_runner import BatchRunner, prepare_batch
    from parley.core.records.batch import BatchOptions

    async def run() -> str:
        with Store.open(_DB) as store:
            prepared = await prepare_batch(store, [ROOT / "profiles" / "playbooks" / "track_pending_order.yaml"], BatchOptions())
            await BatchRunner(store, prepared).run()
            return prepared.id

    return asyncio.run(run())


BATCH_ID = _seed_batch()
TOKEN = "schema-test-token"
# With a token: schemathesis also checks that a request without it (or with a wrong one) is a 401.
app = create_app(db_path=_DB, profile_dirs=[ROOT / "profiles"], token=TOKEN, inputs_dir=_HOME / "inputs")
schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers={"Authorization": f"Bearer {TOKEN}"})  # the schema needs it too
# A generated body over the 1 MiB limit is rightly refused with 413 (Content Too Large).
schema.config.checks.negative_data_rejection.expected_statuses.append("413")
# Scenario variables and profile contents are checked against the prompt templates and profile
# rules, which a JSON schema cannot say: a schema-valid body may still be a 422 naming the field.
schema.config.checks.positive_data_acceptance.expected_statuses.append("422")


@schema.parametrize()
@settings(max_examples=examples(15), deadline=None, suppress_health_check=list(HealthCheck))
def test_service_conforms_to_its_schema(case) -> None:
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    if case.path_parameters and "batch_id" in case.path_parameters and not negative:
        if zlib.crc32(json.dumps(case.path_parameters, sort_keys=True).encode()) % 2:
            case.path_parameters["batch_id"] = BATCH_ID  # half the valid examples on a batch that exists
    # A negative example that leaves the token out on purpose must go without it (`make fuzz` found
    # the token added back: a request missing its required header "accepted"); any other gets it.
    dropped = negative and not any(name.lower() == "authorization" for name in (case.headers or {}))
    # A large valid batch takes its time to plan and store on a busy machine: the wait only stops a hang.
    case.call_and_validate(headers={} if dropped else {"Authorization": f"Bearer {TOKEN}"}, timeout=PATIENCE_S)
