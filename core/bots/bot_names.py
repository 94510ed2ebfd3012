"""What `--bot` names: parley's built-in order bot on a model, a prompt bot, or a connector to a
chatbot deployed elsewhere.

    offline | openai/MODEL | ...        the built-in bot on that model (the world's tools; offline: the world's own offline model)
    MODEL + --bot-prompt FILE           a prompt bot: the model, FILE as system prompt, no tools
    rasa:URL                            a Rasa REST channel webhook (parley.core.bots.connectors.rasa)
    taskyto:URL                         a Taskyto server (parley.core.bots.connectors.taskyto)
    http:FILE.yaml                      an HTTP API described in YAML (parley.core.bots.connectors.http_yaml)
    python:PACKAGE.MODULE:NAME          a Python callable called in-process (parley.core.bots.python_bot)
    tau2:gold, tau2:null, ...           a bot a world ships for its suites (the world registry's
                                        known_bots): a Python bot under its own name

`parse_bot_spec` validates a name without opening a connection (it reads the prompt or YAML
file): every mistake is one ConfigError line naming the file and field. `build_bot` turns a
valid spec into the `Bot` (a Python bot's module is imported then, once). The built-in order bot
and a Python bot (whose `tools` are the World's) use parley's World; the others run without it
and their world checks are reported as not applicable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal, TypedDict, cast

from pydantic import BaseModel, ConfigDict

from parley.core.bots.api import Bot
from parley.core.bots.connectors.base import DEFAULT_CALL_TIMEOUT_S, DEFAULT_MAX_REPLY_BYTES, check_url
from parley.core.errors import ConfigError
from parley.core.models import OFFLINE, ChatModel, parse_model_name
from parley.core.prompts import DEFAULT_CONTEXT_TOKENS
from parley.core.records import GenerateConfig

if TYPE_CHECKING:
    from parley.core.bots.python_bot import PythonBot

BotKind = Literal["model", "prompt", "rasa", "taskyto", "http", "python"]
CONNECTOR_KINDS: dict[str, BotKind] = {"rasa": "rasa", "taskyto": "taskyto", "http": "http"}
"""A connector's scheme (`rasa:URL`) and the kind of bot it makes."""
CONNECTOR_SCHEMES: tuple[str, ...] = tuple(CONNECTOR_KINDS)
CONNECTOR_FORMS = "rasa:URL, taskyto:URL, http:FILE.yaml"
PYTHON_SCHEME = "python"


class Limits(TypedDict):
    """A bot's limits per call and per reply, as BotSpec takes them."""

    timeout_s: float
    max_reply_bytes: int


class BotSpec(BaseModel):
    """A parsed `--bot` value."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: BotKind
    target: str
    """The model name, the URL, the YAML file, or a Python bot's MODULE:NAME."""
    prompt: str | None = None
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    """Per call, for connectors (an http: file's own `timeout` wins) and Python bots."""
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    """Per reply, for connectors: the most of a body that is read."""

    @property
    def uses_world(self) -> bool:
        """See `kind_uses_world`."""
        return kind_uses_world(self.kind)

    @property
    def model_name(self) -> str | None:
        """The model the bot calls (model and prompt bots), None for a connector."""
        return self.target if self.kind in ("model", "prompt") else None


def kind_uses_world(kind: BotKind) -> bool:
    """The built-in order bot and a Python bot (through its `tools`) read and change parley's
    order database, and parley sees their tool calls; a connector or a prompt bot does neither."""
    return kind in ("model", "python")


def _connector_scheme(name: str) -> str | None:
    """The scheme of a connector name (`rasa:URL` -> rasa), None for a model name."""
    scheme, sep, _ = name.partition(":")
    return scheme if sep and "/" not in scheme else None  # `ollama/llama3:8b` is a model name


def world_bot_target(name: str) -> str | None:
    """The Python bot (`MODULE:NAME`) a world ships under the bot name `name`, None for any other name."""
    from parley.core.world import known_bots

    return known_bots().get(name.strip()) if ":" in name and "/" not in name.partition(":")[0] else None


def _shipped_bots() -> list[str]:
    from parley.core.world import known_bots

    return sorted(known_bots())


def bot_kind(name: str | None, *, bot_prompt: str | None = None) -> BotKind:
    """What a `--bot` value names (model, prompt, or a connector's scheme), from the name alone:
    nothing is read or checked (a stored batch's bot is described so, its files long gone)."""
    if name and world_bot_target(name) is not None:
        return "python"
    scheme = _connector_scheme((name or OFFLINE).strip())
    if scheme is not None:
        return cast(BotKind, scheme)  # an unknown scheme is a connector all the same: not parley's World
    return "prompt" if bot_prompt else "model"


