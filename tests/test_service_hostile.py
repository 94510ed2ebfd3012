"""Hostile request bodies for the batch service: each one is a 422 naming its field, never a 500."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from service_support import PROFILES, sample_scenarios, service, wait_for

from parley.core.store.store import Store
from tests.test_yaml_hostile import ALIAS_BOMB_10_8, deep_block, deep_flow

pytestmark = pytest.mark.usefixtures("close_model_clients")

# Characters for which str.isdigit() is true although int() refuses them: a superscript, a
# circled digit, an Arabic-Indic digit. Found by schemathesis as a 500 in a variable's name.
NON_ASCII_DIGITS = ["¹", "②", "١", "a.¹", "x[¹]"]


@pytest.mark.parametrize("name", NON_ASCII_DIGITS)
async def test_a_scenario_variable_named_with_a_non_ascii_digit_is_422(tmp_path, name):
    scenarios = sample_scenarios()
    scenarios[0]["variables"][name] = "x"
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json={"scenarios": scenarios})
        listed = (await client.get("/api/batches")).json()
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["loc"][:3] == ["body", "scenarios", 0]
    assert listed["total_count"] == 0


def _profile(goals: str, extra_user_key: str = "") -> str:
    return f"""
test_name: odd_names
user:
  language: English
  role: a customer
  context: []
  goals:
{goals}
{extra_user_key}
chatbot:
  is_starter: false
  fallback: I'm sorry, I didn't understand that.
conversation:
  number: 1
  goal_style: {{steps: 3}}
  interaction_style: [single question]
"""


@pytest.mark.parametrize("name", NON_ASCII_DIGITS)
async def test_an_inline_profile_key_named_with_a_non_ascii_digit_is_422(tmp_path, name):
    # world: is parley's own section, where an unknown key is an error (Sensei's sections ignore them).
    profile = _profile('    - "where is my order ORD-1003"') + f"world:\n  {name!r}: 1\n"
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json={"profiles": [profile]})
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["loc"][:4] == ["body", "profiles", 0, "world"]
    assert "unknown key" in problem["msg"]


@pytest.mark.parametrize("name", ["¹", "②", "١"])
async def test_an_error_inside_a_goal_variable_named_with_a_non_ascii_digit_is_422(tmp_path, name):
    goals = f"""    - "where is my order {{{{{name}}}}}"
    - {name!r}:
        function: bogus()
        type: string
        data: [ORD-1001]"""
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json={"profiles": [_profile(goals)]})
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    # The problem is placed at the variable itself (its name, or its function), named as written.
    assert any(d["loc"][:7] == ["body", "profiles", 0, "user", "goals", 1, name] for d in detail), detail


# ---- numbers JSON cannot carry, text UTF-8 cannot encode --------------------------------------

VALID_PROFILE = """\
test_name: hostile_probe
user:
  role: a customer
  goals:
    - where is my order ORD-1003
