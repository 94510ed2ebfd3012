"""Fixtures shared across the suite."""

from __future__ import annotations

import datetime as dt
import logging

# Registers and loads the hypothesis profiles before any test module is collected.
import property_settings  # noqa: F401
import pytest

# Tests that hold the machine to a clock: they kill processes at a moment, start Ray clusters of
# several processes, or give a real model a time limit. `make test` runs them after the rest,
# alone (`--phase serial`): beside another worker on two cores, a stop reached Ray's workers late
# enough once that nothing was left to cancel.
SERIAL = (
    "tests/live/",
    "tests/test_distributed.py",
    "tests/test_distributed_cli.py",
    "tests/test_distributed_tui.py",
    "tests/test_run_command_signals.py",
    "tests/test_service_process.py",
    "tests/test_tui_batch_outlives_no_app.py",
    "tests/test_tui_terminal_gone.py",
)


# The files that take longest on a worker (a minute or more each: a wheel built and type-checked,
# many app sessions, a large export), started first in `make test`'s parallel phase so that
# neither worker is left running one of them alone at the end (longest first; xdist's own order,
# by the number of tests in a file, put the wheel's four tests last). Slowest first.
SLOW_FIRST = (
    "tests/test_packaging.py",
    "tests/test_tui_batches.py",
    "tests/test_secrets_never_shown.py",
    "tests/test_exports.py",
    "tests/test_tui_chat.py",
    "tests/test_tui_pane_keys.py",
    "tests/test_tui_snapshots.py",
    "tests/test_pytest_plugin.py",
    "tests/test_docs_in_your_tests.py",
    "tests/test_docs_examples.py",
    "tests/test_tui_sessions.py",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--phase",
        choices=("all", "parallel", "serial"),
        default="all",
        help="all (default), the tests that may share the machine (`make test` runs them on every core), "
        "or the timing-bound ones (tests/conftest.py SERIAL), which it runs after them in one process",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`make test` runs the suite on every core (pytest-xdist, --dist loadgroup, in the order of
    the items: --no-loadscope-reorder): each test file runs whole on one worker, so a module's
    fixtures (a fake server, a built wheel) start once, the slowest files first. Then the SERIAL
    files, alone. (tryfirst: xdist reads the groups in its own hook, after this.)"""
    phase = config.getoption("--phase")
    kept, dropped = [], []
    for item in items:
        path = item.path.relative_to(config.rootpath).as_posix()
        serial = path.startswith(SERIAL)
        item.add_marker(pytest.mark.xdist_group("live" if path.startswith("tests/live/") else path))
        (kept if phase == "all" or serial == (phase == "serial") else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    # the slowest files first (see SLOW_FIRST), the rest in their own order
    first = {path: n for n, path in enumerate(SLOW_FIRST)}
    kept.sort(key=lambda item: first.get(item.path.relative_to(config.rootpath).as_posix(), len(first)))
    items[:] = kept


# Every test pins "today" so that order ages, and so the 10-day policy, never depend on the
# calendar the suite happens to run on.
PINNED_TODAY = dt.date(2026, 11, 21)


@pytest.fixture
def today() -> dt.date:
    return PINNED_TODAY


@pytest.fixture(scope="module")
def running_fake_openai():
    """A scripted OpenAI-compatible server on a loopback port, one per test module."""
    from tests.fake_openai_server import run_fake_server

    with run_fake_server() as server:
        yield server


@pytest.fixture
def server(running_fake_openai):
    """The module's fake OpenAI-compatible server with an empty script and request log."""
    running_fake_openai.reset()
    yield running_fake_openai
    running_fake_openai.reset()


@pytest.fixture
async def close_model_clients():
    """Close the shared model clients this test's event loop opened."""
    yield
    from parley.core.models.openai_provider import aclose_clients

    await aclose_clients()


@pytest.fixture
def slow_bot(server, monkeypatch):
    """A bot model name served by the fake OpenAI server, each call answered after 150 ms:
    a batch slow enough to stop or restart in the middle."""
    from service_support import SLOW_BOT

    server.fixed_delay_ms = 150
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    return SLOW_BOT


def _parley_logger_as_it_was() -> None:
    """The `parley` logger as it was before any test ran: a CLI command points it at a log file
    and stops it propagating (a command run in a module's fixture too, before any test's own
    fixtures could save the state); whatever it added is closed."""
    logger = logging.getLogger("parley")
    for handler in logger.handlers:
        if handler not in _PRISTINE_HANDLERS:
            handler.close()
    logger.handlers[:] = _PRISTINE_HANDLERS
    logger.propagate, logger.level = True, logging.NOTSET


_PRISTINE_HANDLERS = list(logging.getLogger("parley").handlers)


@pytest.fixture(autouse=True)
def restore_parley_logger():
    """Each test starts and ends with the `parley` logger as it was before any test ran, so one
    test's command (or a module fixture's) does not hide another test's log records."""
    _parley_logger_as_it_was()
    yield
    _parley_logger_as_it_was()


@pytest.fixture(autouse=True)
def forget_secrets():
    """The process's redactor remembers every key a test resolved; forget them after each test, so
    one test's key (a short one matches whole words) never redacts another test's output."""
    yield
    from parley.core.redaction import REDACTOR

    REDACTOR.forget()
