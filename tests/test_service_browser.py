"""`parley serve` without a token: no web page gets in (DNS rebinding, a cross-origin POST), and
no reply shows the server's absolute paths. On main a request for Host `evil.example` was served,
`POST /api/batches/latest/cancel` with `Origin: http://evil.example` cancelled the running batch,
and health, status, results and summary showed the server's paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from service_support import PROFILES, sample_scenarios, service, wait_done_at_least, wait_for

pytestmark = pytest.mark.usefixtures("close_model_clients")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:5000", "192.168.1.10:5000", "localhost.evil.example"])
async def test_without_a_token_a_host_that_is_not_this_machine_is_refused(tmp_path, host):
    async with service(tmp_path) as client:
        for path in ("/api/health", "/api/batches"):
            refused = await client.get(path, headers={"Host": host})
            assert refused.status_code == 403, (path, refused.text)
            assert "is not this machine" in refused.json()["detail"]


@pytest.mark.parametrize("host", ["localhost", "localhost:5000", "127.0.0.1:5000", "127.8.9.10", "[::1]:5000"])
async def test_loopback_names_are_served(tmp_path, host):
    async with service(tmp_path) as client:
        assert (await client.get("/api/batches", headers={"Host": host})).status_code == 200


async def test_a_name_given_with_allow_host_is_served_and_a_token_lets_any_host_in(tmp_path):
    async with service(tmp_path / "named", allowed_hosts=["parley.internal"]) as client:
        assert (await client.get("/api/batches", headers={"Host": "parley.internal:5000"})).status_code == 200
    async with service(tmp_path / "token", token="s3cret-token-value") as client:
        headers = {"Host": "evil.example", "Authorization": "Bearer s3cret-token-value"}
        assert (await client.get("/api/batches", headers=headers)).status_code == 200


async def test_a_cross_origin_post_does_not_cancel_the_running_batch(tmp_path, slow_bot):
    body = {"scenarios": sample_scenarios(), "models": {"bot": slow_bot}, "concurrency": 1, "max_turns": 2}
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json=body)).json()["batch_id"]
        await wait_done_at_least(client, batch_id, 1)
        for origin in ("http://evil.example", "null", "http://localhost:9999"):
            refused = await client.post("/api/batches/latest/cancel", headers={"Origin": origin})
            assert refused.status_code == 403, refused.text
            assert (await client.get(f"/api/batches/{batch_id}")).json()["status"] == "running"
        # from the service's own origin, a state change names its batch by id, never `latest`
        own = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
        refused = await client.post("/api/batches/latest/cancel", headers=own)
        assert refused.status_code == 403 and "not `latest`" in refused.json()["detail"]
        assert (await client.post(f"/api/batches/{batch_id}/cancel", headers=own)).status_code == 200
        assert (await wait_for(client, batch_id))["status"] == "cancelled"


async def test_a_program_without_an_origin_still_cancels_by_latest(tmp_path, slow_bot):
    body = {"scenarios": sample_scenarios(), "models": {"bot": slow_bot}, "concurrency": 1, "max_turns": 2}
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json=body)).json()["batch_id"]
        await wait_done_at_least(client, batch_id, 1)
        assert (await client.post("/api/batches/latest/cancel")).status_code == 200
        assert (await wait_for(client, batch_id))["status"] == "cancelled"


async def test_no_reply_shows_the_server_s_absolute_paths(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "track.yaml").write_text((PROFILES / "track_shipped_order.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (suite / "broken.yaml").write_text("test_name: [unclosed\n", encoding="utf-8")
    server_paths = (str(tmp_path), str(PROFILES.parent))
    async with service(tmp_path, profile_dirs=[suite]) as client:
        launched = await client.post("/api/batches", json={"profiles": [str(suite)]})
        assert launched.status_code == 201, launched.text
        assert any("suite/broken.yaml" in warning for warning in launched.json()["warnings"])  # which file, by its name
        batch_id = launched.json()["batch_id"]
        await wait_for(client, batch_id)
        replies = {"201": launched.text}
        for path in ("/api/health", f"/api/batches/{batch_id}", f"/api/batches/{batch_id}/summary"):
            replies[path] = (await client.get(path)).text
        for fmt in ("json", "csv", "ndjson"):
            replies[fmt] = (await client.get(f"/api/batches/{batch_id}/results", params={"format": fmt})).text
    for where, text in replies.items():
        found = [text[max(0, text.find(path) - 120) : text.find(path) + 80] for path in server_paths if path in text]
        assert not found, (where, found)
    assert json.loads(replies[f"/api/batches/{batch_id}"])["sources"] == ["suite"]
    assert json.loads(replies["ndjson"].splitlines()[0])["source"] == "suite/track.yaml"
    assert json.loads(replies["/api/health"])["database"]["path"] == "parley.db"
    assert Path(tmp_path / "parley.db").exists()
