"""The Batches pane with a batch run with `--rules`: the status line says how its pair and batch
rules came out, `u` shows each rule and each failure with its `yields` text, the conversations by
spec and trial, and text from rule files shown as written (never as markup); `R`'s form re-scores
a batch with rule files (a folder that is not there is said in the form)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Static

from parley.core.rules import RuleReport, RuleResult
from parley.core.store import save_batch_rules
from parley.core.store.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.screens.batch_rules import BatchRulesScreen
from parley.tui.app.screens.rescore_batch import RescoreScreen
from parley.tui.app.widgets.row_table import RowTable
from tests.rules_support import TRACKING_PROFILE, rule_text, write_rules
from tests.test_tui_support import SIZE, db_path, make_app, settle, until  # noqa: F401  (fixture)

MARKUP = "[bold red]not bold[/bold red]"


def stored_batch_with_rules(path) -> tuple[str, list[str], dict[str, str]]:
    from tests.test_store_fixtures import build_scored_batch

    with Store.open(path) as store:
        batch = build_scored_batch(store)
        rows = store.conversation_rows(batch.id, limit=100)
        ids = [row.id for row in rows[:2]]
        labels = {row.id: f"{row.spec_id} trial {row.trial}" for row in rows}
        pair = RuleReport(
            rule_file="pairs/prices.yaml",
            name=MARKUP,
            description="more photos cost more",
            conversations=2,
            results=[
                RuleResult(
                    rule_file="pairs/prices.yaml",
                    rule_name=MARKUP,
                    kind="pair",
                    conversations=ids,
                    outcome="fail",
                    reason="oracle violated",
                    yields="3 photos cost [i]less[/i]",
                ),
                RuleResult(rule_file="pairs/prices.yaml", rule_name=MARKUP, kind="pair", conversations=ids[::-1], outcome="pass"),
            ],
        )
        whole = RuleReport(
            rule_file="batch/unique.yaml",
            name="unique",
            description="prices are unique",
            conversations="all",
            results=[RuleResult(rule_file="batch/unique.yaml", rule_name="unique", kind="batch", conversations=ids, outcome="pass")],
        )
        save_batch_rules(store, batch.id, [pair, whole])
    return batch.id, ids, labels


async def test_the_status_line_offers_the_rules_and_u_shows_them_as_written(db_path):
    batch_id, ids, labels = stored_batch_with_rules(db_path)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = str(app.query_one("#batches-status", Static).render())
        assert "rules over pairs and the batch: 2, 1 failed (u: see them)" in status

        await pilot.press("u")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BatchRulesScreen) and screen.batch_id == batch_id
        table = screen.query_one("#rules-table", DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows == [
            ["pairs/prices.yaml", MARKUP, "pairs", "1", "1", "0", "0"],
            ["batch/unique.yaml", "unique", "the batch", "1", "0", "0", "0"],
        ]
        texts = [str(widget.render()) for widget in screen.query(".rule-failure")]
        assert texts == [f"fail  {labels[ids[0]]} → {labels[ids[1]]}: 3 photos cost [i]less[/i]"]
        heading = str(screen.query_one(".rule-heading", Static).render())
        assert heading == f"pairs/prices.yaml ({MARKUP}): more photos cost more"

        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, BatchRulesScreen)


async def test_u_on_a_batch_without_rules_says_so(db_path):
    from tests.test_store_fixtures import build_scored_batch

    with Store.open(db_path) as store:
        build_scored_batch(store)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "rules over pairs" not in str(app.query_one("#batches-status", Static).render())
        await pilot.press("u")
        await pilot.pause()
        assert not isinstance(app.screen, BatchRulesScreen)
        assert any("no rules over pairs of conversations" in n.message for n in app._notifications)


@pytest.fixture
def tracking_batch(db_path, tmp_path) -> None:
    """A stored offline batch of a Sensei profile, run without rules (its conversations unverified)."""
    from tests.lineage_support import parley

    profile = tmp_path / "suite" / "tracking.yaml"
    profile.parent.mkdir()
    profile.write_text(TRACKING_PROFILE, encoding="utf-8")
    assert parley("run", profile, "--db", db_path).exit_code == 0


async def test_r_re_scores_a_batch_with_the_rule_files_named_in_its_form(db_path, tmp_path, tracking_batch):
    folder = write_rules(tmp_path / "rules", {"answers.yaml": rule_text("len(chatbot_phrases) > 0", name="answers")})
    app = make_app(initial_pane="batches")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.query_one("#batches-table", RowTable).focus()
        await pilot.press("R")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, RescoreScreen)
        form.query_one("#rescore-rules", Input).value = str(tmp_path / "moved")
        await pilot.click("#rescore-go")
        await settle(pilot, rounds=30)
        assert app.screen is form, "a folder that is not there keeps the form open"
        assert "no such file or folder" in str(form.query_one("#rescore-error", Static).render())

        form.query_one("#rescore-rules", Input).value = str(folder)
        await pilot.click("#rescore-go")
        await until(pilot, lambda: not isinstance(app.screen, RescoreScreen), "the form closes once the re-score starts")
        pane = app.query_one(BatchesPane)
        await until(
            pilot, lambda: pane.running_batch is None and pane.progress is not None and pane.progress.done == 2, "the re-score ends"
        )
    with Store.open(db_path) as store:
        child = store.get_batch("latest")
        assert child.options.rescore_of is not None and child.options.rules == str(folder)
        checks = [(c.name, c.outcome) for s in store.iter_conversations(child.id) for c in s.verdict.checks if c.kind == "rule"]
        outcomes = {s.verdict.outcome for s in store.iter_conversations(child.id)}
    assert checks == [("rule:answers.yaml", "pass")] * 2 and outcomes == {"passed"}
