"""The LLM judge against a fake endpoint that refuses prompts over its context length: a long
conversation is condensed and accepted, its turns keep their numbers, and one that cannot fit is
a judge error saying so, never a score and never "the judge model failed"."""

from __future__ import annotations

import asyncio
import functools
import json
import re

import pytest

from parley.core.evaluation.criteria import criteria_of
from parley.core.evaluation.criteria_prompt import criteria_messages, fit_criteria_prompt
from parley.core.evaluation.judge import LLMJudge, fit_judge_prompt
from parley.core.evaluation.judge_prompt import fit_off_the_loop
from parley.core.evaluation.verdicts import evaluate
from parley.core.models.registry import get_model
from parley.core.models.retry import RetryPolicy
from parley.core.prompts import estimate_messages, prompt_budget
from parley.core.records.chat import ChatMessage, ToolCall
from parley.core.records.profile import Expectations, JudgeSpec
from tests.test_eval_checks import converse, make_conversation, make_spec

# Six turns with the order bot's tools: three full order lists (the same each time), a tracking
# lookup and a refused cancellation. Whole, the judge's prompt is about 11,000 characters: some
# 4,600 tokens to a server that reads 2.4 characters a token (SmolLM2 reads JSON so).
CONTEXT = 3000
SMOLLM2_CHARS_PER_TOKEN = 2.4
LINES = [
    "Show me all my orders please",
    "Show me all my orders again",
    "Where is ORD-1003?",
    "List my orders once more",
    "Can I cancel ORD-1005?",
    "Thanks, bye",
]
GOOD = '{"score": 3, "comment": "Clear and correct."}'


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """Each test's shared model clients are closed on its own event loop."""


@pytest.fixture(scope="module")
def long_conversation():
    return asyncio.run(converse(LINES))


def judge(server, context_tokens: int) -> LLMJudge:
    model = get_model(
        "openai-api/fake/judge-model", role="judge", retry_policy=RetryPolicy(max_retries=0), env={"FAKE_BASE_URL": server.base_url}
    )
    return LLMJudge(model, context_tokens=context_tokens)


def turn_lines(text: str) -> dict[int, str]:
    """Turn number -> the first line after its `Turn N:` header, in a judge prompt."""
    return {int(n): first for n, first in re.findall(r"^Turn (\d+):\n(.*)$", text, flags=re.MULTILINE)}


async def test_a_conversation_over_the_judges_context_is_condensed_and_accepted(server, long_conversation):
    # refuses a prompt over 3,000 tokens, as llama.cpp's server does
    server.context_tokens, server.chars_per_token = CONTEXT, SMOLLM2_CHARS_PER_TOKEN
    spec = make_spec(None, goals=["see my orders"])
    whole, _ = fit_judge_prompt(long_conversation, spec, [])
    assert server.prompt_tokens({"messages": [m.to_openai() for m in whole]}) > CONTEXT  # sent whole, it would be refused

    server.push_text(GOOD)
    result = await judge(server, CONTEXT).judge(long_conversation, spec, [])

    assert (result.score, result.error, result.prompt_fit) == (3, None, "condensed")
    assert server.refused_for_length == 0
    [request] = server.requests
    assert server.prompt_tokens(request.body) <= CONTEXT
    user = request.messages[1]["content"]
    assert "To fit the model's context, the conversation is condensed:" in user
    # the turns shown keep their numbers: turn N still opens with the customer's N-th message
    for number, first_line in turn_lines(user).items():
        assert first_line == f"Customer: {json.dumps(LINES[number - 1])}"
    assert min(turn_lines(user)) == 1 and max(turn_lines(user)) == 6


async def test_the_prompt_token_count_before_and_after_condensing(long_conversation):
    spec = make_spec(None)
    budget = prompt_budget(CONTEXT)
    messages, fitted = fit_judge_prompt(long_conversation, spec, [], budget=budget)
    assert fitted.tokens_before > 6000 and fitted.tokens_after <= budget == 2488
    assert fitted.condensed and fitted.fits
    assert fitted.shortened and fitted.repeats  # the order lists shortened, then pointing back
    text = messages[1].content
    assert "[same result as in turn 1]" in text and "[shortened from" in text


async def test_a_conversation_that_cannot_fit_even_condensed_is_a_judge_error_saying_so(server, long_conversation):
    spec = make_spec(Expectations(judge=JudgeSpec(rubric="Be accurate.", min_score=2)))
    verdict = await evaluate(long_conversation, spec, judge=judge(server, 900))

    assert server.requests == []  # nothing sent in vain
    assert verdict.judge.prompt_fit == "too_long" and verdict.judge.score is None and verdict.score is None
    assert verdict.judge.error.startswith("the conversation does not fit the judge's 900-token context (about ")
    assert "the judge model failed" not in verdict.judge.error
    [check] = [c for c in verdict.checks if c.kind == "judge_score"]
    assert check.outcome == "error" and check.reason.startswith("judge_error: the conversation does not fit the judge's 900-token context")
    assert verdict.outcome == "evaluation_error" and not verdict.passed


