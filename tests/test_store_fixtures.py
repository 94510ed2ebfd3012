"""Builders shared by the store, report and export tests (this module holds no tests).

Conversations are real ones, run once with the offline bot against a private World, then
cloned with new ids, times and usage; verdicts are made by hand so these tests do not depend
on the evaluation module.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import functools
import uuid

import pytest

from parley.core.bots.world_bot import WorldBot
from parley.core.engine.harness import run_conversation
from parley.core.records.batch import BatchOptions, BatchRecord, RoleModels
from parley.core.records.chat import Usage
from parley.core.records.conversation import Conversation
from parley.core.records.spec import ConversationSpec, derive_seed, make_spec_id
from parley.core.records.verdict import CheckResult, JudgeResult, Verdict
from parley.core.store.store import Store
from parley.core.users.simulator import ScriptedUser
from parley.worlds.orders.offline_bot import OfflineOrderModel
from tests.order_world_support import order_copy

TODAY = dt.date(2026, 11, 21)
T0 = dt.datetime(2026, 11, 21, 9, 0, tzinfo=dt.UTC)

SCRIPTS = {
    "track": ["hi", "where is my order ORD-1003?"],
    "cancel": ["please cancel ORD-1001", "yes"],
}


async def _run(lines: list[str]) -> Conversation:
    world = order_copy(TODAY)
    try:
        return await run_conversation(world=world, bot=WorldBot(OfflineOrderModel()), user=ScriptedUser(lines), customer_id="C-100")
    finally:
        world.close()


@functools.cache
def real_conversation(script: str) -> Conversation:
    """A real offline conversation (run once per script and cached; clone before changing).
    Run on its own thread so that async tests may ask for one too."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(_run(SCRIPTS[script]))).result()


def conversation(
    script: str = "track",
    *,
    started: dt.datetime | None = None,
    usage: dict[str, Usage] | None = None,
    stop_reason: str | None = None,
    error: str | None = None,
) -> Conversation:
    """A fresh copy of a real conversation with a new id (and optionally new time, usage...)."""
    base = real_conversation(script)
    update: dict = {"id": uuid.uuid4().hex}
    if started is not None:
        update["started_at"] = started
        update["ended_at"] = started + dt.timedelta(seconds=base.duration_s)
    if usage is not None:
        update["usage"] = usage
    if stop_reason is not None:
        update["stop_reason"] = stop_reason
    if error is not None:
        update["error"] = error
    return base.model_copy(update=update, deep=True)


def spec(name: str = "track_order", index: int = 0, **variables: str) -> ConversationSpec:
    return ConversationSpec(
        spec_id=make_spec_id(name, index),
        kind="profile",
        source=f"profiles/{name}.yaml",
        name=name,
        index=index,
        seed=derive_seed(7, name, index),
        variables=dict(variables),
        variable_values=dict(variables),
        goals=[f"ask about {name}"],
    )


def check(
    name: str, outcome: str = "pass", reason: str = "as expected", *, kind: str = "order_status", violation: bool = False
) -> CheckResult:
    return CheckResult(kind=kind, name=name, outcome=outcome, reason=reason, policy_violation=violation)


def verdict(
    conv: Conversation,
    outcome: str = "passed",
    score: int | None = 3,
    *,
    checks: list[CheckResult] | None = None,
    comment: str | None = "fine",
    judge_usage: Usage | None = None,
    error: str | None = None,
) -> Verdict:
    judge = JudgeResult(
        judge="offline",
        score=score,
        comment=comment,
        error=error if outcome == "evaluation_error" else None,
        usage=judge_usage or Usage(),
    )
    return Verdict(
        conversation_id=conv.id,
        outcome=outcome,
        passed=outcome == "passed",
        score=score,
        comment=comment,
        judge=judge,
        checks=checks if checks is not None else [check("ORD-1003 stays shipped")],
        error=error,
    )


def batch(trials: int = 1, planned: int = 0, **kw) -> BatchRecord:
    return BatchRecord(
        sources=["profiles/track_order.yaml", "profiles/cancel.yaml"],
        options=BatchOptions(models=RoleModels(bot="offline", user="offline", judge="offline"), trials=trials, seed=7),
        planned=planned,
        created_at=kw.pop("created_at", T0),
        **kw,
    )


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "parley.db")
    yield s
    s.close()


# A batch whose numbers are worked out by hand in test_report_stats.py: 4 specs x 3 trials.
#   track_order#0   passed(3)  passed(3)  failed(2, max_turns)
#   cancel_recent#1 passed(3)  passed(3)  passed(3)
#   track_order#2   failed(1)  infrastructure error (no verdict)  passed(3)
#   cancel_recent#3 judge error (no score: an evaluation error)  failed(1, policy violation)  not evaluated
PLAN = {
    ("track_order", 0): [("passed", 3, None), ("passed", 3, None), ("failed", 2, "max_turns")],
    ("cancel_recent", 1): [("passed", 3, None), ("passed", 3, None), ("passed", 3, None)],
    ("track_order", 2): [("failed", 1, None), (None, None, "infrastructure_error"), ("passed", 3, None)],
    ("cancel_recent", 3): [("evaluation_error", None, None), ("violation", 1, None), (None, None, None)],
}


def build_scored_batch(store: Store, *, unknown_bot_cost: bool = True) -> BatchRecord:
    """Store the PLAN batch. Each bot call costs $0.001 (price unknown on one conversation when
    `unknown_bot_cost`), each user call $0.0005, each judge call $0.002."""
    b = store.create_batch(batch(trials=3, planned=12, status="completed", started_at=T0, finished_at=T0 + dt.timedelta(minutes=5)))
    minute = 0
    for (name, index), trials in PLAN.items():
        for trial, (outcome, score, stop) in enumerate(trials, start=1):
            minute += 1
            bot_cost = None if unknown_bot_cost and (name, index, trial) == ("track_order", 0, 1) else 0.002
            conv = conversation(
                "cancel" if name == "cancel_recent" else "track",
                started=T0 + dt.timedelta(minutes=minute),
                usage={
                    "bot": Usage(input_tokens=100, output_tokens=20, calls=2, cost_usd=bot_cost),
                    "user": Usage(input_tokens=10, output_tokens=5, calls=1, cost_usd=0.0005),
                },
                stop_reason=stop,
                error="provider 503 after 3 retries" if stop == "infrastructure_error" else None,
            )
            v = None
            judge_usage = Usage(input_tokens=300, output_tokens=10, calls=1, cost_usd=0.002)
            if outcome in ("passed", "failed"):
                checks = [check("ORD-1003 stays shipped")]
                if outcome == "failed":
                    checks.append(check("bot tracks the order", "fail", "track_order was never called", kind="tool_called"))
                v = verdict(conv, outcome, score, checks=checks, judge_usage=judge_usage)
            elif outcome == "violation":
                checks = [
                    check(
                        "ORD-1004 unchanged",
                        "fail",
                        "ORD-1004 was cancelled though placed 14 days ago",
                        kind="unchanged_others",
                        violation=True,
                    )
                ]
                v = verdict(conv, "failed", score, checks=checks, judge_usage=judge_usage)
            elif outcome == "evaluation_error":
                v = verdict(
                    conv,
                    "evaluation_error",
                    None,
                    checks=[],
                    error="judge_error: the judge's reply was not JSON",
                    comment=None,
                    judge_usage=judge_usage,
                )
            store.save_conversation(b.id, spec(name, index), conv, v, trial=trial)
    return b
