"""The batch REST service through httpx's ASGI transport: every route, every error."""

from __future__ import annotations

import csv
import io
import json

import pytest
from service_support import PROFILES, SLOW_BOT, sample_scenarios, service, wait_done_at_least, wait_for

from parley.core.store.store import Store
from tests.stored_rows import query

pytestmark = pytest.mark.usefixtures("close_model_clients")


async def test_health_says_what_runs_and_never_shows_a_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-health-secret-123456")
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    async with service(tmp_path) as client:
        response = await client.get("/api/health")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "healthy" and body["version"]
    assert body["database"]["reachable"] is True and body["database"]["schema_version"] >= 2
    assert body["roles"]["bot"] == {"model": "offline", "ready": True, "problem": None}
    assert body["keys"]["OPENAI_API_KEY"] is True and body["keys"]["OPENROUTER_API_KEY"] is False
    assert "sk-health-secret" not in response.text


async def test_health_says_which_role_lacks_its_key(tmp_path, monkeypatch):
    from parley.core.records.batch import RoleModels

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with service(tmp_path, default_models=RoleModels(judge="openai/gpt-4o-mini")) as client:
        body = (await client.get("/api/health")).json()
    assert body["roles"]["judge"]["ready"] is False
    assert "OPENAI_API_KEY" in body["roles"]["judge"]["problem"]
    assert body["roles"]["bot"]["ready"] is True


async def test_the_seeds_body_launches_at_once_and_runs_to_completion(tmp_path):
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json={"scenarios": sample_scenarios()})
        assert response.status_code == 201
        launched = response.json()
        assert launched["status"] == "launched" and launched["total_scenarios"] == 5
        view = await wait_for(client, launched["batch_id"])
    assert view["status"] == "completed"
    assert (view["progress"], view["progress_fraction"]) == (100.0, 1.0)  # percent, as the service gives it
    # scenario files carry no check the offline judge can run: unverified, counted apart
    assert (view["completed_scenarios"], view["passed"], view["unverified"], view["failed_scenarios"]) == (5, 0, 5, 0)
    assert view["started_at"] and view["completed_at"] and view["elapsed_s"] >= 0


async def test_the_seeds_own_curl_example_a_bare_list_works(tmp_path):
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json=sample_scenarios())
        assert response.status_code == 201, response.text
        view = await wait_for(client, response.json()["batch_id"])
    assert view["status"] == "completed" and view["completed_scenarios"] == 5


async def test_profile_paths_with_options(tmp_path):
    async with service(tmp_path) as client:
        response = await client.post(
            "/api/batches",
            json={
                "profiles": ["profiles/playbooks", "impatient_customer.yaml"],
                "trials": 2,
                "seed": 7,
                "concurrency": 3,
                "max_turns": 12,
                "prompt_version": "v2",
            },
        )
        assert response.status_code == 201, response.text
        batch_id = response.json()["batch_id"]
        assert response.json()["total_scenarios"] == (7 + 1) * 2
        view = await wait_for(client, batch_id)
    assert view["status"] == "completed" and view["completed_scenarios"] == 16
    assert view["options"]["trials"] == 2 and view["options"]["seed"] == 7 and view["options"]["prompt_version"] == "v2"
    assert view["sources"] == ["profiles/playbooks", "profiles/impatient_customer.yaml"]  # never the server's absolute paths


async def test_inline_yaml_is_kept_by_the_service_so_the_batch_can_be_resumed(tmp_path):
    text = (PROFILES / "impatient_customer.yaml").read_text(encoding="utf-8")
    async with service(tmp_path) as client:
        response = await client.post(
            "/api/batches",
            json={
                "profiles": [text, {"yaml": text.replace("test_name: impatient_customer", "test_name: impatient_two"), "name": "two.yaml"}]
            },
        )
        assert response.status_code == 201, response.text
        view = await wait_for(client, response.json()["batch_id"])
    assert view["status"] == "completed" and view["completed_scenarios"] == 2
    kept = sorted((tmp_path / "inputs").glob("*/*.yaml"))
    assert [p.name for p in kept] == ["profile_0.yaml", "two.yaml"]
    assert view["sources"] == [f"inputs/{p.parent.name}/{p.name}" for p in kept]  # never the server's absolute paths