def parse_bot_spec(
    name: str | None,
    *,
    bot_prompt: str | None = None,
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> BotSpec:
    """Validate a `--bot` value (and `--bot-prompt`); ConfigError, one line, when it is wrong.
    A Python bot's form is checked, its module not imported (`build_bot` imports it)."""
    limits = Limits(timeout_s=timeout_s, max_reply_bytes=max_reply_bytes)
    name = (name or OFFLINE).strip()
    scheme, sep, rest = name.partition(":")
    if sep and scheme == PYTHON_SCHEME:
        from parley.core.bots.python_bot import split_python_target

        if bot_prompt:
            raise ConfigError(f"--bot-prompt goes with a model (a prompt bot), not with the Python bot {name}")
        split_python_target(name)
        return BotSpec(name=name, kind="python", target=rest.strip(), **limits)
    shipped = world_bot_target(name)
    if shipped is not None:
        if bot_prompt:
            raise ConfigError(f"--bot-prompt goes with a model (a prompt bot), not with the bot {name}")
        return BotSpec(name=name, kind="python", target=shipped, **limits)
    is_connector = _connector_scheme(name) is not None
    if is_connector and rest.startswith("//"):
        raise ConfigError(f"{name!r} is a URL, not a bot: say which API it speaks ({CONNECTOR_FORMS}), e.g. rasa:{name}")
    if is_connector and scheme not in CONNECTOR_SCHEMES:
        raise ConfigError(
            f"unknown connector {scheme + ':'!r} in {name!r}; connectors are {CONNECTOR_FORMS}, a Python bot is "
            f"python:PACKAGE.MODULE:NAME, the bots worlds ship are {', '.join(_shipped_bots())}, or give a model name"
        )
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
        return BotSpec(name=name, kind=CONNECTOR_KINDS[scheme], target=rest, **limits)

    parse_model_name(name)
    if not bot_prompt:
        return BotSpec(name=name, kind="model", target=name, **limits)
    if name == OFFLINE:
        raise ConfigError(
            "--bot-prompt needs an LLM (openai/MODEL, ollama/MODEL, ...): the offline model is the order world's rule-based bot and follows no prompt"
        )
    from parley.core.bots.prompt_bot import PromptTemplate

    PromptTemplate.read(bot_prompt)
    return BotSpec(name=name, kind="prompt", target=name, prompt=bot_prompt, **limits)


def build_bot(
    spec: BotSpec,
    chat_model: Callable[[str], ChatModel],
    *,
    env: Mapping[str, str] | None = None,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    config: GenerateConfig | None = None,
) -> Bot:
    """The bot `spec` names; `chat_model(name)` gives the model of a model or prompt bot, whose
    prompts are condensed to `context_tokens` and whose requests carry `config` (the generation
    settings given for the bot; a connector or a Python bot has no model of parley's to send them to)."""
    if spec.kind == "model":
        from parley.core.bots.world_bot import WorldBot

        return WorldBot(world_bot_model(spec.target, chat_model), config=config, context_tokens=context_tokens)
    if spec.kind == "prompt":
        from parley.core.bots.prompt_bot import PromptBot, PromptTemplate

        assert spec.prompt is not None
        return PromptBot(chat_model(spec.target), PromptTemplate.read(spec.prompt), config=config, context_tokens=context_tokens)
    if spec.kind == "python":
        return load_python_bot(spec)
    if spec.kind == "rasa":
        from parley.core.bots.connectors.rasa import RasaConnector

        return RasaConnector(spec.target, timeout_s=spec.timeout_s, max_reply_bytes=spec.max_reply_bytes)
    if spec.kind == "taskyto":
        from parley.core.bots.connectors.taskyto import TaskytoConnector

        return TaskytoConnector(spec.target, timeout_s=spec.timeout_s, max_reply_bytes=spec.max_reply_bytes)
    from parley.core.bots.connectors.http_yaml import HttpYamlConnector

    return HttpYamlConnector(spec.target, timeout_s=spec.timeout_s, max_reply_bytes=spec.max_reply_bytes, env=env)


def load_python_bot(spec: BotSpec) -> PythonBot:
    """The Python bot `spec` names (`python:MODULE:NAME`, or a bot a world ships), its module
    imported now: ConfigError, one line, when it cannot be."""
    from parley.core.bots.python_bot import PythonBot

    return PythonBot.load(f"{PYTHON_SCHEME}:{spec.target}", name=spec.name, timeout_s=spec.timeout_s)


def world_bot_model(name: str, chat_model: Callable[[str], ChatModel] | None = None) -> ChatModel | None:
    """The model the built-in bot runs on: None for `offline` (each world's own offline model, the
    order world's rule-based one), else `chat_model(name)` (default: the registry's model for the
    bot role)."""
    if name.strip() == OFFLINE:
        return None
    if chat_model is None:
        from parley.core.models import get_model

        return get_model(name, role="bot")
    return chat_model(name)


def bot_from_name(
    name: str,
    *,
    bot_prompt: str | None = None,
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
) -> Bot:
    """The bot `name` names, its models from the registry (see the module doc)."""
    from parley.core.models import get_model

    spec = parse_bot_spec(name, bot_prompt=bot_prompt, timeout_s=timeout_s)
    return build_bot(spec, lambda model: get_model(model, role="bot", env=env), env=env)


def uses_world(bot: object) -> bool:
    """Whether a bot runs against parley's World (bots that do not say so are assumed to)."""
    return bool(getattr(bot, "uses_world", True))
