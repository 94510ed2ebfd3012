"""Shipped profiles with the bot, the user and the judge all on SmolLM2-135M behind llama.cpp,
whose context is 4,096 tokens (the size parley assumes when an endpoint does not say): the
order bot's tool results make the judge's transcript longer than that, and the judge's prompt is
condensed to fit, never refused for length: the call that scores it and the call that decides its
criteria in words (the built-in one, asked of any LLM judge) alike.

`parley run` is run as a person runs it. The conversations are cut at a short `--timeout` (a cut
conversation is still judged on what it said), which keeps the tier's time small; the order
lists the bot reads are what fill the judge's prompt.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.evaluation.criteria import criteria_of
from parley.core.evaluation.criteria_prompt import fit_criteria_prompt
from parley.core.evaluation.judge import fit_judge_prompt
from parley.core.prompts import DEFAULT_CONTEXT_TOKENS, estimate_messages, prompt_budget
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.live.conftest import smollm2_gguf

PROFILES = Path(__file__).resolve().parents[2] / "profiles"
SHIPPED = [PROFILES / "list_my_orders.yaml", PROFILES / "track_shipped_order.yaml"]


@pytest.fixture(scope="module")
def smollm2_tokens():
    """SmolLM2's own token count of a text (its tokenizer alone, read from the GGUF file)."""
    from llama_cpp import Llama

    vocab = Llama(str(smollm2_gguf()), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=True))


def test_shipped_profiles_on_a_4096_token_model_are_judged_condensed_and_never_refused(live_model_name, tmp_path, smollm2_tokens):
    db = tmp_path / "live.db"
    model = live_model_name
    result = CliRunner().invoke(
        cli,
        [
            "run",
            *map(str, SHIPPED),
            *("--bot", model, "--user", model, "--judge", model),
            *("--max-turns", "4", "--concurrency", "2", "--timeout", "900", "--db", str(db)),  # a bound, not a speed goal
        ],
        catch_exceptions=False,
    )
    assert "Traceback" not in result.output

    with Store.open(db) as store:
        [row] = store.list_batches()
        stored = list(store.iter_conversations(row.id))
    judged = [s for s in stored if s.verdict is not None and s.verdict.judge is not None and s.verdict.judge.prompt_fit is not None]
    fits = [s.verdict.judge.prompt_fit for s in judged]
    assert judged, "no conversation reached its judge"
    # The provider never refuses a judge prompt for its length: each one is sent whole, sent
    # condensed, or (a turn the model wrote too long to condense: first and last turns stay whole)
    # not sent at all and said so. Which of these the tiny model's replies lead to varies by run.
    assert set(fits) <= {"whole", "condensed", "too_long"}, fits
    refused = [s.verdict.judge.error for s in judged if "maximum context length" in (s.verdict.judge.error or "")]
    assert not refused, refused
    for s in judged:
        if s.verdict.judge.prompt_fit == "too_long":
            assert "does not fit the judge's 4096-token context" in (s.verdict.judge.error or ""), s.verdict.judge.error
    criteria_reasons = [c.reason or "" for s in judged for c in s.verdict.checks if c.kind == "criterion"]
    assert not any("maximum context length" in r for r in criteria_reasons), criteria_reasons
    # the batch's one line says what the stored verdicts say
    n, condensed, too_long = len(judged), fits.count("condensed"), fits.count("too_long")
    assert (
        f"Judge context (4096 tokens): {n} judge prompt{'s' if n != 1 else ''}, {condensed} condensed to fit, {too_long} could not fit"
        in result.output
    ), result.output

    # No accident: every judge prompt parley sent fits SmolLM2's context by SmolLM2's own count
    # (ChatML: about 5 tokens around each message), and the estimate was conservative.
    budget = prompt_budget(DEFAULT_CONTEXT_TOKENS)
    for s in judged:
        checks = [c for c in s.verdict.checks if c.kind != "judge_score"]  # what the judge was shown
        messages, fitted = fit_judge_prompt(s.conversation, s.spec, checks, budget=budget)
        real = sum(smollm2_tokens(m.content or "") + 5 for m in messages)
        assert fitted.fits and real <= estimate_messages(messages) <= budget, (s.spec.spec_id, real)
        messages, fitted = fit_criteria_prompt(s.conversation, s.spec, criteria_of(s.spec, builtin=True), budget=budget)
        real = sum(smollm2_tokens(m.content or "") + 5 for m in messages)
        assert fitted.fits and real <= estimate_messages(messages) <= budget, (s.spec.spec_id, "criteria", real)
