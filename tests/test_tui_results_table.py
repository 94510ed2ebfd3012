"""The results table while a big batch fills it: rows that land below the screen do not repaint
it, yet End reaches the newest of them at once and the scrollbar follows within a second."""

from __future__ import annotations

import datetime as dt

from textual.app import App, ComposeResult

from parley.core.records.batch import ConversationRow
from parley.tui.app.widgets.results_table import RESIZE_INTERVAL_S, ResultsTable


def row(i: int) -> ConversationRow:
    return ConversationRow(
        id=f"conv-{i:05d}",
        batch_id="b1",
        name=f"profile {i}",
        spec_id="s",
        kind="profile",
        trial=1,
        stop_reason="goal_reached",
        outcome="passed",
        passed=True,
        score=3,
        turns=4,
        input_tokens=10,
        output_tokens=5,
        cost_usd=None,
        duration_s=0.1,
        started_at=dt.datetime(2026, 11, 21, 9, 0, 0),
    )


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ResultsTable(id="results")


async def test_rows_appended_below_the_screen_are_reached_by_end_and_the_scrollbar_follows():
    app = TableApp()
    async with app.run_test(size=(100, 12)) as pilot:
        table = app.query_one(ResultsTable)
        table.show([row(i) for i in range(20)])
        table.focus()
        await pilot.pause()
        table.append([row(i) for i in range(20, 40)])  # all below the screen
        await pilot.pause()
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == 39 and table.current.id == "conv-00039"
        top = int(table.scroll_offset.y)
        assert top <= 39 < top + table.scrollable_content_region.height  # the newest row is on screen
        await pilot.pause(RESIZE_INTERVAL_S + 0.1)
        table.append([row(i) for i in range(40, 45)])
        await pilot.pause()
        assert table.virtual_size.height == 46  # a second on, the scrollable height holds every row
