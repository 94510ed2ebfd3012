"""The one check before a batch launches, against real servers on loopback: a refused key stops
the run in one line naming the role, the URL, the key's variable and the status (never the
key), and stores nothing; a model the endpoint does not list is one warning and the batch goes
on; the context length a server reports reaches the prepared batch; a server that trickles or
never ends its answer cannot hold the launch (the CLI's, the service's)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from service_support import service

from parley.core.engine import CredentialsRefused, prepare_batch
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.reachability import Target, run_preflight
from parley.core.records import BatchOptions, RoleModels
from parley.core.store import Store
from parley.tui.cli.main import cli
from tests.fake_openai_server import run_fake_server
from tests.hostile_servers import hostile_server

PROFILES = Path(__file__).resolve().parent.parent / "profiles"
PROFILE = PROFILES / "track_shipped_order.yaml"
WRONG_KEY = "sk-wrong-0123456789abcdef"


def parley(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def stored_batches(db: Path) -> int:
    if not db.exists():
        return 0
    with Store.open(db) as store:
        return store.count_batches()


def test_a_refused_key_stops_the_run_in_one_line_and_stores_nothing(tmp_path):
    db = tmp_path / "p.db"
    with hostile_server(key="sk-right", models=["qwen2.5-0.5b"]) as server:
        env = {"VLLM_BASE_URL": f"{server.base_url}/v1", "VLLM_API_KEY": WRONG_KEY}
        result = parley("run", PROFILE, "--judge", "openai-api/vllm/qwen2.5-0.5b", "--db", db, env=env)
        [(method, path, headers)] = server.requests
    assert result.exit_code == 1  # invalid input, as a missing key is
    [line] = result.stderr.strip().splitlines()
    assert line == (
        f"error: the judge's endpoint {server.base_url}/v1 (openai-api/vllm/qwen2.5-0.5b) refused the API key in "
        "VLLM_API_KEY: HTTP 401; nothing was run"
    )
    assert (method, path, headers["authorization"]) == ("GET", "/v1/models", f"Bearer {WRONG_KEY}")  # the key was asked about
    assert WRONG_KEY not in result.output and WRONG_KEY not in result.stderr
    assert stored_batches(db) == 0  # nothing stored, no conversation became a bot_error


def test_a_key_the_endpoint_needs_and_was_not_given_names_the_variable(tmp_path):
    with hostile_server(key="sk-right") as server:
        env = {"VLLM_BASE_URL": f"{server.base_url}/v1", "VLLM_API_KEY": ""}
        result = parley("run", PROFILE, "--bot", "openai-api/vllm/served-model", "--db", tmp_path / "p.db", env=env)
        [(_, _, headers)] = server.requests
    assert result.exit_code == 1
    assert "authorization" not in headers  # no placeholder key is sent to be refused
    assert result.stderr.strip() == (
        f"error: the bot's endpoint {server.base_url}/v1 (openai-api/vllm/served-model) refused a request without an API key "
        "(VLLM_API_KEY is not set): HTTP 401; nothing was run"
    )


@pytest.mark.parametrize(("path", "status"), [("/refuse", 401), ("/forbid", 403)])
def test_a_deployed_bot_that_refuses_the_check_stops_the_run(tmp_path, path, status):
    db = tmp_path / "p.db"
    with hostile_server() as server:
        result = parley("run", PROFILE, "--bot", f"rasa:{server.base_url}{path}", "--db", db)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: the bot's endpoint {server.base_url}{path} (rasa:{server.base_url}{path}) refused parley's request "
        f"(it needs credentials this connector does not send): HTTP {status}; nothing was run"
    )
    assert stored_batches(db) == 0


def test_a_connector_file_whose_credentials_are_refused_names_their_variable_not_their_value(tmp_path):
    connector = tmp_path / "bot.yaml"
    connector.write_text(
        "base_url: {url}/refuse\nheaders:\n  Authorization: 'Bearer ${{BOT_TOKEN}}'\nsend_message:\n  path: /\n"
        "  payload_template: {{message: '{{user_msg}}'}}\nresponse_path: '0.text'\n".format(url="URL")
    )
    with hostile_server() as server:
        connector.write_text(connector.read_text().replace("URL", server.base_url))
        result = parley("run", PROFILE, "--bot", f"http:{connector}", "--db", tmp_path / "p.db", env={"BOT_TOKEN": "tok-very-secret"})
        [(_, _, headers)] = server.requests
    assert result.exit_code == 1
    assert headers["authorization"] == "Bearer tok-very-secret"  # the check sends what the calls will send
    assert "refused the credentials parley sends it (from BOT_TOKEN): HTTP 401; nothing was run" in result.stderr
    assert "tok-very-secret" not in result.output + result.stderr


def test_a_model_the_endpoint_does_not_list_is_one_warning_and_the_batch_goes_on(tmp_path):
    db = tmp_path / "p.db"
    with run_fake_server() as server:
        server.listed_models = ["fake-model"]
        env = {"FAKE_BASE_URL": server.base_url}
        result = parley("run", PROFILE, "--user", "openai-api/fake/fake-modle", "--max-turns", "2", "--db", db, env=env)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: the user's model 'fake-modle' (openai-api/fake/fake-modle) is not among the models {server.base_url} lists: "
        "fake-model; did you mean 'fake-model'? (the batch goes on; the server may still serve it)"
    ]
    assert "batch " in result.output and " started: 1 conversation" in result.output
    with Store.open(db) as store:
        assert store.count_conversations(store.latest_batch_id()) == 1  # it ran


async def test_the_context_length_a_server_reports_reaches_the_prepared_batch(tmp_path):
    with hostile_server(models=["qwen"], context=8192) as vllm, run_fake_server() as llama_cpp:
        env = {"VLLM_BASE_URL": f"{vllm.base_url}/v1", "LLAMA_BASE_URL": llama_cpp.base_url}
        options = BatchOptions(models=RoleModels(judge="openai-api/vllm/qwen", user="openai-api/llama/fake-model"))
        with Store.open(tmp_path / "p.db") as store:
            models = BatchModels(options.models, store=store, env=env)
            prepared = await prepare_batch(store, [PROFILE], options, models=models)
    report = prepared.preflight
    assert report is not None
    assert report.context_length("judge") == 8192  # vLLM's max_model_len
    assert report.context_length("user") is None  # the server reports none (as llama-cpp-python's)
    assert report.context_length("bot") is None  # offline: no endpoint
    assert report.context_lengths() == {"user": None, "judge": 8192}
    assert prepared.warnings == []


async def test_a_model_list_without_end_is_read_only_so_far_and_the_check_returns():
    with hostile_server() as server:
        target = Target(
            role="judge", name="openai-api/x/m", url=server.base_url, probe_url=f"{server.base_url}/endless", kind="model", model="m"
        )
        started = time.monotonic()
        report = await run_preflight([target], timeout_s=3.0)
        elapsed = time.monotonic() - started
    [facts] = report.endpoints
    assert facts.status == 200 and facts.listed_models is None  # it answered; its list could not be read
    assert elapsed < 3.0 + 2.0  # the deadline, not the body, ended it


def test_a_bot_that_trickles_its_answer_cannot_hold_the_launch(tmp_path):
    db = tmp_path / "p.db"
    with hostile_server(trickle_s=2.0) as server:
        started = time.monotonic()
        result = parley("run", PROFILE, "--bot", f"rasa:{server.base_url}/trickle", "--db", db)
        elapsed = time.monotonic() - started
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: cannot reach the bot's endpoint {server.base_url}/trickle (rasa:{server.base_url}/trickle): "
        "no answer within 3 s; nothing was run"
    )
    assert elapsed < 15  # it used to wait forever
    assert stored_batches(db) == 0


async def test_the_services_launch_is_not_held_by_a_trickling_bot_and_a_refused_key_is_422(tmp_path):
    with hostile_server(trickle_s=2.0, key="sk-right") as server:
        host = server.base_url.removeprefix("http://")
        async with service(tmp_path, allowed_bot_hosts=[host]) as client:
            trickle = await client.post(
                "/api/batches", json={"profiles": ["profiles/playbooks"], "models": {"bot": f"rasa:{server.base_url}/trickle"}}
            )
            refused = await client.post(
                "/api/batches", json={"profiles": ["profiles/playbooks"], "models": {"bot": f"rasa:{server.base_url}/refuse"}}
            )
            listed = (await client.get("/api/batches")).json()
    assert trickle.status_code == 422
    [problem] = trickle.json()["detail"]
    assert problem["loc"] == ["body", "models", "bot"] and "no answer within 3 s" in problem["msg"]
    assert refused.status_code == 422
    [problem] = refused.json()["detail"]
    assert problem["loc"] == ["body", "models", "bot"] and "HTTP 401; nothing was run" in problem["msg"]
    assert listed["total_count"] == 0


async def test_the_same_endpoint_and_key_for_two_roles_is_asked_once():
    with hostile_server(key="sk-right") as server:
        base = f"{server.base_url}/v1"
        targets = [
            Target(
                role=role,
                name="openai-api/v/served-model",
                url=base,
                probe_url=f"{base}/models",
                kind="model",
                model="served-model",
                key_env="V_API_KEY",
                headers={"Authorization": "Bearer sk-right"},
            )
            for role in ("bot", "judge")
        ]
        report = await run_preflight(targets)
        asked = len(server.requests)
    assert asked == 1
    assert [f.role for f in report.endpoints] == ["bot", "judge"]


async def test_refused_credentials_are_an_error_that_names_the_role():
    with hostile_server(key="sk-right") as server:
        base = f"{server.base_url}/v1"
        target = Target(
            role="user",
            name="openai-api/v/m",
            url=base,
            probe_url=f"{base}/models",
            kind="model",
            model="m",
            key_env="V_API_KEY",
            headers={"Authorization": "Bearer nope"},
        )
        with pytest.raises(CredentialsRefused) as info:
            await run_preflight([target])
    assert info.value.role == "user" and info.value.status == 401
