"""The plugin's `--parley-*` options, read and checked as `parley run` checks its own: the numbers
with the same click types (parley.tui.cli.batch_options: a count out of range, `inf` or `nan` is
refused), the roles' names as the engine reads them, a Python bot imported once, now, the rule
files of `--parley-rules` read and checked as `parley run --rules` checks them. A bad value is a
pytest usage error naming the option, before anything is collected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["PluginOptions", "read_options"]

_KEY = pytest.StashKey["PluginOptions"]()


@dataclass(frozen=True)
class PluginOptions:
    """What the session's batch runs with: `parley run`'s options and their defaults."""

    bot: str
    user: str
    judge: str
    trials: int
    concurrency: int
    seed: int
    max_turns: int
    timeout_s: float
    bot_timeout_s: float
    db: Path
    strict: bool
    rules: str | None
    """`--parley-rules`: the rule files' absolute path (checked), or None."""


def _convert(config: pytest.Config, name: str, kind: Any, default: Any) -> Any:
    import click

    raw = config.getoption(f"parley_{name.replace('-', '_')}")
    if raw is None:
        return default
    try:
        return kind.convert(raw, None, None)
    except click.BadParameter as exc:
        raise pytest.UsageError(f"--parley-{name}: {exc.message}") from None


def _role(name: str, value: str) -> str:
    from parley.core.bots import PythonBot, parse_bot_spec
    from parley.core.errors import ConfigError
    from parley.core.models import parse_model_name

    value = value.strip() or "offline"
    try:
        if name == "bot":
            if parse_bot_spec(value).kind == "python":
                PythonBot.load(value)  # imported now: a module that cannot be is one line, before anything runs
        elif not (name == "user" and value == "profile"):
            parse_model_name(value)
    except ConfigError as exc:
        raise pytest.UsageError(f"--parley-{name}: {exc}") from None
    return value


def _rules(config: pytest.Config) -> str | None:
    from parley.core.errors import ConfigError
    from parley.core.library import SpecsInvalid, checked_rules

    raw = config.getoption("parley_rules")
    if raw is None:
        return None
    try:
        return checked_rules(raw, option="--parley-rules")
    except ConfigError as exc:  # not there, or no rule file there: the message names the option
        raise pytest.UsageError(str(exc)) from None
    except SpecsInvalid as exc:  # every problem of the files, each as file:line: rule.field: reason
        raise pytest.UsageError(f"--parley-rules {raw}: {exc}") from None


def read_options(config: pytest.Config) -> PluginOptions:
    """The session's options (read once, then kept in the config's stash)."""
    if _KEY in config.stash:
        return config.stash[_KEY]
    import click

    from parley.core.errors import ConfigError
    from parley.core.log_file import keep_log_beside
    from parley.core.records import RoleModels
    from parley.core.settings import settings
    from parley.tui.cli.batch_options import BOT_TIMEOUT_TYPE, CONCURRENCY_TYPE, MAX_TURNS_TYPE, SEED_TYPE, TIMEOUT_TYPE, TRIALS_TYPE

    try:
        defaults = settings()  # PARLEY_CONCURRENCY and the like, as `parley run` reads them
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    db = _convert(config, "db", click.Path(dir_okay=False, path_type=Path), defaults.db_path)
    keep_log_beside(db)  # before a Python bot is imported: its traceback goes to parley.log, never above pytest's one line
    options = PluginOptions(
        bot=_role("bot", config.getoption("parley_bot") or "offline"),
        user=_role("user", config.getoption("parley_user") or "offline"),
        judge=_role("judge", config.getoption("parley_judge") or "offline"),
        trials=_convert(config, "trials", TRIALS_TYPE, 1),
        concurrency=_convert(config, "concurrency", CONCURRENCY_TYPE, defaults.concurrency),
        seed=_convert(config, "seed", SEED_TYPE, 0),
        max_turns=_convert(config, "max-turns", MAX_TURNS_TYPE, defaults.max_turns),
        timeout_s=_convert(config, "timeout", TIMEOUT_TYPE, defaults.timeout_sec),
        bot_timeout_s=_convert(config, "bot-timeout", BOT_TIMEOUT_TYPE, RoleModels().bot_timeout_s),
        db=db,
        strict=bool(config.getoption("parley_strict")),
        rules=_rules(config),
    )
    config.stash[_KEY] = options
    return options
