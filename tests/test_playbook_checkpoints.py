"""A judge checkpoint in the middle of a conversation (a playbook's `judge` step, `checkpoint()` in
code): its criteria decided by the criteria judge on the transcript as it stood there, each its
own check with evidence, not run offline, a quote from later caught, re-decided by a re-score."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from parley.core.bots import WorldBot
from parley.core.engine.harness import Limits
from parley.core.engine.playbook_run import run_playbook
from parley.core.errors import ProfileError
from parley.core.evaluation.judge import NEEDS_LLM_JUDGE, LLMJudge
from parley.core.evaluation.verdicts import evaluate
from parley.core.library import checkpoint, conversation, expect_tool, run_sync, say
from parley.core.models.registry import get_model
from parley.core.models.retry import RetryPolicy
from parley.core.specs.playbook import check_playbook_text
from parley.core.store.store import Store
from tests.fake_openai_server import FakeOpenAIServer, TextReply
from tests.lineage_support import parley
from tests.test_eval_checks import new_copy

OFFLINE = WorldBot(None)
WHERE = "The bot says where the parcel is"
ASKS = "The bot asks before it cancels anything"
SCORE = '{"score": 3, "comment": "fine"}'
JUDGE = "openai-api/fake/judge"

PLAYBOOK = """\
name: track_then_cancel
today: 2026-11-21
steps:
  - user: "Where is ORD-1003?"
  - judge:
      criteria:
        - The bot says where the parcel is
  - user: "Please cancel ORD-1004"
  - user: "yes"
expect:
  orders: {ORD-1004: cancelled}
"""


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """Each test's shared model clients are closed on its own event loop."""


def llm_judge(server: FakeOpenAIServer) -> LLMJudge:
    model = get_model(
        "openai-api/fake/judge", role="judge", retry_policy=RetryPolicy(max_retries=0), env={"FAKE_BASE_URL": server.base_url}
    )
    return LLMJudge(model)


def decisions(*entries: dict[str, Any]) -> str:
    return json.dumps({"criteria": list(entries)})


def decision(n: int, verdict: str, turns: list[int], quote: str, reasoning: str = "Because.") -> dict[str, Any]:
    return {"criterion": n, "verdict": verdict, "turns": turns, "quote": quote, "reasoning": reasoning}


def track_then_cancel(*extra: Any) -> Any:
    return conversation(
        "track_then_cancel",
        steps=[say("Where is ORD-1003?"), checkpoint([WHERE]), say("Please cancel ORD-1004"), say("yes"), *extra],
        orders={"ORD-1004": "cancelled"},
    )


async def played(spec: Any, today: Any, limits: Limits = Limits()) -> Any:
    world = new_copy(today)
    try:
        return await run_playbook(spec, world=world, bot=OFFLINE, limits=limits)
    finally:
        world.close()


def checks_named(verdict: Any, prefix: str) -> list[Any]:
    return [c for c in verdict.checks if c.name.startswith(prefix)]


# -- judged on the transcript up to the checkpoint -------------------------------------------------


async def test_a_checkpoint_is_judged_on_the_transcript_up_to_its_step_with_evidence(server, today):
    conv = await played(track_then_cancel(checkpoint([ASKS])), today)
    assert conv.metadata["checkpoints"] == [{"step": 2, "messages": 4}, {"step": 5, "messages": len(conv.messages)}]
    server.push_text(SCORE)
    server.push_text(decisions(decision(1, "met", [1], "has shipped with UPS", "It said where the parcel is.")))
    server.push_text(decisions(decision(1, "met", [2], "Shall I cancel order ORD-1004 now?", "It asked first.")))
    server.push_text(decisions(decision(1, "not applicable", [], "")))  # the end's built-in criterion

    verdict = await evaluate(conv, track_then_cancel(checkpoint([ASKS])), judge=llm_judge(server))

    first = server.requests[1].messages[1]["content"]
    assert 'Customer: "Where is ORD-1003?"' in first and "[tool call track_order(" in first
    assert "ORD-1004" not in first, "the judge at step 2 sees nothing of what came after it"
    assert "as it stood at a checkpoint of the test (step 2 of its script)" in first and "1. " + WHERE in first
    assert "Final state of the orders" not in first  # the end's state may hold what came later
    later = server.requests[2].messages[1]["content"]
    assert 'Customer: "yes"' in later and "(step 5 of its script)" in later

    [where] = checks_named(verdict, "at step 2: ")
    assert (where.name, where.kind, where.outcome) == (f"at step 2: {WHERE}", "criterion", "pass")
    assert where.reason == 'Met: It said where the parcel is. Evidence, turn 1: "has shipped with UPS"'
    assert (where.details["turn"], where.details["step"], where.details["messages"]) == (1, 2, 4)
    assert where.decides_a_pass, "a checkpoint is a check the author asked for"
    [asks] = checks_named(verdict, "at step 5: ")
    assert asks.outcome == "pass" and asks.details["evidence"] == 'turn 2: "Shall I cancel order ORD-1004 now?"'
    assert verdict.outcome == "passed" and verdict.judge.usage.calls == 4  # the score, two checkpoints, the end's criteria
    # how each prompt met the judge's context is kept, the checkpoints' too (the batch counts them)
    assert (verdict.judge.prompt_fit, verdict.judge.checkpoint_prompt_fits, verdict.judge.criteria_prompt_fit) == (
        "whole",
        ["whole", "whole"],
        "whole",
    )


