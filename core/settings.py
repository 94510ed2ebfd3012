"""What parley reads from its environment, in one place: one pydantic-settings model.

Provider keys and base URLs (OPENAI_API_KEY, ...) are not here: they belong to the endpoint a
model name describes and are resolved when that model is about to be used
(parley.core.models.names), so an unset key never breaks a command that does not need it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from parley.core.errors import SettingError

DEFAULT_DB_PATH = Path("sessions") / "parley.db"
DEFAULT_API_URL = "http://127.0.0.1:5000"
MAX_CONTEXT_TOKENS = 100_000_000
"""The largest context length a role may be given (well past any model's)."""
DEFAULT_JUDGE_MAX_TOKENS = 400
"""The most tokens a judge's answer may take (a score and a comment need far fewer): sent with
every judge request, so a small local model that rambles ends at it instead of at the timeout."""


class Settings(BaseSettings):
    """parley's settings from the environment. The simulation service's names (CONCURRENCY,
    MAX_TURNS, TIMEOUT_SEC) are kept as aliases of the PARLEY_ ones; the PARLEY_ name wins."""

    model_config = SettingsConfigDict(env_prefix="PARLEY_", extra="ignore", case_sensitive=False)

    db: Path | None = None
    """PARLEY_DB: the SQLite file chats and batch results are kept in (default sessions/parley.db)."""
    api_token: str | None = None
    """PARLEY_API_TOKEN: the batch service's bearer token (`parley serve` requires it of callers;
    `parley submit/status/fetch` send it)."""
    api_url: str = DEFAULT_API_URL
    """PARLEY_API_URL: where `parley submit/status/fetch` find the batch service."""
    concurrency: int = Field(4, ge=1, le=10_000, validation_alias=AliasChoices("PARLEY_CONCURRENCY", "CONCURRENCY"))
    """PARLEY_CONCURRENCY (or CONCURRENCY): conversations in flight at once in `parley run`."""
    max_turns: int = Field(30, ge=1, le=1000, validation_alias=AliasChoices("PARLEY_MAX_TURNS", "MAX_TURNS"))
    """PARLEY_MAX_TURNS (or MAX_TURNS): bot answers per conversation before it stops."""
    timeout_sec: float = Field(90.0, gt=0, allow_inf_nan=False, validation_alias=AliasChoices("PARLEY_TIMEOUT_SEC", "TIMEOUT_SEC"))
    """PARLEY_TIMEOUT_SEC (or TIMEOUT_SEC): wall-clock limit of each conversation, in seconds."""

    bot_context: int | None = Field(None, gt=0, le=MAX_CONTEXT_TOKENS)
    """PARLEY_BOT_CONTEXT: the bot model's context length in tokens (`--bot-context`); unset: what its
    endpoint reported before launch, if it did, else 4096. Prompts parley builds for it are
    condensed to fit."""
    user_context: int | None = Field(None, gt=0, le=MAX_CONTEXT_TOKENS)
    """PARLEY_USER_CONTEXT: the user simulator model's context length in tokens (`--user-context`)."""
    judge_context: int | None = Field(None, gt=0, le=MAX_CONTEXT_TOKENS)
    """PARLEY_JUDGE_CONTEXT: the judge model's context length in tokens (`--judge-context`)."""
    judge_max_tokens: int = Field(DEFAULT_JUDGE_MAX_TOKENS, ge=16, le=MAX_CONTEXT_TOKENS)
    """PARLEY_JUDGE_MAX_TOKENS: the most tokens the judge's answer may take (`max_tokens` of each
    judge request; the criteria judge's call gets this much per criterion it decides)."""

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """PARLEY_LOG_LEVEL: how much goes to parley.log beside the database."""

    @property
    def db_path(self) -> Path:
        """The database file: PARLEY_DB, else sessions/parley.db under the current directory."""
        return self.db if self.db else Path.cwd() / DEFAULT_DB_PATH

    @property
    def token(self) -> str | None:
        """The API token, blank counted as none."""
        return (self.api_token or "").strip() or None


def settings() -> Settings:
    """The environment as parley's settings, read now (so a changed environment is seen). A value
    that is not what its variable takes (a non-finite number too) is a SettingError naming the variable."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = [f"{_variable(str(error['loc'][0]) if error['loc'] else '')}: {error['msg']}" for error in exc.errors()]
        raise SettingError("bad setting in the environment: " + "; ".join(problems)) from None


def _variable(loc: str) -> str:
    """The variable a user set for the field at `loc`, as they wrote it (an alias or the PARLEY_ name)."""
    for name, field in Settings.model_fields.items():
        choices = field.validation_alias.choices if isinstance(field.validation_alias, AliasChoices) else [f"PARLEY_{name}"]
        names = [str(c).upper() for c in choices]
        if loc.upper() in names or loc == name:
            set_here = [n for n in names if n in {k.upper() for k in os.environ}]
            return " / ".join(set_here) or names[0]
    return loc.upper() or "environment"
