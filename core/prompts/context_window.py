"""How many tokens a role's model can take: what the person said, else what its endpoint
reports, else `DEFAULT_CONTEXT_TOKENS`.

Some OpenAI-compatible servers say their context length in `GET /models` (vLLM's
`max_model_len`, OpenRouter's `context_length`, LM Studio's `max_context_length`);
llama-cpp-python's server and OpenAI's API do not. The check before launch reads it
(parley.core.engine.reachability, `PreflightReport.context_length(role)`) and the batch keeps it
(`RoleModels.endpoint_context`).
"""

from __future__ import annotations

from collections.abc import Sequence

from parley.core.prompts.tokens import estimate_tool_specs
from parley.core.records import ToolSpec

DEFAULT_CONTEXT_TOKENS = 4096
"""What a role's model is assumed to take when nobody says: Ollama's default and the smallest
context length in common use (`--judge-context`, `PARLEY_JUDGE_CONTEXT`... raise it)."""

ANSWER_TOKENS = 512
"""Room kept in a model's context for its answer, when the call sets no max_tokens."""


def context_tokens(explicit: int | None, reported: int | None = None) -> int:
    """The context length to fit a role's prompts in: the option or setting, else what the
    endpoint reported, else the default."""
    return explicit or reported or DEFAULT_CONTEXT_TOKENS


def prompt_budget(context: int, *, max_tokens: int | None = None, tools: Sequence[ToolSpec] | None = None) -> int:
    """Tokens a prompt may take in a context of `context` tokens: what the answer (`max_tokens`,
    else ANSWER_TOKENS) and the tools' schemas leave."""
    return context - (max_tokens or ANSWER_TOKENS) - estimate_tool_specs(tools)
