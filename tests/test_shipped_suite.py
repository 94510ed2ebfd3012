"""The shipped suite under profiles/: it covers the policy's cases, and the offline bot (the
reference implementation) passes every conversation of it end to end, offline user and judge."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from parley.core.bots.world_bot import WorldBot
from parley.core.engine.harness import run_conversation
from parley.core.engine.playbook_run import run_playbook
from parley.core.engine.spec_worlds import WorldTemplates, customer_of
from parley.core.evaluation.verdicts import evaluate
from parley.core.records.spec import ConversationSpec
from parley.core.specs.sources import load_specs
from parley.core.users.factory import make_user_simulator
from parley.core.world import load_world
from parley.worlds.orders.offline_bot import OfflineOrderModel
from tests.conftest import PINNED_TODAY
from tests.order_world_support import status

PROFILES = Path(__file__).parent.parent / "profiles"
BOT = WorldBot(OfflineOrderModel())
TEMPLATES = WorldTemplates()


def shipped(seed: int) -> list[ConversationSpec]:
    result = load_specs([PROFILES], seed=seed)
    assert result.ok, [e.render() for e in result.errors]
    return result.specs


async def run(spec: ConversationSpec):
    world = TEMPLATES.new_copy(spec, PINNED_TODAY)
    watched = spec.expect.watched if spec.expect is not None else ()
    try:
        if spec.kind == "playbook":
            conversation = await run_playbook(spec, world=world, bot=BOT)
        else:
            conversation = await run_conversation(
                world=world,
                bot=BOT,
                user=make_user_simulator(spec, "offline"),
                customer_id=customer_of(spec, world.world),
                watched=watched,
                bot_starts=spec.is_starter,
            )
    finally:
        world.close()
    return conversation, await evaluate(conversation, spec)


def test_the_suite_covers_the_policy_cases():
    profiles = {s.name: s for s in shipped(0) if s.kind == "profile"}
    assert len({s.source for s in profiles.values()}) >= 12
    for spec in profiles.values():
        assert spec.world.today == dt.date(2026, 11, 21) and customer_of(spec, load_world("orders")) == "C-100", spec.spec_id
        assert spec.expect is not None, spec.spec_id

    def expected(order_id: str) -> set[str]:
        ref = f"orders/{order_id}"
        return {s.expect.records[ref]["status"] for s in profiles.values() if ref in s.expect.records}

    assert expected("ORD-1002") == {"cancelled"}  # 5 days: yes
    assert expected("ORD-1004") == {"cancelled"}  # exactly 10 days: yes
    assert expected("ORD-1005") == {"processing"}  # 11 days: no
    assert expected("ORD-1006") == {"delivered"}  # delivered: no
    assert expected("ORD-1007") == {"cancelled"}  # already cancelled: stays so
    assert expected("ORD-2001") == {"pending"}  # another customer's: untouched
    assert any("track_order" in s.expect.tools_called and "ORD-1003" in " ".join(s.goals) for s in profiles.values())
    assert any("list_my_orders" in s.expect.tools_called for s in profiles.values())
    assert any("ORD-9999" in " ".join(s.goals) for s in profiles.values())
    assert any(st.name == "change your mind" for s in profiles.values() for st in s.interaction_styles)
    assert any(s.language != "English" or any(st.name == "change language" for st in s.interaction_styles) for s in profiles.values())
    assert any("ignore" in " ".join(s.goals).lower() for s in profiles.values())
    impatient = (PROFILES / "personalities" / "impatient-user.yml").read_text(encoding="utf-8")
    assert any(s.context and all(line in impatient for line in s.context) for s in profiles.values())
    assert any(s.variables for s in profiles.values())  # {{variables}} are used somewhere


@pytest.mark.parametrize("seed", [0, 1])
async def test_the_offline_bot_passes_every_shipped_conversation(seed):
    """Every profile and playbook passes. The scenario files carry no checks parley can run
    offline (their evaluator is an LLM prompt), so their conversations are unverified, never
    passed; none is a failure, and the offline user commits no fault the detectors see."""
    failures, unverified = [], []
    for spec in shipped(seed):
        conversation, verdict = await run(spec)
        if verdict.outcome == "unverified":
            unverified.append(spec)
        elif not verdict.passed:
            failed = [f"{c.name}: {c.reason}" for c in verdict.checks if c.outcome not in ("pass", "not_applicable")]
            faults = [f"{f.kind}: {f.reason}" for f in verdict.user_faults]
            failures.append((spec.spec_id, verdict.outcome, conversation.stop_reason, failed or faults or verdict.error))
    assert not failures, failures
    assert unverified and all(s.kind == "scenario" for s in unverified), [s.spec_id for s in unverified]


async def test_a_shipped_conversation_replays_identically():
    spec = next(s for s in shipped(3) if s.name == "change_of_mind")
    first, _ = await run(spec)
    second, _ = await run(spec)
    assert [m.model_dump() for m in first.messages] == [m.model_dump() for m in second.messages]
    assert status(first.final_state, "ORD-1001") == "cancelled"
