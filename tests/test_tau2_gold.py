"""Every tau2 task's gold actions replayed on a fresh world copy: each action answered and the final
state reached as with tau2's own environment (tests/tau2_recorded.py), which tasks are valid, which
the null agent passes, and a final state compared with the expected one record by record, whatever
the order, naming what differs."""

from __future__ import annotations

import json

import pytest

from parley.core.world import WorldTools, compare_states
from parley.worlds.tau2.gold import check_tasks, compare_to_expected, replay_gold
from parley.worlds.tau2.source import Tau2SourceError
from parley.worlds.tau2.tasks import Tau2Action, Tau2Task
from parley.worlds.tau2.tau2_db import tau2_hash
from tests.tau2_recorded import GOLD, GOLD_ERRORS
from tests.tau2_support import call, sha16, tau2_outcome, world_and_template


@pytest.fixture(scope="module")
def retail():
    return world_and_template("retail")


@pytest.fixture(scope="module")
def airline():
    return world_and_template("airline")


def _with_actions(task: Tau2Task, actions: list[dict]) -> Tau2Task:
    """The task with other gold actions (a planted mistake)."""
    criteria = task.evaluation_criteria
    assert criteria is not None
    planted = [Tau2Action(action_id=f"planted_{i}", name=a["name"], arguments=a["arguments"]) for i, a in enumerate(actions)]
    return task.model_copy(update={"evaluation_criteria": criteria.model_copy(update={"actions": planted})})


def _actions(task: Tau2Task) -> list[dict]:
    return [{"name": a.name, "arguments": json.loads(json.dumps(a.arguments))} for a in task.actions]


@pytest.mark.parametrize("domain", ["retail", "airline"])
async def test_every_tasks_gold_replay_answers_and_ends_as_with_tau2s_environment(domain, request):
    world, template = request.getfixturevalue(domain)
    tasks = world.hooks["tau2_tasks"]()
    assert len(tasks) == len(GOLD[domain])
    errors = {}
    for task in tasks:
        with await replay_gold(world, template, task) as replay:
            outcomes = []
            for number, outcome in enumerate(replay.outcomes):
                outcomes.append(tau2_outcome(outcome))
                if not outcome.ok:
                    errors.setdefault(task.id, []).append((number, outcomes[-1]))
            assert (sha16("\n".join(outcomes)), sha16(tau2_hash(replay.copy))) == GOLD[domain][task.id], f"task {task.id}"
    assert errors == GOLD_ERRORS[domain]


async def test_the_check_counts_valid_tasks_and_the_null_agents_passes(retail, airline):
    retail_report = await check_tasks(*retail, retail[0].hooks["tau2_tasks"]())
    airline_report = await check_tasks(*airline, airline[0].hooks["tau2_tasks"]())
    assert (len(retail_report.checks), len(retail_report.valid), len(retail_report.invalid)) == (114, 96, 18)
    assert [c.task_id for c in retail_report.failed_writes] == ["12", "13", "64", "105"]
    assert [c.task_id for c in retail_report.invalid] == sorted(GOLD_ERRORS["retail"], key=int)
    assert (len(airline_report.checks), len(airline_report.valid), len(airline_report.invalid)) == (50, 50, 0)
    assert [c.task_id for c in retail_report.null_agent_passes] == ["10", "12", "25", "50", "57", "65", "105"]
    assert len(retail_report.null_agent_state_passes) == 11
    assert len(airline_report.null_agent_state_passes) == 20 and len(airline_report.null_agent_passes) == 19
    # No task's gold actions act for more than one user; every task that writes acts for exactly one.
    checks = retail_report.checks + airline_report.checks
    assert all(len(check.customers) <= 1 for check in checks) and all(len(check.customers) == 1 for check in checks if check.writes)
    lines = retail_report.describe()
    assert lines[0] == (
        "tau2-retail: 114 tasks, 96 valid, 18 invalid (4 at a write); the null agent passes the state check of 11 and the whole task of 7"
    )
    task_64 = next(line for line in lines if line.startswith("  task 64 "))
    assert "invalid at a write: exchange_delivered_order_items(" in task_64 and "Non-delivered order cannot be exchanged" in task_64


async def test_a_different_item_is_named_in_the_record_that_differs(retail):
    world, template = retail
    task = next(t for t in world.hooks["tau2_tasks"]() if t.id == "0")
    actions = _actions(task)
    exchange = actions[-1]["arguments"]
    with template.new_copy() as copy:
        order = copy.db.get("orders", exchange["order_id"])
        item = next(i for i in order["items"] if i["item_id"] == exchange["item_ids"][0])
        variants = copy.db.get("products", item["product_id"])["variants"]
    other = next(k for k, v in variants.items() if v["available"] and k not in (item["item_id"], exchange["new_item_ids"][0]))
    exchange["new_item_ids"][0] = other
    with await replay_gold(world, template, task) as expected, await replay_gold(world, template, _with_actions(task, actions)) as planted:
        assert planted.valid
        comparison = compare_to_expected(expected, planted.copy)
        assert tau2_hash(planted.copy) != tau2_hash(expected.copy)
    assert [d.ref for d in comparison.differences] == [f"orders/{exchange['order_id']}"]
    fields = {f.path: f for f in comparison.differences[0].fields}
    assert fields["exchange_new_items[]"].expected == [task.actions[-1].arguments["new_item_ids"][0]]
    assert fields["exchange_new_items[]"].actual == [other]
    assert comparison.differences[0].owner == order["user_id"]


