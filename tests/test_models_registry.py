"""`get_model`: the name a user chose becomes a working model, or one clear error, at the right time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parley.core.errors import ConfigError
from parley.core.models.api import ChatModel
from parley.core.models.openai_provider import OpenAICompatibleModel, aclose_clients
from parley.core.models.registry import get_model
from tests.fake_openai_server import run_fake_server

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
async def close_clients():
    yield
    await aclose_clients()


def test_offline_is_not_a_model_endpoint_and_says_so_for_the_role():
    with pytest.raises(ConfigError, match="'offline' names parley's built-in user, not a model endpoint"):
        get_model("offline", role="user")
    with pytest.raises(ConfigError, match="built-in judge"):
        get_model(" offline ", role="judge")


def test_endpoint_names_give_an_openai_compatible_model_for_the_role():
    model = get_model("openrouter/openai/gpt-4o-mini", role="user", timeout_s=12)
    assert isinstance(model, OpenAICompatibleModel) and isinstance(model, ChatModel)
    assert (model.name, model.role, model.timeout_s) == ("openrouter/openai/gpt-4o-mini", "user", 12)


def test_bad_name_fails_at_once():
    with pytest.raises(ConfigError, match="valid forms"):
        get_model("claude-3.5-sonnet")


async def test_unset_key_fails_at_first_call_not_at_construction(monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    model = get_model("openrouter/openai/gpt-4o-mini", role="user")  # choosing it is fine
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY is not set.*user role"):
        await model.generate([])


async def test_real_environment_is_read_at_first_call(monkeypatch):
    with run_fake_server() as server:
        server.push_text("from the env", usage=(3, 3))
        model = get_model("openai-api/lm-studio/qwen2.5-7b")
        monkeypatch.setenv("LM_STUDIO_BASE_URL", server.base_url)  # set after choosing the model
        monkeypatch.setenv("LM_STUDIO_API_KEY", "lm-key")
        reply = await model.generate([])
        await aclose_clients()
    assert reply.text == "from the env"
    assert server.requests[0].headers["authorization"] == "Bearer lm-key"


def test_importing_the_model_layer_is_cheap_and_reads_no_key():
    # no SDK import and no environment needed to start the app (the TUI imports this at start-up)
    code = (
        "import sys, parley.core.models.registry, parley.core.models.openai_provider, parley.core.models.pricing;"
        "m = parley.core.models.registry.get_model('openai/gpt-4o-mini');"
        "print('openai' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
