"""A stored live chat or conversation as a playbook (parley.core.specs.chat_playbook): what
`parley sessions export ID --as playbook` prints and the app's Sessions pane writes."""

from __future__ import annotations

import datetime
import logging

from parley.core.records import ChatExport, StoredChatSession, StoredConversation
from parley.core.specs import ChatTurns, playbook_from_chat
from parley.core.world import WorldDefinition, WorldError, conversation_world, load_world

log = logging.getLogger("parley.reports")

__all__ = ["chat_playbook", "session_playbook"]


def chat_playbook(chat: ChatExport, started: datetime.datetime) -> tuple[str, str]:
    """(the playbook's name, its YAML text) for a live chat, stored or still going (the chat's
    `/playbook`), begun at `started`."""
    name = f"chat_{chat.session_id[:12]}"
    turns = ChatTurns(
        messages=chat.messages,
        tool_calls=chat.tool_calls,
        customer_id=chat.customer_id,
        today=chat.today,
        id_patterns=_id_patterns(chat.world),
    )
    made_from = f"chat {chat.session_id} (bot {chat.bot_model}, {started:%Y-%m-%d})"
    return name, playbook_from_chat(turns, name=name, made_from=made_from)


def session_playbook(stored: StoredConversation | StoredChatSession) -> tuple[str, str]:
    """(the playbook's name, its YAML text) for a stored chat or conversation: its customer's
    lines, the bot's tool calls and replies, the customer and the world's date it ran with."""
    if isinstance(stored, StoredChatSession):
        return chat_playbook(stored.chat, stored.created_at)
    conversation, spec = stored.conversation, stored.spec
    name = f"{spec.name}_as_playbook"
    state = conversation.final_state
    today = state.today if state is not None else spec.world.today
    turns = ChatTurns(
        messages=conversation.messages,
        tool_calls=conversation.tool_calls,
        customer_id=conversation.customer_id,
        today=today,
        id_patterns=_id_patterns(conversation_world(conversation, spec)),
    )
    made_from = f"conversation {conversation.id} ({spec.spec_id}, bot {conversation.bot_model}, {conversation.started_at:%Y-%m-%d})"
    notes: list[str] = []
    own = [f"{table}/{row.get('id', '?')}" for table, rows in spec.world.rows.items() for row in rows]
    if own:
        notes.append(f"it ran with its profile's own records ({', '.join(own)}); a playbook runs on its world's shipped ones")
    return name, playbook_from_chat(turns, name=name, made_from=made_from, notes=notes)


def _id_patterns(world: str | WorldDefinition | None) -> tuple[str, ...]:
    """The shapes of the world's record ids (None: the default world; a world that cannot be
    loaded any more: none, and the playbook states dates and tool values only)."""
    try:
        if isinstance(world, WorldDefinition):
            definition = world
        elif world is not None and world.endswith(".py"):
            definition = load_world(path=world)
        else:
            definition = load_world(world)
    except WorldError as exc:
        log.warning("the playbook's world cannot be loaded (%s): record ids are not recognised in its replies", exc)
        return ()
    return tuple(t.id_pattern for t in definition.tables if t.id_pattern)
