"""`rasa:URL`: a Rasa bot through its REST channel (`POST /webhooks/rest/webhook`).

Each conversation gets its own sender id (`parley-<hex>`), so the Rasa tracker of one simulated
customer never sees another's messages. The request is `{"sender", "message", "metadata"}`;
the metadata carries the spec's customer id and date, and where the conversation's world is served
(`world_url`: its tools are POST {world_url}/tools/NAME) (Rasa keeps it on the tracker; parley's
own `serve-bot` uses them to pick the customer, the world's date, and the world it acts on).

Rasa answers with a list of messages, each with `text` and/or rich parts. parley joins them
into one bot message, one part a line: texts as they are, buttons as `[buttons: Title (payload) |
...]`, an image as `[image: URL]`, an attachment as `[attachment: ...]`, a custom payload as
`[custom: {...}]` (JSON). A custom payload `{"end_conversation": true}` (what `parley serve-bot`
sends when its bot says goodbye) ends the conversation as the bot's stop.

Opening the conversation (a profile with `is_starter`) sends `/session_start`, Rasa's
session-start intent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from parley.core.bots.api import BotContext
from parley.core.bots.connectors.base import (
    DEFAULT_CALL_TIMEOUT_S,
    DEFAULT_MAX_REPLY_BYTES,
    ConnectorError,
    HttpConnector,
    check_url,
    excerpt,
    last_user_text,
)
from parley.core.records import ChatMessage

SCHEME = "rasa"
SESSION_START = "/session_start"
END_KEY = "end_conversation"


def render_rasa_reply(messages: Any, *, name: str = SCHEME) -> tuple[str, bool]:
    """(the bot's text, whether it ended the conversation) from a REST channel reply;
    ConnectorError when the reply is not a list of message objects."""
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ConnectorError(f"{name}: expected a JSON list of messages from the REST channel, got {excerpt(json.dumps(messages))}")
    lines: list[str] = []
    ends = False
    for message in messages:
        if isinstance(message.get("text"), str) and message["text"].strip():
            lines.append(message["text"].strip())
        buttons = message.get("buttons")
        if isinstance(buttons, list) and buttons:
            lines.append("[buttons: " + " | ".join(_button(b) for b in buttons) + "]")
        if message.get("image"):
            lines.append(f"[image: {message['image']}]")
        if message.get("attachment"):
            lines.append(f"[attachment: {_compact(message['attachment'])}]")
        custom = message.get("custom")
        if isinstance(custom, Mapping) and custom.get(END_KEY) is True:
            ends = True
            custom = {k: v for k, v in custom.items() if k != END_KEY}
        if custom:
            lines.append(f"[custom: {_compact(custom)}]")
    return "\n".join(lines), ends


def _button(button: Any) -> str:
    if not isinstance(button, Mapping):
        return str(button)
    title = str(button.get("title") or "").strip()
    payload = str(button.get("payload") or "").strip()
    if title and payload and payload != title:
        return f"{title} ({payload})"
    return title or payload or "?"


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class RasaConnector(HttpConnector):
    """A Rasa REST channel webhook as the bot under test (see the module doc)."""

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_CALL_TIMEOUT_S, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        self.url = check_url(url, what=f"{SCHEME}:URL")
        super().__init__(f"{SCHEME}:{url}", timeout_s=timeout_s, max_reply_bytes=max_reply_bytes)

    @property
    def probe_url(self) -> str:
        """Where to check, before a batch, that the bot is there at all."""
        return self.url

    def sender(self, ctx: BotContext) -> str:
        """This conversation's sender id (made on first use, kept in the context)."""
        sender = ctx.session.get("rasa_sender")
        if sender is None:
            sender = ctx.session["rasa_sender"] = f"parley-{uuid.uuid4().hex}"
        return sender

    async def _answer(self, transcript: list[ChatMessage], ctx: BotContext) -> tuple[str, bool]:
        text = last_user_text(transcript)
        body = {
            "sender": self.sender(ctx),
            "message": SESSION_START if text is None else text,
            "metadata": {
                "customer_id": ctx.customer_id,
                "today": ctx.today.isoformat(),
                **({"world_url": ctx.world_url} if ctx.world_url else {}),
            },
        }
        reply = await self.call("POST", self.url, json=body)
        return render_rasa_reply(reply, name=self.name)
