"""The two agents parley provides for tau2's suites, as bots a batch runs like any other
(`--bot tau2:gold`, `--bot tau2:null`; the world registry names them):

- `GoldBot`: authenticates its task's customer, says which changes it will make and asks for a
  yes, then (at its next turn, whatever the answer) performs its task's gold actions in order on
  the conversation's world and tells the customer what the task says it must be told
  (`communicate_info`); a task without a change is answered at once. Its conversation passes every valid task (a task whose gold action fails
  fails so: the refusal is in its tool calls). The task is the one its profile names (the test
  name `parley import tau2` gives: suite.test_name_of);
- `null_bot`: never calls a tool; it passes exactly the tasks whose expected state is the initial
  one and that have nothing to communicate ("passes without acting").
"""

from __future__ import annotations

import json
from typing import Any

from parley.worlds.tau2.suite import task_id_of
from parley.worlds.tau2.tasks import Tau2Task

__all__ = ["NULL_REPLY", "GoldBot", "null_bot"]

NULL_REPLY = "I'm sorry, I cannot help with that."


def _task(tools: Any, variables: dict[str, str]) -> Tau2Task:
    """The tau2 task of the conversation: its world's task its session (spec) id names."""
    world = tools.world
    session = variables.get("session_id", "")
    task_id = task_id_of(world.name, session)
    tasks = world.hooks.get("tau2_tasks")
    if task_id is None or not callable(tasks):
        raise LookupError(
            f"tau2:gold plays the tasks `parley import tau2` writes; conversation {session!r} on world {world.name} is none of them"
        )
    for task in tasks():
        if task.id == task_id:
            return task
    raise LookupError(f"{world.name} has no task {task_id!r} (conversation {session!r})")


class GoldBot:
    """A tau2 task's gold actions as a bot (see the module doc); one instance per conversation."""

    def __init__(self) -> None:
        self.turns = 0

    async def __call__(self, messages: list[dict[str, Any]], tools: Any, customer_id: str, variables: dict[str, str]) -> str:
        self.turns += 1
        task = _task(tools, variables)
        writes = [a for a in task.actions if (declared := tools.world.tool(a.name)) is not None and declared.changes_state]
        if self.turns == 1:
            await _authenticate(tools, customer_id)
            if writes:
                planned = ", ".join(dict.fromkeys(a.name.replace("_", " ") for a in writes))
                return f"Here is what I will do: {planned}. Shall I go ahead{_with_record(task, writes[0].arguments)}?"
        if self.turns == 1 or (self.turns == 2 and writes):
            for action in task.actions:
                await tools.call(action.name, **json.loads(json.dumps(action.arguments)))  # a refusal is in the call's record
            said = " ".join(task.communicate_info)
            return " ".join(part for part in ("It is done." if writes else "", said, "Is there anything else?") if part)
        return "Thank you for contacting us. Goodbye!"


def _with_record(task: Tau2Task, arguments: dict[str, Any]) -> str:
    """ " with #W123" when the customer's reason for calling names the record acted on (a customer
    agrees to a change of the record it asked about), else nothing: no id the customer never named."""
    record = arguments.get("order_id") or arguments.get("reservation_id")
    said = task.user_scenario.instructions.reason_for_call
    return f" with {record}" if isinstance(record, str) and record in said else ""


async def _authenticate(tools: Any, customer_id: str) -> None:
    """Authenticate the task's customer as the world asks (tau2's gold actions often leave it out:
    their lookups are not what the task checks), so the world's rule of acting only for an
    authenticated user holds."""
    if not customer_id:
        return
    authenticate = list(getattr(tools.world.identity, "authenticate", ()))
    if "get_user_details" in authenticate:  # the airline: a user is authenticated by their id
        await tools.call("get_user_details", user_id=customer_id)
    elif "find_user_id_by_email" in authenticate:
        details = await tools.call("get_user_details", user_id=customer_id)
        email = json.loads(details.result).get("email") if details.ok else None
        if email:
            await tools.call("find_user_id_by_email", email=email)


async def null_bot(messages: list[dict[str, Any]]) -> str:
    """A bot that never acts (see the module doc)."""
    return NULL_REPLY
