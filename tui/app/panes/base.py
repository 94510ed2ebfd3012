"""What every pane shares: loading its data the first time it is shown, the keyboard on its main
widget whenever it is shown, and handing worker failures to the app's one error handler."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.containers import Container
from textual.widget import Widget
from textual.worker import Worker

if TYPE_CHECKING:
    from parley.tui.app.app import ParleyApp


class Pane(Container):
    """A pane of the app. `activate()` is called each time its tab is shown (by F-key, digit,
    palette or mouse)."""

    _activated = False

    @property
    def parley(self) -> ParleyApp:
        return cast("ParleyApp", self.app)

    def main_widget(self) -> Widget | None:
        """The widget the keyboard belongs to when the pane is shown (its keys work at once)."""
        return None

    def activate(self) -> None:
        """Load on first show (so start-up reads nothing); later shows call `refresh_data`. Either
        way the keyboard goes to the main widget, once the pane is on screen (a hidden widget
        cannot take the focus: switching panes used to leave it nowhere, and the pane's keys did
        nothing until Tab)."""
        if not self._activated:
            self._activated = True
            self.load_data()
        else:
            self.refresh_data()
        self.call_after_refresh(self.focus_main)

    def focus_main(self) -> None:
        """Focus the main widget, unless the focus is already inside the pane (a launched batch
        puts it on its results)."""
        focused = self.app.focused
        if focused is not None and self in focused.ancestors:
            return
        widget = self.main_widget()
        if widget is not None:
            widget.focus()

    @property
    def shown(self) -> bool:
        """Is this the pane on screen (its tab's content is displayed)?"""
        return self.parent is not None and self.parent.display

    def main_widget_changed(self, had_keyboard: bool) -> None:
        """The main widget is another one now (a table hidden for an empty list, say): when the
        old one `had_keyboard` and the pane is shown, the keyboard follows."""
        if had_keyboard and self.shown:
            widget = self.main_widget()
            if widget is not None:
                self.call_after_refresh(widget.focus)

    def load_data(self) -> None:
        """Start the pane's first load (in a worker)."""

    def refresh_data(self) -> None:
        """The pane was shown again: reload what may have changed."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker.StateChanged does not bubble: each pane passes its workers' changes on to the
        # app, which deals with every failure in one place.
        self.parley.worker_state_changed(event)
