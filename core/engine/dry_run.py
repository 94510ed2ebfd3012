"""What a batch would cost before it runs (`parley run ... --dry-run`): the planned conversations,
the model calls and tokens expected per role, and their price.

Two figures per role:
- *at most*, from the limits: each conversation's turn limit (`--max-turns`, lowered by a
  profile's goal style: `steps`, `random_steps`' maximum, `all_answered`'s limit; a playbook's
  customer lines; a replay's stored lines), the order bot's tool rounds per turn, two judge
  calls per conversation (its score, and every criterion in words in one call) and one per
  playbook checkpoint (a `judge` step); tokens from
  those calls with messages of MESSAGE_TOKENS tokens and each role's system prompt (a prompt
  bot's file measured, the others' typical size);
- *expected*, when conversations of the same specs (spec ids) already ran with the same model
  in that role: the measured mean calls and tokens per conversation of each spec (specs never
  run take the mean of those that did).
Cost comes from the price table (parley.core.models.pricing); a model it does not know makes
the cost `None` ("unknown"), never 0. Offline roles, replayed customers and playbook scripts
call no model; a connector's HTTP calls are the deployed bot's and cost parley nothing.
Nothing is run, no model is called, nothing is stored.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from parley.core.bots import DEFAULT_MAX_TOOL_ROUNDS, parse_bot_spec
from parley.core.engine.batch_plan import PlannedRun, PreparedBatch
from parley.core.evaluation import criteria_of
from parley.core.models import OFFLINE, price_for
from parley.core.records import ConversationSpec, ModelPrice
from parley.core.specs import judge_steps
from parley.core.store import JUDGE_ROLE, Store, measured_usage
from parley.core.users import PROFILE_MODEL, REPLAY_USER

MESSAGE_TOKENS = 80
"""Tokens of one message in the *at most* estimate (a customer line or a bot answer)."""
REPLY_TOKENS = {"bot": 150, "user": 60, "judge": 120}
"""Tokens a role writes per call, at most (the estimate's)."""
SYSTEM_TOKENS = {"bot": 700, "user": 450, "judge": 600}
"""A role's instructions per call: the built-in order bot's prompt and tools, the LLM user's
persona and goals, the judge's rubric (typical sizes; a prompt bot's file is measured)."""

RoleKind = Literal["offline", "llm", "connector", "replay", "script"]


class RoleEstimate(BaseModel):
    role: str
    model: str
    kind: RoleKind
    calls_at_most: int
    input_tokens_at_most: int
    output_tokens_at_most: int
    cost_at_most_usd: float | None
    expected_calls: float | None = None
    expected_input_tokens: float | None = None
    expected_output_tokens: float | None = None
    expected_cost_usd: float | None = None
    measured_conversations: int = 0
    """Earlier conversations the expected figures are measured on (0: none)."""
    measured_specs: int = 0
    priced: bool = True


class DryRun(BaseModel):
    """The plan and its estimate (see the module doc)."""

    conversations: int
    specs: int
    trials: int
    by_kind: dict[str, int]
    by_source: dict[str, int]
    per_spec: dict[str, int]
    """Each planned spec id with how many of its trials will run, in plan order."""
    roles: list[RoleEstimate]
    warnings: list[str]

    @property
    def cost_at_most_usd(self) -> float | None:
        costs = [r.cost_at_most_usd for r in self.roles]
        return None if any(c is None for c in costs) else math.fsum(c or 0.0 for c in costs)

    @property
    def expected_cost_usd(self) -> float | None:
        """None when a role's cost is unknown or not measured."""
        costs = [r.expected_cost_usd if r.kind == "llm" else 0.0 for r in self.roles]
        return None if any(c is None for c in costs) else math.fsum(c or 0.0 for c in costs)


def turns_at_most(run: PlannedRun, max_turns: int) -> int:
    """The most bot answers one planned conversation can take."""
    spec = run.spec
    if run.replay is not None:
        return len(run.replay.user_lines) + int(run.replay.bot_starts)
    if spec.kind == "playbook":
        steps = spec.extra.get("steps") or []
        return min(max_turns, sum(1 for s in steps if isinstance(s, dict) and s.get("kind") == "user") or max_turns)
    style = spec.goal_style
    limit = max_turns
    if style.kind == "steps" and style.steps:
        limit = style.steps
    elif style.kind == "random_steps":
        limit = style.steps or style.max_steps or max_turns
    elif style.kind in ("all_answered", "default"):
        limit = style.limit
    return max(1, min(max_turns, limit))


def _growing_input(calls_per_turn: int, turns: int, system: int) -> int:
    """Input tokens of `calls_per_turn` calls at each of `turns` turns, each call sending the
    instructions and the transcript so far (two messages a turn)."""
    return sum(calls_per_turn * (system + 2 * turn * MESSAGE_TOKENS) for turn in range(1, turns + 1))


def _price(model: str, input_tokens: float, output_tokens: float, prices: Mapping[str, ModelPrice]) -> float | None:
    price = price_for(model, prices)
    return None if price is None else price.cost(int(round(input_tokens)), int(round(output_tokens)))


def _measured(store: Store, role: str, model: str) -> dict[str, tuple[int, int, int, int]]:
    """spec_id -> (conversations, calls, input tokens, output tokens) of earlier conversations
    that ran `model` in `role` (runs that broke left out)."""
    return {spec: (m.conversations, m.calls, m.input_tokens, m.output_tokens) for spec, m in measured_usage(store, role, model).items()}


def _estimate(
    store: Store | None,
    role: str,
    model: str,
    kind: RoleKind,
    runs: Sequence[PlannedRun],
    per_run: Sequence[tuple[int, int, int]],
    prices: Mapping[str, ModelPrice],
) -> RoleEstimate:
    """`per_run`: (calls, input tokens, output tokens) at most for each run; `prices`: the batch's `--price`s."""
    calls = sum(c for c, _, _ in per_run)
    inp = sum(i for _, i, _ in per_run)
    out = sum(o for _, _, o in per_run)
    if kind != "llm":
        return RoleEstimate(
            role=role, model=model, kind=kind, calls_at_most=calls, input_tokens_at_most=0, output_tokens_at_most=0, cost_at_most_usd=0.0
        )
    estimate = RoleEstimate(
        role=role,
        model=model,
        kind=kind,
        calls_at_most=calls,
        input_tokens_at_most=inp,
        output_tokens_at_most=out,
        cost_at_most_usd=_price(model, inp, out, prices),
        priced=price_for(model, prices) is not None,
    )
    history = _measured(store, role, model) if store is not None else {}
    wanted = {run.spec.spec_id for run in runs}
    measured = {spec: figures for spec, figures in history.items() if spec in wanted}
    if not measured:
        return estimate
    n = sum(f[0] for f in measured.values())
    fallback = tuple(sum(f[i] for f in measured.values()) / n for i in (1, 2, 3))
    means = {spec: (f[1] / f[0], f[2] / f[0], f[3] / f[0]) for spec, f in measured.items()}
    totals = [0.0, 0.0, 0.0]
    for run in runs:
        for i, value in enumerate(means.get(run.spec.spec_id, fallback)):
            totals[i] += value
    estimate.expected_calls, estimate.expected_input_tokens, estimate.expected_output_tokens = totals
    estimate.expected_cost_usd = _price(model, totals[1], totals[2], prices)
    estimate.measured_conversations = n
    estimate.measured_specs = len(measured)
    return estimate


def _user_model(spec: ConversationSpec, name: str) -> str:
    return spec.llm.qualified_model if name == PROFILE_MODEL else name


CRITERION_TOKENS = 60
"""Tokens of one criterion in the criteria judge's prompt, and of its decision in the reply."""


def _judging(run: PlannedRun, turns: int) -> tuple[int, int, int]:
    """An LLM judge's calls, input and output tokens for one conversation, at most: the score's
    call, the criteria's (every criterion, the built-in one included, in one call) and one per
    playbook checkpoint (its criteria, on the transcript so far: counted whole)."""
    transcript = SYSTEM_TOKENS["judge"] + 2 * turns * MESSAGE_TOKENS
    checkpoints = [len(step.criteria) for _, step in judge_steps(run.spec)]
    criteria = len(criteria_of(run.spec, builtin=True)) + sum(checkpoints)
    calls = 2 + len(checkpoints)
    return calls, calls * transcript + criteria * CRITERION_TOKENS, REPLY_TOKENS["judge"] + criteria * CRITERION_TOKENS


def estimate_batch(prepared: PreparedBatch, store: Store | None = None) -> DryRun:
    """The estimate of the conversations `prepared` has left to run (see the module doc)."""
    options = prepared.batch.options
    models = options.models
    runs = list(prepared.pending())
    limits = [turns_at_most(run, options.max_turns) for run in runs]

    bot = parse_bot_spec(
        models.bot, bot_prompt=models.bot_prompt, timeout_s=models.bot_timeout_s, max_reply_bytes=models.bot_max_reply_bytes
    )
    bot_model = bot.model_name
    if bot_model is None:
        bot_kind: RoleKind = "connector"
    elif bot_model == OFFLINE:
        bot_kind = "offline"
    else:
        bot_kind = "llm"
    system = SYSTEM_TOKENS["bot"]
    rounds = DEFAULT_MAX_TOOL_ROUNDS + 1
    if models.bot_prompt:
        rounds = 1  # a prompt bot has no tools: one call per answer
        try:
            system = len(Path(models.bot_prompt).read_text(encoding="utf-8")) // 4
        except OSError:
            pass
    bot_runs = [
        (turns * rounds if bot_kind == "llm" else turns, _growing_input(rounds, turns, system), turns * rounds * REPLY_TOKENS["bot"])
        for turns in limits
    ]
    roles = [_estimate(store, "bot", bot_model or models.bot, bot_kind, runs, bot_runs, options.prices)]

    # The user: one model per conversation (a profile's own with --user profile).
    by_user: dict[str, list[int]] = {}
    for i, run in enumerate(runs):
        name = (
            REPLAY_USER if run.replay is not None else ("playbook" if run.spec.kind == "playbook" else _user_model(run.spec, models.user))
        )
        by_user.setdefault(name, []).append(i)
    for name, indexes in sorted(by_user.items()):
        kind: RoleKind = "replay" if name == REPLAY_USER else "script" if name == "playbook" else "offline" if name == OFFLINE else "llm"
        per_run = [
            (limits[i] + 1, _growing_input(1, limits[i] + 1, SYSTEM_TOKENS["user"]), (limits[i] + 1) * REPLY_TOKENS["user"])
            for i in indexes
        ]
        if kind != "llm":
            per_run = [(0, 0, 0) for _ in indexes]
        roles.append(_estimate(store, "user", name, kind, [runs[i] for i in indexes], per_run, options.prices))

    judge_kind: RoleKind = "offline" if models.judge == OFFLINE else "llm"
    judge_runs = [_judging(run, turns) if judge_kind == "llm" else (0, 0, 0) for run, turns in zip(runs, limits, strict=True)]
    roles.append(_estimate(store, JUDGE_ROLE, models.judge, judge_kind, runs, judge_runs, options.prices))

    warnings = list(prepared.warnings)
    unknown = [f"{r.role} {r.model}" for r in roles if r.kind == "llm" and not r.priced]
    if unknown:
        warnings.append(f"no price in the price table for {', '.join(unknown)}: their cost is unknown")
    return DryRun(
        conversations=len(runs),
        specs=len({run.spec.spec_id for run in runs}),
        trials=prepared.trials,
        by_kind=dict(Counter(run.spec.kind for run in runs).most_common()),
        by_source=dict(Counter(run.spec.source for run in runs).most_common()),
        per_spec=dict(Counter(run.spec.spec_id for run in runs)),
        roles=roles,
        warnings=warnings,
    )