"""


def _raw_body(field: str, literal: str) -> bytes:
    """A POST /api/batches body with `field` set to a literal JSON cannot hold (json.dumps refuses it)."""
    scenarios = json.dumps(sample_scenarios())
    return f'{{"scenarios": {scenarios}, "{field}": {literal}}}'.encode()


@pytest.mark.parametrize("field", ["timeout_s", "concurrency", "seed"])
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
async def test_a_number_json_cannot_carry_is_422_naming_its_field(tmp_path, field, literal):
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", content=_raw_body(field, literal), headers={"Content-Type": "application/json"})
        listed = (await client.get("/api/batches")).json()
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", field]
    assert literal in problem["msg"] and "finite number" in problem["msg"]
    assert listed["total_count"] == 0


def _with_surrogate(where: str) -> tuple[dict | list, list[str | int]]:
    """A request body with a lone surrogate (\\ud800) at `where`, and the loc the 422 must name."""
    scenarios = sample_scenarios()
    if where == "scenario name":
        scenarios[0]["name"] = "calm\ud800"
        return {"scenarios": scenarios}, ["body", "scenarios", 0, "name"]
    if where == "model name":
        return {"scenarios": scenarios, "models": {"bot": "offline\ud800"}}, ["body", "models", "bot"]
    if where == "variable value":
        scenarios[0]["variables"]["PERSONALITY"] = "calm\ud800"
        return {"scenarios": scenarios}, ["body", "scenarios", 0, "variables", "PERSONALITY"]
    if where == "variable name":
        scenarios[0]["variables"]["PERSONALITY\ud800"] = "calm"
        return {"scenarios": scenarios}, ["body", "scenarios", 0, "variables"]
    if where == "bare list":
        scenarios[1]["name"] = "\ud800"
        return scenarios, ["body", 1, "name"]
    if where == "inline YAML":
        return {"profiles": [VALID_PROFILE + "    - and my refund \ud800\n"]}, ["body", "profiles", 0]
    if where == "inline YAML object":
        return {"profiles": [{"yaml": VALID_PROFILE + "# \ud800\n", "name": "p.yaml"}]}, ["body", "profiles", 0, "yaml"]
    if where == "profile path":
        return {"profiles": ["playbooks/\ud800.yaml"]}, ["body", "profiles", 0]
    if where == "profile path object":
        return {"profiles": [{"path": "\ud800"}]}, ["body", "profiles", 0, "path"]
    assert where == "prompt version"
    return {"scenarios": scenarios, "prompt_version": "v\ud800"}, ["body", "prompt_version"]


SURROGATE_PLACES = [
    "scenario name",
    "model name",
    "variable value",
    "variable name",
    "bare list",
    "inline YAML",
    "inline YAML object",
    "profile path",
    "profile path object",
    "prompt version",
]


@pytest.mark.parametrize("where", SURROGATE_PLACES)
async def test_a_lone_surrogate_anywhere_is_422_naming_its_field(tmp_path, where):
    body, loc = _with_surrogate(where)
    # json.dumps writes a lone surrogate as the escape "\ud800", as a hostile client would send it.
    raw = json.dumps(body).encode()
    assert b"\\ud800" in raw
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", content=raw, headers={"Content-Type": "application/json"})
        listed = (await client.get("/api/batches")).json()
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["loc"] == loc
    assert "surrogate" in problem["msg"]
    assert listed["total_count"] == 0
    assert not any((tmp_path / "inputs").glob("*/*")), "nothing written for a refused request"


async def test_a_json_body_nested_past_the_parser_is_refused_not_a_500(tmp_path):
    deep = b'{"scenarios": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    async with service(tmp_path, max_body_bytes=1024 * 1024) as client:
        response = await client.post("/api/batches", content=deep, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["body"]


# ---- YAML that costs the parser dearly --------------------------------------------------------


@pytest.mark.parametrize("depth", [500, 2000])
@pytest.mark.parametrize("shape", [deep_flow, deep_block], ids=["flow", "block"])
async def test_inline_yaml_nested_deeply_is_422_answered_fast(tmp_path, shape, depth):
    profile = VALID_PROFILE + shape(depth if shape is deep_flow else min(depth, 700))
    async with service(tmp_path) as client:
        await client.post("/api/batches", json={"profiles": [profile]})  # the first also pays for imports
        started = time.perf_counter()
        response = await client.post("/api/batches", json={"profiles": [profile]})
        elapsed = time.perf_counter() - started
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["loc"][:3] == ["body", "profiles", 0]
    assert "nested more than" in problem["msg"]
    assert elapsed < 1.0


async def test_an_alias_bomb_in_an_inline_profile_is_422_in_under_a_second(tmp_path):
    async with service(tmp_path) as client:
        await client.post("/api/batches", json={"profiles": [VALID_PROFILE + ALIAS_BOMB_10_8]})  # the first also pays for imports
        started = time.perf_counter()
        response = await client.post("/api/batches", json={"profiles": [VALID_PROFILE + ALIAS_BOMB_10_8]})
        elapsed = time.perf_counter() - started
        listed = await client.get("/api/batches")
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["loc"][:3] == ["body", "profiles", 0]
    assert "aliases expand to more than" in problem["msg"]
    assert elapsed < 1.0
    assert listed.status_code == 200


async def test_seven_alias_bombs_at_once_do_not_stall_the_service(tmp_path):
    body = {"profiles": [VALID_PROFILE + ALIAS_BOMB_10_8]}
    async with service(tmp_path) as client:
        await client.post("/api/batches", json=body)  # the first also pays for imports
        started = time.perf_counter()
        responses = await asyncio.gather(*(client.post("/api/batches", json=body) for _ in range(7)), client.get("/api/batches"))
        elapsed = time.perf_counter() - started
    assert [r.status_code for r in responses] == [422] * 7 + [200]
    assert elapsed < 3.0


async def test_ten_thousand_scenarios_with_one_mistake_each_are_one_bounded_422(tmp_path):
    body = {"scenarios": [{"name": "same", "variables": {}}] * 10_000}
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json=body)
    assert response.status_code == 422
    problems = response.json()["detail"]
    assert len(problems) == 101
    assert problems[-1]["loc"] == ["body"] and "more problems like these" in problems[-1]["msg"]


# ---- what a client learns ----------------------------------------------------------------------


async def test_no_422_shows_an_absolute_server_path(tmp_path):
    missing_personality = VALID_PROFILE.replace("  role: a customer\n", "  role: a customer\n  context:\n    - personality: nope.yml\n")
    bodies = [
        {"profiles": [missing_personality]},
        {"profiles": ["playbooks/track_pending_order.yaml", VALID_PROFILE + "conversation: {number: lots}\n"]},
        {"profiles": [{"yaml": '{"scenarios": []}', "name": "empty.json"}]},
        {"profiles": ["personalities"]},
    ]
    async with service(tmp_path) as client:
        responses = [await client.post("/api/batches", json=body) for body in bodies]
    texts = [r.text for r in responses]
    assert [r.status_code for r in responses] == [422] * len(bodies), texts
    for text in texts:
        for server_path in (str(tmp_path), str(PROFILES), str(Path.cwd()), "/tmp/", "/home/", "/root/", "/work/"):
            assert server_path not in text, text
    assert (
        "personality file 'nope.yml' not found (looked in the request, profiles/personalities (parley's shipped personalities))" in texts[0]
    )


async def test_the_token_is_checked_before_the_body_is_read(tmp_path):
    async with service(tmp_path, token="s3cret") as client:
        responses = [
            await client.post("/api/batches", json={"scenarios": [{"name": 1}]}),
            await client.post("/api/batches", content=b"{not json", headers={"Content-Type": "application/json"}),
            await client.post("/api/batches", content=_raw_body("seed", "NaN"), headers={"Content-Type": "application/json"}),
            await client.post("/api/batches?fromat=csv", json={}),
            await client.get("/api/batches?limit=0"),
        ]
    for response in responses:
        assert response.status_code == 401, response.text
        assert response.json() == {"detail": "a bearer token is required: send `Authorization: Bearer $PARLEY_API_TOKEN`"}


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"])
async def test_the_schema_and_docs_need_the_token_when_there_is_one(tmp_path, path):
    async with service(tmp_path, token="s3cret") as client:
        without = await client.get(path)
        wrong = await client.get(path, headers={"Authorization": "Bearer nope"})
        right = await client.get(path, headers={"Authorization": "Bearer s3cret"})
    assert without.status_code == 401 and wrong.status_code == 401
    assert right.status_code == 200
    async with service(tmp_path) as client:
        assert (await client.get(path)).status_code == 200  # no token configured: open, as before


# ---- connector bots: server-side request forgery ----------------------------------------------


@pytest.mark.parametrize(
    ("bot", "shown"),
    [
        ("rasa:http://127.0.0.1:5102/webhooks/rest/webhook", "127.0.0.1:5102"),
        ("taskyto:http://169.254.169.254", "169.254.169.254:80"),
        ("rasa:https://internal.example/hook", "internal.example:443"),
        ("rasa:http://[::1]:5005/webhooks/rest/webhook", "[::1]:5005"),
    ],
)
async def test_a_connector_url_is_refused_unless_its_host_is_allowed(tmp_path, bot, shown):
    body = {"profiles": ["playbooks/track_pending_order.yaml"], "models": {"bot": bot}}
    async with service(tmp_path) as client:
        response = await client.post("/api/batches", json=body)
        listed = (await client.get("/api/batches")).json()
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", "models", "bot"]
    assert f"parley serve --allow-bot-host {shown}" in problem["msg"]
    assert listed["total_count"] == 0


async def _answering_server() -> asyncio.Server:
    """A server on a free loopback port that answers every request 404, as a bot's host that is
    up (the service asks whether anything answers before it launches a batch)."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0)


