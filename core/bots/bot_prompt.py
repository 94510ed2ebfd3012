"""The built-in bot's system prompt on any world: the world's own (a world may declare one: the
order world's is the order bot's, word for word), else one made of the world's declarations: what
it is, the date, who the customer is, and its policy."""

from __future__ import annotations

import datetime

from parley.core.records import END_MARKER
from parley.core.world import ConversationIdentity, WorldDefinition

__all__ = ["EMPTY_REPLY_TEXT", "END_MARKER", "ROUND_CAP_TEXT", "build_system_prompt"]

# Said instead of looping when a model keeps asking for tools past the round cap.
ROUND_CAP_TEXT = "I'm sorry, I couldn't complete that request just now. Could you tell me again, in one sentence, what you need?"

# Said when the model returns neither text nor a tool call.
EMPTY_REPLY_TEXT = "Sorry, I have no answer to that just now. Could you rephrase your request?"

_TEMPLATE = """\
You are the customer-service assistant of {what}.

Today's date is {today} ({weekday}). Use it for every date calculation.
{who}

Policy:
{policy}

Never invent details: look them up with the tools. When a tool refuses or returns an error, tell \
the customer the reason it gives, in plain words, and never say something was done unless the tool \
that does it succeeded. Keep answers short, friendly and factual. When the customer says goodbye \
and needs nothing else, say goodbye and end that message with {end_marker}."""


def build_system_prompt(world: WorldDefinition, today: datetime.date, customer_id: str) -> str:
    """The system prompt of the built-in bot serving `customer_id` on `world` at `today`."""
    own = world.hooks.get("system_prompt")
    if callable(own):
        return str(own(today, customer_id, END_MARKER))
    if isinstance(world.identity, ConversationIdentity):
        who = (
            "The customer is not signed in: before you look up or change anything for them, find who they are "
            f"with {', or '.join(world.identity.authenticate)}, and act only for that customer."
        )
    elif world.session_bound:
        who = (
            f"The signed-in customer is {customer_id}. Their identity was verified by the login session; "
            "the tools always act for this customer and no one else."
        )
    else:
        who = (
            f"The signed-in customer is {customer_id} (verified by the login session). Your tools can reach every "
            "customer's records: look up, reveal and change only this customer's."
        )
    return _TEMPLATE.format(
        what=world.description or f"the {world.name} service",
        today=today.isoformat(),
        weekday=today.strftime("%A"),
        who=who,
        policy=world.policy or "(no policy given)",
        end_marker=END_MARKER,
    )
