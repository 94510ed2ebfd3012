"""Evaluating a bot parley cannot see inside: a connector to a deployed chatbot, a prompt bot.

Such a bot runs without parley's World, so world checks are `not_applicable` (no final state).
Its tool calls are invisible too, so the spec's tool expectations (`tools_called`,
`tools_not_called`, a playbook's `expect_tool`) and a playbook's injected context become
`not_applicable` checks here rather than failed or, worse, passed: the conversation passes or
fails on the checks that do apply, and the report lists the ones that did not.
"""

from __future__ import annotations

import httpx

from parley.core.evaluation.checks import WORLD_KINDS
from parley.core.evaluation.judge import Judge
from parley.core.evaluation.verdicts import evaluate
from parley.core.records import CheckResult, Conversation, ConversationSpec, Verdict
from parley.core.specs import InjectBotResponseStep, InjectToolStep, spec_steps

NO_WORLD_TEXT = "this bot runs without parley's order database"


def no_world_client() -> httpx.AsyncClient:
    """The order-tools client of a bot without a World: every call says there is none."""

    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"detail": NO_WORLD_TEXT})

    return httpx.AsyncClient(transport=httpx.MockTransport(refuse), base_url="http://no-world")


def hide_unobservable(
    spec: ConversationSpec, conversation: Conversation, bot_name: str, *, has_tools: bool = True
) -> tuple[ConversationSpec, Conversation, list[CheckResult]]:
    """For a bot whose tool calls parley cannot see (`has_tools` False: a bot with none): the
    spec and conversation to evaluate without the tool expectations, and those expectations as
    `not_applicable` checks."""
    why = (
        f"{bot_name} does not show parley its tool calls, so this cannot be checked."
        if has_tools
        else f"{bot_name} runs as a prompt bot without tools, so this cannot be checked."
    )
    hidden: list[CheckResult] = []
    expect = spec.expect
    if expect is not None and (expect.tools_called or expect.tools_not_called):
        hidden += [
            CheckResult(kind="tool_called", name=f"{t} called", outcome="not_applicable", reason=why, details={"tool": t})
            for t in expect.tools_called
        ]
        hidden += [
            CheckResult(kind="tool_not_called", name=f"{t} not called", outcome="not_applicable", reason=why, details={"tool": t})
            for t in expect.tools_not_called
        ]
        spec = spec.model_copy(update={"expect": expect.model_copy(update={"tools_called": [], "tools_not_called": []})})
    if spec.kind == "playbook":
        injected = [n for n, step in enumerate(spec_steps(spec), 1) if isinstance(step, (InjectBotResponseStep, InjectToolStep))]
        if injected:
            steps = ", ".join(str(n) for n in injected)
            hidden.append(
                CheckResult(
                    kind="playbook_injection",
                    name=f"injected context ({'steps' if len(injected) > 1 else 'step'} {steps})",
                    outcome="not_applicable",
                    reason=f"{bot_name} only receives the customer's lines: the bot messages and tool results the "
                    "playbook injects never reach it, so its answers cannot build on them.",
                    details={"steps": injected},
                )
            )
    assertions = conversation.metadata.get("assertions")
    if isinstance(assertions, list) and any(isinstance(a, dict) and a.get("kind") == "expect_tool" for a in assertions):
        kept = []
        for a in assertions:
            if isinstance(a, dict) and a.get("kind") == "expect_tool":
                hidden.append(
                    CheckResult(
                        kind="playbook_assertion",
                        name=f"step {a.get('step')}: expect_tool {a.get('expected')}",
                        outcome="not_applicable",
                        reason=why,
                        details={"step": a.get("step"), "assertion": "expect_tool", "expected": a.get("expected")},
                    )
                )
            else:
                kept.append(a)
        conversation = conversation.model_copy(update={"metadata": {**conversation.metadata, "assertions": kept}})
    return spec, conversation, hidden


async def evaluate_observed(
    conversation: Conversation,
    spec: ConversationSpec,
    *,
    judge: Judge | None,
    uses_world: bool,
    has_tools: bool,
    bot_name: str,
) -> Verdict:
    """`evaluate` for a bot as parley saw it: one without parley's World (`uses_world` False)
    is judged without what parley cannot observe of it, listed as not applicable (the batch's
    conversations, and a re-score of them, are judged alike)."""
    if uses_world:
        return await evaluate(conversation, spec, judge=judge)
    seen_spec, seen_conversation, hidden = hide_unobservable(spec, conversation, bot_name, has_tools=has_tools)
    verdict = await evaluate(seen_conversation, seen_spec, judge=judge)
    return with_checks(verdict, hidden) if hidden else verdict


def with_checks(verdict: Verdict, extra: list[CheckResult]) -> Verdict:
    """The verdict with not-applicable checks added after its world checks (the outcome is
    unchanged: a not-applicable check neither passes nor fails)."""
    at = 0
    while at < len(verdict.checks) and verdict.checks[at].kind in WORLD_KINDS:
        at += 1
    return verdict.model_copy(update={"checks": [*verdict.checks[:at], *extra, *verdict.checks[at:]]})
