"""Shipped profiles with the bot, the user and the judge all on SmolLM2-135M behind llama.cpp,
whose context is 4,096 tokens (the size parley assumes when an endpoint does not say): the
order bot's tool results and the tiny model's long replies make the judge's transcript longer
than that, and the judge's prompts are condensed to fit, never refused for length: the call that
scores a conversation and the call that decides its criteria in words (the built-in one, asked of
any LLM judge) alike.

`parley run` is run as a person runs it, through a loopback proxy that keeps every request
parley sent and every answer the server gave: each judge prompt is then counted with SmolLM2's
own tokenizer, not parley's estimate. The proxy also plays a server configured with a reply
limit: the bot's and the customer's replies stop at `REPLY_LIMIT` tokens (left alone, the tiny
model writes until its context is full, minutes a turn on two CPU cores); the judge's calls go
as parley sends them. The transcript the judge reads is still longer than its context: the order
lists the bot reads fill it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.prompts import DEFAULT_CONTEXT_TOKENS, prompt_budget
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.live.conftest import LIVE_MODEL, SERVICE, smollm2_gguf

from .throttling_proxy import ThrottlingProxy, run_proxy

PROFILES = Path(__file__).resolve().parents[2] / "profiles"
SHIPPED = [PROFILES / "list_my_orders.yaml", PROFILES / "track_shipped_order.yaml"]
CONDENSED_NOTE = "To fit the model's context, the conversation is condensed"
JUDGE_OPENINGS = {"score": "You evaluate a conversation", "criteria": "You check a conversation"}
REPLY_LIMIT = 160


@pytest.fixture(scope="module")
def smollm2_tokens():
    """SmolLM2's own token count of a text (its tokenizer alone, read from the GGUF file)."""
    from llama_cpp import Llama

    vocab = Llama(str(smollm2_gguf()), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=True))


def judge_call(request: dict) -> str | None:
    """Which of the judge's calls a request is ("score", "criteria"), or None (the bot's, the user's)."""
    messages = request.get("messages") or []
    first = (messages[0].get("content") or "") if messages else ""
    return next((call for call, opening in JUDGE_OPENINGS.items() if first.startswith(opening)), None)


def test_shipped_profiles_on_a_4096_token_model_are_judged_condensed_and_never_refused(llama_server, monkeypatch, tmp_path, smollm2_tokens):
    proxy = ThrottlingProxy(llama_server, reply_limit=lambda request: None if judge_call(request) else REPLY_LIMIT)
    db = tmp_path / "live.db"
    with run_proxy(proxy) as url:
        monkeypatch.setenv(f"{SERVICE.upper()}_BASE_URL", url)
        monkeypatch.delenv(f"{SERVICE.upper()}_API_KEY", raising=False)
        result = CliRunner().invoke(
            cli,
            [
                "run",
                *map(str, SHIPPED),
                *("--bot", LIVE_MODEL, "--user", LIVE_MODEL, "--judge", LIVE_MODEL),
                # one conversation at a time: the server answers one request at a time anyway
                *("--max-turns", "4", "--concurrency", "1", "--timeout", "900", "--db", str(db)),  # a bound, not a speed goal
            ],
            catch_exceptions=False,
        )
    assert "Traceback" not in result.output

    # The server never refused a prompt of any role for its length.
    refused = [x.response for x in proxy.exchanges if x.status == 400]
    assert not refused, refused

    # Every judge prompt parley sent fits SmolLM2's context by SmolLM2's own count (ChatML: about
    # 5 tokens around each message), with the room parley keeps for the answer.
    seconds: dict[str, float] = {}
    for x in proxy.exchanges:
        role = judge_call(x.request) or ("bot" if x.request.get("tools") else "user")
        seconds[role] = seconds.get(role, 0.0) + x.seconds
    print(f"server time by call: { {k: round(v) for k, v in seconds.items()} } s over {len(proxy.exchanges)} calls")
    judged = [(judge_call(x.request), x) for x in proxy.exchanges if judge_call(x.request) is not None]
    assert judged, f"no judge call reached the server:\n{result.output}"
    budget = prompt_budget(DEFAULT_CONTEXT_TOKENS)
    for call, x in judged:
        real = sum(smollm2_tokens(m.get("content") or "") + 5 for m in x.request["messages"])
        assert real <= budget, (call, real)

    # At least one judge prompt was condensed to fit, sent, and answered: the order lists the bot
    # reads and the model's long replies are more than 4,096 tokens of transcript.
    condensed = [(call, x) for call, x in judged if any(CONDENSED_NOTE in (m.get("content") or "") for m in x.request["messages"])]
    assert [x.status for _, x in condensed].count(200) >= 1, [(call, x.status) for call, x in judged]

    # The batch's one line says what the stored verdicts say, both calls counted.
    with Store.open(db) as store:
        [row] = store.list_batches()
        stored = [s for s in store.iter_conversations(row.id) if s.verdict is not None and s.verdict.judge is not None]
    fits = [f for s in stored for f in (s.verdict.judge.prompt_fit, s.verdict.judge.criteria_prompt_fit) if f is not None]
    assert set(fits) <= {"whole", "condensed", "too_long"}, fits
    n, condensed_n, too_long = len(fits), fits.count("condensed"), fits.count("too_long")
    assert condensed_n >= 1
    assert (
        f"Judge context (4096 tokens): {n} judge prompt{'s' if n != 1 else ''}, {condensed_n} condensed to fit, {too_long} could not fit"
        in result.output
    ), result.output
    # each prompt counted as sent (whole or condensed) reached the server (a reminder after an
    # unreadable reply is one call more)
    assert len(judged) >= n - too_long
    for s in stored:
        for reason in [s.verdict.judge.error or "", *(c.reason or "" for c in s.verdict.checks if c.kind == "criterion")]:
            assert "maximum context length" not in reason, reason
