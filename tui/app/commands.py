"""The command palette's parley commands (ctrl+p): new chat, run batch, open session, switch
theme, and each pane."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from parley.tui.app.app import ParleyApp


class ParleyCommands(Provider):
    """The app's main actions, by name."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = cast("ParleyApp", self.app)
        return [
            ("New chat", "Start a fresh chat with the bot under test (the current one stays saved)", app.action_new_chat),
            ("Run batch", "Launch a batch over the profiles selected in Profiles and watch it in Batches", app.action_run_batch),
            ("Open session", "Browse stored chats and batch conversations", app.action_open_sessions),
            (
                "Compare batches",
                "Compare the batch highlighted in Batches with the base marked with b (else with the one before it)",
                app.action_compare_batches,
            ),
            (
                "Label conversations",
                "Label the conversation highlighted in Batches by hand: met, not met, not applicable, the rubric's 1-3",
                app.action_label_conversations,
            ),
            (
                "Judge calibrations",
                "How well each judge agrees with people's labels, per criterion (parley judge calibrate)",
                app.show_calibrations,
            ),
            (
                "Mutants of a batch",
                "Run the highlighted batch's conversations again under each mutant of the bot: which misbehaviours its checks catch (M in Batches)",
                app.action_mutate_batch,
            ),
            ("Switch theme", "Choose the app's colour theme", app.action_change_theme),
            ("Show chat", "Go to the Chat pane", lambda: app.action_show_pane("chat")),
            ("Show profiles", "Go to the Profiles pane", lambda: app.action_show_pane("profiles")),
            ("Show batches", "Go to the Batches pane", lambda: app.action_show_pane("batches")),
            ("Show sessions", "Go to the Sessions pane", lambda: app.action_show_pane("sessions")),
        ]

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, text=name, help=help_text)