@pytest.mark.parametrize(
    ("body", "loc", "words"),
    [
        ({"scenarios": [], "concurrency": 0}, ["body", "concurrency"], "greater than or equal to 1"),
        ({"profiles": ["profiles/"], "trials": 101}, ["body", "trials"], "less than or equal to 100"),
        ({"profiles": ["profiles/"], "max_turns": 0}, ["body", "max_turns"], "greater than or equal to 1"),
        ({"profiles": ["profiles/"], "models": {"bot": "gpt-4o"}}, ["body", "models", "bot"], "did you mean openai/gpt-4o"),
        (
            {"profiles": ["profiles/"], "models": {"bot": "http:profiles/connectors/serve_bot.yaml"}},
            ["body", "models", "bot"],
            "not accepted over the API",
        ),
        ({"profiles": ["profiles/"], "models": {"bot": "rasa:localhost"}}, ["body", "models", "bot"], "is not an http"),
        ({"profiles": ["profiles/"], "colour": "red"}, ["body", "colour"], "Extra inputs"),
        ({}, ["body"], "nothing to run"),
        ([{"name": "x"}], ["body", 0, "variables"], "Field required"),
    ],
)
async def test_invalid_bodies_are_422_naming_the_field(tmp_path, body, loc, words):
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json=body)
        listed = (await client.get("/api/batches")).json()
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert any(d["loc"] == loc and words in d["msg"] for d in detail), detail
    assert listed["total_count"] == 0


async def test_problems_in_the_inputs_are_422_at_their_place_and_nothing_is_kept(tmp_path):
    scenarios = sample_scenarios()
    scenarios[1]["variables"]["PATIENCE"] = 9
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json={"scenarios": scenarios})
        bare = await client.post("/api/batches", json=scenarios)
        listed = (await client.get("/api/batches")).json()
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", "scenarios", 1, "variables", "PATIENCE"]
    assert "PATIENCE must be a whole number from 0 to 3" in problem["msg"] and "inputs" not in problem["msg"]
    assert bare.json()["detail"][0]["loc"] == ["body", 1, "variables", "PATIENCE"]
    assert listed["total_count"] == 0
    assert not any((tmp_path / "inputs").iterdir())


async def test_a_deployed_bot_that_cannot_be_reached_is_refused_before_anything_runs(tmp_path):
    # Nothing listens on port 9 (the operator allows the host): one request says so, and no
    # batch is made of 7 identical errors.
    body = {"profiles": ["profiles/playbooks"], "models": {"bot": "rasa:http://127.0.0.1:9/webhooks/rest/webhook"}}
    async with service(tmp_path, allowed_bot_hosts=["127.0.0.1:9"]) as client:
        response = await client.post("/api/batches", json=body)
        listed = (await client.get("/api/batches")).json()
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", "models", "bot"]
    assert "cannot reach the bot's endpoint http://127.0.0.1:9/webhooks/rest/webhook" in problem["msg"]
    assert listed["total_count"] == 0


async def test_a_model_whose_key_is_missing_is_422_on_that_role(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json={"profiles": ["profiles/playbooks"], "models": {"judge": "openai/gpt-4o-mini"}})
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", "models", "judge"] and "OPENAI_API_KEY is not set" in problem["msg"]


async def test_the_list_is_newest_first_and_paged(tmp_path):
    async with service(tmp_path) as client:
        ids = []
        for _ in range(3):
            launched = (await client.post("/api/batches", json={"profiles": ["profiles/playbooks/track_pending_order.yaml"]})).json()
            ids.append(launched["batch_id"])
            await wait_for(client, ids[-1])
        page = (await client.get("/api/batches", params={"limit": 2})).json()
        rest = (await client.get("/api/batches", params={"limit": 2, "offset": 2})).json()
        bad = await client.get("/api/batches", params={"limit": 0})
    assert page["total_count"] == 3 and (page["limit"], page["offset"]) == (2, 0)
    assert [b["batch_id"] for b in page["batches"] + rest["batches"]] == ids[::-1]
    assert page["batches"][0]["status"] == "completed" and page["batches"][0]["completed_scenarios"] == 1
    assert bad.status_code == 422


