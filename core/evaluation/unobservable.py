"""Evaluating a bot parley cannot see inside: a connector to a deployed chatbot, a prompt bot.

Such a bot runs on no world parley sees, so world checks are `not_applicable` (no final state).
Its tool calls are invisible too, so the spec's tool expectations (`tools_called`,
`tools_attempted`, `tools_not_called`, a playbook's `expect_tool`) and a playbook's injected
context become `not_applicable` checks here rather than failed or, worse, passed: the conversation
passes or fails on the checks that do apply, and the report lists the ones that did not. Such a
bot only hears the customer's lines, so a playbook's assertions after the context it injects (an
eligibility check, the bot's own confirmation question) build on what the bot never received:
they are not applicable too, and `unseen_context_warnings` says so before the batch starts, once
per file.
"""

from __future__ import annotations

from parley.core.evaluation.checks import WORLD_KINDS
from parley.core.evaluation.judge import Judge
from parley.core.evaluation.verdicts import evaluate
from parley.core.records import CheckLimits, CheckResult, Conversation, ConversationSpec, Verdict
from parley.core.specs import ExpectBotRegexStep, ExpectToolStep, InjectBotResponseStep, InjectToolStep, spec_steps

__all__ = ["evaluate_observed", "hide_unobservable", "unseen_context_warnings", "with_checks"]


def injected_steps(spec: ConversationSpec) -> list[int]:
    """The 1-based numbers of a playbook's steps that inject a bot message or a tool result."""
    if spec.kind != "playbook":
        return []
    return [n for n, step in enumerate(spec_steps(spec), 1) if isinstance(step, (InjectBotResponseStep, InjectToolStep))]


def _steps(numbers: list[int]) -> str:
    return ("steps " if len(numbers) > 1 else "step ") + ", ".join(str(n) for n in numbers)


def unseen_context_warnings(specs: list[ConversationSpec], bot_name: str) -> list[str]:
    """For a bot that only hears the customer's lines: one warning per playbook file that injects
    context, naming the steps whose assertions will not apply to it."""
    lines = []
    seen: set[str] = set()
    for spec in specs:
        injected = injected_steps(spec)
        if not injected or spec.source in seen:
            continue
        seen.add(spec.source)
        after = [
            n for n, step in enumerate(spec_steps(spec), 1) if n > injected[0] and isinstance(step, (ExpectBotRegexStep, ExpectToolStep))
        ]
        lines.append(
            f"{spec.source}: the playbook injects context ({_steps(injected)}) that {bot_name} never receives: "
            + (
                f"its assertions built on it ({_steps(after)}) are not applicable to this bot"
                if after
                else "nothing it asserts builds on it"
            )
        )
    return lines


def hide_unobservable(
    spec: ConversationSpec,
    conversation: Conversation,
    bot_name: str,
    *,
    has_tools: bool = True,
    sees_tools: bool = False,
) -> tuple[ConversationSpec, Conversation, list[CheckResult]]:
    """For a bot parley does not run (it only receives the customer's lines): the spec and
    conversation to evaluate without what cannot be decided of it, and those checks as
    `not_applicable`: its tool expectations unless parley saw its tool calls (`sees_tools`: it called
    its served world; `has_tools` False: a bot with none), and what builds on context a playbook
    injected, which never reached it (the assertions after the first injected step, and the
    playbook's expected records)."""
    why = (
        f"{bot_name} does not show parley its tool calls, so this cannot be checked."
        if has_tools
        else f"{bot_name} runs as a prompt bot without tools, so this cannot be checked."
    )
    hidden: list[CheckResult] = []
    expect = spec.expect
    if not sees_tools and expect is not None and (expect.tools_called or expect.tools_attempted or expect.tools_not_called):
        hidden += [
            CheckResult(kind="tool_called", name=f"{t} called", outcome="not_applicable", reason=why, details={"tool": t})
            for t in expect.tools_called
        ]
        hidden += [
            CheckResult(kind="tool_called", name=f"{t} attempted", outcome="not_applicable", reason=why, details={"tool": t})
            for t in expect.tools_attempted
        ]
        hidden += [
            CheckResult(kind="tool_not_called", name=f"{t} not called", outcome="not_applicable", reason=why, details={"tool": t})
            for t in expect.tools_not_called
        ]
        spec = spec.model_copy(
            update={"expect": expect.model_copy(update={"tools_called": [], "tools_attempted": [], "tools_not_called": []})}
        )
    injected = injected_steps(spec)
    if injected and spec.expect is not None and spec.expect.records:
        built = f"{bot_name} never received the context the playbook injected ({_steps(injected)}), on which this end state builds."
        hidden += [
            CheckResult(kind="record_state", name=f"{ref} as expected", outcome="not_applicable", reason=built, details={"record": ref})
            for ref in spec.expect.records
        ]
        spec = spec.model_copy(update={"expect": spec.expect.model_copy(update={"records": {}})})
    if injected:
        hidden.append(
            CheckResult(
                kind="playbook_injection",
                name=f"injected context ({_steps(injected)})",
                outcome="not_applicable",
                reason=f"{bot_name} only receives the customer's lines: the bot messages and tool results the "
                "playbook injects never reach it, so its answers cannot build on them.",
                details={"steps": injected},
            )
        )
    unseen = (
        f"{bot_name} never received the context the playbook injected ({_steps(injected)}), which this assertion builds on."
        if injected
        else ""
    )
    assertions = conversation.metadata.get("assertions")
    if isinstance(assertions, list):
        kept = []
        for a in assertions:
            step = a.get("step") if isinstance(a, dict) else None
            on_context = injected and isinstance(step, int) and step > injected[0]
            if isinstance(a, dict) and ((a.get("kind") == "expect_tool" and not sees_tools) or on_context):
                hidden.append(
                    CheckResult(
                        kind="playbook_assertion",
                        name=f"step {step}: {a.get('kind')} {a.get('expected')}",
                        outcome="not_applicable",
                        reason=unseen if on_context else why,
                        details={"step": step, "assertion": a.get("kind"), "expected": a.get("expected")},
                    )
                )
            else:
                kept.append(a)
        if len(kept) != len(assertions):
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
    receives_context: bool | None = None,
    limits: CheckLimits | None = None,
) -> Verdict:
    """`evaluate` for a bot as parley saw it: one without parley's World (`uses_world` False)
    is judged without what parley cannot observe of it, listed as not applicable (the batch's
    conversations, and a re-score of them, are judged alike). `receives_context`: whether the bot
    received the whole transcript, a playbook's injected context included (parley's own bots and
    Python bots do; a deployed bot, even one acting on its served world, does not); default: it did
    when it acts on parley's world. `limits`: the run's default limits."""
    receives_context = uses_world if receives_context is None else receives_context
    if uses_world and receives_context:
        return await evaluate(conversation, spec, judge=judge, limits=limits)
    seen_spec, seen_conversation, hidden = hide_unobservable(spec, conversation, bot_name, has_tools=has_tools, sees_tools=uses_world)
    verdict = await evaluate(seen_conversation, seen_spec, judge=judge, limits=limits)
    return with_checks(verdict, hidden) if hidden else verdict


def with_checks(verdict: Verdict, extra: list[CheckResult]) -> Verdict:
    """The verdict with not-applicable checks added after its world checks (the outcome is
    unchanged: a not-applicable check neither passes nor fails)."""
    at = 0
    while at < len(verdict.checks) and verdict.checks[at].kind in WORLD_KINDS:
        at += 1
    return verdict.model_copy(update={"checks": [*verdict.checks[:at], *extra, *verdict.checks[at:]]})
