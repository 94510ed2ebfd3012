"""The plugin's `--parley-*` options, read and checked as `parley run` checks its own: each with the
click type its declaration makes (parley.tui.cli.batch_options.click_type: a count out of range,
`inf` or `nan` is refused), the roles' names as the engine reads them, a Python bot imported once, now, the rule
files of `--parley-rules` read and checked as `parley run --rules` checks them. A bad value is a
pytest usage error naming the option, before anything is collected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from parley.core.option_declarations import BatchOption, option, options_on

if TYPE_CHECKING:
    from parley.core.settings import Settings

__all__ = ["PluginOptions", "read_options", "refuse_values_taken_for_paths"]

_KEY = pytest.StashKey["PluginOptions"]()


@dataclass(frozen=True)
class PluginOptions:
    """What the session's batch runs with: `parley run`'s options and their defaults."""

    batch: dict[str, Any]
    """Each declared `plugin` option's value, by name (parley.core.option_declarations)."""
    db: Path
    strict: bool

    @property
    def seed(self) -> int:
        return int(self.batch["seed"])

    @property
    def trials(self) -> int:
        return int(self.batch["trials"])

    def session_keywords(self) -> dict[str, Any]:
        """The keywords of the session's BatchSession: the options the Python API takes, and the database."""
        return {name: value for name, value in self.batch.items() if option(name).on("api")} | {"db": self.db}


def _convert(raw: str, declared: BatchOption) -> Any:
    import click

    from parley.tui.cli.batch_options import click_type

    kind = click_type(declared)
    try:
        return kind.convert(raw, None, None) if kind is not None else raw
    except click.BadParameter as exc:
        raise pytest.UsageError(f"{declared.plugin_flag}: {exc.message}") from None


def _value(config: pytest.Config, declared: BatchOption, defaults: Settings) -> Any:
    """The option's value: as given (checked as `parley run` checks it), else its default (read
    from the environment as `parley run` reads it)."""
    raw = config.getoption(declared.plugin_dest)
    if declared.role is not None:
        return _role(declared.name, raw or declared.default)
    if declared.name == "rules":
        return _rules(raw)
    if raw is None:
        return getattr(defaults, declared.setting) if declared.setting else declared.default
    return _convert(raw, declared)


def _role(name: str, value: str) -> str:
    from parley.core.bots import load_python_bot, parse_bot_spec
    from parley.core.errors import ConfigError
    from parley.core.models import parse_model_name

    value = value.strip() or "offline"
    try:
        if name == "bot":
            spec = parse_bot_spec(value)
            if spec.kind == "python":
                load_python_bot(spec)  # imported now: a module that cannot be is one line, before anything runs
        elif not (name == "user" and value == "profile"):
            parse_model_name(value)
    except ConfigError as exc:
        raise pytest.UsageError(f"{option(name).plugin_flag}: {exc}") from None
    return value


def _rules(raw: str | None) -> str | None:
    from parley.core.errors import ConfigError
    from parley.core.library import SpecsInvalid, checked_rules

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
    from parley.core.log_file import keep_log_beside
    from parley.core.settings import settings

    try:
        defaults = settings()  # PARLEY_CONCURRENCY and the like, as `parley run` reads them
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    raw_db = config.getoption("parley_db")
    try:
        db = click.Path(dir_okay=False, path_type=Path).convert(raw_db, None, None) if raw_db is not None else defaults.db_path
    except click.BadParameter as exc:
        raise pytest.UsageError(f"--parley-db: {exc.message}") from None
    keep_log_beside(db)  # before a Python bot is imported: its traceback goes to parley.log, never above pytest's one line
    options = PluginOptions(
        batch={declared.name: _value(config, declared, defaults) for declared in options_on("plugin")},
        db=db,
        strict=bool(config.getoption("parley_strict")),
    )
    config.stash[_KEY] = options
    return options
