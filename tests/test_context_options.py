"""Each role's context length as a person sets it: `--bot-context`, `--user-context`,
`--judge-context TOKENS` and PARLEY_*_CONTEXT, refused when they are not a number of tokens, kept
with the batch, carried to the prompts parley builds; what an endpoint reports in between."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from parley.core.engine.batch_models import BatchModels
from parley.core.errors import ConfigError
from parley.core.evaluation.judge import LLMJudge
from parley.core.records.batch import RoleModels
from parley.core.settings import settings
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.test_run_command import PROFILES

VARIABLES = ("PARLEY_BOT_CONTEXT", "PARLEY_USER_CONTEXT", "PARLEY_JUDGE_CONTEXT")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def parley(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.mark.parametrize("role", ["bot", "user", "judge"])
@pytest.mark.parametrize("value", ["0", "-4096", "4096.5", "8k", "", "٤٠٩٦"])
def test_a_context_that_is_not_a_number_of_tokens_is_a_usage_error(tmp_path, role, value):
    result = parley("run", PROFILES / "track_shipped_order.yaml", f"--{role}-context", value, "--db", tmp_path / "p.db")
    assert result.exit_code == 2
    assert f"Invalid value for '--{role}-context'" in result.stderr
    assert "number of tokens" in result.stderr or "is not a context length" in result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "p.db").exists()


@pytest.mark.parametrize("role", ["bot", "user", "judge"])
@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_a_context_that_is_not_finite_is_one_line_naming_the_option(tmp_path, role, value):
    result = parley("run", PROFILES / "track_shipped_order.yaml", f"--{role}-context", value, "--db", tmp_path / "p.db")
    assert result.exit_code == 2
    assert result.stderr == f"Error: --{role}-context: {value!r} is not a finite number.\n"
    assert not (tmp_path / "p.db").exists()


def test_the_options_are_kept_with_the_batch_and_a_resume_keeps_them(tmp_path):
    db = tmp_path / "p.db"
    result = parley("run", PROFILES / "track_shipped_order.yaml", "--judge-context", "8192", "--user-context", "16_384", "--db", db)
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        [row] = store.list_batches()
    models = row.batch.options.models
    assert (models.bot_context, models.user_context, models.judge_context) == (None, 16384, 8192)
    resumed = parley("run", "--resume", "latest", "--judge-context", "2048", "--db", db)
    assert "ignoring --judge-context" in resumed.stderr


def test_the_settings_are_the_defaults_and_the_option_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("PARLEY_JUDGE_CONTEXT", "32768")
    monkeypatch.setenv("PARLEY_BOT_CONTEXT", "2048")
    assert (settings().judge_context, settings().bot_context, settings().user_context) == (32768, 2048, None)
    db = tmp_path / "p.db"
    result = parley("run", PROFILES / "track_shipped_order.yaml", "--bot-context", "1024", "--db", db)
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        [row] = store.list_batches()
    assert (row.batch.options.models.judge_context, row.batch.options.models.bot_context) == (32768, 1024)


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1", "lots"])
def test_a_bad_setting_is_one_line_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("PARLEY_JUDGE_CONTEXT", value)
    with pytest.raises(ConfigError, match=r"^bad setting in the environment: PARLEY_JUDGE_CONTEXT: "):
        settings()


def test_each_role_gets_its_option_else_what_its_endpoint_reported_else_4096():
    models = BatchModels(
        RoleModels(
            bot="openai/gpt-4o-mini", judge="openai/gpt-4o-mini", bot_context=2048, endpoint_context={"bot": 128_000, "judge": 8192}
        ),
        env={"OPENAI_API_KEY": "sk-test"},
    )
    assert (models.context_tokens("bot"), models.context_tokens("user"), models.context_tokens("judge")) == (2048, 4096, 8192)
    judge = models.judge().inner
    assert isinstance(judge, LLMJudge) and judge.context_tokens == 8192
    assert models.bot().context_tokens == 2048
