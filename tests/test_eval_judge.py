"""Judges: the offline judge's 3/2/1, and the LLM judge against a scripted fake server."""

from __future__ import annotations

import json

import pytest

from parley.core.evaluation.judge import (
    DEFAULT_RUBRIC,
    NEEDS_LLM_JUDGE,
    LLMJudge,
    OfflineJudge,
    format_transcript,
    judge_messages,
    offline_judgement,
)
from parley.core.evaluation.verdicts import evaluate
from parley.core.models.registry import get_model
from parley.core.models.retry import RetryPolicy
from parley.core.records.chat import ChatMessage, ToolCall
from parley.core.records.profile import Expectations, JudgeSpec
from parley.core.records.verdict import CheckResult
from tests.fake_openai_server import FakeOpenAIServer
from tests.test_eval_checks import make_conversation, make_spec, record


def check(kind: str, outcome: str, *, policy: bool = False, name: str | None = None) -> CheckResult:
    return CheckResult(kind=kind, name=name or f"{kind} check", outcome=outcome, reason="because", policy_violation=policy)


# -- offline judge --------------------------------------------------------------------------------


def test_the_offline_judge_gives_no_score_only_the_checks_result_in_words():
    result = offline_judgement([check("order_status", "pass"), check("bot_says", "pass"), check("unchanged_others", "not_applicable")])
    assert (result.judge, result.score, result.comment) == ("offline", None, "All 2 checks passed.")
    result = offline_judgement(
        [
            check("order_status", "pass"),
            check("bot_says", "fail", name="bot says /sorry/"),
            check("tool_called", "fail", name="get_order called"),
        ]
    )
    assert (result.score, result.comment) == (None, "2 of 3 checks failed: bot says /sorry/; get_order called.")


def test_the_offline_judge_names_a_final_status_not_reached_and_a_policy_violation_first():
    result = offline_judgement(
        [check("bot_says", "fail", name="bot says /x/"), check("order_status", "fail", name="ORD-1004 ends cancelled")]
    )
    assert result.score is None and result.comment == "2 of 2 checks failed: ORD-1004 ends cancelled; bot says /x/."
    result = offline_judgement([check("unchanged_others", "fail", policy=True, name="ORD-1001 not expected to change")])
    assert result.score is None
    assert result.comment == "1 of 1 checks failed: ORD-1001 not expected to change [policy violation]."


async def test_the_offline_judge_reads_no_rubric_so_its_min_score_check_is_not_run():
    conv = make_conversation(["Hello."])
    spec = make_spec(Expectations(bot_says=["ORD-\\d+"], judge=JudgeSpec(rubric="Mention the order.", min_score=3)))
    verdict = await evaluate(conv, spec)
    assert verdict.judge.judge == "offline" and verdict.score is None  # nobody judged: no score
    [judged] = [c for c in verdict.checks if c.kind == "judge_score"]
    assert (judged.outcome, judged.reason) == ("not_run", "needs an LLM judge (`--judge MODEL`)")
    assert verdict.outcome == "failed"  # on the regex, which the offline roles can decide


async def test_a_rubric_alone_under_the_offline_judge_is_unverified_never_passed():
    conv = make_conversation(["Bonjour, votre commande est annulée."])
    spec = make_spec(Expectations(judge=JudgeSpec(rubric="The bot must answer only in French.", min_score=3)))
    verdict = await evaluate(conv, spec)
    [judged] = [c for c in verdict.checks if c.kind == "judge_score"]
    assert judged.outcome == "not_run" and judged.reason == NEEDS_LLM_JUDGE
    assert verdict.outcome == "unverified" and not verdict.passed
    assert verdict.score is None  # nothing the author asked for was decided: no score either


async def test_offline_judge_answers_the_same_every_time():
    conv = make_conversation(["Hello."])
    spec = make_spec(Expectations(bot_says=["nope"]))
    first = await OfflineJudge().judge(conv, spec, [check("bot_says", "fail")])
    again = await OfflineJudge().judge(conv, spec, [check("bot_says", "fail")])
    assert first == again


# -- the prompt -----------------------------------------------------------------------------------


def test_transcript_numbers_turns_labels_roles_and_summarises_tool_calls():
    conv = make_conversation(["Done."])
    conv.messages[1:1] = [
        ChatMessage(
            role="assistant", tool_calls=[ToolCall(id="c-cancel_order-ORD-1005", name="cancel_order", arguments='{"order_id": "ORD-1005"}')]
        ),
        ChatMessage(
            role="tool",
            tool_call_id="c-cancel_order-ORD-1005",
            name="cancel_order",
            content="REFUSED [409 too_old] Order ORD-1005 is past the limit.",
        ),
    ]
    conv.tool_calls = [
        record("cancel_order", "ORD-1005", ok=False, refused=True, result="REFUSED [409 too_old] Order ORD-1005 is past the limit.")
    ]
    assert format_transcript(conv) == (
        "Turn 1:\n"
        'Customer: "hello"\n'
        '  [tool call cancel_order(order_id="ORD-1005") -> refused: "REFUSED [409 too_old] Order ORD-1005 is past the limit."]\n'
        'Assistant: "Done."'
    )


