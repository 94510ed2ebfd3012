"""Labelling by hand in the app: `L` on a batch's result (or a Sessions row, or a conversation's
detail) opens the labelling screen; m / n / a / 1-3 label the highlighted item and are stored at
once with the labeller, x takes a label back, o writes a note, ] goes to the next conversation
not labelled yet; K shows the judges' calibrations; a judge's verdicts carry its calibration. Works at 80x24."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, OptionList, Static

from parley.core.records import Calibration, ItemCalibration, JudgeKey
from parley.core.store import Store, all_labels, save_calibration
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.panes.session_detail import SessionScreen
from parley.tui.app.screens.calibrations import CalibrationsScreen
from parley.tui.app.screens.compare_batches import CompareScreen
from parley.tui.app.screens.label_conversation import LabelScreen
from parley.tui.app.screens.side_by_side import SideBySideScreen
from parley.tui.app.widgets.results_table import ResultsTable
from tests.calibration_support import (
    JUDGE,
    JUDGED,
    NAMES_ORDER,
    POLITE,
    ScriptedJudge,
    conversation_keys,
    label_rows,
    make_labelled_suite,
    run_offline,
    store_labels,
)
from tests.lineage_support import parley
from tests.test_tui_support import db_path, make_app, settle, type_slowly, until  # noqa: F401  (fixture)

NARROW = (80, 24)


@pytest.fixture
def batch(db_path, tmp_path, monkeypatch):
    """The four profiles with two criteria each, run offline into the app's database."""
    monkeypatch.setenv("PARLEY_LABELLER", "alice")
    return run_offline(make_labelled_suite(tmp_path / "suite"), db_path)


@pytest.fixture
def judged_twice(db_path, batch, server, close_model_clients):
    """The batch re-scored by a judge calibrated on alice's labels, then by another nobody has
    calibrated that passes ORD-1006's conversation (its only change): (calibrated, uncalibrated)."""
    store_labels(db_path, label_rows(conversation_keys(db_path, batch)))
    env = {"FAKE_BASE_URL": server.base_url}
    other = "openai-api/fake/other"
    server.responder = ScriptedJudge(overrides={"other": {**JUDGED, "ORD-1006": ("met", "met", 2)}})
    assert parley("judge", "calibrate", "--labels", "stored", "--judge", JUDGE, "--db", db_path, env=env).exit_code == 0
    ids = []
    for judge in (JUDGE, other):
        assert parley("rescore", batch, "--judge", judge, "--db", db_path, env=env).exit_code in (0, 1)
        with Store.open(db_path) as store:
            ids.append(store.resolve_batch_ref("latest"))
    return ids[0], ids[1]


def labels(db_path):
    with Store.open(db_path) as store:
        return {(x.conversation_id, x.item_id): x for x in all_labels(store)}


def progress(screen) -> str:
    return str(screen.query_one("#label-progress", Static).render())


async def open_labelling(pilot) -> LabelScreen:
    await settle(pilot)
    results = pilot.app.query_one("#batch-results", ResultsTable)
    await until(pilot, lambda: results.row_count == 4, "the batch's results")
    results.focus()
    await pilot.press("L")
    await until(pilot, lambda: isinstance(pilot.app.screen, LabelScreen) and pilot.app.screen.stored is not None, "the labelling screen")
    return pilot.app.screen


async def test_labels_made_with_the_keyboard_are_stored_with_the_labeller_at_80x24(db_path, batch):
    app = make_app(initial_pane="batches")
    async with app.run_test(size=NARROW) as pilot:
        screen = await open_labelling(pilot)
        first = screen.stored.conversation.id
        assert first == app.query_one(BatchesPane).results_table.rows[0].id
        items = screen.query_one("#label-items", OptionList)
        assert [i.text for i in screen.items[:3]] == [
            NAMES_ORDER,
            POLITE,
            "Every action the assistant says it took appears in the tool results, or the assistant could not have taken it.",
        ]
        assert [i.kind for i in screen.items[3:5]] == ["rubric", "check"]
        assert "Labelling as alice · conversation 1 of 4 (0 labelled)" in progress(screen) and "0 of " in progress(screen)

        await pilot.press("m")  # names-order: met
        await pilot.press("down", "n")  # polite: not met
        await pilot.press("down", "down", "m")  # the rubric takes a score, not met
        await settle(pilot)
        assert any("a score, 1, 2 or 3" in n.message for n in app._notifications)
        await pilot.press("2")
        await settle(pilot)
        stored = labels(db_path)
        assert stored[(first, "names-order")].value == "met" and stored[(first, "names-order")].labeller == "alice"
        assert stored[(first, "polite")].value == "not_met" and stored[(first, "rubric-default")].value == "2"
        assert "(1 labelled)" in progress(screen) and "this one: 3 of " in progress(screen)
        assert str(items.get_option_at_index(0).prompt).startswith("met ")

        await pilot.press("up", "up", "o")  # a note on the polite label
        note = screen.query_one("#label-note", Input)
        assert note.display and note.has_focus
        await type_slowly(pilot, "curt in turn 2")
        await pilot.press("enter")
        await settle(pilot)
        assert labels(db_path)[(first, "polite")].note == "curt in turn 2"
        assert labels(db_path)[(first, "polite")].value == "not_met"

        await pilot.press("x")  # taken back
        await settle(pilot)
        assert (first, "polite") not in labels(db_path)

        await pilot.press("right_square_bracket")  # the next conversation nobody labelled here
        await until(pilot, lambda: screen.stored.conversation.id != first, "the next conversation")
        assert "conversation 2 of 4 (1 labelled)" in progress(screen)
        await pilot.press("a")
        await settle(pilot)
        second = screen.stored.conversation.id
        assert labels(db_path)[(second, "names-order")].value == "not_applicable"
        await pilot.press("left_square_bracket")  # back: the previous one not labelled is the fourth (the list wraps)
        await until(pilot, lambda: screen.stored.conversation.id not in (first, second), "the previous unlabelled conversation")
        assert "conversation 4 of 4 (2 labelled)" in progress(screen)
        await pilot.press("escape")
        assert not isinstance(app.screen, LabelScreen)


