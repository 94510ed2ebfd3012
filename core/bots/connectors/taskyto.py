"""`taskyto:URL`: a Taskyto chatbot through its HTTP server.

Taskyto's protocol has no room for the conversation's world (its requests carry the message and a
conversation id only), so a Taskyto bot is never told where its world is served: parley sees what
it says, not what it does, and the world checks of its conversations are not applicable unless it
calls a world served at a URL given to it some other way.

The server's API: `POST URL/conversation/new` answers `{"id": ...}` (the conversation id);
`POST URL/conversation/user_message` with `{"id", "message"}` answers with the bot's text. Two
reply shapes are in use and both are read: Taskyto's own server answers
`{"success": 1, "debug_msg": ..., "data": {"id", "type", "message", "timestamp"}}` (success 0:
an error, `debug_msg` says why), older servers answer `{"message": ...}` at the top level.

Each parley conversation opens its own Taskyto conversation on its first turn. Opening the
conversation (a profile with `is_starter`) shows the `message` of the `new` reply when the server
sends one, else an empty message.
"""

from __future__ import annotations

import json
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

SCHEME = "taskyto"


def taskyto_message(reply: Any, *, name: str = SCHEME) -> str:
    """The bot's text from a `user_message` reply (either shape); ConnectorError otherwise."""
    if isinstance(reply, dict):
        if reply.get("success") == 0:
            why = reply.get("debug_msg") or reply.get("error") or "success: 0"
            raise ConnectorError(f"{name}: the chatbot reported an error: {excerpt(str(why))}")
        data = reply.get("data")
        if isinstance(data, dict) and isinstance(message := data.get("message"), str):
            return message
        if isinstance(message := reply.get("message"), str):
            return message
    raise ConnectorError(f"{name}: no `message` (or `data.message`) in the reply: {excerpt(json.dumps(reply))}")


class TaskytoConnector(HttpConnector):
    """A Taskyto server as the bot under test (see the module doc)."""

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_CALL_TIMEOUT_S, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        self.url = check_url(url, what=f"{SCHEME}:URL").rstrip("/")
        super().__init__(f"{SCHEME}:{url}", timeout_s=timeout_s, max_reply_bytes=max_reply_bytes)

    @property
    def probe_url(self) -> str:
        """Where to check, before a batch, that the bot is there at all."""
        return self.url

    async def _conversation_id(self, ctx: BotContext) -> tuple[str, Any]:
        known = ctx.session.get("taskyto_id")
        if known is not None:
            return known, None
        reply = await self.call("POST", f"{self.url}/conversation/new")
        cid = reply.get("id") if isinstance(reply, dict) else None
        if cid is None or isinstance(cid, (dict, list)) or str(cid) == "":
            raise ConnectorError(f"{self.name}: no conversation `id` in the reply to /conversation/new: {excerpt(json.dumps(reply))}")
        ctx.session["taskyto_id"] = str(cid)
        return str(cid), reply

    async def _answer(self, transcript: list[ChatMessage], ctx: BotContext) -> tuple[str, bool]:
        cid, opened = await self._conversation_id(ctx)
        text = last_user_text(transcript)
        if text is None:
            greeting = opened.get("message") if isinstance(opened, dict) else None
            return (greeting if isinstance(greeting, str) else ""), False
        reply = await self.call("POST", f"{self.url}/conversation/user_message", json={"id": cid, "message": text})
        return taskyto_message(reply, name=self.name), False
