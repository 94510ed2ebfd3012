"""Each batch option is declared once (parley.core.option_declarations), and every surface its
declaration names takes it, under its name, with its default: `parley run` and `parley submit`,
the pytest plugin's `--parley-*` options, the batch service's request, the Python API's
keywords, the environment, and the batch's own record. An option added to the declaration and
missed by a surface fails here, naming both."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from parley.core.library import BatchSession, RunOptions, run, run_sync
from parley.core.option_declarations import BATCH_OPTIONS, BatchOption, option, options_on
from parley.core.records import BatchOptions
from parley.core.service.models import BatchRequest, RoleModelsIn
from parley.core.settings import Settings, settings
from parley.tui.cli.main import cli
from parley.tui.cli.run_command import run as run_command
from parley.tui.cli.service_client import submit as submit_command
from parley.tui.pytest_plugin import pytest_addoption


def ids(options: tuple[BatchOption, ...] | list[BatchOption]) -> list[str]:
    return [o.name for o in options]


def params(command: click.Command) -> dict[str, click.Parameter]:
    return {p.name: p for p in command.params if p.name}


def test_the_declaration_names_each_option_once_with_a_flag_of_its_own():
    assert len(set(ids(BATCH_OPTIONS))) == len(BATCH_OPTIONS)
    assert len({o.cli_flag for o in BATCH_OPTIONS}) == len(BATCH_OPTIONS)
    for o in BATCH_OPTIONS:
        assert o.help.strip() and o.surfaces, o.name
        assert isinstance(o.default, o.kind) or o.default in (None, ()), o.name  # the default is a value it takes


@pytest.mark.parametrize("declared", BATCH_OPTIONS, ids=ids(BATCH_OPTIONS))
def test_the_batch_record_keeps_each_option_where_its_declaration_says(declared):
    record = BatchOptions.from_values({declared.name: declared.default})
    *parents, leaf = declared.option_field.split(".")
    place: Any = record
    for parent in parents:
        place = getattr(place, parent)
    stored = getattr(place, leaf)
    expected = list(declared.default) if declared.many else declared.default
    # entries read into a record (--gen ROLE.KEY=VALUE, --price MODEL=IN/OUT, --limit KEY=VALUE): none is an empty one
    assert stored == expected or (declared.many and not declared.default and not stored)
    assert stored == getattr(_walk(BatchOptions(), parents), leaf)  # the record's own default is the declared one


def _walk(record: Any, parents: list[str]) -> Any:
    for parent in parents:
        record = getattr(record, parent)
    return record


@pytest.mark.parametrize("declared", options_on("run"), ids=ids(options_on("run")))
def test_parley_run_takes_each_run_option(declared):
    param = params(run_command).get(declared.name)
    assert isinstance(param, click.Option), f"`parley run` lacks {declared.cli_flag}"
    assert declared.cli_flag in param.opts and (declared.short is None or declared.short in param.opts)
    default = param.default() if callable(param.default) else param.default
    if declared.per_bot:  # repeatable, once per bot of several: unset is (), each bot's value its declared default (bot_lineup)
        assert param.multiple and default == ()
    else:
        assert default == declared.default or (declared.many and tuple(default or ()) == declared.default)
    shown = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).stdout
    assert declared.cli_flag in shown


@pytest.mark.parametrize("declared", options_on("submit"), ids=ids(options_on("submit")))
def test_parley_submit_takes_each_submit_option_leaving_the_default_to_the_service(declared):
    param = params(submit_command).get(declared.name)
    assert isinstance(param, click.Option), f"`parley submit` lacks {declared.cli_flag}"
    assert declared.cli_flag in param.opts and param.default is None


class _Recorder:
    """A pytest parser that keeps what the plugin declares."""

    def __init__(self) -> None:
        self.options: dict[str, dict[str, Any]] = {}

    def getgroup(self, *args: Any) -> _Recorder:
        return self

    def addoption(self, *flags: str, **kwargs: Any) -> None:
        self.options[flags[0]] = kwargs


@pytest.mark.parametrize("declared", options_on("plugin"), ids=ids(options_on("plugin")))
def test_the_pytest_plugin_takes_each_plugin_option(declared):
    parser = _Recorder()
    pytest_addoption(parser)  # type: ignore[arg-type]
    assert declared.plugin_flag in parser.options, f"the pytest plugin lacks {declared.plugin_flag}"
    assert parser.options[declared.plugin_flag]["dest"] == declared.plugin_dest
    assert parser.options[declared.plugin_flag]["help"] == declared.help


@pytest.mark.parametrize("declared", options_on("service"), ids=ids(options_on("service")))
def test_the_service_takes_each_service_option(declared):
    model = RoleModelsIn if declared.role is not None else BatchRequest
    field = model.model_fields.get(declared.name)
    assert field is not None, f"the service's {model.__name__} lacks {declared.name}"
    if declared.role is None:
        assert field.default == declared.default and field.description == declared.help
        schema = BatchRequest.model_json_schema()["properties"][declared.name]
        assert schema["description"] == declared.help


@pytest.mark.parametrize("declared", options_on("api"), ids=ids(options_on("api")))
@pytest.mark.parametrize("function", [RunOptions, run, run_sync, BatchSession], ids=["RunOptions", "run", "run_sync", "BatchSession"])
def test_the_python_api_takes_each_api_option(declared, function):
    keywords = inspect.signature(function).parameters
    assert declared.name in keywords, f"{function.__name__} lacks the keyword {declared.name}"
    assert keywords[declared.name].kind is inspect.Parameter.KEYWORD_ONLY
    assert keywords[declared.name].default == declared.default


@pytest.mark.parametrize("declared", [o for o in BATCH_OPTIONS if o.env], ids=ids([o for o in BATCH_OPTIONS if o.env]))
def test_each_option_read_from_the_environment_is_a_setting(declared, monkeypatch):
    field = Settings.model_fields.get(declared.setting or "")
    assert field is not None, f"the settings lack {declared.setting} ({declared.env[0]})"
    assert tuple(field.validation_alias.choices) == declared.env and field.default == declared.default  # type: ignore[union-attr]
    value = 7 if declared.kind is int else 12.5
    if declared.maximum is not None and value > declared.maximum:  # within its bounds (a kappa is at most 1)
        value = declared.maximum / 2
    monkeypatch.setenv(declared.env[-1], str(value))
    assert getattr(settings(), declared.setting or "") == value  # the last alias is read too


def test_a_run_option_typed_on_the_command_line_reaches_the_stored_batch(tmp_path):
    db = tmp_path / "parley.db"
    profile = Path(__file__).resolve().parent.parent / "profiles" / "track_shipped_order.yaml"
    args = ["run", str(profile), "--db", str(db), "--max-turns", "4", "--timeout", "33", "-k", "2", "--seed", "5", "--bot-timeout", "7"]
    result = CliRunner().invoke(cli, [*args, "--prompt-version", "v9", "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    from parley.core.store import Store

    with Store.open(db) as store:
        options = store.get_batch("latest").options
    assert (options.max_turns, options.timeout_s, options.trials, options.seed) == (4, 33.0, 2, 5)
    assert (options.models.bot_timeout_s, options.prompt_version, options.cache) == (7.0, "v9", False)
    assert option("max_turns").lineage == "kept" and option("bot").lineage == "may_change"