@pytest.mark.parametrize(
    ("allowed", "host", "result"),
    [
        (["127.0.0.1:{port}"], "127.0.0.1:{port}", "launched"),
        (["127.0.0.1"], "127.0.0.1:{port}", "launched"),
        (["127.0.0.1:{other}"], "127.0.0.1:{port}", "not allowed"),
        (["localhost:{port}"], "127.0.0.1:{port}", "not allowed"),
        (["127.0.0.1:{port}"], "127.0.0.1.nip.io:{port}", "not allowed"),
        (["bots.example.com"], "BOTS.example.com:{port}", "unreachable"),  # allowed; it does not resolve here
    ],
)
async def test_allowed_hosts_match_host_and_port(tmp_path, allowed, host, result):
    server = await _answering_server()
    port = server.sockets[0].getsockname()[1]
    allowed = [a.format(port=port, other=port + 1) for a in allowed]
    body = {
        "profiles": ["playbooks/track_pending_order.yaml"],
        "models": {"bot": f"rasa:http://{host.format(port=port)}/webhooks/rest/webhook"},
    }
    async with server, service(tmp_path, allowed_bot_hosts=allowed) as client:
        response = await client.post("/api/batches", json=body)
        if response.status_code == 201:
            await client.post(f"/api/batches/{response.json()['batch_id']}/cancel")
    assert response.status_code == (201 if result == "launched" else 422), response.text
    if result != "launched":
        [problem] = response.json()["detail"]
        assert problem["loc"] == ["body", "models", "bot"]
        # refused by the allow-list, or (an allowed host) because nothing answers there
        assert ("parley serve --allow-bot-host" in problem["msg"]) == (result == "not allowed"), problem["msg"]


