"""The replayed customer of `parley run --replay`: a stored conversation's customer, word for word.

`ReplayScript` holds what one stored conversation's customer said, what its bot answered and
how it ended. `ReplayUser` says those lines in order to a new bot, calls no model (the replay
costs nothing on the user side and is exactly reproducible), and when its lines run out it stops
as the stored customer did, or with `replay_exhausted` when the new bot left the customer
something the stored one never answered (it asked a question the old bot did not, or it kept
going where the old bot had closed, or the stored conversation was cut short).

`finish_replay` completes the record: a new bot that ended the conversation before the stored
lines ran out also makes it `replay_exhausted`, and `metadata["replay"]` says which of the bot's
turns diverged from the old bot's answers (1-based; whitespace is not a divergence).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from parley.core.records import ChatMessage, Conversation
from parley.core.users.simulator import UserTurn

REPLAY_USER = "replay"
"""The user role's name in a replay batch's options: no model, the stored words."""

_STOPPED_LIKE_THE_ORIGINAL: dict[str, Literal["user_stop", "fallback_loop"]] = {"user_stop": "user_stop", "fallback_loop": "fallback_loop"}
"""The stored stops a replayed customer repeats: the customer's own."""


class ReplayScript(BaseModel):
    """One stored conversation, as its replay needs it."""

    batch_id: str
    conversation_id: str
    user_lines: list[str]
    bot_replies: list[str]
    """The old bot's answer to each turn (see `bot_replies`), in order."""
    bot_starts: bool = False
    stop_reason: str
    last_line_stops: bool = False
    """The stored customer's last line ended the conversation (said, no answer awaited)."""


def bot_replies(messages: Sequence[ChatMessage], *, bot_starts: bool = False) -> list[str]:
    """The bot's answer of each turn: the texts it said between one customer line and the next
    (tool traffic left out), joined; an opening turn first when the bot starts."""
    replies: list[list[str]] = [[]] if bot_starts else []
    for message in messages:
        if message.role == "user":
            replies.append([])
        elif message.role == "assistant" and message.content and replies:
            replies[-1].append(message.content)
    return ["\n".join(parts) for parts in replies]


def same_text(a: str | None, b: str | None) -> bool:
    """Equal but for whitespace."""
    return " ".join((a or "").split()) == " ".join((b or "").split())


def asks_something(text: str) -> bool:
    """The reply's last line asks a question."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return bool(lines) and "?" in lines[-1]


class ReplayUser:
    """Says a stored customer's lines in order (see the module doc). One per conversation."""

    name = REPLAY_USER

    def __init__(self, script: ReplayScript) -> None:
        self.script = script
        self.stop_note: str | None = None

    async def next_message(self, transcript: Sequence[ChatMessage]) -> UserTurn:
        said = sum(1 for m in transcript if m.role == "user")
        lines = self.script.user_lines
        if said < len(lines):
            note = f"replayed line {said + 1} of {len(lines)}"
            if said == len(lines) - 1 and self.script.last_line_stops:
                stop = _STOPPED_LIKE_THE_ORIGINAL.get(self.script.stop_reason, "user_stop")  # last_line_stops: one of them
                return UserTurn(text=lines[said], stop=True, note=note, stop_reason=stop)
            return UserTurn.say(lines[said], note=note)
        return self._out_of_lines(transcript)

    def _out_of_lines(self, transcript: Sequence[ChatMessage]) -> UserTurn:
        turn = self._stop(transcript)
        self.stop_note = turn.note
        return turn

    def _stop(self, transcript: Sequence[ChatMessage]) -> UserTurn:
        original = self.script.stop_reason
        like_the_original = _STOPPED_LIKE_THE_ORIGINAL.get(original)
        new_replies = bot_replies(transcript, bot_starts=self.script.bot_starts)
        last_new = new_replies[-1] if new_replies else ""
        last_old = self.script.bot_replies[-1] if self.script.bot_replies else ""
        if like_the_original is not None:
            if asks_something(last_new) and not same_text(last_new, last_old):
                return UserTurn.stopped("the bot asked something the stored customer never answered", stop_reason="replay_exhausted")
            return UserTurn.stopped("the stored customer stopped here", stop_reason=like_the_original)
        if original == "bot_stop":
            why = "the old bot closed the conversation here; this one did not"
        else:
            why = f"the stored conversation ended with {original} here"
        return UserTurn.stopped(f"no stored words left: {why}", stop_reason="replay_exhausted")


def finish_replay(conversation: Conversation, script: ReplayScript, stop_note: str | None = None) -> Conversation:
    """The replayed conversation's record with its divergence from the stored one (see the
    module doc); `stop_note` is the replayed customer's reason for stopping."""
    sent = sum(1 for m in conversation.messages if m.role == "user")
    stop, note = conversation.stop_reason, stop_note
    if stop == "bot_stop" and sent < len(script.user_lines):
        stop = "replay_exhausted"
        note = f"the bot ended the conversation after {sent} of the {len(script.user_lines)} stored customer lines"
    new = bot_replies(conversation.messages, bot_starts=script.bot_starts)
    old = script.bot_replies
    divergent = [i + 1 for i, reply in enumerate(new) if i >= len(old) or not same_text(reply, old[i])]
    replay = {
        "of_batch": script.batch_id,
        "of_conversation": script.conversation_id,
        "user_lines": len(script.user_lines),
        "user_lines_sent": sent,
        "bot_turns": len(new),
        "old_bot_turns": len(old),
        "divergent_turns": divergent,
        "first_divergence": divergent[0] if divergent else None,
        "exhausted": note if stop == "replay_exhausted" else None,
    }
    return conversation.model_copy(update={"stop_reason": stop, "metadata": {**conversation.metadata, "replay": replay}})
