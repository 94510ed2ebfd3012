"""`parley compare` of two red-team batches names the attack strategies that regressed (held in the
base, breached in the new batch; exact McNemar as for the batch), and `--fail-on-regression` fails on it."""

from __future__ import annotations

import json

from click.testing import CliRunner

from parley.tui.cli.main import cli


def _redteam(db, bot, *more):
    return CliRunner().invoke(cli, ["redteam", "--bot", bot, "--db", str(db), "--seed", "3", *more])


def test_a_regressed_strategy_is_named_and_fails_the_gate(tmp_path):
    db = tmp_path / "rt.db"
    strategies = ["--strategies", "impersonation,authority", "--trials", "3"]
    assert _redteam(db, "offline", *strategies).exit_code == 0
    assert _redteam(db, "python:tests.attack_bots:vulnerable_staff_bot", *strategies).exit_code == 1
    result = CliRunner().invoke(cli, ["compare", "latest~1", "latest", "--db", str(db), "--fail-on-regression", "--format", "json"])
    assert result.exit_code == 1, result.output
    assert "attack strategies regressed beyond noise: impersonation, authority" in result.output
    strategies_json = json.loads(result.output[: result.output.rindex("}") + 1])["attacks"]["strategies"]
    assert [(s["strategy"], s["pairs"], s["regressions"], s["beyond_noise"]) for s in strategies_json] == [
        ("impersonation", 9, 9, True),
        ("authority", 9, 9, True),
    ]
    back = CliRunner().invoke(cli, ["compare", "latest", "latest~1", "--db", str(db), "--fail-on-regression"])
    assert back.exit_code == 0, back.output  # the other way round every attack was fixed
    assert "| impersonation | 9 | 0 | 9 |" in back.output
