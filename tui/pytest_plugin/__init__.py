"""parley's pytest plugin (entry point `pytest11`): conversation tests in pytest, inert unless asked.

- `pytest --parley profiles/` collects the profile, playbook and scenario files under the given
  paths as test items, one per spec and trial, named `FILE::SPEC_ID[TRIAL]`, read as `parley run`
  reads them. Without `--parley` no YAML or JSON file is ever collected (a bare `pytest`, parley's
  own `make test` included, is untouched).
- The `parley` fixture runs conversations written by hand in a test, sync or async:
  `result = parley.converse(bot=my_bot, goals=[...])`, `await parley.aconverse(...)`;
  `assert result.passed, result.explain()`.
- `--parley-bot`, `--parley-user`, `--parley-judge`, `--parley-trials`, `--parley-concurrency`,
  `--parley-seed`, `--parley-max-turns`, `--parley-timeout`, `--parley-bot-timeout` and
  `--parley-rules` are `parley run`'s options, made from their declarations (the `plugin` ones of
  parley.core.option_declarations); `--parley-db` and `--parley-strict` are its `--db` and `--strict`.

The whole session is one stored batch (source `python`; its id in pytest's summary), its items
run concurrently under one adaptive limit while pytest reports them in order
(parley.tui.pytest_plugin.session); under pytest-xdist each worker stores a batch of its own and
the summary names each. How outcomes map to pytest's is parley.tui.pytest_plugin.items. With
`--parley-rules`, a rule about one conversation is a check of its item; the pair and batch rules
are decided when the session ends (its batch complete), shown in the summary, and one that
failed fails the session.

This module is what pytest imports at every start: it declares the options and hooks, and loads
the rest (the engine, click) only when `--parley` or the fixture asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from parley.core.option_declarations import options_on
from parley.tui.cli.run_option_help import RUN_OPTION_HELP

if TYPE_CHECKING:
    from parley.tui.pytest_plugin.fixture import ParleyFixture


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("parley", "parley: conversation tests of a customer-service bot")
    group.addoption(
        "--parley",
        action="store_true",
        default=False,
        help="Collect parley's profile, playbook and scenario files (YAML, JSON) under the given paths as tests, "
        "one per spec and trial; without it no such file is collected.",
    )
    for declared in options_on("plugin"):
        group.addoption(
            declared.plugin_flag,
            dest=declared.plugin_dest,
            default=None,
            metavar=declared.metavar or declared.name.upper(),
            help=declared.help,
        )
    group.addoption("--parley-db", dest="parley_db", default=None, metavar="PATH", help=RUN_OPTION_HELP["db"])
    group.addoption("--parley-strict", action="store_true", default=False, help=RUN_OPTION_HELP["strict"])


def pytest_configure(config: pytest.Config) -> None:
    dests = ["parley_db", *(o.plugin_dest for o in options_on("plugin"))]
    if config.getoption("parley") or any(config.getoption(dest) is not None for dest in dests):
        from parley.tui.pytest_plugin.options import read_options, refuse_values_taken_for_paths

        # `--parley-db PATH` must not move the rootdir
        refuse_values_taken_for_paths(config, ["db", *(o.plugin_flag.removeprefix("--parley-") for o in options_on("plugin"))])
        read_options(config)  # a bad value is a usage error now, before anything is collected


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not parent.config.getoption("parley") or file_path.suffix.lower() not in (".yaml", ".yml", ".json"):
        return None
    from parley.tui.pytest_plugin.items import collect_file

    return collect_file(file_path, parent)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    from parley.tui.pytest_plugin.session import submit_collected

    submit_collected(session)  # nothing unless this session collected parley items


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from parley.tui.pytest_plugin.session import end_session

    end_session(session, exitstatus)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: on the controller, a worker finished
def pytest_testnodedown(node: Any, error: Any) -> None:
    from parley.tui.pytest_plugin.session import worker_batch

    worker_batch(node)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    from parley.tui.pytest_plugin.session import summary_lines

    for line in summary_lines(config):
        terminalreporter.write_line(line)


@pytest.fixture
def parley(request: pytest.FixtureRequest) -> Iterator[ParleyFixture]:
    """Conversations written by hand, run in this session's batch: `parley.converse(...)` in a
    sync test, `await parley.aconverse(...)` in an async one (see ParleyFixture)."""
    from parley.tui.pytest_plugin.fixture import ParleyFixture

    yield ParleyFixture(request)
