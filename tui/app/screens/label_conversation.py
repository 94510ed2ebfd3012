"""LabelScreen: a person labels conversations by hand, one after another, from the keyboard.

The transcript (with its tool calls) on one side; on the other, every item a person can label on
the conversation (parley.core.evaluation.label_items): each criterion in words, the judge's
rubric (a score of 1-3) and each `expect:` check a person can decide, with what the judge or
parley decided beside it. Keys act on the highlighted item: `m` met, `n` not met, `a` not
applicable, `1` `2` `3` the rubric's score, `x` takes the label back, `o` writes a note on it;
`]` and `[` go to the next and the previous conversation not labelled yet (by this labeller),
and the top line counts how many are. Each label is stored at once (parley.core.store.labels),
with who labelled it (PARLEY_LABELLER, else the login name) and when; another labeller's labels
on the same items are kept beside them. At 80x24 the items go under the transcript.

Opened with `L` on a conversation of the Batches pane's results, of the Sessions pane, or of a
conversation's detail screen: it walks the conversations that list shows, in its order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from parley.tui.app.widgets.transcript_view import ChatLog
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.evaluation import LabelItem
    from parley.core.records import Label, LabelValue, StoredConversation
    from parley.tui.app.app import ParleyApp

SHOWN: dict[str, str] = {"met": "met", "not_met": "not met", "not_applicable": "n/a", "1": "1", "2": "2", "3": "3"}
KEYS_OF_KIND = {"rubric": "1 2 3", "criterion": "m n a", "check": "m n a"}
UNLABELLED = "·"


class ConversationLoaded(Message):
    """A conversation to label was read: it, its items and its labels (every labeller's)."""

    def __init__(self, index: int, stored: StoredConversation, items: list[LabelItem], labels: list[Label], labelled: set[str]) -> None:
        super().__init__()
        self.index = index
        self.stored = stored
        self.items = items
        self.labels = labels
        self.labelled = labelled


class LabelSaved(Message):
    """A label was stored (or taken back: `label` None) for conversation `conversation_id`."""

    def __init__(self, conversation_id: str, key: tuple[str, str], label: Label | None, labelled: bool) -> None:
        super().__init__()
        self.conversation_id = conversation_id
        self.key = key
        self.label = label
        self.labelled = labelled


def item_line(item: LabelItem, mine: Label | None, others: int) -> Content:
    """One item as the list shows it: this labeller's label, the item, what was decided."""
    mark = SHOWN.get(mine.value, mine.value) if mine is not None else UNLABELLED
    tag = {"rubric": "rubric 1-3: ", "check": "check: "}.get(item.kind, "")
    text = " ".join(item.text.split())
    if item.kind == "rubric" and len(text) > 60:
        text = text[:59] + "…"
    decided = "judge" if item.kind != "check" else "parley"
    line = Content(f"{mark:<8}").stylize("bold") + Content(visible(tag + text))
    line += Content(f"  ({decided}: {SHOWN.get(item.judged, item.judged) if item.judged else '-'})").stylize("dim")
    if mine is not None and mine.note:
        line += Content(" ✎").stylize("dim")
    if others:
        line += Content(f" +{others} other labeller{'s' if others != 1 else ''}").stylize("dim")
    return line


class LabelScreen(Screen[None]):
    """Escape goes back; see the module doc for the keys."""

    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("m", "mark('met')", "Met"),
        Binding("n", "mark('not_met')", "Not met"),
        Binding("a", "mark('not_applicable')", "N/A"),
        Binding("1", "mark('1')", "1", show=False),
        Binding("2", "mark('2')", "2", show=False),
        Binding("3", "mark('3')", "3", show=False),
        Binding("x", "clear", "Clear"),
        Binding("o", "note", "Note"),
        Binding("right_square_bracket", "unlabelled(1)", "Next"),
        Binding("left_square_bracket", "unlabelled(-1)", "Prev", show=False),
        Binding("t", "focus_transcript", "Transcript", show=False),
    ]

    def __init__(self, conversation_ids: Sequence[str], start: str, labeller: str) -> None:
        super().__init__(id="label-screen")
        self.conversation_ids = list(dict.fromkeys(conversation_ids))
        self.index = self.conversation_ids.index(start) if start in self.conversation_ids else 0
        self.labeller = labeller
        self.stored: StoredConversation | None = None
        self.items: list[LabelItem] = []
        self.labels: list[Label] = []
        self.labelled: set[str] = set()
        """The listed conversations this labeller has labelled something on."""

    @property
    def parley(self) -> ParleyApp:
        from parley.tui.app.app import ParleyApp

        assert isinstance(self.app, ParleyApp)
        return self.app

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Content("Loading…"), id="label-progress")
        with Horizontal(id="label-body"):
            log = ChatLog(id="label-log", user_name="User", bot_name="Bot")
            log.border_title = "Transcript"
            yield log
            with Vertical(id="label-side") as side:
                side.border_title = "Label"
                yield OptionList(id="label-items")
                yield Static(Content(""), id="label-detail")
                yield Input(placeholder="A note on this label (Enter keeps it, Escape drops it)", id="label-note")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#label-note", Input).display = False
        self.query_one("#label-items", OptionList).focus()
        if self.conversation_ids:
            self._load(self.index)

    # ---- loading ------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="label-load", description="reading the conversation to label")
    def _load(self, index: int) -> None:
        from parley.core.evaluation import label_items
        from parley.core.store import labelled_counts, labels_of

        store = self.parley.store()
        conversation_id = self.conversation_ids[index]
        stored = store.load_conversation(conversation_id)
        items = label_items(stored.spec, stored.verdict)
        labelled = set(labelled_counts(store, self.conversation_ids, labeller=self.labeller))
        self.post_message(ConversationLoaded(index, stored, items, labels_of(store, conversation_id), labelled))

    def on_conversation_loaded(self, message: ConversationLoaded) -> None:
        self.index = message.index
        self.stored = message.stored
        self.items = message.items
        self.labels = message.labels
        self.labelled = message.labelled
        conversation = message.stored.conversation
        self.query_one("#label-log", ChatLog).show_transcript(conversation.messages, conversation.tool_calls)
        items = self.query_one("#label-items", OptionList)
        items.clear_options()
        items.add_options([Option(self._line(item), id=f"{item.kind}:{item.item_id}") for item in self.items])
        items.highlighted = 0 if self.items else None
        self._show_progress()
        self._show_detail()

    # ---- what is shown ------------------------------------------------------------------------

    def _mine(self, item: LabelItem) -> Label | None:
        return next((x for x in self.labels if x.kind == item.kind and x.item_id == item.item_id and x.labeller == self.labeller), None)

    def _others(self, item: LabelItem) -> int:
        return sum(1 for x in self.labels if x.kind == item.kind and x.item_id == item.item_id and x.labeller != self.labeller)

    def _line(self, item: LabelItem) -> Content:
        return item_line(item, self._mine(item), self._others(item))

    def current_item(self) -> LabelItem | None:
        highlighted = self.query_one("#label-items", OptionList).highlighted
        return self.items[highlighted] if highlighted is not None and 0 <= highlighted < len(self.items) else None

    def _show_progress(self) -> None:
        if self.stored is None:
            return
        spec = self.stored.spec
        done = sum(1 for item in self.items if self._mine(item) is not None)
        line = (
            f"Labelling as {self.labeller} · conversation {self.index + 1} of {len(self.conversation_ids)} "
            f"({len(self.labelled)} labelled) · {spec.spec_id} · this one: {done} of {len(self.items)} items"
        )
        self.query_one("#label-progress", Static).update(Content(visible(line)))

    def _show_detail(self) -> None:
        item = self.current_item()
        if item is None:
            self.query_one("#label-detail", Static).update(Content("Nothing to label on this conversation."))
            return
        mine = self._mine(item)
        keys = KEYS_OF_KIND[item.kind]
        text = Content(visible(f"{item.kind} {item.item_id} · keys {keys}, x clears, o notes\n")).stylize("dim") + Content(
            visible(item.text)
        )
        if item.reason:  # it may quote the bot: text, never markup or a terminal's control sequence
            text += Content(visible(f"\n{'judge' if item.kind != 'check' else 'parley'}: {item.reason}")).stylize("dim")
        if mine is not None and mine.note:
            text += Content(visible(f"\nnote: {mine.note}"))
        self.query_one("#label-detail", Static).update(text)

    def _refresh_item(self, key: tuple[str, str]) -> None:
        items = self.query_one("#label-items", OptionList)
        for index, item in enumerate(self.items):
            if (item.kind, item.item_id) == key:
                items.replace_option_prompt_at_index(index, self._line(item))
        self._show_progress()
        self._show_detail()

    @on(OptionList.OptionHighlighted, "#label-items")
    def _highlighted(self) -> None:
        self._show_detail()

    # ---- labelling ----------------------------------------------------------------------------

    def action_mark(self, value: str) -> None:
        item = self.current_item()
        if item is None or self.stored is None:
            return
        rubric = item.kind == "rubric"
        if rubric != (value in ("1", "2", "3")):
            wanted = "a score, 1, 2 or 3" if rubric else "met (m), not met (n) or not applicable (a)"
            self.notify(f"This {item.kind}'s label is {wanted}.", severity="warning", timeout=4)
            return
        mine = self._mine(item)
        self._store_label(item, cast("LabelValue", value), mine.note if mine is not None else "")

    def _store_label(self, item: LabelItem, value: LabelValue, note: str) -> None:
        from parley.core.records import Label

        assert self.stored is not None
        label = Label(
            conversation_id=self.stored.conversation.id,
            kind=item.kind,
            item_id=item.item_id,
            item_text=item.text if item.kind != "check" else "",
            value=value,
            labeller=self.labeller,
            note=note,
        )
        self._save(label)

    @work(thread=True, exit_on_error=False, group="label-save", description="saving the label")
    def _save(self, label: Label) -> None:
        from parley.core.store import save_labels

        save_labels(self.parley.store(), [label])
        self.post_message(LabelSaved(label.conversation_id, (label.kind, label.item_id), label, True))

    def action_clear(self) -> None:
        item = self.current_item()
        if item is None or self.stored is None or self._mine(item) is None:
            return
        self._delete(self.stored.conversation.id, item.kind, item.item_id)

    @work(thread=True, exit_on_error=False, group="label-save", description="clearing the label")
    def _delete(self, conversation_id: str, kind: str, item_id: str) -> None:
        from parley.core.store import delete_label, labelled_counts

        store = self.parley.store()
        delete_label(store, conversation_id, kind, item_id, self.labeller)
        still = bool(labelled_counts(store, [conversation_id], labeller=self.labeller))
        self.post_message(LabelSaved(conversation_id, (kind, item_id), None, still))

    def on_label_saved(self, message: LabelSaved) -> None:
        if self.stored is None or message.conversation_id != self.stored.conversation.id:
            return
        kind, item_id = message.key
        self.labels = [x for x in self.labels if not (x.kind == kind and x.item_id == item_id and x.labeller == self.labeller)]
        if message.label is not None:
            self.labels.append(message.label)
        if message.labelled:
            self.labelled.add(message.conversation_id)
        else:
            self.labelled.discard(message.conversation_id)
        self._refresh_item(message.key)

    # ---- notes --------------------------------------------------------------------------------

    def action_note(self) -> None:
        item = self.current_item()
        if item is None:
            return
        mine = self._mine(item)
        if mine is None:
            self.notify("Label the item first: the note goes with the label.", severity="warning", timeout=4)
            return
        note = self.query_one("#label-note", Input)
        note.value = mine.note
        note.display = True
        note.focus()

    @on(Input.Submitted, "#label-note")
    def _note_written(self, event: Input.Submitted) -> None:
        item = self.current_item()
        mine = self._mine(item) if item is not None else None
        self._close_note()
        if item is not None and mine is not None:
            self._store_label(item, mine.value, event.value.strip())

    def _close_note(self) -> None:
        note = self.query_one("#label-note", Input)
        note.display = False
        self.query_one("#label-items", OptionList).focus()

    # ---- moving -------------------------------------------------------------------------------

    def action_unlabelled(self, step: int) -> None:
        """To the next (`step` 1) or previous (-1) conversation of the list this labeller has not labelled."""
        n = len(self.conversation_ids)
        for offset in range(1, n):
            index = (self.index + step * offset) % n
            if self.conversation_ids[index] not in self.labelled:
                self._load(index)
                return
        self.notify(f"Every conversation here is labelled ({n} of {n}).", timeout=4)

    def action_focus_transcript(self) -> None:
        self.query_one("#label-log").focus()

    def action_close(self) -> None:
        note = self.query_one("#label-note", Input)
        if note.display:
            self._close_note()
            return
        self.app.pop_screen()