async def test_another_labellers_labels_are_kept_beside_ones_own(db_path, batch, monkeypatch):
    app = make_app(initial_pane="batches")
    async with app.run_test(size=NARROW) as pilot:
        screen = await open_labelling(pilot)
        await pilot.press("m")
        await settle(pilot)
    monkeypatch.setenv("PARLEY_LABELLER", "bob")
    app = make_app(initial_pane="batches")
    async with app.run_test(size=NARROW) as pilot:
        screen = await open_labelling(pilot)
        first = screen.stored.conversation.id
        prompt = str(screen.query_one("#label-items", OptionList).get_option_at_index(0).prompt)
        assert prompt.startswith("·") and "+1 other labeller" in prompt
        await pilot.press("n")
        await settle(pilot)
    with Store.open(db_path) as store:
        mine = {x.labeller: x.value for x in all_labels(store) if x.conversation_id == first and x.item_id == "names-order"}
    assert mine == {"alice": "met", "bob": "not_met"}


async def test_the_sessions_pane_and_a_conversations_detail_open_the_labelling_too(db_path, batch):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        app.query_one("#sessions-table").focus()
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LabelScreen) and app.screen.stored is not None, "the labelling screen")
        assert len(app.screen.conversation_ids) == 4
        await pilot.press("escape")
        await pilot.press("enter")  # the conversation's detail
        await until(pilot, lambda: isinstance(app.screen, SessionScreen), "the detail screen")
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LabelScreen) and app.screen.stored is not None, "the labelling screen")
        assert app.screen.conversation_ids == [app.screen.stored.conversation.id]


async def test_k_shows_the_judges_calibrations(db_path, batch):
    key = JudgeKey(model="openai/gpt-4o-mini", endpoint="https://api.openai.com/v1", prompt_version="p-1", generation={"temperature": 0.0})
    names = ItemCalibration(kind="criterion", item_id="names-order", text=NAMES_ORDER, categories=["met", "not_met", "not_applicable"],
                            labels=4, agreement=0.75, kappa=0.5, interval=(0.0, 1.0), confusion=[[2, 0, 0], [1, 1, 0], [0, 0, 0]])  # fmt: skip
    with Store.open(db_path) as store:
        save_calibration(store, Calibration(key=key, source="labels.csv", conversations=4, items=[names], overall=names))
    app = make_app(initial_pane="batches")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, CalibrationsScreen) and app.screen.calibrations, "the calibrations")
        listed = str(app.screen.query_one("#calibrations-list", OptionList).get_option_at_index(0).prompt)
        assert "openai/gpt-4o-mini" in listed and "criteria κ 0.50 [0.00, 1.00]" in listed
        report = str(app.screen.query_one("#calibrations-text", Static).render())
        assert "Judge: openai/gpt-4o-mini at https://api.openai.com/v1, prompts p-1, temperature=0.0" in report
        assert f"{NAMES_ORDER} (names-order)" in report


async def test_a_judges_verdicts_in_the_app_carry_its_calibration(db_path, judged_twice):
    """Both sides of a comparison: the score with the judge's kappa on the rubric (or
    uncalibrated), and a failed criterion with its judge's mark."""
    calibrated, uncalibrated = judged_twice
    app = make_app(initial_pane="batches")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(BatchesPane)
        for batch_id, key in ((calibrated, "b"), (uncalibrated, "c")):
            pane.table.focus()
            pane.table.move_cursor(row=pane.batch_ids.index(batch_id), animate=False)
            await pilot.pause()
            await pilot.press(key)
        await until(
            pilot,
            lambda: isinstance(app.screen, CompareScreen) and app.screen.query_one("#compare-changes", DataTable).row_count,
            "the changes",
        )
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SideBySideScreen) and app.screen.query(".check"), "both sides")
        side = app.screen
        assert "score 2 [κw 0.80]" in str(side.query_one("#side-base-title", Static).render())
        assert "score 2 [uncalibrated]" in str(side.query_one("#side-new-title", Static).render())
        failed = [str(c.render()) for c in side.query_one("#side-base-checks").query(".check")]
        assert any(f"{NAMES_ORDER} [below threshold (κ 0.50 < 0.6)]" in text for text in failed), failed