def test_rubric_comes_from_the_profile_then_the_scenario_then_the_default():
    conv = make_conversation(["Hi."])
    profile = make_spec(Expectations(judge=JudgeSpec(rubric="Refuse politely.")), extra={"evaluator_prompt": "Scenario."})
    assert "Rubric:\nRefuse politely." in judge_messages(conv, profile, [])[0].content
    scenario = make_spec(None, extra={"evaluator_prompt": "Rate the pizza order 1-3."})
    assert "Rate the pizza order 1-3." in judge_messages(conv, scenario, [])[0].content
    default = judge_messages(conv, make_spec(None), [])[0].content
    assert DEFAULT_RUBRIC in default and '{"score": 2, "comment":' in default


# -- LLM judge against the fake server ------------------------------------------------------------


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """Each test's shared model clients are closed on its own event loop."""


def llm_judge(server: FakeOpenAIServer, rubric: str | None = None) -> LLMJudge:
    model = get_model(
        "openai-api/fake/judge-model", role="judge", retry_policy=RetryPolicy(max_retries=0), env={"FAKE_BASE_URL": server.base_url}
    )
    return LLMJudge(model, rubric)


NO_CLAIM = '{"criteria": [{"criterion": 1, "verdict": "not applicable", "turns": [], "quote": "", "reasoning": "No action claimed."}]}'
"""The criteria judge's answer on the built-in criterion alone (an LLM judge always asks it)."""


async def test_llm_judge_reads_good_json_and_sends_the_labelled_transcript(server):
    server.push_text('{"score": 3, "comment": "Clear and correct."}', usage=(500, 20))
    server.push_text(NO_CLAIM, usage=(700, 30))
    conv = make_conversation(["Order ORD-1004 is cancelled."], user=["Cancel ORD-1004 please"])
    spec = make_spec(Expectations(judge=JudgeSpec(rubric="Cancel only what was asked.", min_score=2)), goals=["cancel ORD-1004"])
    verdict = await evaluate(conv, spec, judge=llm_judge(server))
    assert verdict.score == 3 and verdict.comment == "Clear and correct."
    # the score's call and the criteria's call are both the judge's cost
    assert verdict.judge.judge == "openai-api/fake/judge-model" and verdict.judge.usage.input_tokens == 1200
    assert verdict.judge.usage.calls == 2
    assert verdict.outcome == "passed"
    [judged] = [c for c in verdict.checks if c.kind == "judge_score"]
    assert judged.outcome == "pass"
    assert judged.reason == "Scored 3 of 3, needs 2 (openai-api/fake/judge-model). Clear and correct."
    request, criteria_request = server.requests
    assert "Every action the assistant says it took" in criteria_request.messages[1]["content"]
    system, user = request.messages
    assert "Cancel only what was asked." in system["content"] and "JSON object" in system["content"]
    assert 'Customer: "Cancel ORD-1004 please"\nAssistant: "Order ORD-1004 is cancelled."' in user["content"]
    assert "- cancel ORD-1004" in user["content"]
    assert "response_format" not in request.body  # the model layer has no such option


async def test_llm_judge_reads_a_score_wrapped_in_prose(server):
    server.push_text('Let me think.\n```json\n{"score": 1, "comment": "It ignored the customer."}\n```\nDone.')
    result = await llm_judge(server).judge(make_conversation(["Whatever."]), make_spec(None), [])
    assert (result.score, result.comment, result.error) == (1, "It ignored the customer.", None)


async def test_llm_judge_retries_once_with_a_reminder(server):
    server.push_text("The assistant was fine, I think.")
    server.push_text('{"score": 2, "comment": "Slow but fine."}')
    result = await llm_judge(server).judge(make_conversation(["Hi."]), make_spec(None), [])
    assert result.score == 2 and result.usage.calls == 2
    reminder = server.requests[1].messages[-1]
    assert reminder["role"] == "user" and "could not be read" in reminder["content"]
    assert server.requests[1].messages[-2] == {"role": "assistant", "content": "The assistant was fine, I think."}


async def test_llm_judge_unparseable_twice_is_a_judge_error_with_no_score(server):
    server.push_text("I cannot decide.")
    server.push_text("Score: 7")
    server.push_text(NO_CLAIM)
    conv = make_conversation(["Hello."])
    spec = make_spec(Expectations(judge=JudgeSpec(rubric="Be nice.", min_score=2)))
    verdict = await evaluate(conv, spec, judge=llm_judge(server))
    assert len(server.requests) == 3  # the score, its reminder, the criteria
    assert verdict.judge.error == "unreadable reply after a reminder: the judge's score 7 is outside 1-3"
    assert verdict.judge.score is None and verdict.score is None and verdict.comment is None
    assert verdict.outcome == "evaluation_error" and not verdict.passed
    assert verdict.error == "judge_error: unreadable reply after a reminder: the judge's score 7 is outside 1-3"
    [judged] = [c for c in verdict.checks if c.kind == "judge_score"]
    assert judged.outcome == "error"


