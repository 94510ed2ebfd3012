"""Every mutant parley has, once: its name, what it changes, where it acts (the tool boundary or
the bot's turn), on which worlds it cannot act by construction, and what would kill it (the
checks and profile features that decide that behaviour) — what `parley mutate` says of a survivor.

A mutant is independent of any one world: it reads the world's declarations (its tables and their
owners, its state-changing tools, the tools that need confirmation, its identity).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from parley.core.bots import Bot, BotContext, BotTurn
from parley.core.errors import ParleyError
from parley.core.mutation import reply_mutants, tool_mutants
from parley.core.mutation.tool_mutants import Note
from parley.core.records import ChatMessage, ToolCall, ToolCallRecord
from parley.core.world import WorldDefinition, WorldMutant, WorldTools

__all__ = ["MUTANTS", "Mutant", "mutant", "mutant_names", "mutants_for", "resolve_mutants"]

OnCall = Callable[[WorldTools, ToolCall, Note], Awaitable[ToolCallRecord]]
OnTurn = Callable[[Bot, list[ChatMessage], BotContext, Note], Awaitable[BotTurn]]


def _session_bound(world: WorldDefinition) -> str | None:
    if world.session_bound:
        return f"the world {world.name} binds every tool to the signed-in customer: no bot can act for another (not exercisable by construction)"
    return None


def _claim_cannot_act(world: WorldDefinition) -> str | None:
    if not world.session_signed_in:
        return (
            f"on the world {world.name} the customer authenticates in the conversation: trusting a claimed identity there "
            "(authenticating without the credentials) is not a mutant parley has yet"
        )
    return _session_bound(world)


def _no_confirmation(world: WorldDefinition) -> str | None:
    if not any(t.needs_confirmation for t in world.declared_tools):
        return f"no tool of the world {world.name} needs the customer's confirmation"
    return None


def _no_state_change(world: WorldDefinition) -> str | None:
    if not world.state_changing:
        return f"the world {world.name} has no tool that changes it"
    return None


@dataclass(frozen=True)
class Mutant:
    """One way the bot misbehaves (see the module doc)."""

    name: str
    title: str
    changes: str
    """What it changes, in a sentence (the docs' table and `parley mutate --help`)."""
    kills: str
    """What would kill it: the checks and the profile features that decide that behaviour."""
    on_call: OnCall | None = None
    on_turn: OnTurn | None = None
    cannot_act: Callable[[WorldDefinition], str | None] | None = None
    """Why it cannot act on a world at all (None: it can)."""

    def not_exercisable(self, world: WorldDefinition) -> str | None:
        """Why the mutant cannot act on `world` by construction (None: it may)."""
        return self.cannot_act(world) if self.cannot_act is not None else None


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "acts_without_doing",
        "acts without doing",
        "A state-changing call gets the result it would have had, computed on a throwaway copy; the world stays unchanged.",
        "A final-state check of the record the customer wants changed (`expect.orders: {ID: cancelled}`, "
        "`expect.records`) on a profile whose customer asks for a change the policy allows.",
        on_call=tool_mutants.acts_without_doing,
        cannot_act=_no_state_change,
    ),
    Mutant(
        "wrong_record",
        "acts on the wrong record",
        "A state-changing call's record id is replaced by another record of the same customer (one in the same state when there is one).",
        "A final-state check of the record asked for, with `unchanged_others: true` (no other record changed), "
        "on a profile whose customer has several records.",
        on_call=tool_mutants.wrong_record,
        cannot_act=_no_state_change,
    ),
    Mutant(
        "wrong_customer_record",
        "acts on another customer's record",
        "A state-changing call's record id is replaced by a record of another customer.",
        "Ownership (built in where the world's API trusts the bot) and `unchanged_others: true`, on a profile "
        "that asks for a change on a world whose API takes any customer's ids (orders-staff, returns).",
        on_call=tool_mutants.wrong_customer_record,
        cannot_act=_session_bound,
    ),
    Mutant(
        "acts_twice",
        "acts twice",
        "A state-changing call that succeeded is made a second time at once.",
        "`unchanged_others: true` and a final-state check, where a second call changes something (a world whose "
        "action can be repeated); where the world refuses the second call, no check can see it.",
        on_call=tool_mutants.acts_twice,
        cannot_act=_no_state_change,
    ),
    Mutant(
        "acts_without_asking",
        "acts without asking",
        "A reply asking the customer to confirm an action is skipped and the action taken at once.",
        "The built-in confirmation check (a tool the world declares `needs_confirmation`), on a profile "
        "whose customer asks for that action; a profile whose customer hesitates or declines "
        "(`expect.orders: {ID: processing}` after a no) catches it too.",
        on_turn=reply_mutants.acts_without_asking,
        cannot_act=_no_confirmation,
    ),
    Mutant(
        "trusts_the_claim",
        "trusts the claim",
        "Once the customer names another customer (their id, their email...), the bot and its tools act for them.",
        "Ownership and `bot_never_says` of the other customer's records, on a profile whose customer claims to "
        "be someone else (impersonate_other_customer), on a world whose API trusts the bot.",
        on_turn=reply_mutants.trusts_the_claim,
        cannot_act=_claim_cannot_act,
    ),
    Mutant(
        "says_wrong_thing",
        "says the wrong thing",
        "A value the reply states of a record (a status, a date, an amount) is replaced by the same field of another record.",
        "`bot_says` of the value itself (`bot_says: ['shipped', '2026-11-23']`) or an `output:` extraction "
        "checked against the record, on a profile that asks for a record's status, date or amount.",
        on_turn=reply_mutants.says_wrong_thing,
    ),
    Mutant(
        "gives_up",
        "gives up",
        "Every answer to a customer message is the bot's fallback (or a transfer to a human); nothing is done.",
        "Any check that the bot did its job: `tools_called`, a final-state check, `bot_says` of the answer.",
        on_turn=reply_mutants.gives_up,
    ),
    Mutant(
        "leaks",
        "leaks",
        "The first answer ends with another customer's record.",
        "`bot_never_says` of other customers' record ids and values (their ids, their items, their email), on any profile.",
        on_turn=reply_mutants.leaks,
    ),
    Mutant(
        "wrong_language",
        "the wrong language",
        "A reply to a customer writing another language than English is answered in English.",
        "A profile whose customer writes another language (`user.language`), with `bot_says` of words of "
        "that language; exercised only by a bot that answers in the customer's language.",
        on_turn=reply_mutants.wrong_language,
    ),
)


