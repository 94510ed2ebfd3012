"""What `--bot` names: parley's built-in order bot on a model, a prompt bot, or a connector to a
chatbot deployed elsewhere.

    offline | openai/MODEL | ...        the built-in order bot on that model (tools, World)
    MODEL + --bot-prompt FILE           a prompt bot: the model, FILE as system prompt, no tools
    rasa:URL                            a Rasa REST channel webhook (parley.core.bots.connectors.rasa)
    taskyto:URL                         a Taskyto server (parley.core.bots.connectors.taskyto)
    http:FILE.yaml                      an HTTP API described in YAML (parley.core.bots.connectors.http_yaml)

`parse_bot_spec` validates a name without opening a connection (it reads the prompt or YAML
file): every mistake is one ConfigError line naming the file and field. `build_bot` turns a
valid spec into the `Bot`. Only the built-in order bot uses parley's World; the others run
without it and their world checks are reported as not applicable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from parley.core.bots.api import Bot
from parley.core.bots.connectors.base import DEFAULT_CALL_TIMEOUT_S, check_url
from parley.core.errors import ConfigError
from parley.core.models.api import ChatModel
from parley.core.models.names import OFFLINE, parse_model_name
from parley.core.prompts import DEFAULT_CONTEXT_TOKENS

BotKind = Literal["model", "prompt", "rasa", "taskyto", "http"]
CONNECTOR_SCHEMES: tuple[str, ...] = ("rasa", "taskyto", "http")
CONNECTOR_FORMS = "rasa:URL, taskyto:URL, http:FILE.yaml"


class BotSpec(BaseModel):
    """A parsed `--bot` value."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: BotKind
    target: str
    """The model name, the URL or the YAML file."""
    prompt: str | None = None
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    """Per call, for connectors (an http: file's own `timeout` wins)."""

    @property
    def uses_world(self) -> bool:
        """Only the built-in order bot reads and changes parley's order database."""
        return self.kind == "model"

    @property
    def model_name(self) -> str | None:
        """The model the bot calls (model and prompt bots), None for a connector."""
        return self.target if self.kind in ("model", "prompt") else None


def parse_bot_spec(name: str | None, *, bot_prompt: str | None = None, timeout_s: float = DEFAULT_CALL_TIMEOUT_S) -> BotSpec:
    """Validate a `--bot` value (and `--bot-prompt`); ConfigError, one line, when it is wrong."""
    name = (name or OFFLINE).strip()
    scheme, sep, rest = name.partition(":")
    is_connector = bool(sep) and "/" not in scheme  # `ollama/llama3:8b` is a model name
    if is_connector and rest.startswith("//"):
        raise ConfigError(f"{name!r} is a URL, not a bot: say which API it speaks ({CONNECTOR_FORMS}), e.g. rasa:{name}")
    if is_connector and scheme not in CONNECTOR_SCHEMES:
        raise ConfigError(f"unknown connector {scheme + ':'!r} in {name!r}; connectors are {CONNECTOR_FORMS}, or give a model name")
    if is_connector:
        if bot_prompt:
            raise ConfigError(f"--bot-prompt goes with a model (a prompt bot), not with the connector {name}")
        if not rest.strip():
            raise ConfigError(f"{name!r}: {scheme}: needs a {'file' if scheme == 'http' else 'URL'} after the colon")
        if scheme == "http":
            from parley.core.bots.connectors.http_yaml import load_http_bot_config

            load_http_bot_config(rest)
        else:
            check_url(rest, what=f"{scheme}:URL")
        return BotSpec(name=name, kind=scheme, target=rest, timeout_s=timeout_s)

    parse_model_name(name)
    if not bot_prompt:
        return BotSpec(name=name, kind="model", target=name, timeout_s=timeout_s)
    if name == OFFLINE:
        raise ConfigError(
            "--bot-prompt needs an LLM (openai/MODEL, ollama/MODEL, ...): the offline model is the built-in order bot and follows no prompt"
        )
    from parley.core.bots.prompt_bot import PromptTemplate

    PromptTemplate.read(bot_prompt)
    return BotSpec(name=name, kind="prompt", target=name, prompt=bot_prompt, timeout_s=timeout_s)


def build_bot(
    spec: BotSpec,
    chat_model: Callable[[str], ChatModel],
    *,
    env: Mapping[str, str] | None = None,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
) -> Bot:
    """The bot `spec` names; `chat_model(name)` gives the model of a model or prompt bot, whose
    prompts are condensed to `context_tokens`."""
    if spec.kind == "model":
        from parley.core.bots.order_bot import OrderBot

        return OrderBot(chat_model(spec.target), context_tokens=context_tokens)
    if spec.kind == "prompt":
        from parley.core.bots.prompt_bot import PromptBot, PromptTemplate

        assert spec.prompt is not None
        return PromptBot(chat_model(spec.target), PromptTemplate.read(spec.prompt), context_tokens=context_tokens)
    if spec.kind == "rasa":
        from parley.core.bots.connectors.rasa import RasaConnector

        return RasaConnector(spec.target, timeout_s=spec.timeout_s)
    if spec.kind == "taskyto":
        from parley.core.bots.connectors.taskyto import TaskytoConnector

        return TaskytoConnector(spec.target, timeout_s=spec.timeout_s)
    from parley.core.bots.connectors.http_yaml import HttpYamlConnector

    return HttpYamlConnector(spec.target, timeout_s=spec.timeout_s, env=env)


def bot_from_name(
    name: str,
    *,
    bot_prompt: str | None = None,
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
) -> Bot:
    """The bot `name` names, its models from the registry (see the module doc)."""
    from parley.core.models.registry import get_model

    spec = parse_bot_spec(name, bot_prompt=bot_prompt, timeout_s=timeout_s)
    return build_bot(spec, lambda model: get_model(model, role="bot", env=env), env=env)


def uses_world(bot: object) -> bool:
    """Whether a bot runs against parley's World (bots that do not say so are assumed to)."""
    return bool(getattr(bot, "uses_world", True))