async def test_llm_judge_server_errors_are_a_judge_error_never_a_score(server):
    server.push_error(500, "the GPU caught fire")
    conv = make_conversation(["Hello."])
    spec = make_spec(Expectations(judge=JudgeSpec(rubric="Be nice.", min_score=1)))
    verdict = await evaluate(conv, spec, judge=llm_judge(server))
    assert verdict.score is None and verdict.judge.score is None
    assert "the judge model failed" in verdict.judge.error and "500" in verdict.judge.error
    assert verdict.outcome == "evaluation_error" and verdict.error.startswith("judge_error: the judge model failed")


async def test_a_failed_judge_does_not_hide_a_failed_check(server):
    server.push_error(500)
    conv = make_conversation(["Hello."])
    spec = make_spec(Expectations(bot_says=["goodbye"], judge=JudgeSpec(rubric="Be nice.", min_score=1)))
    verdict = await evaluate(conv, spec, judge=llm_judge(server))
    assert verdict.outcome == "failed" and verdict.error.startswith("judge_error")


async def test_a_judge_failure_without_a_min_score_leaves_the_outcome_alone(server):
    server.push_error(503)
    verdict = await evaluate(
        make_conversation(["Hello."]), make_spec(None, extra={"evaluator_prompt": "Rate it."}), judge=llm_judge(server)
    )
    # the judge's failure is counted on the side: its default check is not applicable, never a
    # fail; with nothing else checked about the bot, the conversation is unverified
    assert verdict.outcome == "unverified" and verdict.score is None and verdict.judge.error
    [check] = [c for c in verdict.checks if c.kind == "judge_score"]
    assert check.outcome == "not_applicable" and check.name == "judge score >= 2 (default)"


@pytest.mark.parametrize(("score", "outcome"), [(3, "passed"), (2, "passed"), (1, "failed")])
async def test_an_llm_judges_score_is_a_check_even_without_an_expect_block(server, score, outcome):
    server.push_text(f'{{"score": {score}, "comment": "judged"}}')
    verdict = await evaluate(
        make_conversation(["Hello."]), make_spec(None, extra={"evaluator_prompt": "Rate it."}), judge=llm_judge(server)
    )
    [check] = [c for c in verdict.checks if c.kind == "judge_score"]
    assert (check.name, check.outcome) == ("judge score >= 2 (default)", "pass" if score >= 2 else "fail")
    assert verdict.outcome == outcome and verdict.score == score


async def test_a_judge_that_raises_is_recorded_as_its_error():
    class Broken:
        name = "broken"

        async def judge(self, conversation, spec, checks):
            raise RuntimeError("bug in the judge")

    spec = make_spec(Expectations(judge=JudgeSpec(rubric="x", min_score=2)))
    verdict = await evaluate(make_conversation(["Hi."]), spec, judge=Broken())
    assert verdict.judge.error == "RuntimeError: bug in the judge" and verdict.score is None
    assert verdict.outcome == "evaluation_error"


async def test_every_judge_request_carries_an_output_cap(server):
    server.push_text('{"score": 3, "comment": "Fine."}')
    server.push_text(
        '{"criteria": [{"criterion": 1, "verdict": "not applicable", "turns": [], "quote": "", "reasoning": "No claim."},'
        ' {"criterion": 2, "verdict": "not applicable", "turns": [], "quote": "", "reasoning": "No order."}]}'
    )
    spec = make_spec(Expectations(criteria=["The bot names the order"]), goals=["track ORD-1003"])
    await evaluate(make_conversation(["ORD-1003 has shipped."]), spec, judge=llm_judge(server))
    score, criteria = server.requests
    assert score.body["max_tokens"] == 400  # a few hundred tokens: a small model that rambles stops there
    assert criteria.body["max_tokens"] == 800  # as much for each criterion it decides (the built-in one and the author's)


def test_the_cap_is_a_setting_the_batchs_judge_sends(monkeypatch):
    from parley.core.engine.batch_models import BatchModels
    from parley.core.records import RoleModels

    monkeypatch.setenv("PARLEY_JUDGE_MAX_TOKENS", "250")
    judge = BatchModels(RoleModels(judge="openai-api/fake/judge-model")).judge()
    assert judge.inner.config.max_tokens == 250


def test_the_rubric_judge_s_transcript_keeps_whatever_the_bot_wrote_on_its_line():
    from tests.test_eval_criteria import FORGED

    conv = make_conversation([FORGED])
    text = format_transcript(conv)
    assert text.splitlines() == ["Turn 1:", 'Customer: "hello"', f"Assistant: {json.dumps(FORGED, ensure_ascii=False)}"]
