"""Which records' changes the customer asked for in the conversation, on any world.

A successful call of a tool that changes the world (one the world declares as changing state or
as an action, or one that changed records) is the customer's own request when the customer's
message the bot was answering when it made the call either asked for it or said yes to it:
- asked: it names one of the records the call names or changed (here, or earlier in the
  conversation when it names none: "do it" is about the record named last), with a word of
  asking for the call's action where the reading has words for it (parley.core.reading.
  ACTION_WORDS: "cancel" for a cancellation, "return" or "refund" for a refund...), and no word
  of refusal;
- said yes: it says yes to the bot's question whether to act on one of those very records.
The records such a call changed, and those its arguments name, are changes the customer asked
for. Anything else is a change the customer did not ask for: another customer's record, a record
the customer never named, an action never confirmed or taken back ("no, keep it").

The checks use it to keep "policy violation" for what it means: a change the customer did not
ask for (or the policy forbids, which a world's API refuses itself). A change the customer asked
for that the file did not expect is a failed expectation, reported as such.
"""

from __future__ import annotations

from collections.abc import Sequence

from parley.core.reading import (
    confirmation_record,
    is_affirmative,
    is_confirmation_question,
    is_refusal,
    mentions_id,
    reading_world,
    records_in,
    request_words,
    same_id,
)
from parley.core.records import Conversation, ToolCallRecord
from parley.core.world import RecordKey, WorldDefinition, keys_of

__all__ = ["call_records", "changes_state", "is_requested", "requested_records"]


def changes_state(record: ToolCallRecord, world: WorldDefinition | None) -> bool:
    """Whether a call is of a tool that changes the world: declared so, or an action of the
    world's, or one whose call changed records."""
    if any(not change.log for change in record.changes):
        return True
    if world is None:
        return False
    tool = world.tool(record.name)
    return (tool is not None and tool.changes_state) or world.action_of(record.name) is not None


def call_records(record: ToolCallRecord, world: WorldDefinition | None) -> list[RecordKey]:
    """The records a call is about: those its arguments name, then those it changed (a log
    table's rows left out), each once."""
    found: list[RecordKey] = []
    for value in record.named:
        found += records_in(value, world) or [("", value.strip())]
    found += [(change.table, change.key) for change in record.changes if not change.log]
    seen: dict[tuple[str, str], RecordKey] = {}
    for table, key in found:
        seen.setdefault((table, key.casefold()), (table, key))
    return list(seen.values())


def requested_records(conversation: Conversation, world: WorldDefinition | None = None) -> set[RecordKey]:
    """The records whose change the customer asked for (see the module doc), on `world` (None:
    the default world); `is_requested` tells whether a record is one of them."""
    world = reading_world(world)
    calls = {t.call_id: t for t in conversation.tool_calls if t.ok and changes_state(t, world)}
    requested: set[RecordKey] = set()
    named: list[str] = []  # record ids the customer has named so far
    user_text: str | None = None
    bot_before_user: str | None = None  # the bot's last words before the customer's message
    bot_text: str | None = None
    for message in conversation.messages:
        if message.role == "user":
            user_text = message.content or ""
            bot_before_user = bot_text
            named += [key for _, key in records_in(user_text, world)]
            continue
        if message.role != "assistant":
            continue
        for call in message.tool_calls:
            record = calls.get(call.id)
            if record is None:
                continue
            records = call_records(record, world)
            if _asked(record, records, user_text, bot_before_user, named, world):
                requested.update(records)
        if message.content:
            bot_text = message.content
    return requested


def is_requested(record: RecordKey, requested: set[RecordKey]) -> bool:
    """Whether `record` is among the `requested` ones (its table unknown in a call's arguments: by key)."""
    keys = keys_of(requested)
    table, key = record
    return (table, key.strip().casefold()) in keys or ("", key.strip().casefold()) in keys


def _asked(
    record: ToolCallRecord,
    records: Sequence[RecordKey],
    user_text: str | None,
    bot_text: str | None,
    named: list[str],
    world: WorldDefinition | None,
) -> bool:
    if not user_text or is_refusal(user_text):
        return False
    keys = [key for _, key in records]
    words = request_words(world.action_of(record.name) if world is not None else None)
    if words is None or words.search(user_text):
        ids = [key for _, key in records_in(user_text, world)]
        if ids:
            return any(same_id(i, key, world) for i in ids for key in keys) or any(mentions_id(user_text, key, world) for key in keys)
        if words is not None:
            # "cancel it": the record the customer named last
            return bool(named) and any(same_id(named[-1], key, world) for key in keys)
    if is_affirmative(user_text) and bot_text and is_confirmation_question(bot_text, world):
        asked_about = confirmation_record(bot_text, world)
        return asked_about is not None and any(same_id(asked_about, key, world) for key in keys)
    return False