async def test_resuming_a_batch_whose_bot_host_is_no_longer_allowed_is_refused(tmp_path):
    server = await _answering_server()
    port = server.sockets[0].getsockname()[1]
    body = {"profiles": ["playbooks/track_pending_order.yaml"], "models": {"bot": f"rasa:http://127.0.0.1:{port}/webhooks/rest/webhook"}}
    async with server:
        async with service(tmp_path, allowed_bot_hosts=[f"127.0.0.1:{port}"]) as client:
            launched = await client.post("/api/batches", json=body)
            assert launched.status_code == 201, launched.text
            batch_id = launched.json()["batch_id"]
            await wait_for(client, batch_id)
        with Store.open(tmp_path / "parley.db") as store:  # as if the service had stopped in the middle
            store.update_batch(batch_id, status="interrupted")
        async with service(tmp_path) as client:  # restarted without --allow-bot-host
            response = await client.post(f"/api/batches/{batch_id}/resume")
    assert response.status_code == 403
    assert f"parley serve --allow-bot-host 127.0.0.1:{port}" in response.json()["detail"]


def test_serve_refuses_an_allowed_host_that_is_not_one():
    from click.testing import CliRunner

    from parley.tui.cli.main import cli

    result = CliRunner().invoke(cli, ["serve", "--allow-bot-host", "http://x/y"])
    assert result.exit_code == 2
    assert "give HOST or HOST:PORT" in result.output
