"""What a model call costs, in USD, from token counts and a price table.

Prices are USD per 1M tokens (input, output), list prices as published by OpenAI and OpenRouter
(OpenRouter's vary with the provider behind a model; these are its usual ones). An unknown price
gives None, never 0: a report must not show "free" for "we don't know".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel

from parley.core.models.names import OFFLINE
from parley.core.records import ModelPrice


class Price(BaseModel):
    """USD per 1M tokens."""

    input_per_m: float
    output_per_m: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1_000_000


def _p(inp: float, out: float) -> Price:
    return Price(input_per_m=inp, output_per_m=out)


# Keyed by the model id a provider takes: OpenAI's bare ids, OpenRouter's vendor/model ids.
PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-4o-mini": _p(0.15, 0.60),
    "gpt-4o": _p(2.50, 10.00),
    "gpt-4o-2024-05-13": _p(5.00, 15.00),
    "gpt-4.1": _p(2.00, 8.00),
    "gpt-4.1-mini": _p(0.40, 1.60),
    "gpt-4.1-nano": _p(0.10, 0.40),
    "o4-mini": _p(1.10, 4.40),
    "o3-mini": _p(1.10, 4.40),
    "o3": _p(2.00, 8.00),
    "o1": _p(15.00, 60.00),
    "gpt-5": _p(1.25, 10.00),
    "gpt-5-mini": _p(0.25, 2.00),
    "gpt-5-nano": _p(0.05, 0.40),
    "gpt-4-turbo": _p(10.00, 30.00),
    "gpt-3.5-turbo": _p(0.50, 1.50),
    # OpenRouter (vendor/model)
    "anthropic/claude-3.5-sonnet": _p(3.00, 15.00),
    "anthropic/claude-3.5-haiku": _p(0.80, 4.00),
    "anthropic/claude-3-haiku": _p(0.25, 1.25),
    "anthropic/claude-3.7-sonnet": _p(3.00, 15.00),
    "anthropic/claude-sonnet-4": _p(3.00, 15.00),
    "meta-llama/llama-3.1-8b-instruct": _p(0.02, 0.03),
    "meta-llama/llama-3.1-70b-instruct": _p(0.12, 0.30),
    "meta-llama/llama-3.3-70b-instruct": _p(0.12, 0.30),
    "google/gemini-flash-1.5": _p(0.075, 0.30),
    "google/gemini-2.0-flash-001": _p(0.10, 0.40),
    "google/gemini-2.5-flash": _p(0.30, 2.50),
    "mistralai/mistral-small": _p(0.20, 0.60),
    "mistralai/mistral-nemo": _p(0.03, 0.07),
    "deepseek/deepseek-chat": _p(0.27, 1.10),
    "qwen/qwen-2.5-72b-instruct": _p(0.12, 0.39),
}

# Providers whose model ids are priced by this table. A local server (ollama) or an arbitrary
# openai-api service may run a model of the same name at any price, so those stay unknown
# unless registered explicitly.
_PRICED_PROVIDERS = ("openai", "openrouter")
_DATE_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}$")

_custom: dict[str, Price] = {}


def register_price(model_name: str, input_per_m: float, output_per_m: float) -> None:
    """Price a model the table does not know (or override it), by its full parley name."""
    _custom[model_name.strip()] = _p(input_per_m, output_per_m)


def _candidates(model_id: str) -> list[str]:
    out = [model_id]
    undated = _DATE_SUFFIX.sub("", model_id)
    if undated != model_id:
        out.append(undated)
    return out


def price_for(model_name: str, given: Mapping[str, ModelPrice] | None = None) -> Price | None:
    """The price of a parley model name, tolerating the provider prefix; None if unknown.

    `given` (a batch's `--price MODEL=IN/OUT`, by full name) wins over the table.
    `openai/gpt-4o-mini`, `openrouter/openai/gpt-4o-mini` and `gpt-4o-mini` all find the same
    price; a dated snapshot (`gpt-4o-mini-2024-07-18`) falls back to its family. OpenRouter's
    `:free` variants cost 0.
    """
    name = model_name.strip()
    if given and name in given:
        return _p(given[name].input_per_m, given[name].output_per_m)
    if name == OFFLINE:
        return _p(0.0, 0.0)
    if name in _custom:
        return _custom[name]
    provider, sep, rest = name.partition("/")
    if sep and provider in ("ollama", "openai-api"):
        return None
    model_id = rest if sep and provider in _PRICED_PROVIDERS else name
    if model_id.endswith(":free"):
        return _p(0.0, 0.0)
    for candidate in _candidates(model_id):
        if candidate in PRICES:
            return PRICES[candidate]
        # an OpenRouter id for an OpenAI model: openai/gpt-4o -> gpt-4o
        vendor, slash, bare = candidate.partition("/")
        if slash and vendor == "openai" and bare in PRICES:
            return PRICES[bare]
    return None


def cost_usd(model_name: str, input_tokens: int, output_tokens: int, given: Mapping[str, ModelPrice] | None = None) -> float | None:
    """USD for one call's tokens; None when the model's price is unknown (never 0 for that)."""
    price = price_for(model_name, given)
    if price is None:
        return None
    return price.cost(input_tokens, output_tokens)
