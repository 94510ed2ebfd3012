"""The app at 80x24 as a person sees it: panels fold or move below, tables keep their important
columns, the footer and the tabs say what the keys do, nothing important is cut."""

from __future__ import annotations

from textual.widgets import Footer

from parley.core.store.store import Store
from parley.tui.app.panes.chat_pane import ChatSidebar
from parley.tui.app.widgets.command_table import CommandTable
from parley.tui.app.widgets.results_table import ResultsTable
from parley.tui.app.widgets.transcript_view import ChatLog, ToolCallView
from tests.test_store_fixtures import build_scored_batch
from tests.test_tui_support import db_path, make_app, say, settle  # noqa: F401  (fixture)

NARROW = (80, 24)


async def test_the_chat_takes_the_width_and_the_panel_folds_into_one_line(db_path):
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        log = app.query_one("#chat-log", ChatLog)
        assert log.size.width >= 76, "the conversation is not squeezed beside the panel"
        assert not app.query_one(ChatSidebar).display
        summary = str(app.query_one("#chat-summary").render())
        assert summary.startswith("ctrl+b") and "C-100" in summary and "ready" in summary
        await pilot.press("ctrl+b")  # the whole panel, in the conversation's place
        await pilot.pause()
        assert app.query_one(ChatSidebar).display and not app.query_one("#chat-main").display
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert app.query_one("#chat-main").display


async def test_database_keeps_status_and_cancellable_at_80_columns(db_path):
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await say(pilot, "/database")
        table = list(app.query(CommandTable))[-1].table
        await pilot.pause()
        shown = table.shown_titles
        assert {"Order", "Status", "Cancellable"} <= set(shown)
        right = max(table.region.x + table.region.width, 0)
        assert right <= 80


async def test_tool_calls_are_not_cut(db_path):
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await say(pilot, "please cancel ORD-1005")
        view = list(app.query(ToolCallView))[-1]
        title = view.query_one("CollapsibleTitle")
        log = app.query_one("#chat-log", ChatLog)
        assert title.region.right <= log.region.right
        assert "not eligible" in str(title.render()) or "ok" in str(title.render())


async def test_the_footer_and_tabs_say_what_the_keys_do(db_path):
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        tabs = [str(tab.label).replace("\u00a0", " ") for tab in app.query("ContentTab")]
        assert tabs == ["F1 Chat", "F2 Profiles", "F3 Batches", "F4 Sessions"]  # the keys that work on every pane
        footer = app.query_one(Footer)
        keys = list(footer.query("FooterKey"))
        assert keys and all(key.region.right <= 80 and key.region.width > 0 for key in keys), "no key is cut off"
        labels = " ".join(str(key.render()) for key in keys)
        assert "New chat" in labels and "Tool details" in labels and "Panel" in labels and "Quit" in labels
        palette = footer.query_one("FooterKey.-command-palette") if footer.query("FooterKey.-command-palette") else None
        if palette is not None:
            assert all(key.region.right <= palette.region.x for key in keys if key is not palette), "no label under the palette key"


async def test_the_scores_panel_never_covers_the_results(db_path):
    with Store.open(db_path) as store:
        build_scored_batch(store)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        results = app.query_one("#batch-results", ResultsTable)
        histogram = app.query_one("#batch-histogram")
        assert not results.region.overlaps(histogram.region)
        shown = [c.title for c, _ in results.columns()]
        assert {"Profile", "Outcome", "Score"} <= set(shown)
        assert results.region.width >= 78


async def test_the_launch_form_fits_80x24(db_path):
    app = make_app(initial_pane="profiles")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        app.launch_batch("profiles/")
        await pilot.pause()
        form = app.screen
        for selector in ("#launch-sources", "#launch-seed", "#launch-go", "#launch-close"):
            region = form.query_one(selector).region
            assert region.width and region.right <= 80 and region.bottom <= 24, selector


async def test_the_batches_footer_keeps_its_batch_keys_at_80_columns(db_path):
    with Store.open(db_path) as store:
        build_scored_batch(store)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        footer = app.query_one(Footer)
        palette = footer.query("FooterKey.-command-palette")
        edge = palette.first().region.x if palette else 80
        keys = {str(k.render()).strip(): k.region for k in footer.query("FooterKey") if not k.has_class("-command-palette")}
        for label in ("c Compare", "b Base", "R Re-score", "h Report", "^q Quit"):
            assert label in keys and 0 < keys[label].right <= edge, f"{label} is cut: {list(keys)}"
        await pilot.press("x")  # no batch runs: `x` is not shown, and says so when pressed
        assert any("No batch is running" in n.message for n in app._notifications)


async def test_the_profiles_file_is_never_cut_at_80_columns(db_path):
    from parley.tui.app.widgets.source_view import SourceView
    from tests.test_tui_profiles import PROFILES, _select

    app = make_app(initial_pane="profiles", profile_dirs=[PROFILES])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await _select(pilot, PROFILES / "cancel_other_customers_order.yaml")
        view = app.query_one(SourceView)
        assert app.query_one("#profile-tree").region.width <= 30 and view.region.width >= 48
        assert view.soft_wrap  # a long line goes on below, numbered once
        longest = max(len(line) for line in view.text.splitlines())
        assert view.wrapped_document.height > view.document.line_count and longest > view.region.width


async def test_f_keys_show_panes_from_the_chat_input_where_digits_type(db_path):
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await pilot.press("2")
        assert app.query_one("#chat-input").value == "2"  # the digit types into the chat
        await pilot.press("f2")
        await pilot.pause()
        assert app.query_one("TabbedContent").active == "profiles-pane"
