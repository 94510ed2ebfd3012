"""Records of a chat exchange shared by models, bots, the runner and storage.

They follow the OpenAI chat shape closely (role, content, tool_calls, tool_call_id) so that a
transcript can be sent to any OpenAI-compatible endpoint as it is, and read back from SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


END_MARKER = "[END]"
"""A bot ends a conversation by ending its message with this marker: the built-in bot strips it and
reports `ends_conversation` (the runner's bot_stop); models see the rule in their prompt."""


class ToolCall(BaseModel):
    """A tool call as a model asked for it. `arguments` stays the raw JSON text the model wrote:
    it may be malformed, and the tool layer, not the model client, decides what to do with it."""

    id: str
    name: str
    arguments: str = "{}"


class ChatMessage(BaseModel):
    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None  # on role="tool": which call this answers
    name: str | None = None  # on role="tool": the tool's name

    def to_openai(self) -> dict[str, Any]:
        """The message as the OpenAI chat completions API takes it."""
        # An assistant turn that only calls tools has no content. OpenAI takes null, but some
        # compatible servers (llama.cpp's) reject null or a missing key: "" suits them all.
        content = "" if self.content is None and self.tool_calls else self.content
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in self.tool_calls
            ]
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
            if self.name:
                out["name"] = self.name
        return out


class ToolSpec(BaseModel):
    """A tool offered to a model: a name, a sentence for the model, a JSON schema of arguments."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class Usage(BaseModel):
    """Tokens of one call or a sum of calls. `cost_usd` is None when a price is unknown: never 0
    for "we don't know". `unreported_calls` counts calls whose server sent no token counts
    (llama.cpp does not when streaming), so a total can say it is a lower bound."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = 0.0
    unreported_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            calls=self.calls + other.calls,
            cost_usd=cost,
            unreported_calls=self.unreported_calls + other.unreported_calls,
        )


class GenerateConfig(BaseModel):
    """Per-call generation settings. None means the provider's default (and is not sent)."""

    model_config = ConfigDict(allow_inf_nan=False)

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    stop: list[str] | None = Field(default=None, max_length=4)
    """Up to four texts that end the model's answer where they appear (OpenAI's limit)."""

    def overlaid(self, over: GenerateConfig | None) -> GenerateConfig:
        """These settings with every one `over` sets put in their place."""
        if over is None:
            return self
        return self.model_copy(update=over.model_dump(exclude_none=True))

    def described(self) -> str:
        """`temperature=0, max_tokens=400`: the settings given, in the order above ("" for none)."""
        return ", ".join(f"{key}={_shown(value)}" for key, value in self.model_dump(exclude_none=True).items())


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return "[" + ", ".join(repr(v) for v in value) + "]"
    return str(value)


class ModelRequest(BaseModel):
    """One call to a chat model: the messages, the tools offered and the options, the three
    arguments of a ChatModel's `generate` and `stream` as one value."""

    messages: list[ChatMessage]
    tools: list[ToolSpec] | None = None
    config: GenerateConfig | None = None

    @classmethod
    def of(cls, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] | None, config: GenerateConfig | None) -> ModelRequest:
        """The request of a `generate(messages, tools, config)` call (copies of its sequences)."""
        return cls(messages=list(messages), tools=list(tools) if tools is not None else None, config=config)


class ModelReply(BaseModel):
    """What one model call returned."""

    model: str
    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str | None = None

    def as_message(self) -> ChatMessage:
        return ChatMessage(role="assistant", content=self.text, tool_calls=list(self.tool_calls))
