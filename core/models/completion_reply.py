"""A chat completion as an OpenAI-compatible server sends it, read into what parley keeps.

The reply's JSON is validated against the few fields parley reads (the first choice's text,
tool calls and finish reason, and the token counts), not built into the SDK's `ChatCompletion`:
the SDK constructs every nested object of every field, unvalidated, which costs more CPU than
anything else parley does with a reply (about 0.2 ms a call) and lets a malformed field through
to fail later somewhere else. Here a reply that is not what was asked for is one clear error
saying which field is wrong.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from parley.core.records import ToolCall, first_error

__all__ = ["CompletionReply", "MalformedReply", "read_completion"]


class _Function(BaseModel):
    name: str
    arguments: str | None = None


class _ToolCall(BaseModel):
    id: str | None = None
    function: _Function | None = None


class _Message(BaseModel):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class WireUsage(BaseModel):
    """Token counts as the server reported them (either may be missing)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Completion(BaseModel):
    choices: list[_Choice]
    usage: WireUsage | None = None


class MalformedReply(ValueError):
    """The server's reply is not a chat completion parley can read; the message says why."""


class CompletionReply(BaseModel):
    """What parley keeps of a chat completion: its first choice and its token counts."""

    text: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    usage: WireUsage | None


def read_completion(data: Any) -> CompletionReply:
    """The reply `data` (a chat completion's decoded JSON) as parley keeps it; MalformedReply,
    naming the field, when it is not a chat completion with at least one choice."""
    if not isinstance(data, dict):
        raise MalformedReply(f"the reply is not a JSON object but {_shown(data)}")
    try:
        completion = _Completion.model_validate(data)
    except ValidationError as err:
        first = first_error(err, "body")
        raise MalformedReply(f"the reply's {first.where}: {first.message}") from err
    if not completion.choices:
        raise MalformedReply("the reply has no choices")
    choice = completion.choices[0]
    calls = [
        ToolCall(id=call.id or f"call_{i}", name=call.function.name, arguments=call.function.arguments or "")
        for i, call in enumerate(choice.message.tool_calls or [])
        if call.function is not None
    ]
    return CompletionReply(text=choice.message.content, tool_calls=calls, finish_reason=choice.finish_reason, usage=completion.usage)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
