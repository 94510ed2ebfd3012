"""parley's chat records in inspect_ai's terms and back: messages, tool calls, tools, usage.

Shared by the eval-log export (parley.core.interop.inspect.export), the model adapter (parley.core.interop.inspect.models) and
the inspect task (parley.core.interop.inspect.task). Importing it imports inspect_ai, an optional extra:
parley imports it only once inspect was asked for (see parley.core.interop.inspect.export.require_inspect).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage as InspectMessage,
)
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ModelUsage,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolCallError, ToolInfo, ToolParams

from parley.core.records import ChatMessage, ToolCall, ToolCallRecord, ToolSpec, Usage

# parley's role names -> inspect's. The bot is inspect's evaluated model (no role of its own);
# the judge is inspect's conventional `grader` role.
INSPECT_ROLES = {"bot": "bot", "user": "user", "judge": "grader"}


def tool_call_to_inspect(call: ToolCall) -> InspectToolCall:
    """A tool call as inspect records it. parley keeps the raw JSON the model wrote; inspect
    wants a dict, so text that is not a JSON object becomes `parse_error` (with the text)."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        arguments = None
    if isinstance(arguments, dict):
        return InspectToolCall(id=call.id, function=call.name, arguments=arguments)
    return InspectToolCall(id=call.id, function=call.name, arguments={}, parse_error=f"arguments are not a JSON object: {call.arguments}")


def tool_call_from_inspect(call: InspectToolCall) -> ToolCall:
    return ToolCall(id=call.id, name=call.function, arguments=json.dumps(call.arguments or {}))


def _tool_error(record: ToolCallRecord | None) -> ToolCallError | None:
    """A failed or refused call as inspect's tool error (the viewer marks it)."""
    if record is None or record.ok:
        return None
    return ToolCallError(type="permission" if record.refused else "unknown", message=record.error or record.result)


def message_to_inspect(message: ChatMessage, records: Mapping[str, ToolCallRecord] | None = None) -> InspectMessage:
    """One parley message as inspect's message of the same role. `records` (call id -> executed
    call) lets a tool message carry the call's error or refusal."""
    text = message.content or ""
    if message.role == "system":
        return ChatMessageSystem(content=text)
    if message.role == "user":
        return ChatMessageUser(content=text)
    if message.role == "assistant":
        calls = [tool_call_to_inspect(c) for c in message.tool_calls] or None
        return ChatMessageAssistant(content=text, tool_calls=calls)
    record = (records or {}).get(message.tool_call_id or "")
    return ChatMessageTool(content=text, tool_call_id=message.tool_call_id, function=message.name, error=_tool_error(record))


def messages_to_inspect(
    messages: Sequence[ChatMessage],
    *,
    system_prompt: str | None = None,
    tool_calls: Iterable[ToolCallRecord] = (),
) -> list[InspectMessage]:
    """A transcript as inspect's messages, the system prompt first when there is one."""
    records = {r.call_id: r for r in tool_calls}
    out: list[InspectMessage] = []
    if system_prompt:
        out.append(ChatMessageSystem(content=system_prompt))
    out.extend(message_to_inspect(m, records) for m in messages)
    return out


def message_from_inspect(message: InspectMessage) -> ChatMessage:
    """An inspect message as parley's (text content only: parley's bots speak text)."""
    if isinstance(message, ChatMessageAssistant):
        calls = [tool_call_from_inspect(c) for c in message.tool_calls or []]
        return ChatMessage(role="assistant", content=message.text or None, tool_calls=calls)
    if isinstance(message, ChatMessageTool):
        return ChatMessage(role="tool", content=message.text, tool_call_id=message.tool_call_id, name=message.function)
    return ChatMessage(role=message.role, content=message.text)


def tool_to_inspect(spec: ToolSpec) -> ToolInfo:
    """A tool offered to the bot as inspect's ToolInfo (its JSON schema as it is)."""
    return ToolInfo(name=spec.name, description=spec.description, parameters=ToolParams.model_validate(spec.parameters))


def usage_to_inspect(usage: Usage) -> ModelUsage:
    """parley's usage as inspect's. parley's `cost_usd` None (a price unknown) stays None."""
    return ModelUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        total_cost=usage.cost_usd,
    )


def usage_from_inspect(usage: ModelUsage | None, *, calls: int = 1) -> Usage:
    """inspect's usage of one call as parley's: a provider that reported none is counted as an
    unreported call (so totals say they are a lower bound), its cost unknown."""
    if usage is None:
        return Usage(calls=calls, cost_usd=None, unreported_calls=calls)
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        calls=calls,
        cost_usd=usage.total_cost,
    )


def add_usage(into: dict[str, ModelUsage], key: str, usage: Usage) -> None:
    """Add parley usage to an inspect usage dict (by model name or role)."""
    converted = usage_to_inspect(usage)
    into[key] = into[key] + converted if key in into else converted


def jsonable(value: Any) -> Any:
    """A value as plain JSON data (for sample metadata, which must be JSON)."""
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)
