"""One tau2-bench retail task end to end with every role on a real (and very small) model: the bot
under test (parley's world bot, tau2's policy and 15 tools in its prompt), the simulated customer
and the judge all on SmolLM2-135M, served with an 8,192-token context (the retail policy and tools
alone are about 4,800 tokens) and a turn cap of two. The model is far too small to do the task:
the test is that the conversation runs to its end, is judged and stored, and that nothing ends as
an error of parley's own."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from parley.tui.cli.main import cli
from tests.live.conftest import LIVE_MODEL, SERVICE, model_server

CONTEXT = 8192
BOUND_S = 900
"""A bound for a hung run, not a speed goal: on two idle cores the task takes about a minute."""
CALL_S = 300
"""Each model call's limit: the bot's first prompt (tau2's retail policy and tools) is ~5,000
tokens, which llama.cpp reads in about half a minute on two idle cores, more on a busy machine;
past parley's default minute a call would be retried from scratch, and the conversation would end
as the bot's timeout before the model said anything."""


@pytest.fixture(scope="module")
def llama_server_8k(tmp_path_factory):
    with model_server(tmp_path_factory.mktemp("llama8k"), n_ctx=CONTEXT) as base_url:
        yield base_url


def test_a_retail_task_runs_end_to_end_on_a_local_model(llama_server_8k, tmp_path, monkeypatch):
    monkeypatch.setattr("parley.core.models.openai_provider.DEFAULT_TIMEOUT_S", CALL_S)
    monkeypatch.setenv(f"{SERVICE.upper()}_BASE_URL", llama_server_8k)
    monkeypatch.delenv(f"{SERVICE.upper()}_API_KEY", raising=False)
    imported = CliRunner().invoke(cli, ["import", "tau2", "--domain", "retail", "--split", "test", "--out", str(tmp_path / "suite")])
    assert imported.exit_code == 0, imported.output
    started = time.monotonic()
    roles = [f"--{role}" for role in ("bot", "user", "judge")]
    contexts = [f"--{role}-context" for role in ("bot", "user", "judge")]
    ran = CliRunner().invoke(
        cli,
        [
            "run",
            str(tmp_path / "suite" / "task_17.yaml"),
            *[arg for role in roles for arg in (role, LIVE_MODEL)],
            *[arg for flag in contexts for arg in (flag, str(CONTEXT))],
            "--max-turns",
            "2",
            "--timeout",
            str(BOUND_S),
            "--db",
            str(tmp_path / "live.db"),
        ],
    )
    took = time.monotonic() - started
    assert ran.exit_code in (0, 1), ran.output
    assert "batch completed: 1 of 1 done" in ran.output, ran.output
    assert "0 infrastructure errors" in ran.output, ran.output
    assert "no reply from" not in ran.output, ran.output  # the model answered: the bot's turn was the model's, not a timeout
    assert "turn" in ran.output and "[1/1]" in ran.output
    assert "Leaderboard row: tau2-bench retail:" in ran.output and f"user simulator {LIVE_MODEL}" in ran.output
    outcome = next(line for line in ran.output.splitlines() if line.startswith("[1/1]"))
    print(f"one retail task, every role on SmolLM2-135M, {CONTEXT}-token context: {took:.0f} s; {outcome}")
