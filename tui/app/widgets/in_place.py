"""Changing a Static's text without laying the whole screen out while the new text still fits.

`Static.update` lays the screen out again by default, which repaints much more than the Static;
for text that changes ten times a second (a running batch's counts) that is most of a frame."""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


def fits(widget: Static) -> bool:
    """Does the widget's content (just updated) fit the size it was last laid out at: its wrapped
    height, and its width where that is auto?"""
    size = widget.content_size
    if not size.area:
        return False
    width = size.width
    if widget.styles.width is not None and widget.styles.width.is_auto:
        width = widget.get_content_width(widget.container_size, widget.app.size)
    return width == size.width and widget.get_content_height(widget.container_size, widget.app.size, width) == size.height


def update_in_place(widget: Static, content: VisualType) -> None:
    """Show `content`: only `widget` is repainted while it fits, else the screen is laid out
    again, so a line that grows is never cut."""
    widget.update(content, layout=False)
    if not fits(widget):
        widget.refresh(layout=True)
