"""Mutants of the bot's turn: what it says, and whether it asks. Each runs the bot under test as
it is and rewrites its turn in one documented, deterministic way, from the world's declarations
and values and the conversation, for any bot:

- acts without asking: a reply that asks the customer to confirm an action of a tool the world
  declares `needs_confirmation` is skipped: the bot is given the customer's "yes" at once (on a
  copy of the transcript) and its answer to that, tool calls and all, is the turn. The question
  and the yes never appear in the conversation.
- trusts the claim: once a customer message names another customer (a key of the world's
  customers table, or one of its credentials: an email...), the bot and the tools act for that
  customer for the rest of the conversation.
- says the wrong thing: a value of a record the reply names or the turn's calls read (a status,
  a date, an amount: any field but the key and the owner) that the reply states is replaced,
  wherever it appears in the reply, by the same field's value in another record of that table.
- gives up: every answer to a customer message is the bot's declared fallback sentence (else a
  transfer to a human), and the bot is not called.
- leaks: the first answer to a customer message ends with another customer's record (the first
  table with owners that has one), its fields as the world stores them.
- the wrong language: a reply in another language than English to a customer writing another
  language is replaced by an English one naming the ids and figures the reply named.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Sequence
from typing import Any

from parley.core.bots import Bot, BotContext, BotTurn, declared_fallback
from parley.core.mutation.notes import seeded
from parley.core.mutation.tool_mutants import Note
from parley.core.reading import is_confirmation_question
from parley.core.records import ChatMessage
from parley.core.world import WorldDefinition, WorldTools, record_ids

__all__ = [
    "TRANSFER_TEXT",
    "acts_without_asking",
    "english_share",
    "gives_up",
    "leaks",
    "says_wrong_thing",
    "trusts_the_claim",
    "wrong_language",
]

TRANSFER_TEXT = "I'm sorry, I can't help with that here. Let me transfer you to a human agent."
"""What a bot that gives up says when it declares no fallback of its own."""

YES = "yes"


def _world_tools(ctx: BotContext) -> WorldTools | None:
    return ctx.tools if isinstance(ctx.tools, WorldTools) else None


def _set_reply(transcript: list[ChatMessage], turn: BotTurn, text: str) -> BotTurn:
    """The turn with its reply `text`, in the transcript as in the turn."""
    for i in range(len(transcript) - 1, -1, -1):
        message = transcript[i]
        if message.role == "assistant" and not message.tool_calls:
            transcript[i] = message.model_copy(update={"content": text})
            break
    return turn.model_copy(update={"text": text})


def _answers_customer(transcript: Sequence[ChatMessage]) -> bool:
    return any(m.role == "user" for m in transcript)


async def acts_without_asking(inner: Bot, transcript: list[ChatMessage], ctx: BotContext, note: Note) -> BotTurn:
    """See the module doc."""
    tools = _world_tools(ctx)
    turn = await inner.respond(transcript, ctx)
    if tools is None:
        return turn
    needing = {t.name for t in tools.world.declared_tools if t.needs_confirmation}
    last = transcript[-1] if transcript else None
    if not needing or last is None or last.role != "assistant" or last.tool_calls or not is_confirmation_question(turn.text, tools.world):
        return turn
    question = transcript.pop()
    scratch = [*transcript, question, ChatMessage(role="user", content=YES)]
    mark = len(scratch)
    second = await inner.respond(scratch, ctx)
    transcript.extend(scratch[mark:])
    acted = [r.name for r in second.tool_calls if r.ok and r.name in needing]
    note(
        f"skipped asking {question.content!r}; " + (f"{', '.join(acted)} at once" if acted else "the bot did not act on the yes"),
        bool(acted),
    )
    return second.model_copy(
        update={
            "tool_calls": [*turn.tool_calls, *second.tool_calls],
            "usage": turn.usage + second.usage,
            "latency_s": turn.latency_s + second.latency_s,
            "rounds": turn.rounds + second.rounds,
            "hit_round_cap": turn.hit_round_cap or second.hit_round_cap,
        }
    )


def _claimed_customer(world: WorldDefinition, tools: WorldTools, transcript: Sequence[ChatMessage], own: str) -> str | None:
    """Another customer a customer message names by key or by a credential."""
    customers = world.customers_table
    if customers is None:
        return None
    rows = tools.copy.db.select(customers.name)
    credentials = list(getattr(world.identity, "credentials", ()))
    for message in transcript:
        if message.role != "user" or not message.content:
            continue
        text = message.content.lower()
        for row in rows:
            key = str(row[customers.key])
            if key == own:
                continue
            values = [key, *(str(row[c]) for c in credentials if isinstance(row.get(c), str) and len(str(row[c])) >= 4)]
            if any(re.search(rf"(?<![\w@.-]){re.escape(v.lower())}(?![\w@-])", text) for v in values):
                return key
    return None


async def trusts_the_claim(inner: Bot, transcript: list[ChatMessage], ctx: BotContext, note: Note) -> BotTurn:
    """See the module doc."""
    tools = _world_tools(ctx)
    claimed = _claimed_customer(tools.world, tools, transcript, ctx.customer_id) if tools is not None else None
    if tools is None or claimed is None:
        return await inner.respond(transcript, ctx)
    told = dataclasses.replace(ctx, customer_id=claimed)
    signed_in = tools.customer_id
    tools.customer_id = claimed
    try:
        turn = await inner.respond(transcript, told)
    finally:
        tools.customer_id = signed_in
        ctx.usage = told.usage
    note(f"acted for {claimed}, whom the customer claimed to be, instead of {signed_in}", True)
    return turn


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float, datetime.date)):
        text = str(value)
        return text if len(text) >= 3 else None
    return None


def _stated(text: str, value: str) -> re.Pattern[str] | None:
    pattern = re.compile(rf"(?<![\w.-]){re.escape(value)}(?![\w-]|\.\d)")
    return pattern if pattern.search(text) else None


def _wrong_fact(text: str, tools: WorldTools, turn: BotTurn) -> tuple[str, str] | None:
    """The reply with one stated value replaced, and what was replaced (None: it states none)."""
    world = tools.world
    named = [*record_ids(world, text), *((r.table, r.key) for call in turn.tool_calls for r in call.reads)]
    db = tools.copy.db
    for table_name, key in dict.fromkeys(named):
        table = world.table(table_name)
        row = db.get(table_name, key) if table is not None else None
        if table is None or row is None:
            continue
        owner = table.owner if isinstance(table.owner, str) else None
        others = [r for r in db.select(table_name) if r[table.key] != row[table.key]]
        for field, value in row.items():
            if field in (table.key, owner):
                continue
            said = _scalar(value)
            pattern = _stated(text, said) if said else None
            if said is None or pattern is None:
                continue
            choices = sorted({s for r in others if (s := _scalar(r.get(field))) is not None and s != said})
            if not choices:
                continue
            wrong = seeded("says_wrong_thing", tools.customer_id, table_name, key, field).choice(choices)
            return pattern.sub(wrong, text), f"{key}'s {field} {said!r} said as {wrong!r}"
    return None


async def says_wrong_thing(inner: Bot, transcript: list[ChatMessage], ctx: BotContext, note: Note) -> BotTurn:
    """See the module doc."""
    turn = await inner.respond(transcript, ctx)
    tools = _world_tools(ctx)
    found = _wrong_fact(turn.text, tools, turn) if tools is not None and turn.text else None
    if found is None:
        return turn
    text, what = found
    note(what, True)
    return _set_reply(transcript, turn, text)


async def gives_up(inner: Bot, transcript: list[ChatMessage], ctx: BotContext, note: Note) -> BotTurn:
    """See the module doc."""
    if not _answers_customer(transcript):
        return await inner.respond(transcript, ctx)
    text = declared_fallback(inner) or TRANSFER_TEXT
    transcript.append(ChatMessage(role="assistant", content=text))
    note("answered with its fallback, doing nothing", True)
    return BotTurn(text=text)


def _leaked_record(tools: WorldTools, own: str) -> tuple[str, str, dict[str, Any]] | None:
    world = tools.world
    customers = world.identity.customers
    tables = [t for t in world.tables if t.owner is not None and not t.log]
    for table in sorted(tables, key=lambda t: t.name == customers):  # a record of theirs before their customer row
        rows = [r for r in tools.copy.db.select(table.name) if table.owner_of(r) not in (None, own)]
        if rows:
            row = seeded("leaks", own, table.name).choice(rows)
            return table.name, str(row[table.key]), row
    return None


async def leaks(inner: Bot, transcript: list[ChatMessage], ctx: BotContext, note: Note) -> BotTurn:
    """See the module doc."""
    turn = await inner.respond(transcript, ctx)
    tools = _world_tools(ctx)
    if tools is None or not _answers_customer(transcript) or ctx.notes.get("mutant", {}).get("acted"):
        return turn
    found = _leaked_record(tools, tools.customer_id)
    if found is None:
        return turn
    table, key, row = found
    fields = "; ".join(f"{k}: {v}" for k, v in row.items() if _scalar(v) is not None)
    note(f"appended {table} {key} of another customer", True)
    return _set_reply(transcript, turn, f"{turn.text}\n\nAlso on file: {fields}")


_ENGLISH = frozenset(
    "the a an and or to of in on for with is are was were be been has have had you your i we it this that "
    "order orders please can will would not no yes my me here there what when which how".split()
)
_WORDS = re.compile(r"[^\W\d_]+", re.UNICODE)


def english_share(text: str | None) -> float | None:
    """The share of a text's words that are common English words (None: too few words to say)."""
    words = [w.lower() for w in _WORDS.findall(text or "")]
    if len(words) < 3:
        return None
    return sum(1 for w in words if w in _ENGLISH) / len(words)


def _not_english(text: str | None) -> bool:
    share = english_share(text)
    return share is not None and share < 0.12


async def wrong_language(inner: Bot, transcript: list[ChatMessage], ctx: BotContext, note: Note) -> BotTurn:
    """See the module doc."""
    turn = await inner.respond(transcript, ctx)
    said = next((m.content for m in reversed(transcript) if m.role == "user"), None)
    if not _not_english(said) or not _not_english(turn.text):
        return turn
    figures = list(dict.fromkeys(f.rstrip(".,:;") for f in re.findall(r"[\w#@.-]*\d[\w#@./:-]*", turn.text)))
    text = "Here is what I found: " + ", ".join(figures) + "." if figures else "I have looked into your request."
    note("answered in English", True)
    return _set_reply(transcript, turn, text)
