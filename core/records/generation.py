"""Generation settings per role and prices for models the price table does not know, as a batch
takes them from the command line (`--gen ROLE.KEY=VALUE`, `--price MODEL=INPUT/OUTPUT`), the
Python API and the batch service, and records them.

- `--gen bot.temperature=0.2 --gen judge.max_tokens=300 --gen user.stop=Goodbye`: the role (bot,
  user, judge), the setting (temperature, top_p, max_tokens, seed, stop) and its value; `stop`
  may be given up to four times (each a text that ends the answer). Read into one
  GenerateConfig per role (`read_generation`).
- `--price ollama/llama3=0` (free), `--price openai-api/vllm/qwen=0.2/0.6`: USD per million
  input and output tokens (`read_prices`), so cost and `--budget` work with a local server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from parley.core.records.chat import GenerateConfig

__all__ = [
    "GENERATION_KEYS",
    "GENERATION_ROLES",
    "GenerationRole",
    "ModelPrice",
    "generation_entry",
    "read_generation",
    "read_prices",
]

GenerationRole = Literal["bot", "user", "judge"]
GENERATION_ROLES: tuple[GenerationRole, ...] = get_args(GenerationRole)
GENERATION_KEYS: tuple[str, ...] = tuple(GenerateConfig.model_fields)
_ENTRY = re.compile(r"^\s*([^.=\s]+)\.([A-Za-z_]+)\s*=(.*)$", re.DOTALL)
GEN_FORM = "ROLE.KEY=VALUE (e.g. bot.temperature=0.2)"
PRICE_FORM = "MODEL=INPUT/OUTPUT in USD per million tokens (e.g. ollama/llama3=0 or openai-api/vllm/qwen=0.2/0.6)"


def generation_entry(text: str) -> tuple[str, str, str]:
    """(role or bot name, key, value) of one `ROLE.KEY=VALUE`; ValueError saying the form otherwise.
    The role is not checked here (a run of several bots names a bot in its place)."""
    match = _ENTRY.match(text)
    if match is None:
        raise ValueError(f"{text!r}: give {GEN_FORM}")
    role, key, value = match.group(1), match.group(2), match.group(3).strip()
    if key not in GENERATION_KEYS:
        raise ValueError(f"{text!r}: {key!r} is not a generation setting; they are {', '.join(GENERATION_KEYS)}")
    return role, key, value


def _value(key: str, text: str) -> Any:
    if key == "stop":
        if not text:
            raise ValueError("stop: give the text that ends the answer")
        return text
    try:
        number = float(text) if key in ("temperature", "top_p") else int(text)
    except ValueError:
        kind = "a number" if key in ("temperature", "top_p") else "a whole number"
        raise ValueError(f"{key}: expected {kind}, got {text!r}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError(f"{key}: expected a finite number, got {text!r}")
    return number


def read_generation(value: Any) -> dict[str, GenerateConfig]:
    """Role -> its settings, from `ROLE.KEY=VALUE` entries (the command line, the service) or a
    mapping of role to settings (the Python API, a stored batch); ValueError naming the entry
    and what it takes (a role that is none, a setting out of its range)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        out: dict[str, GenerateConfig] = {}
        for role, settings in value.items():
            _known_role(str(role))
            out[str(role)] = settings if isinstance(settings, GenerateConfig) else _config(str(role), settings)
        return out
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"expected {GEN_FORM} entries, got {type(value).__name__}")
    gathered: dict[str, dict[str, Any]] = {}
    for entry in value:
        role, key, text = generation_entry(str(entry))
        _known_role(role, entry=str(entry))
        settings = gathered.setdefault(role, {})
        if key == "stop":
            settings.setdefault("stop", []).append(_value(key, text))
        else:
            settings[key] = _value(key, text)
    return {role: _config(role, settings) for role, settings in gathered.items()}


def _known_role(role: str, *, entry: str | None = None) -> None:
    if role not in GENERATION_ROLES:
        where = f"{entry!r}: " if entry else ""
        raise ValueError(f"{where}{role!r} is not a role; the roles are {', '.join(GENERATION_ROLES)}")


def _config(role: str, settings: Any) -> GenerateConfig:
    try:
        return GenerateConfig.model_validate(settings)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{role}.{where}: {first['msg']}") from None


class ModelPrice(BaseModel):
    """What a model costs, USD per million input and output tokens."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    input_per_m: float = Field(ge=0)
    output_per_m: float = Field(ge=0)


def _price(model: str, text: str) -> ModelPrice:
    parts = text.split("/")
    if len(parts) == 1:
        parts = parts * 2  # MODEL=0: the same price in and out
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) != 2 or not all(math.isfinite(n) and n >= 0 for n in numbers):
        raise ValueError(f"{model}={text}: give {PRICE_FORM}")
    return ModelPrice(input_per_m=numbers[0], output_per_m=numbers[1])


def read_prices(value: Any) -> dict[str, ModelPrice]:
    """Model name -> its price, from `MODEL=INPUT/OUTPUT` entries or a mapping of name to a price
    (a ModelPrice, a mapping, a pair, or one number for both); ValueError naming the entry."""
    if value is None:
        return {}
    out: dict[str, ModelPrice] = {}
    if isinstance(value, Mapping):
        for model, price in value.items():
            name = str(model).strip()
            if isinstance(price, ModelPrice):
                out[name] = price
            elif isinstance(price, Mapping):
                out[name] = ModelPrice.model_validate(price)
            elif isinstance(price, (list, tuple)):
                out[name] = _price(name, "/".join(str(p) for p in price))
            else:
                out[name] = _price(name, str(price))
        return out
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"expected {PRICE_FORM} entries, got {type(value).__name__}")
    for entry in value:
        model, sep, text = str(entry).rpartition("=")
        if not sep or not model.strip():
            raise ValueError(f"{entry!r}: give {PRICE_FORM}")
        out[model.strip()] = _price(model.strip(), text.strip())
    return out
