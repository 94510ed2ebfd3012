"""Several bots side by side: `parley run PATHS --bot A --bot B --bot C` runs the same specs and
seeds against each, one linked batch per bot, and compares them (each bot's pass rate with its
interval, each spec's outcomes in a row, every pair with the paired test); each bot's own
settings pair with it by position or by name; --resume and --rerun keep the pairing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.records import GenerateConfig
from parley.core.reports import compare_group, render_group_html
from parley.core.store.store import Store
from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
PLAYBOOKS = ROOT / "profiles" / "playbooks"
REPEATING = "python:tests.python_checks_support:repeating_bot"
ORDER_BOT = "python:tests.python_bots:order_bot"


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def group_batches(db: Path):
    with Store.open(db) as store:
        group = store.resolve_group_ref("latest")
        return group, store.group_batches(group)


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """Three bots on the shipped playbooks: the offline order bot, one that answers nothing useful,
    and a Python order bot that tracks but does not ask before cancelling."""
    db = tmp_path_factory.mktemp("three") / "parley.db"
    result = parley("run", PLAYBOOKS, "--bot", "A=offline", "--bot", f"B={REPEATING}", "--bot", f"C={ORDER_BOT}", "--db", db)
    return db, result


def test_three_bots_run_as_linked_batches_with_the_same_seeds(three):
    db, result = three
    assert result.exit_code == 1  # B and C fail checks: the worst member's code
    group, batches = group_batches(db)
    assert [b.group_role for b in batches] == ["A", "B", "C"]
    assert [b.options.models.bot for b in batches] == ["offline", REPEATING, ORDER_BOT]
    assert {b.group_id for b in batches} == {group} and {b.options.seed for b in batches} == {0}
    assert all(b.status == "completed" for b in batches)
    with Store.open(db) as store:
        seeds = [{(s.spec.spec_id, s.spec.seed) for s in store.iter_conversations(b.id)} for b in batches]
    assert seeds[0] == seeds[1] == seeds[2]  # the same specs with the same seeds against each bot
    assert f"Side by side (group {group}):" in result.stdout
    assert "  A  pass rate 100.0% (7 of 7), 95% interval 64.6%-100.0%" in result.stdout


def test_the_side_by_side_report_has_each_bots_rate_each_spec_and_the_paired_figures(three):
    db, _ = three
    group, _ = group_batches(db)
    report = (db.parent / "reports" / f"group-{group}.md").read_text(encoding="utf-8")
    assert "| A | offline |" in report and "| 100.0% (7 of 7), 95% interval 64.6%-100.0% |" in report
    assert "| B | python:tests.python_checks_support:repeating_bot |" in report and "0.0% (0 of 7), 95% interval 0.0%-35.4%" in report
    # every two bots with the exact McNemar test: 7 discordant pairs all one way is p = 2 x 0.5^7
    assert "| A / B | 7 | 7 | 0 | 0.0156 | A better than B: 7 passed only with A, 0 only with B; p = 0.0156 (beyond noise) |" in report
    assert "| A / C | 7 | 5 | 0 | 0.0625 | A better than C: 5 passed only with A, 0 only with C; p = 0.0625 (within noise) |" in report
    assert "| B / C | 7 | 0 | 2 | 0.5 |" in report
    assert "| playbook_track_shipped_order#0 | ✓ | ✗ | ✓ | differs |" in report
    with Store.open(db) as store:
        comparison = compare_group(store, group)
    assert [m.pass_rate for m in comparison.members] == [1.0, 0.0, 2 / 7]
    html = render_group_html(comparison)
    assert "Content-Security-Policy" in html and "A better than B" in html
    shown = parley("compare", "--group", group[:8], "--format", "json", "--db", db)
    assert json.loads(shown.stdout)["pairs"][0]["test"]["p_value"] == pytest.approx(0.015625)


def test_batches_show_names_the_group(three):
    db, _ = three
    group, batches = group_batches(db)
    shown = parley("batches", "show", batches[1].id, "--db", db).stdout
    assert f"Group: {group}, as B (side by side: parley compare --group {group[:12]})" in shown


def test_each_bots_settings_pair_with_it_by_position_or_by_name(tmp_path):
    db = tmp_path / "parley.db"
    result = parley(
        "run", PLAYBOOKS / "track_shipped_order.yaml", "--bot", ORDER_BOT, "--bot", REPEATING,
        "--bot-timeout", "10", "--bot-timeout", "20", "--prompt-version", "v2", "--db", db,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    _, batches = group_batches(db)
    assert [b.group_role for b in batches] == [ORDER_BOT, REPEATING]  # named by what they are
    assert [b.options.models.bot_timeout_s for b in batches] == [10.0, 20.0]  # by position
    assert [b.options.prompt_version for b in batches] == ["v2", "v2"]  # once: every bot's

    named = parley(
        "run", PLAYBOOKS / "track_shipped_order.yaml", "--bot", f"old={ORDER_BOT}", "--bot", f"new={ORDER_BOT}",
        "--bot-timeout", "new=5", "--db", db,
    )  # fmt: skip
    assert named.exit_code == 0, named.output
    _, batches = group_batches(db)
    assert [(b.group_role, b.options.models.bot_timeout_s) for b in batches] == [("old", 30.0), ("new", 5.0)]


def test_generation_settings_pair_with_their_bot(server, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    db = tmp_path / "parley.db"
    parley(
        "run", PLAYBOOKS / "track_shipped_order.yaml", "--bot", "cold=openai-api/fake/m", "--bot", "warm=openai-api/fake/m",
        "--gen", "cold.temperature=0.1", "--gen", "warm.temperature=0.9", "--gen", "bot.max_tokens=64", "--db", db,
    )  # fmt: skip
    _, batches = group_batches(db)
    assert [b.options.models.generation["bot"] for b in batches] == [
        GenerateConfig(temperature=0.1, max_tokens=64),
        GenerateConfig(temperature=0.9, max_tokens=64),
    ]
    sent = [(r.body.get("temperature"), r.body.get("max_tokens")) for r in server.requests]
    assert sent[0] == (0.1, 64) and sent[-1] == (0.9, 64)  # the first bot's batch ran first, the second's after


def test_a_setting_that_cannot_be_placed_is_a_usage_error(tmp_path):
    runner = CliRunner()
    for args, said in (
        (
            ["--bot", "offline", "--bot", ORDER_BOT, "--bot-timeout", "1", "--bot-timeout", "2", "--bot-timeout", "3"],
            "given 3 times for 2 bots",
        ),
        (["--bot", "offline", "--bot-timeout", "1", "--bot-timeout", "2"], "given 2 times for one bot"),
        (["--bot", "a=offline", "--bot", "a=offline"], "two bots are named 'a'"),
        (
            ["--bot", "a=offline", "--bot", "b=offline", "--gen", "c.temperature=1"],
            "'c' is not a role or a bot's name; they are bot, user, judge, a, b",
        ),
        (["--bot", "offline", "--bot", "offline", "--single", "0"], "--single cannot be combined with them"),
    ):
        result = runner.invoke(cli, ["run", str(PLAYBOOKS), *args, "--db", str(tmp_path / "p.db")])
        assert result.exit_code == 2 and said in result.stderr, (args, result.output)


def test_resume_goes_on_with_the_members_not_completed_and_rerun_keeps_the_pairing(tmp_path):
    db = tmp_path / "parley.db"
    parley("run", PLAYBOOKS, "--bot", "A=offline", "--bot", f"C={ORDER_BOT}", "--db", db)
    group, (a, c) = group_batches(db)
    with Store.open(db) as store:
        store.update_batch(c.id, status="interrupted")
    resumed = parley("run", "--resume", a.id, "--db", db)
    assert f"bot C (batch {c.id}):" in resumed.stdout and f"batch {a.id}" not in resumed.stdout
    assert f"Side by side (group {group}):" in resumed.stdout
    with Store.open(db) as store:
        assert store.get_batch(c.id).status == "completed"

    rerun = parley("run", "--rerun", "failed", c.id, "--db", db)
    assert "bot A: nothing to re-run" in rerun.stderr
    new_group, [again] = group_batches(db)
    assert new_group != group
    assert (again.group_role, again.parent_id, again.options.models.bot) == ("C", c.id, ORDER_BOT)
    refused = CliRunner().invoke(cli, ["run", "--rerun", "failed", c.id, "--bot", "offline", "--db", str(db)])
    assert refused.exit_code == 2 and "a group's re-run keeps each batch's own bot" in refused.stderr


async def test_the_apps_launch_form_takes_several_bots_and_shows_them_side_by_side(tmp_path, monkeypatch):
    import shutil

    from parley.tui.app.panes.batches_pane import BatchesPane
    from parley.tui.app.screens.group_report import GroupScreen
    from tests.test_tui_batches import launch
    from tests.test_tui_support import SIZE, make_app, settle, until

    monkeypatch.setenv("PARLEY_DB", str(tmp_path / "parley.db"))
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(PLAYBOOKS / "track_shipped_order.yaml", folder)
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await launch(pilot, folder, bot=f"A=offline, B={REPEATING}")
        pane = app.query_one(BatchesPane)
        await until(pilot, lambda: any("g shows them" in n.message for n in app._notifications), "the group's last batch")
        group, batches = group_batches(tmp_path / "parley.db")
        assert [b.group_role for b in batches] == ["A", "B"] and all(b.status == "completed" for b in batches)
        pane.query_one("#batches-table").focus()
        await pilot.press("g")
        await settle(pilot, rounds=30)
        assert isinstance(app.screen, GroupScreen) and app.screen.group_id == group
        assert "| A / B | 1 | 1 | 0 |" in app.screen.markdown  # the one spec passed with A only
