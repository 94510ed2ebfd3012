"""The judge's model as the rule helpers ask it (ChatModelAsker), against a scripted
OpenAI-compatible server: one request per distinct question, its tokens summed for the batch's
cost, no question once the run is stopped, never asked from its own loop."""

from __future__ import annotations

import asyncio

import pytest

from parley.core.errors import ProviderError
from parley.core.models import get_model
from parley.core.rules import ChatModelAsker, model_loop

FAKE = "openai-api/fake/m"


def test_a_question_is_asked_once_and_its_tokens_are_counted(server, monkeypatch):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    server.push_text("YES", usage=(12, 1))
    with model_loop() as loop:
        asker = ChatModelAsker(get_model(FAKE, role="judge"), loop)
        assert asker.ask("Is it polite?") == "YES"
        assert asker.ask("Is it polite?") == "YES", "the oracle's answer serves its yields too"
        assert len(server.requests) == 1
        assert (asker.usage.calls, asker.usage.input_tokens, asker.usage.output_tokens) == (1, 12, 1)

        asker.close()
        with pytest.raises(ProviderError, match="stopped before the model was asked"):
            asker.ask("Another question?")
        assert len(server.requests) == 1, "nothing is sent once the run is stopped"


async def test_the_model_is_never_asked_from_its_own_loop(server, monkeypatch, close_model_clients):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    asker = ChatModelAsker(get_model(FAKE, role="judge"), asyncio.get_running_loop())
    with pytest.raises(RuntimeError, match="worker thread"):
        asker.ask("Is it polite?")
    assert await asyncio.to_thread(asker.ask, "Is it polite?") == "ok", "from a worker thread it is asked on that loop"
