"""inf, nan and 1e309 are refused wherever parley takes a number: every numeric option of every
command and every numeric setting is a usage error (exit 2, one line naming it), and nothing is
stored, so no batch can carry a number its listings cannot read back."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from parley.core.errors import SettingError
from parley.core.records import BatchOptions, RoleModels
from parley.core.settings import settings
from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
PLAYBOOK = ROOT / "profiles" / "playbooks" / "track_pending_order.yaml"
NOT_FINITE = ("inf", "nan", "1e309", "-inf")


def parley(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def assert_usage_error(result, option: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "not a finite number" in lines[0], result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("value", NOT_FINITE)
@pytest.mark.parametrize("option", ["--timeout", "--bot-timeout", "--budget", "--grace"])
def test_run_refuses_a_number_that_is_not_finite_and_stores_nothing(tmp_path, option, value):
    db = tmp_path / "p.db"
    assert_usage_error(parley("run", PLAYBOOK, option, value, "--db", db), option)
    assert not db.exists(), "a refused option must not create a batch"


@pytest.mark.parametrize("value", ["inf", "nan", "1e309"])
def test_run_with_dry_run_resume_and_rerun_refuses_them_too(tmp_path, value):
    db = tmp_path / "p.db"
    assert_usage_error(parley("run", PLAYBOOK, "--dry-run", "--timeout", value, "--db", db), "--timeout")
    assert_usage_error(parley("run", "--resume", "latest", "--budget", value, "--db", db), "--budget")
    assert_usage_error(parley("run", "--rerun", "failed", "latest", "--bot-timeout", value, "--db", db), "--bot-timeout")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["compare", "latest~1", "latest", "--alpha", "nan"], "--alpha"),
        (["submit", str(PLAYBOOK), "--timeout", "inf"], "--timeout"),
        (["submit", str(PLAYBOOK), "--timeout", "nan"], "--timeout"),
        (["serve", "--grace", "nan"], "--grace"),
        (["serve-bot", "--idle", "inf"], "--idle"),
        (["serve-bot", "--idle", "nan"], "--idle"),
    ],
)
def test_every_other_command_refuses_them_as_a_usage_error(tmp_path, args, option):
    assert_usage_error(parley(*args, "--db", tmp_path / "p.db") if args[0] in ("compare", "serve") else parley(*args), option)


def test_finite_numbers_still_pass(tmp_path):
    result = parley("run", PLAYBOOK, "--timeout", "30", "--bot-timeout", "2.5", "--grace", "0", "--db", tmp_path / "p.db")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("variable", ["PARLEY_TIMEOUT_SEC", "TIMEOUT_SEC"])
@pytest.mark.parametrize("value", ["inf", "nan", "1e309"])
def test_a_setting_that_is_not_finite_is_one_line_and_a_usage_error(tmp_path, monkeypatch, variable, value):
    for name in ("PARLEY_TIMEOUT_SEC", "TIMEOUT_SEC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingError, match=f"{variable}: Input should be a finite number"):
        settings()
    db = tmp_path / "p.db"
    result = parley("run", PLAYBOOK, "--db", db)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [f"error: bad setting in the environment: {variable}: Input should be a finite number"]
    assert not db.exists()


def test_the_records_refuse_them_so_no_path_can_store_them():
    for value in (math.inf, math.nan):
        with pytest.raises(ValidationError, match="finite number"):
            BatchOptions(timeout_s=value)
        with pytest.raises(ValidationError, match="finite number"):
            RoleModels(bot_timeout_s=value)
        with pytest.raises(ValidationError, match="finite number"):
            BatchOptions(budget_usd=value)