async def test_a_second_cancellation_is_named_and_a_refused_one_changes_nothing(retail, airline):
    world, template = airline
    task = next(t for t in world.hooks["tau2_tasks"]() if any(a.name == "cancel_reservation" for a in t.actions))
    actions = _actions(task)
    cancel = next(a for a in actions if a["name"] == "cancel_reservation")
    with (
        await replay_gold(world, template, task) as expected,
        await replay_gold(world, template, _with_actions(task, [*actions, cancel])) as planted,
    ):
        comparison = compare_to_expected(expected, planted.copy)
    difference = comparison.record("reservations", cancel["arguments"]["reservation_id"])
    assert difference is not None and len(comparison.differences) == 1
    assert [f.path for f in difference.fields] == ["payment_history[]"] and difference.fields[0].actual
    assert difference.describe().startswith(f"reservations/{cancel['arguments']['reservation_id']}: payment_history[]: unexpected [")

    world, template = retail
    task = next(t for t in world.hooks["tau2_tasks"]() if any(a.name == "cancel_pending_order" for a in t.actions))
    actions = _actions(task)
    again = next(a for a in actions if a["name"] == "cancel_pending_order")
    with (
        await replay_gold(world, template, task) as expected,
        await replay_gold(world, template, _with_actions(task, [*actions, again])) as planted,
    ):
        assert planted.outcomes[-1].refused and planted.outcomes[-1].result.endswith("Non-pending order cannot be cancelled")
        assert compare_to_expected(expected, planted.copy).equal


async def test_an_action_for_another_user_is_named_and_breaks_the_rule_left_to_the_bot(retail):
    world, template = retail
    task = next(t for t in world.hooks["tau2_tasks"]() if t.id == "0")
    with await replay_gold(world, template, task) as expected:
        customer = expected.customers[0]
        other = next(o for o in expected.copy.db.find("orders", status="pending") if o["user_id"] != customer)
        with template.new_copy() as actual:
            tools = WorldTools(world, actual, customer_id=customer)
            for action in task.actions:
                assert (await call(tools, action.name, **action.arguments)).ok
            record = await call(tools, "cancel_pending_order", order_id=other["order_id"], reason="no longer needed")
            comparison = compare_states(expected.copy, actual)
    assert record.ok
    assert [v.rule for v in record.violations] == ["authenticate_before_acting"]
    assert other["user_id"] in record.violations[0].message
    difference = comparison.record("orders", other["order_id"])
    assert difference is not None and difference.owner == other["user_id"]
    assert {f.path for f in difference.fields} >= {"status", "cancel_reason", "payment_history[]"}


async def test_the_comparison_ignores_order_where_tau2s_hash_does_not(retail):
    world, template = retail
    with template.new_copy() as expected, template.new_copy() as actual:
        user = next(
            u
            for u in actual.db.select("users")
            if len(u["orders"]) > 1 and any(m["source"] == "gift_card" for m in u["payment_methods"].values())
        )
        actual.db.update("users", user["user_id"], orders=list(reversed(user["orders"])))
        assert compare_states(expected, actual).equal
        assert tau2_hash(actual) != tau2_hash(expected)
        gift_card = next(k for k, m in user["payment_methods"].items() if m["source"] == "gift_card")
        methods = user["payment_methods"]
        balance = methods[gift_card]["balance"]
        methods[gift_card]["balance"] = balance + 10
        actual.db.update("users", user["user_id"], payment_methods=methods)
        lines = compare_states(expected, actual).describe()
    assert lines == [f"users/{user['user_id']}: payment_methods.{gift_card}.balance: expected {balance}, found {balance + 10}"]


async def test_a_task_parley_cannot_replay_as_tau2_would_is_said_not_skipped(retail):
    world, template = retail
    task = next(t for t in world.hooks["tau2_tasks"]() if t.id == "0")
    with_state = task.model_copy(update={"initial_state": {"initialization_actions": []}})
    with pytest.raises(Tau2SourceError, match=r"^task '0': initial_state: "):
        await replay_gold(world, template, with_state)
    criteria = task.evaluation_criteria
    assert criteria is not None
    by_user = criteria.model_copy(update={"actions": [task.actions[0].model_copy(update={"requestor": "user"})]})
    with pytest.raises(Tau2SourceError, match=r"^task '0': action 0_0: requestor 'user': "):
        await replay_gold(world, template, task.model_copy(update={"evaluation_criteria": by_user}))
