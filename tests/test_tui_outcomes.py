"""The app shows each outcome as what it is: the bot's failures in red (a bot error too), what is
counted apart under its own name, the pass rate with its interval, unrun checks as "not run"."""

from __future__ import annotations

from parley.core.records.verdict import CheckResult
from parley.core.store.store import Store
from parley.tui.app.panes.batch_results import result_cells
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.panes.session_detail import CheckView, SessionScreen
from parley.tui.app.widgets.results_table import ResultsTable
from parley.tui.app.widgets.row_table import RowTable
from tests.test_store_fixtures import T0, batch, check, conversation, spec, verdict
from tests.test_tui_support import SIZE, db_path, make_app, settle  # noqa: F401  (fixture)

ROWS = [
    ("track_order", "passed", "user_stop", [check("ORD-1003 stays shipped")]),
    ("cancel_recent", "failed", "user_stop", [check("ORD-1004 ends cancelled", "fail", "it is processing")]),
    (
        "broken_bot",
        "bot_error",
        "bot_error",
        [
            CheckResult(kind="bot_says", name="bot says /cancelled/", outcome="not_run", reason="Not run: the conversation ended early"),
            CheckResult(kind="conversation_completed", name="conversation completed", outcome="fail", reason="The bot broke: HTTP 500"),
        ],
    ),
    ("bare_profile", "unverified", "user_stop", [check("conversation completed", kind="conversation_completed")]),
]


def store_rows(db_path) -> str:
    with Store.open(db_path) as store:
        b = store.create_batch(batch(planned=len(ROWS), status="completed", started_at=T0))
        for i, (name, outcome, stop, checks) in enumerate(ROWS):
            conv = conversation(started=T0.replace(minute=i + 1), stop_reason=stop, error="HTTP 500" if stop == "bot_error" else None)
            store.save_conversation(b.id, spec(name, i), conv, verdict(conv, outcome, 3 if outcome == "passed" else None, checks=checks))
        return b.id


async def test_results_rows_say_each_outcome_and_the_bots_failures_are_red(db_path):
    batch_id = store_rows(db_path)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        results = app.query_one("#batch-results", ResultsTable)
        labels = {row.name: result_cells(row)["outcome"] for row in results.rows}
        assert labels == {"track_order": "passed", "cancel_recent": "failed", "broken_bot": "bot error", "bare_profile": "unverified"}
        # each row is drawn in its outcome's style: the bot error as red as a failure, and bold
        style = {
            row.name: results.get_component_rich_style(f"results-table--{results.OUTCOME_CLASSES[row.outcome]}") for row in results.rows
        }
        assert style["broken_bot"].bold and style["broken_bot"].color == style["cancel_recent"].color
        assert not style["cancel_recent"].bold and style["track_order"].color != style["cancel_recent"].color
        assert style["bare_profile"].color not in (style["track_order"].color, style["cancel_recent"].color)  # its own colour
        status = str(app.query_one("#batches-status").render())
        # the pass rate counts the bot error: 1 of 3, with its Wilson interval; the unverified one apart
        assert f"{batch_id[:12]}: pass rate 33.3% (1 of 3, 95% interval 6.1-79.2%)" in status and "1 unverified" in status
        table = app.query_one("#batches-table", RowTable)
        assert list(table.full_row(0)[6:11]) == ["1", "1", "1", "1", "0"]  # passed, failed, bot errors, apart, errors


async def test_the_verdict_view_shows_unrun_checks_as_not_run(db_path):
    store_rows(db_path)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        results = app.query_one("#batch-results", ResultsTable)
        results.focus()
        results.cursor_row = [r.name for r in results.rows].index("broken_bot")
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        shown = [str(v.render()) for v in screen.query(CheckView)]
        assert any(text.startswith("· not run  bot says /cancelled/") for text in shown)
        assert not any("✗ fail  bot says" in text for text in shown)
        assert "Outcome: bot_error" in str(screen.query_one("#detail-verdict").render())
