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

__all__ = ["PluginOptions", "read_options", "refuse_values_taken_for_paths"]

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


def _setup_without(config: pytest.Config, values: set[int]) -> tuple[Path, Path | None] | None:
    """pytest's rootdir and ini file had the arguments at `values` (their positions) not been
    there; None when pytest's own finder cannot be reached (another version of pytest)."""
    try:
        from _pytest.config.findpaths import determine_setup  # pytest's own, so the answer is its answer
    except ImportError:  # pragma: no cover - a pytest without it: nothing to compare with
        return None
    args = [arg for n, arg in enumerate(config.invocation_params.args) if n not in values]
    try:
        rootpath, inipath, _ = determine_setup(
            inifile=config.option.inifilename,
            args=[arg for arg in args if not arg.startswith("-")],
            rootdir_cmd_arg=config.option.rootdir or None,
            invocation_dir=config.invocation_params.dir,
        )
    except (TypeError, pytest.UsageError):  # pragma: no cover - its signature changed
        return None
    return rootpath, inipath


def refuse_values_taken_for_paths(config: pytest.Config, names: list[str]) -> None:
    """pytest looks for its rootdir and settings before it knows the plugin's options, so the value
    of `--parley-db PATH` written with a space is a test path to it, if that path exists: its
    rootdir (and the node ids, and the pyproject it reads) move with it. A usage error when that
    happened, saying to write `--parley-db=PATH`; nothing when the value changed nothing."""
    args = list(config.invocation_params.args)
    values = {n + 1 for n, arg in enumerate(args[:-1]) if arg in {f"--parley-{name}" for name in names}}
    if not values:
        return
    setup = _setup_without(config, values)
    if setup is None or setup == (config.rootpath, config.inipath):
        return
    option, value = next((args[n - 1], args[n]) for n in sorted(values))
    raise pytest.UsageError(
        f"{option} {value}: pytest took this value for a test path, and chose its rootdir ({config.rootpath}) and settings "
        f"from it, before it knew parley's options; write {option}={value}"
    )


def read_options(config: pytest.Config) -> PluginOptions:
    """The session's options (read once, then kept in the config's stash)."""
    if _KEY in config.stash:
        return config.stash[_KEY]
    import click

    from parley.core.errors import ConfigError
    from parley.core.records import RoleModels
    from parley.core.settings import settings
    from parley.tui.cli.batch_options import BOT_TIMEOUT_TYPE, CONCURRENCY_TYPE, MAX_TURNS_TYPE, SEED_TYPE, TIMEOUT_TYPE, TRIALS_TYPE

    try:
        defaults = settings()  # PARLEY_CONCURRENCY and the like, as `parley run` reads them
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
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
        db=_convert(config, "db", click.Path(dir_okay=False, path_type=Path), defaults.db_path),
        strict=bool(config.getoption("parley_strict")),
        rules=_rules(config),
    )
    config.stash[_KEY] = options
    return options