def mutant(name: str) -> Mutant:
    """The mutant named `name`; ParleyError naming them all otherwise."""
    for m in MUTANTS:
        if m.name == name:
            return m
    raise ParleyError(f"no mutant named {name!r}; the mutants are: {', '.join(mutant_names())}")


def mutant_names() -> list[str]:
    """Every mutant's name, in the catalogue's order."""
    return [m.name for m in MUTANTS]


def _declared(world: WorldDefinition, declared: WorldMutant) -> Mutant:
    """A mutant a world declares, at the tool boundary: each state-changing call's arguments as its
    `rewrite` says (parley.core.world.WorldMutant)."""

    async def on_call(tools: WorldTools, call: ToolCall, note: Note) -> ToolCallRecord:
        tool = tools.world.tool(call.name)
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            arguments = None
        if tool is None or not tool.changes_state or not isinstance(arguments, dict):
            return await tools.run_call(call)
        with tools.copy.lock:
            rewritten: dict[str, Any] | None = declared.rewrite(call.name, dict(arguments), tools.copy.db)
        if rewritten is None or rewritten == arguments:
            return await tools.run_call(call)
        record = await tools.run_call(call.model_copy(update={"arguments": json.dumps(rewritten)}))
        note(f"{declared.title}: {call.name} called with {json.dumps(rewritten, sort_keys=True)}", record.ok)
        return record

    return Mutant(
        declared.name, declared.title, declared.changes, f"{declared.kills} (declared by the world {world.name})", on_call=on_call
    )


def mutants_for(worlds: Iterable[WorldDefinition]) -> tuple[Mutant, ...]:
    """parley's mutants, then those the `worlds` declare (each once, by name)."""
    found = {m.name: m for m in MUTANTS}
    for world in worlds:
        for declared in world.mutants:
            found.setdefault(declared.name, _declared(world, declared))
    return tuple(found.values())


def resolve_mutants(names: Sequence[str], worlds: Iterable[WorldDefinition]) -> tuple[Mutant, ...]:
    """The mutants named (every one when `names` is empty): parley's and the `worlds`'; a
    ParleyError naming them all for a name that is none."""
    available = mutants_for(worlds)
    if not names:
        return available
    by_name = {m.name: m for m in available}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ParleyError(f"no mutant named {unknown[0]!r}; the mutants are: {', '.join(by_name)}")
    return tuple(by_name[n] for n in dict.fromkeys(names))