async def test_a_checkpoint_not_met_fails_the_conversation_with_its_quote(server, today):
    conv = await played(track_then_cancel(), today)
    server.push_text(SCORE)
    server.push_text(decisions(decision(1, "not met", [1], "Where is ORD-1003?", "It never said.")))
    server.push_text(decisions(decision(1, "not applicable", [], "")))
    verdict = await evaluate(conv, track_then_cancel(), judge=llm_judge(server))
    [where] = checks_named(verdict, "at step 2: ")
    assert where.outcome == "fail" and where.details["evidence"] == 'turn 1: "Where is ORD-1003?"'
    assert verdict.outcome == "failed"


async def test_a_quote_from_after_the_checkpoint_is_a_judge_error_never_a_pass(server, today):
    conv = await played(track_then_cancel(), today)
    server.push_text(SCORE)
    server.push_text(decisions(decision(1, "met", [], "Order ORD-1004 has been cancelled")))  # real text, from turn 3
    server.push_text(decisions(decision(1, "not applicable", [], "")))
    verdict = await evaluate(conv, track_then_cancel(), judge=llm_judge(server))
    [where] = checks_named(verdict, "at step 2: ")
    assert where.outcome == "error"
    assert where.reason == 'judge_error: the judge quoted text that is not in the transcript: "Order ORD-1004 has been cancelled"'
    assert verdict.outcome == "evaluation_error"


async def test_a_turn_after_the_checkpoint_is_a_judge_error(server, today):
    conv = await played(track_then_cancel(), today)
    server.push_text(SCORE)
    server.push_text(decisions(decision(1, "met", [3], "has been cancelled")))
    server.push_text(decisions(decision(1, "not applicable", [], "")))
    verdict = await evaluate(conv, track_then_cancel(), judge=llm_judge(server))
    [where] = checks_named(verdict, "at step 2: ")
    assert where.outcome == "error" and "the judge named turn 3, and the conversation has turn 1" in where.reason


# -- not run -----------------------------------------------------------------------------------------


async def test_offline_a_checkpoint_is_not_run_with_the_criteria_reason_never_passed(today):
    spec = conversation("just_checkpoints", steps=[say("Where is ORD-1003?"), checkpoint([WHERE, ASKS])])
    verdict = await evaluate(await played(spec, today), spec)
    at_step = checks_named(verdict, "at step 2: ")
    assert [(c.name, c.outcome, c.reason) for c in at_step] == [
        (f"at step 2: {WHERE}", "not_run", NEEDS_LLM_JUDGE),
        (f"at step 2: {ASKS}", "not_run", NEEDS_LLM_JUDGE),
    ]
    assert verdict.outcome == "unverified", "nothing else was checked: a checkpoint not run makes no pass"


async def test_a_checkpoint_the_conversation_never_reached_is_not_run_saying_why(server, today):
    spec = track_then_cancel(checkpoint([ASKS]))
    conv = await played(spec, today, Limits(max_turns=2))
    assert conv.stop_reason == "max_turns"
    server.push_text(SCORE)
    server.push_text(decisions(decision(1, "met", [1], "has shipped with UPS")))
    server.push_text(decisions(decision(1, "not applicable", [], "")))
    verdict = await evaluate(conv, spec, judge=llm_judge(server))
    [asks] = checks_named(verdict, "at step 5: ")
    assert (asks.outcome, asks.reason) == ("not_run", "Not run: the conversation stopped (max_turns) before step 5.")
    assert checks_named(verdict, "at step 2: ")[0].outcome == "pass"


# -- written wrong -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "said"),
    [
        (
            "judge: {criteria: []}",
            "4:13: steps[1].judge.criteria: a judge checkpoint needs at least one criterion, such as 'The bot asked which order it is'",
        ),
        (
            "judge: {criteria: The bot is polite}",
            "4:23: steps[1].judge.criteria: expected a list of criteria in words (one sentence each), got 'The bot is polite'",
        ),
        ("judge: [The bot is polite]", "4:5: steps[1].judge: expected a judge checkpoint: {criteria: [sentences]}, got a list"),
        (
            "judge: {criteria: [Polite, polite]}",
            "4:32: steps[1].judge.criteria[1]: criterion 2 repeats criterion 1: each is its own check, named by its text",
        ),
        ("judge: {}", "4:5: steps[1].judge: missing required key 'criteria'"),
    ],
)
def test_a_checkpoint_written_wrong_is_one_located_error(step, said):
    _, errors = check_playbook_text(f"name: p\nsteps:\n  - user: hi\n  - {step}\n", source="p.yaml")
    assert [e.render() for e in errors] == [f"p.yaml:{said}"]


