"""What parley reads from its environment, in one place: one pydantic model, read by `settings()`.

Each field is read from PARLEY_ and its name in upper case (any case is taken), or from the
variables its `validation_alias` names, the first one set winning. (pydantic-settings did this
before; for these few plain values its import, a tenth of a second on every command, bought
nothing more.)

Provider keys and base URLs (OPENAI_API_KEY, ...) are not here: they belong to the endpoint a
model name describes and are resolved when that model is about to be used
(parley.core.models.names), so an unset key never breaks a command that does not need it.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from parley.core.errors import SettingError
from parley.core.option_declarations import BATCH_OPTIONS, MAX_CONTEXT_TOKENS, BatchOption

__all__ = ["DEFAULT_API_URL", "DEFAULT_DB_PATH", "MAX_CONTEXT_TOKENS", "Settings", "settings"]

DEFAULT_DB_PATH = Path("sessions") / "parley.db"
DEFAULT_API_URL = "http://127.0.0.1:5000"
DEFAULT_JUDGE_MAX_TOKENS = 400
"""The most tokens a judge's answer may take (a score and a comment need far fewer): sent with
every judge request, so a small local model that rambles ends at it instead of at the timeout."""


def _from_declaration(setting: str) -> Any:
    """The field of a batch option read from the environment: its default, bounds and variables,
    as parley.core.option_declarations declares them."""
    declared: BatchOption = next(o for o in BATCH_OPTIONS if o.setting == setting)
    limits: dict[str, Any] = {"gt" if declared.above_minimum else "ge": declared.minimum} if declared.minimum is not None else {}
    if declared.maximum is not None:
        limits["le"] = declared.maximum
    if declared.kind is float:
        limits["allow_inf_nan"] = False
    return Field(declared.default, validation_alias=AliasChoices(*declared.env), **limits)


class Settings(BaseModel):
    """parley's settings from the environment. The batch options read from it (concurrency, max
    turns, timeout, the roles' context lengths) take their variables, defaults and bounds from
    their declarations (parley.core.option_declarations); the simulation service's names
    (CONCURRENCY, MAX_TURNS, TIMEOUT_SEC) are kept as aliases of the PARLEY_ ones, which win."""

    model_config = ConfigDict(extra="ignore")

    db: Path | None = None
    """PARLEY_DB: the SQLite file chats and batch results are kept in (default sessions/parley.db)."""
    api_token: str | None = None
    """PARLEY_API_TOKEN: the batch service's bearer token (`parley serve` requires it of callers;
    `parley submit/status/fetch` send it)."""
    api_url: str = DEFAULT_API_URL
    """PARLEY_API_URL: where `parley submit/status/fetch` find the batch service."""
    concurrency: int = _from_declaration("concurrency")
    """PARLEY_CONCURRENCY (or CONCURRENCY): conversations in flight at once in `parley run`."""
    max_turns: int = _from_declaration("max_turns")
    """PARLEY_MAX_TURNS (or MAX_TURNS): bot answers per conversation before it stops."""
    timeout_sec: float = _from_declaration("timeout_sec")
    """PARLEY_TIMEOUT_SEC (or TIMEOUT_SEC): wall-clock limit of each conversation, in seconds."""

    bot_context: int | None = _from_declaration("bot_context")
    """PARLEY_BOT_CONTEXT: the bot model's context length in tokens (`--bot-context`); unset: what its
    endpoint reported before launch, if it did, else 4096. Prompts parley builds for it are
    condensed to fit."""
    user_context: int | None = _from_declaration("user_context")
    """PARLEY_USER_CONTEXT: the user simulator model's context length in tokens (`--user-context`)."""
    judge_context: int | None = _from_declaration("judge_context")
    """PARLEY_JUDGE_CONTEXT: the judge model's context length in tokens (`--judge-context`)."""
    judge_max_tokens: int = Field(DEFAULT_JUDGE_MAX_TOKENS, ge=16, le=MAX_CONTEXT_TOKENS)
    """PARLEY_JUDGE_MAX_TOKENS: the most tokens the judge's answer may take (`max_tokens` of each
    judge request; the criteria judge's call gets this much per criterion it decides): the default
    of the judge's generation setting `max_tokens`, which `--gen judge.max_tokens=N` replaces."""

    world_host: str = "127.0.0.1"
    """PARLEY_WORLD_HOST: the address the server of each conversation's world binds, for deployed
    bots (loopback by default; `0.0.0.0` for a bot on another machine or in a container)."""
    world_url: str | None = None
    """PARLEY_WORLD_URL: the base URL a deployed bot reaches that server at, when not the address it
    binds (e.g. `http://10.0.0.5:8123`: the server listens on its port); None: its own address."""

    min_kappa: float = _from_declaration("min_kappa")
    """PARLEY_MIN_KAPPA: the judge's measured kappa a verdict must reach not to be marked below
    threshold (`--min-kappa`, default 0.6)."""

    labeller: str | None = None
    """PARLEY_LABELLER: who labels conversations in the app (default: the login name)."""

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """PARLEY_LOG_LEVEL: how much goes to parley.log beside the database."""

    @property
    def db_path(self) -> Path:
        """The database file: PARLEY_DB, else sessions/parley.db under the current directory."""
        return self.db if self.db else Path.cwd() / DEFAULT_DB_PATH

    @property
    def labeller_name(self) -> str:
        """Who labels in the app: PARLEY_LABELLER, else the login name (`me` when there is none)."""
        if self.labeller and self.labeller.strip():
            return self.labeller.strip()
        try:
            return getpass.getuser() or "me"
        except (OSError, KeyError):  # no login name (a container without one)
            return "me"

    @property
    def token(self) -> str | None:
        """The API token, blank counted as none."""
        return (self.api_token or "").strip() or None


def settings() -> Settings:
    """The environment as parley's settings, read now (so a changed environment is seen). A value
    that is not what its variable takes (a non-finite number too) is a SettingError naming the variable."""
    try:
        return Settings.model_validate(_from_environment(os.environ))
    except ValidationError as exc:
        problems = [f"{_variable(str(error['loc'][0]) if error['loc'] else '')}: {error['msg']}" for error in exc.errors()]
        raise SettingError("bad setting in the environment: " + "; ".join(problems)) from None


def _variables(name: str) -> list[str]:
    """The variables field `name` is read from, the first one winning."""
    alias = Settings.model_fields[name].validation_alias
    return [str(c) for c in alias.choices] if isinstance(alias, AliasChoices) else [f"PARLEY_{name.upper()}"]


def _from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The set variables as the model takes them: under the variable read for a field with
    aliases (which pydantic matches), else under the field's name; names compared in any case."""
    upper = {key.upper(): value for key, value in environ.items()}
    found: dict[str, str] = {}
    for name, field in Settings.model_fields.items():
        for variable in _variables(name):
            if variable.upper() in upper:
                found[variable if field.validation_alias is not None else name] = upper[variable.upper()]
                break
    return found


def _variable(loc: str) -> str:
    """The variable a user set for the field at `loc`, as they wrote it (an alias or the PARLEY_ name)."""
    for name, field in Settings.model_fields.items():
        choices = field.validation_alias.choices if isinstance(field.validation_alias, AliasChoices) else [f"PARLEY_{name}"]
        names = [str(c).upper() for c in choices]
        if loc.upper() in names or loc == name:
            set_here = [n for n in names if n in {k.upper() for k in os.environ}]
            return " / ".join(set_here) or names[0]
    return loc.upper() or "environment"
