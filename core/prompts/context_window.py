"""How many tokens a role's model can take: what the person said, else what its endpoint
reports, else `DEFAULT_CONTEXT_TOKENS`.

Some OpenAI-compatible servers say their context length in `GET /models` (vLLM's
`max_model_len`, OpenRouter's `context_length`, LM Studio's `max_context_length`);
llama-cpp-python's server and OpenAI's API do not. `context_length_from_models` reads it from
such a body; the check that probes each endpoint before a batch launches hands it on
(`RoleModels.endpoint_context`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from parley.core.prompts.tokens import estimate_tool_specs
from parley.core.records.chat import ToolSpec

DEFAULT_CONTEXT_TOKENS = 4096
"""What a role's model is assumed to take when nobody says: Ollama's default and the smallest
context length in common use (`--judge-context`, `PARLEY_JUDGE_CONTEXT`... raise it)."""

ANSWER_TOKENS = 512
"""Room kept in a model's context for its answer, when the call sets no max_tokens."""

_LENGTH_KEYS = ("max_model_len", "context_length", "max_context_length")


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value > 0 else None


def _length_of(entry: dict[str, Any]) -> int | None:
    for key in _LENGTH_KEYS:
        found = _positive_int(entry.get(key))
        if found is not None:
            return found
    top = entry.get("top_provider")  # OpenRouter also says it per provider
    return _positive_int(top.get("context_length")) if isinstance(top, dict) else None


def context_length_from_models(body: Any, model: str | None = None) -> int | None:
    """The context length a `GET /models` body reports for `model` (its `id`), or for the one
    model listed when `model` is None; None when the body does not say (or is not such a body)."""
    entries = body.get("data") if isinstance(body, dict) else body
    if not isinstance(entries, list):
        return None
    models = [e for e in entries if isinstance(e, dict)]
    if model is not None:
        models = [e for e in models if e.get("id") == model]
    if len(models) != 1:
        return None
    return _length_of(models[0])


def context_tokens(explicit: int | None, reported: int | None = None) -> int:
    """The context length to fit a role's prompts in: the option or setting, else what the
    endpoint reported, else the default."""
    return explicit or reported or DEFAULT_CONTEXT_TOKENS


def prompt_budget(context: int, *, max_tokens: int | None = None, tools: Sequence[ToolSpec] | None = None) -> int:
    """Tokens a prompt may take in a context of `context` tokens: what the answer (`max_tokens`,
    else ANSWER_TOKENS) and the tools' schemas leave."""
    return context - (max_tokens or ANSWER_TOKENS) - estimate_tool_specs(tools)