def test_a_checkpoint_before_the_bot_said_anything_is_refused_in_a_file_and_in_code():
    _, errors = check_playbook_text("name: p\nsteps:\n  - judge: {criteria: [Polite]}\n  - user: hi\n", source="p.yaml")
    assert [e.render() for e in errors] == [
        "p.yaml:3:5: steps[0].judge: judge comes before any `user` or `simulate` step: the bot has not answered anything yet"
    ]
    with pytest.raises(ProfileError, match=r"step 1: judge comes before any `user` or `simulate` step"):
        conversation("early", steps=[checkpoint([WHERE]), say("hi")])


@pytest.mark.parametrize(
    ("criteria", "said"),
    [
        ("The bot is polite", "criteria are a list of sentences, not one string"),
        ([], "a judge checkpoint needs at least one criterion"),
        (["Polite", 3], "expected a criterion in words (one sentence), got 3"),
    ],
)
def test_a_checkpoint_built_in_code_with_bad_criteria_says_what_is_wrong(criteria, said):
    with pytest.raises(ProfileError, match="^checkpoint: ") as raised:
        checkpoint(criteria)
    assert said in str(raised.value)


# -- files, validate, the API, rescore ---------------------------------------------------------------


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "track_then_cancel.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_validate_warns_that_the_offline_judge_will_not_run_a_checkpoint(tmp_path):
    path = write(tmp_path, PLAYBOOK)
    result = parley("profiles", "validate", path)
    assert result.exit_code == 0, result.output
    assert (
        f"{path}:5:5: steps[1].judge: the offline judge reads no criteria, so its criterion is not run: "
        "each needs an LLM judge (`--judge MODEL`) (warning)"
    ) in result.output


def test_a_checkpoint_in_code_runs_through_the_api_as_a_stored_batch(tmp_path):
    result = run_sync(
        conversation("track", steps=[say("Where is ORD-1003?"), expect_tool("track_order"), checkpoint([WHERE])]),
        db=tmp_path / "p.db",
    )
    [only] = result.conversations
    [where] = [c for c in only.checks if c.kind == "criterion"]
    assert (where.name, where.outcome, where.reason) == (f"at step 3: {WHERE}", "not_run", NEEDS_LLM_JUDGE)
    assert only.outcome == "passed"  # on the expect_tool step; the checkpoint decided nothing offline


def test_rescore_decides_a_checkpoint_again_on_the_stored_transcript_cut_at_its_step(tmp_path, server):
    db = tmp_path / "p.db"
    ran = parley("run", write(tmp_path / "suite", PLAYBOOK), "--db", db)
    assert ran.exit_code == 0, ran.output
    with Store.open(db) as store:
        [first] = list(store.iter_conversations(store.resolve_batch_ref("latest")))
    [offline] = checks_named(first.verdict, "at step 2: ")
    assert offline.outcome == "not_run"

    server.default = TextReply(
        json.dumps(
            {
                "score": 3,
                "comment": "Fine.",
                "criteria": [{"criterion": 1, "verdict": "met", "turns": [1], "quote": "has shipped with UPS"}],
            }
        )
    )
    again = parley("rescore", "latest", "--judge", JUDGE, "--db", db, env={"FAKE_BASE_URL": server.base_url})
    assert again.exit_code == 0, again.output
    prompts = [r.messages[1]["content"] for r in server.requests]
    [at_step] = [p for p in prompts if "checkpoint of the test (step 2" in p]
    assert "Where is ORD-1003?" in at_step and "cancel" not in at_step.split("Criteria:")[0].lower()
    with Store.open(db) as store:
        [copy] = list(store.iter_conversations(store.resolve_batch_ref("latest")))
    assert copy.conversation.messages == first.conversation.messages
    [judged] = checks_named(copy.verdict, "at step 2: ")
    assert judged.outcome == "pass" and judged.details["evidence"] == 'turn 1: "has shipped with UPS"'
    # the batch's line counts the checkpoint's prompt beside the score's and the end's criteria's
    assert "Judge context (4096 tokens): 3 judge prompts, 0 condensed to fit, 0 could not fit even condensed" in again.output


def test_a_dry_run_counts_a_judge_call_per_checkpoint(tmp_path):
    path = write(
        tmp_path,
        PLAYBOOK.replace('  - user: "yes"\n', '  - user: "yes"\n  - judge: {criteria: [The bot cancels only what was confirmed]}\n'),
    )
    result = parley("run", path, "--judge", JUDGE, "--dry-run", "--db", tmp_path / "p.db")
    assert result.exit_code == 0, result.output
    judge = next(line for line in result.stdout.splitlines() if line.startswith("judge "))
    assert judge.split()[1:3] == [JUDGE, "4"], "the score, the end's criteria, and each of the two checkpoints"
