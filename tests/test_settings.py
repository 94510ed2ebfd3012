"""parley's settings from the environment: one model, the simulation service's names kept as
aliases, a bad value named in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.errors import ConfigError
from parley.core.settings import settings
from parley.tui.cli.main import cli

NAMES = (
    "PARLEY_DB",
    "PARLEY_API_TOKEN",
    "PARLEY_API_URL",
    "PARLEY_CONCURRENCY",
    "CONCURRENCY",
    "PARLEY_MAX_TURNS",
    "MAX_TURNS",
    "PARLEY_TIMEOUT_SEC",
    "TIMEOUT_SEC",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)


def test_defaults_without_any_variable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = settings()
    assert (s.concurrency, s.max_turns, s.timeout_sec, s.token) == (4, 30, 90.0, None)
    assert s.db_path == tmp_path / "sessions" / "parley.db"
    assert s.api_url == "http://127.0.0.1:5000"


def test_the_services_names_are_aliases_and_the_parley_name_wins(monkeypatch):
    monkeypatch.setenv("CONCURRENCY", "7")
    monkeypatch.setenv("MAX_TURNS", "12")
    monkeypatch.setenv("TIMEOUT_SEC", "5.5")
    assert (settings().concurrency, settings().max_turns, settings().timeout_sec) == (7, 12, 5.5)
    monkeypatch.setenv("PARLEY_CONCURRENCY", "9")
    assert settings().concurrency == 9


def test_a_blank_token_is_no_token(monkeypatch):
    monkeypatch.setenv("PARLEY_API_TOKEN", "   ")
    assert settings().token is None


def test_a_bad_value_names_the_variable_the_user_set(monkeypatch):
    monkeypatch.setenv("MAX_TURNS", "lots")
    with pytest.raises(ConfigError, match=r"MAX_TURNS: Input should be a valid integer"):
        settings()


def test_run_takes_concurrency_from_the_environment_and_a_bad_one_is_one_line(tmp_path, monkeypatch):
    profile = Path(__file__).resolve().parent.parent / "profiles" / "playbooks" / "track_pending_order.yaml"
    monkeypatch.setenv("CONCURRENCY", "0")
    result = CliRunner().invoke(cli, ["run", str(profile), "--db", str(tmp_path / "p.db")])
    assert result.exit_code != 0
    assert "CONCURRENCY" in result.output and "Traceback" not in result.output
    monkeypatch.setenv("CONCURRENCY", "3")
    result = CliRunner().invoke(cli, ["run", str(profile), "--db", str(tmp_path / "p.db")])
    assert result.exit_code == 0, result.output
    assert "limit 3" in result.output or "concurrency 3" in result.output.lower()


def test_log_records_go_to_a_file_beside_the_database_never_the_terminal(tmp_path, capsys):
    import logging

    from parley.core.log_file import configure_logging

    db = tmp_path / "data" / "p.db"
    path = configure_logging(db)
    assert path == db.parent / "parley.log" and not path.exists()  # nothing logged, nothing written
    logging.getLogger("parley.engine.batch_runner").warning("a watcher failed")
    for handler in logging.getLogger("parley").handlers:
        handler.flush()
    assert "WARNING parley.engine.batch_runner" in path.read_text()
    captured = capsys.readouterr()
    assert "a watcher failed" not in captured.err + captured.out


async def test_a_broken_batch_watcher_is_logged_and_the_batch_goes_on(tmp_path):
    import logging

    from parley.core.engine.batch_runner import BatchRunner, prepare_batch
    from parley.core.records.batch import BatchOptions
    from parley.core.store.store import Store

    def broken(event):
        raise RuntimeError("watcher bug")

    profile = Path(__file__).resolve().parent.parent / "profiles" / "playbooks" / "track_pending_order.yaml"
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("parley.engine.batch_runner")
    logger.addHandler(handler)
    try:
        with Store.open(tmp_path / "p.db") as store:
            prepared = await prepare_batch(store, [profile], BatchOptions())
            result = await BatchRunner(store, prepared, on_event=broken).run()
    finally:
        logger.removeHandler(handler)
    assert result.status == "completed"
    assert any("a batch watcher failed" in r.getMessage() and r.exc_info for r in records)
