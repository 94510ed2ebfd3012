"""The LLM judge on SmolLM2-135M behind llama.cpp, whose context is 4,096 tokens (the size parley
assumes when an endpoint does not say), judging a conversation longer than that: its prompts
(the call that scores the conversation and the call that decides its criteria in words, the
built-in one included) are condensed to fit and answered, never refused for length.

The conversation is a playbook: the customer asks for their order list three times and tracks
two orders, the offline order bot answers each with its tools, and the order lists fill the
transcript past the judge's context, every run alike. (The whole scenario of the issue, with the
bot and the customer on the model too, is bench/bench_live_judge_context.py: on two CPU cores it
takes the model most of an hour, past what the suite may spend.)

`parley run` is run as a person runs it, through a loopback proxy that keeps every request parley
sent and every answer the server gave, so each judge prompt is counted with SmolLM2's own
tokenizer, not parley's estimate. The proxy also plays a server configured with a reply limit
(`REPLY_LIMIT` tokens): left alone, the tiny model writes until its context is full.
"""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from parley.core.prompts import DEFAULT_CONTEXT_TOKENS, estimate_messages, prompt_budget
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.live.conftest import LIVE_MODEL, SERVICE, smollm2_gguf

from .throttling_proxy import ThrottlingProxy, run_proxy

PLAYBOOK = """\
name: orders_three_times
customer_id: C-100
today: 2026-11-21
steps:
  - user: "Please list my orders."
  - expect_tool: list_my_orders
  - user: "Where is ORD-1003?"
  - user: "Can you list all my orders again, please?"
  - user: "Where is ORD-1006?"
  - user: "One last time: list every order I have."
expect:
  criteria:
    - "The assistant answers each request for the order list with the customer's orders."
"""
CONDENSED_NOTE = "To fit the model's context, the conversation is condensed"
JUDGE_OPENINGS = {"score": "You evaluate a conversation", "criteria": "You check a conversation"}
REPLY_LIMIT = 80


@pytest.fixture(scope="module")
def smollm2_tokens():
    """SmolLM2's own token count of a text (its tokenizer alone, read from the GGUF file)."""
    from llama_cpp import Llama

    vocab = Llama(str(smollm2_gguf()), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=True))


def judge_call(request: dict) -> str | None:
    """Which of the judge's calls a request is ("score", "criteria"), or None."""
    messages = request.get("messages") or []
    first = (messages[0].get("content") or "") if messages else ""
    return next((call for call, opening in JUDGE_OPENINGS.items() if first.startswith(opening)), None)


def test_a_conversation_longer_than_a_4096_token_judge_is_condensed_answered_and_never_refused(
    llama_server, monkeypatch, tmp_path, smollm2_tokens
):
    playbook = tmp_path / "orders_three_times.yaml"
    playbook.write_text(textwrap.dedent(PLAYBOOK), encoding="utf-8")
    proxy = ThrottlingProxy(llama_server, reply_limit=lambda request: REPLY_LIMIT)
    db = tmp_path / "live.db"
    with run_proxy(proxy) as url:
        monkeypatch.setenv(f"{SERVICE.upper()}_BASE_URL", url)
        monkeypatch.delenv(f"{SERVICE.upper()}_API_KEY", raising=False)
        result = CliRunner().invoke(
            cli, ["run", str(playbook), "--judge", LIVE_MODEL, "--timeout", "900", "--db", str(db)], catch_exceptions=False
        )
    assert "Traceback" not in result.output
    with Store.open(db) as store:
        [row] = store.list_batches()
        [stored] = list(store.iter_conversations(row.id))
    judge = stored.verdict.judge
    budget = prompt_budget(DEFAULT_CONTEXT_TOKENS)

    # The premise: whole, the judge's prompt would not fit its context.
    whole = stored.conversation.messages
    assert estimate_messages(whole) > budget, estimate_messages(whole)

    # Both of the judge's prompts were condensed, sent and answered: the server refused nothing.
    assert (judge.prompt_fit, judge.criteria_prompt_fit) == ("condensed", "condensed"), judge
    refused = [x.response for x in proxy.exchanges if x.status != 200]
    assert not refused, refused
    calls = [(judge_call(x.request), x) for x in proxy.exchanges]
    assert {call for call, _ in calls} == {"score", "criteria"}, [call for call, _ in calls]
    for call, x in calls:
        assert any(CONDENSED_NOTE in (m.get("content") or "") for m in x.request["messages"]), call
        # SmolLM2's own count (ChatML: about 5 tokens around each message) is within the budget
        real = sum(smollm2_tokens(m.get("content") or "") + 5 for m in x.request["messages"])
        assert real <= budget, (call, real)
    for reason in [judge.error or "", *(c.reason or "" for c in stored.verdict.checks if c.kind == "criterion")]:
        assert "maximum context length" not in reason and "does not fit" not in reason, reason

    # The batch's one line says what the stored verdict says, both calls counted.
    assert "Judge context (4096 tokens): 2 judge prompts, 2 condensed to fit, 0 could not fit even condensed" in result.output, (
        result.output
    )