async def test_without_a_min_score_a_conversation_too_long_for_the_judge_is_still_an_evaluation_error(server, long_conversation):
    # a judge's other failures leave its default check not applicable; this one is an error:
    # no judge of that size could have decided it
    verdict = await evaluate(long_conversation, make_spec(None), judge=judge(server, 900))
    [check] = [c for c in verdict.checks if c.kind == "judge_score"]
    assert check.name == "judge score >= 2 (default)" and check.outcome == "error"
    assert verdict.outcome == "evaluation_error"
    assert verdict.error == f"judge_error: {verdict.judge.error}"


async def test_a_prompt_the_endpoint_still_refuses_for_length_is_a_judge_error_naming_the_context(server, long_conversation):
    # The endpoint's tokenizer counts denser than parley's estimate (a character a token): the
    # prompt parley thought would fit is refused with a 400 saying the context length was exceeded.
    server.context_tokens, server.chars_per_token = 3000, 1.0
    verdict = await evaluate(long_conversation, make_spec(None), judge=judge(server, 3000))

    # the score's call and the criteria's call (the built-in criterion): each refused once, not retried
    assert server.refused_for_length == 2 and len(server.requests) == 2
    assert verdict.judge.prompt_fit == "too_long"
    too_long = "the conversation does not fit the judge's 3000-token context (the endpoint refused the prompt as too long)"
    assert verdict.judge.error == too_long
    [criterion] = [c for c in verdict.checks if c.kind == "criterion"]
    assert criterion.reason == f"judge_error: {too_long}"
    assert verdict.outcome == "evaluation_error"


async def test_other_provider_failures_stay_the_judge_model_failing(server, long_conversation):
    server.push_error(400, "Invalid value for temperature")
    result = await judge(server, 100_000).judge(long_conversation, make_spec(None), [])
    assert result.error.startswith("the judge model failed:") and result.prompt_fit == "whole"


async def test_the_reminder_after_an_unreadable_reply_is_fitted_too(server, long_conversation):
    server.context_tokens, server.chars_per_token = CONTEXT, SMOLLM2_CHARS_PER_TOKEN
    server.push_text("The assistant did fine. " * 40)  # unreadable, and long
    server.push_text(GOOD)
    result = await judge(server, CONTEXT).judge(long_conversation, make_spec(None), [])
    assert result.score == 3 and result.prompt_fit == "condensed"
    assert server.refused_for_length == 0 and len(server.requests) == 2
    reminder = server.requests[1].messages
    assert reminder[-1]["role"] == "user" and "could not be read" in reminder[-1]["content"]
    assert len(reminder[-2]["content"]) <= 600  # the unreadable reply, shown back in part


async def test_a_conversation_that_fits_is_sent_whole_with_its_turns_numbered(server):
    conversation = await converse(["Where is ORD-1003?", "Thanks, bye"])
    server.push_text(GOOD)
    result = await judge(server, 4096).judge(conversation, make_spec(None), [])
    assert result.prompt_fit == "whole"
    user = server.requests[0].messages[1]["content"]
    assert "condensed" not in user and "shortened" not in user
    assert turn_lines(user) == {1: 'Customer: "Where is ORD-1003?"', 2: 'Customer: "Thanks, bye"'}
    assert '"tracking_number":"1Z999AA10123456784"' in user  # a tool result that fits is shown whole


# -- the criteria judge's call: the same context, the same condensing --------------------------------


def criteria_spec():
    return make_spec(Expectations(criteria=["The bot says which orders can be cancelled"]))


async def test_the_criteria_judges_prompt_is_condensed_to_the_same_context_and_keeps_its_turn_numbers(server, long_conversation):
    server.context_tokens, server.chars_per_token = CONTEXT, SMOLLM2_CHARS_PER_TOKEN
    criteria = criteria_of(criteria_spec(), builtin=True)
    whole = criteria_messages(long_conversation, criteria_spec(), criteria)
    assert server.prompt_tokens({"messages": [m.to_openai() for m in whole]}) > CONTEXT  # sent whole, it would be refused

    server.push_text(GOOD)  # the score
    server.push_text(
        json.dumps(
            {
                "criteria": [
                    {"criterion": n, "verdict": "met", "turns": [5], "quote": "past the 10-day cancellation limit", "reasoning": "ok"}
                    for n in (1, 2)
                ]
            }
        )
    )
    verdict = await evaluate(long_conversation, criteria_spec(), judge=judge(server, CONTEXT))

    assert server.refused_for_length == 0 and len(server.requests) == 2
    assert verdict.judge.prompt_fit == "condensed"
    criteria_request = server.requests[1]
    assert server.prompt_tokens(criteria_request.body) <= CONTEXT
    user = criteria_request.messages[1]["content"]
    assert "To fit the model's context, the conversation is condensed:" in user
    assert "Criteria:\n1. The bot says which orders can be cancelled" in user
    for number, first_line in turn_lines(user).items():
        assert first_line == f"Customer: {json.dumps(LINES[number - 1])}"
    assert {c.outcome for c in verdict.checks if c.kind == "criterion"} == {"pass"}