async def test_results_in_each_format(tmp_path):
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json=sample_scenarios())).json()["batch_id"]
        await wait_for(client, batch_id)
        as_json = await client.get(f"/api/batches/{batch_id}/results")
        as_csv = await client.get(f"/api/batches/{batch_id}/results", params={"format": "csv"})
        as_ndjson = await client.get(f"/api/batches/{batch_id}/results", params={"format": "ndjson"})
        bad = await client.get(f"/api/batches/{batch_id}/results", params={"format": "xml"})
    document = as_json.json()
    assert as_json.headers["content-type"].startswith("application/json")
    assert document["partial"] is False and document["status"] == "completed"
    assert document["total_results"] == 5 and len(document["results"]) == 5
    assert {r["scenario"] for r in document["results"]} == {s["name"] for s in sample_scenarios()}
    assert document["summary"]["pass_k"][0]["k"] == 1
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert len(rows) == 5 and list(rows[0])[:4] == ["session_id", "scenario", "prompt_version", "score"]
    lines = as_ndjson.text.splitlines()
    assert as_ndjson.headers["content-type"].startswith("application/x-ndjson")
    assert len(lines) == 5 and {json.loads(line)["session_id"] for line in lines} == {r["session_id"] for r in rows}
    assert {r.headers["x-parley-partial"] for r in (as_json, as_csv, as_ndjson)} == {"false"}
    assert bad.status_code == 422


async def test_summary_has_the_reports_statistics_with_pass_hat_k(tmp_path):
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json={"profiles": ["profiles/playbooks"], "trials": 3})).json()["batch_id"]
        await wait_for(client, batch_id)
        summary = (await client.get(f"/api/batches/{batch_id}/summary")).json()
    assert (summary["batch_id"], summary["status"], summary["partial"]) == (batch_id, "completed", False)
    assert (summary["total_scenarios"], summary["successful_scenarios"], summary["success_rate"]) == (21, 21, 1.0)
    assert [p["k"] for p in summary["pass_k"]] == [1, 2, 3]
    # every rate with its 95% interval and denominator: Wilson for the pass rate, the seeded
    # bootstrap over specs for pass^k (Wilson on the 7 specs when every one passed every trial)
    assert summary["pass_rate_interval"]["method"] == "wilson" and round(summary["pass_rate_interval"]["low"], 3) == 0.845
    assert summary["pass_rate_denominator"] == 21 and summary["flaky_specs"] == []
    assert all(round(p["interval"]["low"], 3) == 0.646 for p in summary["pass_k"])
    assert summary["outcomes"]["passed"] == 21 and summary["outcomes"]["bot_error"] == 0
    # the offline judge gives no score: none is counted or averaged, every conversation is unscored
    assert summary["score_distribution"] == {"score_1": 0, "score_2": 0, "score_3": 0} and summary["unscored"] == 21
    assert summary["score_statistics"]["mean"] is None and summary["score_statistics"]["count"] == 0


async def test_offline_cost_is_a_real_zero(tmp_path):
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json=sample_scenarios())).json()["batch_id"]
        await wait_for(client, batch_id)
        cost = (await client.get(f"/api/batches/{batch_id}/cost")).json()
    assert cost["total_cost_usd"] == 0.0 and cost["unpriced_models"] == [] and cost["note"] is None
    assert [r["role"] for r in cost["roles"]] == ["bot", "user", "judge"]
    assert cost["total_requests"] > 0


async def test_a_running_batch_moves_gives_partial_results_and_unknown_cost(tmp_path, slow_bot):
    async with service(tmp_path) as client:
        body = {"scenarios": sample_scenarios(), "models": {"bot": slow_bot}, "concurrency": 1, "max_turns": 2}
        batch_id = (await client.post("/api/batches", json=body)).json()["batch_id"]
        first = await wait_done_at_least(client, batch_id, 1)
        assert first["status"] == "running" and first["running_here"] is True
        assert 0 < first["progress_fraction"] < 1 and first["progress_fraction"] == first["completed_scenarios"] / 5
        assert first["progress"] == round(100 * first["completed_scenarios"] / 5, 1)
        as_json = await client.get(f"/api/batches/{batch_id}/results")
        as_csv = await client.get(f"/api/batches/{batch_id}/results", params={"format": "csv"})
        cost = (await client.get(f"/api/batches/{batch_id}/cost")).json()
        later = await wait_done_at_least(client, batch_id, first["completed_scenarios"] + 1)
        done = await wait_for(client, batch_id)
    assert as_json.json()["partial"] is True and as_json.headers["x-parley-partial"] == "true"
    assert as_csv.headers["x-parley-partial"] == "true" and as_csv.headers["x-parley-batch-status"] == "running"
    assert 1 <= as_json.json()["total_results"] < 5
    assert later["progress"] > first["progress"]
    assert done["status"] == "completed" and done["progress"] == 100.0
    bot = next(r for r in cost["roles"] if r["role"] == "bot")
    assert bot["cost_usd"] is None and bot["input_tokens"] > 0
    assert cost["total_cost_usd"] is None and cost["unpriced_models"] == [SLOW_BOT]
    assert SLOW_BOT in cost["note"] and "not 0" in cost["note"]


