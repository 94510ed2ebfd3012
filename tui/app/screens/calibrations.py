"""CalibrationsScreen: the stored calibrations of judges (`parley judge calibrate`), newest
first, and the highlighted one in full: per criterion and rubric the labels, agreement, kappa
with its interval, the confusion matrix and the disagreements (parley.core.reports.
judge_calibration, as `parley judge calibrations ID` prints it). Opened with `K` in the
Batches pane or from the command palette; Escape goes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.records import Calibration
    from parley.tui.app.app import ParleyApp

EMPTY = (
    "No calibration stored yet: label conversations (L on a conversation), then run `parley judge calibrate --labels stored --judge MODEL`."
)


class CalibrationsLoaded(Message):
    """The stored calibrations were read, newest first."""

    def __init__(self, calibrations: list[Calibration]) -> None:
        super().__init__()
        self.calibrations = calibrations


def calibration_line(calibration: Calibration) -> Content:
    """One calibration in the list: when, the judge, the criteria's and the rubric's kappa."""
    from parley.core.reports import kappa_cell

    rubric = next((i for i in calibration.items if i.kind == "rubric"), None)
    criteria = kappa_cell(calibration.overall) if calibration.overall is not None else "-"
    score = kappa_cell(rubric) if rubric is not None else "-"
    head = f"{calibration.created_at:%Y-%m-%d %H:%M}  {calibration.key.model}"
    return Content(visible(head)) + Content(f"  criteria κ {criteria} · rubric κw {score}").stylize("dim")


class CalibrationsScreen(Screen[None]):
    """The list on top, the highlighted calibration below."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("r", "reload", "Reload")]

    def __init__(self) -> None:
        super().__init__(id="calibrations-screen")
        self.calibrations: list[Calibration] = []

    @property
    def parley(self) -> ParleyApp:
        from parley.tui.app.app import ParleyApp

        assert isinstance(self.app, ParleyApp)
        return self.app

    def compose(self) -> ComposeResult:
        yield Header()
        listed = OptionList(id="calibrations-list")
        listed.border_title = "Judge calibrations"
        yield listed
        with VerticalScroll(id="calibrations-report") as report:
            report.border_title = "Calibration"
            yield Static(Content("Loading…"), id="calibrations-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#calibrations-list").focus()
        self._load()

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="calibrations", description="reading the calibrations")
    def _load(self) -> None:
        from parley.core.store import list_calibrations

        self.post_message(CalibrationsLoaded(list_calibrations(self.parley.store())))

    def on_calibrations_loaded(self, message: CalibrationsLoaded) -> None:
        self.calibrations = message.calibrations
        listed = self.query_one("#calibrations-list", OptionList)
        listed.clear_options()
        listed.add_options([Option(calibration_line(c), id=c.id) for c in self.calibrations])
        if self.calibrations:
            listed.highlighted = 0
        self._show(0 if self.calibrations else None)

    @on(OptionList.OptionHighlighted, "#calibrations-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option_index)

    def _show(self, index: int | None) -> None:
        from parley.core.reports import calibration_report

        text = EMPTY if index is None or not self.calibrations else calibration_report(self.calibrations[index])
        self.query_one("#calibrations-text", Static).update(Content(visible(text)))  # quotes of bots: text, never controls