async def test_criteria_that_cannot_fit_are_judge_errors_saying_so_and_nothing_is_sent(server, long_conversation):
    verdict = await evaluate(long_conversation, criteria_spec(), judge=judge(server, 900))
    assert server.requests == []
    [authored] = [c for c in verdict.checks if c.kind == "criterion" and not c.by_default]
    assert authored.outcome == "error"
    assert authored.reason.startswith("judge_error: the conversation does not fit the judge's 900-token context (about ")
    assert verdict.outcome == "evaluation_error"


def test_condensing_keeps_the_mark_on_messages_the_test_injected():
    # a playbook's injected bot message is still marked so when the tool results around it are shortened
    orders = json.dumps([{"id": f"ORD-{n}", "status": "shipped", "items": ["a long item name"] * 8} for n in range(1000, 1012)])
    messages = [ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="Injected hello")]
    for turn in range(4):
        call = ToolCall(id=f"c{turn}", name="list_my_orders", arguments="{}")
        messages += [
            ChatMessage(role="user", content=f"list {turn}"),
            ChatMessage(role="assistant", content=None, tool_calls=[call]),
            ChatMessage(role="tool", content=orders, tool_call_id=f"c{turn}"),
            ChatMessage(role="assistant", content=f"Here they are ({turn})"),
        ]
    conv = make_conversation([]).model_copy(update={"messages": messages, "metadata": {"injected_messages": [1]}})
    spec = criteria_spec()
    criteria = criteria_of(spec, builtin=False)
    whole = criteria_messages(conv, spec, criteria)
    budget = estimate_messages(whole) // 2
    fitted_messages, fitted = fit_criteria_prompt(conv, spec, criteria, budget=budget)
    assert fitted.condensed and fitted.fits and fitted.tokens_after < fitted.tokens_before
    text = fitted_messages[1].content
    assert 'Assistant (injected by the test): "Injected hello"' in text
    assert 'Assistant: "Here they are (3)' in text


@pytest.mark.parametrize("context", [100_000, CONTEXT], ids=["fits-whole", "condensed"])
async def test_the_prompt_a_judge_sends_is_the_one_fitted_to_its_budget_wherever_it_is_built(long_conversation, context, monkeypatch):
    """The judges build a prompt that fits whole on the event loop and condense one that does
    not in a thread: either way it is exactly the prompt fitted to the budget, and only the
    condensing leaves the loop."""
    spec = make_spec(Expectations(criteria=["The assistant names the order it talks about."]), goals=["see my orders"])
    budget = prompt_budget(context)
    threaded: list[object] = []
    real_to_thread = asyncio.to_thread

    async def to_thread(func, /, *args, **kwargs):
        threaded.append(func)
        return await real_to_thread(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", to_thread)
    for fit in (
        functools.partial(fit_judge_prompt, long_conversation, spec, []),
        functools.partial(fit_criteria_prompt, long_conversation, spec, criteria_of(spec, builtin=True)),
    ):
        threaded.clear()
        got = await fit_off_the_loop(fit, budget)
        assert got == fit(budget=budget)
        assert got[1].fits and got[1].budget == budget
        assert got[1].condensed == (context == CONTEXT)
        assert len(threaded) == (1 if context == CONTEXT else 0)


async def test_a_reminder_the_endpoint_refuses_as_too_long_says_the_first_answer_was_unreadable(server, long_conversation):
    # Each judge's first prompt just fits the endpoint; the reminder after an unreadable answer
    # (that answer shown back, then the reminder) does not. What went wrong first is said.
    spec = criteria_spec()
    criteria = criteria_of(spec, builtin=True)
    server.chars_per_token = SMOLLM2_CHARS_PER_TOKEN
    refused = "does not fit the judge's 100000-token context (the endpoint refused the prompt as too long)"

    def just_fits(messages: list[ChatMessage]) -> int:
        return server.prompt_tokens({"messages": [m.to_openai() for m in messages]}) + 2

    server.context_tokens = just_fits(fit_judge_prompt(long_conversation, spec, [])[0])
    server.push_text("Looks fine to me.")  # no JSON
    result = await judge(server, 100_000).judge(long_conversation, spec, [])
    assert len(server.requests) == 2 and server.refused_for_length == 1
    assert result.prompt_fit == "too_long" and result.score is None
    assert result.error.startswith("after a first answer that could not be read in full (")
    assert result.error.endswith(f"), the conversation with a reminder {refused}")

    server.reset()
    server.chars_per_token = SMOLLM2_CHARS_PER_TOKEN
    server.context_tokens = just_fits(criteria_messages(long_conversation, spec, criteria))
    server.push_text(json.dumps({"criteria": [{"criterion": 1, "verdict": "met", "turns": [5], "quote": "", "reasoning": "ok"}]}))
    judgement = await judge(server, 100_000).criteria_judge.judge_criteria(long_conversation, spec, criteria)
    assert len(server.requests) == 2 and server.refused_for_length == 1
    assert judgement.prompt_fit == "too_long" and set(judgement.answers) == {1}  # what the first answer decided stays
    assert judgement.unanswered == {
        2: f"after a first answer that could not be read in full (no decision on criterion 2), the conversation with a reminder {refused}"
    }