async def test_cancel_then_resume_then_no_more_of_either(tmp_path, slow_bot):
    async with service(tmp_path) as client:
        body = {"scenarios": sample_scenarios(), "models": {"bot": slow_bot}, "concurrency": 1, "max_turns": 2}
        batch_id = (await client.post("/api/batches", json=body)).json()["batch_id"]
        await wait_done_at_least(client, batch_id, 1)
        cancelled = await client.post(f"/api/batches/{batch_id}/cancel")
        again = await client.post(f"/api/batches/{batch_id}/cancel")
        resumed = await client.post(f"/api/batches/{batch_id}/resume")
        twice = await client.post(f"/api/batches/{batch_id}/resume")
        done = await wait_for(client, batch_id)
        after = await client.post(f"/api/batches/{batch_id}/resume")
        finished_cancel = await client.post(f"/api/batches/{batch_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert again.status_code == 409 and "cancelled: nothing to cancel" in again.json()["detail"]
    assert resumed.status_code == 202 and resumed.json()["status"] == "resumed"
    assert 1 <= resumed.json()["already_done"] < 5
    assert twice.status_code == 409 and "already running" in twice.json()["detail"]
    assert done["status"] == "completed" and done["completed_scenarios"] == 5
    assert after.status_code == 409 and "completed: nothing to resume" in after.json()["detail"]
    assert finished_cancel.status_code == 409
    with Store.open(tmp_path / "parley.db") as store:
        keys = query(store, "SELECT spec_id, trial, stop_reason FROM conversations WHERE batch_id = ?", [batch_id])
    assert len(keys) == 5 and len({(k["spec_id"], k["trial"]) for k in keys}) == 5
    assert {k["stop_reason"] for k in keys} != {"cancelled"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/batches/{id}"),
        ("GET", "/api/batches/{id}/results"),
        ("GET", "/api/batches/{id}/summary"),
        ("GET", "/api/batches/{id}/cost"),
        ("POST", "/api/batches/{id}/cancel"),
        ("POST", "/api/batches/{id}/resume"),
    ],
)
async def test_an_unknown_batch_is_404_with_a_detail(tmp_path, method, path):
    async with service(tmp_path) as client:
        response = await client.request(method, path.format(id="0123456789abcdef"))
    assert response.status_code == 404
    assert response.json()["detail"] == "no batch '0123456789abcdef'; GET /api/batches lists them"


async def test_a_batch_is_found_by_a_unique_prefix(tmp_path):
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json=sample_scenarios())).json()["batch_id"]
        await wait_for(client, batch_id)
        view = (await client.get(f"/api/batches/{batch_id[:8]}")).json()
    assert view["batch_id"] == batch_id


async def test_the_openapi_schema_documents_every_route(tmp_path):
    async with service(tmp_path, token="t0ken") as client:
        schema = (await client.get("/openapi.json", headers={"Authorization": "Bearer t0ken"})).json()
    async with service(tmp_path) as client:
        open_schema = (await client.get("/openapi.json")).json()
    operations = {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}
    assert operations == {
        ("GET", "/api/health"),
        ("POST", "/api/batches"),
        ("GET", "/api/batches"),
        ("GET", "/api/batches/{batch_id}"),
        ("GET", "/api/batches/{batch_id}/results"),
        ("GET", "/api/batches/{batch_id}/summary"),
        ("GET", "/api/batches/{batch_id}/cost"),
        ("POST", "/api/batches/{batch_id}/cancel"),
        ("POST", "/api/batches/{batch_id}/resume"),
    }
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            assert op.get("summary") and op.get("description"), (method, path)
    assert "HTTPBearer" in schema["components"]["securitySchemes"]
    assert schema["paths"]["/api/batches"]["get"]["security"] == [{"HTTPBearer": []}]
    assert "security" not in schema["paths"]["/api/health"]["get"]
    assert "securitySchemes" not in open_schema.get("components", {})  # no token: no claim of one
    assert schema["components"]["schemas"]["BatchRequest"]["properties"]["concurrency"]["description"]


async def test_a_mistyped_query_parameter_is_422_not_silently_ignored(tmp_path):
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json=sample_scenarios())).json()["batch_id"]
        await wait_for(client, batch_id)
        response = await client.get(f"/api/batches/{batch_id}/results", params={"fromat": "csv"})
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["query", "fromat"] and "this route takes: format" in problem["msg"]
