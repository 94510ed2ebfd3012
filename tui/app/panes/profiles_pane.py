"""The Profiles pane: browse profiles, playbooks and scenario files, read them highlighted, see
their problems where they are, and the conversations they expand to.

Reading, validating and expanding a file happens in a thread (parley.core.specs.sources.load_specs);
the pane only shows the result.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import DataTable, OptionList, Static, Tree
from textual.widgets.option_list import Option

from parley.tui.app.messages import ProfileFilesListed, ProfileLoaded
from parley.tui.app.panes.base import Pane
from parley.tui.app.widgets.source_view import SourceView

if TYPE_CHECKING:
    from textual.widgets.tree import TreeNode

    from parley.core.errors import ProfileError
    from parley.core.records import ConversationSpec

log = logging.getLogger("parley.tui.profiles")

PROFILE_SUFFIXES = (".yaml", ".yml", ".json", ".txt")
# connectors/ holds bot connector files (`--bot http:FILE.yaml`), not profiles.
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "list_functions", "connectors"})
SEED = 0


def list_profile_files(root: Path) -> list[Path]:
    """Files under `root` the pane can show, relative to it, folders first then by name."""
    found: list[Path] = []

    def walk(folder: Path) -> None:
        try:
            entries = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), p.name))
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SKIPPED_DIRS:
                continue
            if entry.is_dir():
                walk(entry)
            elif entry.suffix.lower() in PROFILE_SUFFIXES:
                found.append(entry.relative_to(root))

    walk(root)
    return found


def runnable_path(path: Path) -> str:
    """`path` as typed after `parley run` here: relative to the current directory when it is
    under it, else absolute (a --profiles-dir elsewhere), quoted for the shell when needed."""
    resolved = path.resolve()
    try:
        text = str(resolved.relative_to(Path.cwd()))
    except ValueError:
        text = str(resolved)
    return shlex.quote(text)


def _clip(text: str, limit: int = 48) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def spec_cells(spec: ConversationSpec) -> tuple[str, str, str, str]:
    """A conversation as one table row: spec id, kind, variables (or steps), interaction styles."""
    if spec.kind == "playbook":
        steps = spec.extra.get("steps", [])
        users = sum(1 for s in steps if s.get("kind") == "user")
        checks = sum(1 for s in steps if str(s.get("kind", "")).startswith("expect_") or s.get("kind") == "judge")
        variables = f"customer {spec.world.customer_id}; {len(steps)} steps ({users} user, {checks} checks)"
    else:
        variables = "; ".join(f"{k}={_clip(v, 32)}" for k, v in spec.variables.items()) or "-"
    if spec.kind == "profile":
        styles = ", ".join(s.name for s in spec.interaction_styles) or "default"
    else:
        styles = "-"
    return spec.spec_id, spec.kind, variables, styles


class ProfileTree(Tree[Path]):
    """The profile folders (the shipped `profiles/` and any --profiles-dir) and their files."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("profiles", id=id)
        self.show_root = False
        self.guide_depth = 2

    def show_roots(self, roots: Sequence[tuple[str, Path, list[Path]]]) -> None:
        self.clear()
        for label, root, files in roots:
            top = self.root.add(Text(f"{label}/", style="bold"), data=root, expand=True)
            folders: dict[Path, TreeNode[Path]] = {Path("."): top}
            for rel in files:
                parent = folders[Path(".")]
                built = Path(".")
                for part in rel.parts[:-1]:
                    built = built / part
                    if built not in folders:
                        folders[built] = parent.add(Text(f"{part}/"), data=root / built, expand=False)
                    parent = folders[built]
                parent.add_leaf(Text(rel.name), data=root / rel)

    def find_file(self, path: Path) -> TreeNode[Path] | None:
        """The node of `path`, or None."""
        target = path.resolve()

        def search(node: TreeNode[Path]) -> TreeNode[Path] | None:
            for child in node.children:
                if child.data is not None and not child.allow_expand and Path(child.data).resolve() == target:
                    return child
                found = search(child)
                if found is not None:
                    return found
            return None

        return search(self.root)


def _run_editor(command: list[str]) -> int | None:
    """Run the editor to its end; its exit code, or None when it cannot be started."""
    try:
        return subprocess.run(command, check=False).returncode
    except OSError as exc:
        log.warning("cannot start the editor %s: %s", command[0], exc)
        return None


class ProfilesPane(Pane):
    """Select a file on the left; its source, problems and conversations show on the right."""

    BINDINGS = [
        Binding("r", "run_batch", "Run batch"),
        Binding("n", "next_error", "Next error"),
        Binding("e", "edit", "Edit in $EDITOR"),
        Binding("ctrl+r", "reload", "Reload"),
    ]

    def __init__(self, *, profile_dirs: Sequence[Path], personality_dirs: Sequence[Path] = (), id: str | None = None) -> None:
        super().__init__(id=id)
        self.profile_dirs = list(profile_dirs)
        self.personality_dirs = list(personality_dirs)
        self.path: Path | None = None
        self.shown_as = ""
        self.errors: list[ProfileError] = []
        self.specs: list[ConversationSpec] = []
        self._roots: dict[Path, str] = {}

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield ProfileTree(id="profile-tree")
            with Vertical(id="profile-main"):
                yield Static(Content("Select a profile, playbook or scenario file on the left."), id="profile-header")
                yield SourceView(id="profile-source")
                yield Static(Content(""), id="profile-errors-title")
                yield OptionList(id="profile-errors")
                yield Static(Content(""), id="profile-conversations-title")
                table: DataTable[str] = DataTable(cursor_type="row", zebra_stripes=True, id="profile-conversations")
                table.add_columns("Spec id", "Kind", "Variables", "Interaction styles")
                yield table

    def on_mount(self) -> None:
        for selector in ("#profile-errors", "#profile-errors-title", "#profile-source", "#profile-conversations"):
            self.query_one(selector).display = False

    # ---- loading ----------------------------------------------------------------------------------

    def main_widget(self) -> ProfileTree:
        return self.query_one(ProfileTree)

    def load_data(self) -> None:
        self._list_files()

    def refresh_data(self) -> None:
        pass  # files change rarely; ctrl+r reloads

    @work(thread=True, exclusive=True, exit_on_error=False, group="profile-files", description="listing the profiles")
    def _list_files(self) -> None:
        roots = []
        for folder in self.profile_dirs:
            if folder.is_dir():
                roots.append((folder.name or str(folder), folder, list_profile_files(folder)))
        self.post_message(ProfileFilesListed(roots))

    def on_profile_files_listed(self, message: ProfileFilesListed) -> None:
        self._roots = {root.resolve(): label for label, root, _ in message.roots}
        tree = self.query_one(ProfileTree)
        tree.show_roots(message.roots)
        if not message.roots:
            shown = ", ".join(str(d) for d in self.profile_dirs) or "none given"
            self._header(f"No profile folders found ({shown}). Start parley with --profiles-dir DIR.")
        elif self.path is not None:
            node = tree.find_file(self.path)
            if node is not None:
                tree.move_cursor(node)

    def _shown_as(self, path: Path) -> str:
        resolved = path.resolve()
        for root, label in self._roots.items():
            if resolved.is_relative_to(root):
                return f"{label}/{resolved.relative_to(root).as_posix()}"
        return str(path)

    @on(Tree.NodeSelected, "#profile-tree")
    def _node_selected(self, event: Tree.NodeSelected[Path]) -> None:
        node = event.node
        if node.data is None or node.allow_expand:
            return
        self.open_file(Path(node.data))

    def open_file(self, path: Path) -> None:
        """Read, validate and expand `path` (in a thread) and show it."""
        self.path = path
        self._header(f"{self._shown_as(path)} · loading…")
        self._load(path, self._shown_as(path))

    @work(thread=True, exclusive=True, exit_on_error=False, group="profile-load", description="loading the profile")
    def _load(self, path: Path, shown_as: str) -> None:
        from parley.core.specs import load_specs

        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            text = f"# cannot read {shown_as}: {exc}"
        suffix = path.suffix.lower()
        language = "json" if suffix == ".json" else "yaml" if suffix in (".yaml", ".yml") else None
        result = load_specs([path], seed=SEED, personality_dirs=self.personality_dirs)
        kind = result.files[0].kind if result.files else None
        self.post_message(
            ProfileLoaded(path, shown_as, text, language, kind, list(result.specs), list(result.errors), list(result.warnings))
        )

    def on_profile_loaded(self, message: ProfileLoaded) -> None:
        if message.path != self.path:
            return
        self.errors, self.specs = message.errors, message.specs
        self.shown_as = message.shown_as
        source = self.query_one(SourceView)
        source.display = True
        source.show(message.text, message.language)

        n = len(message.specs)
        kind = message.kind or "file"
        state = f"{len(message.errors)} problem{'s' if len(message.errors) != 1 else ''}" if message.errors else "valid"
        self._header(f"{message.shown_as} · {kind} · {state}")

        errors_list = self.query_one("#profile-errors", OptionList)
        errors_list.clear_options()
        errors_list.add_options([Option(Content(self._error_line(e, message.path)), id=str(i)) for i, e in enumerate(message.errors)])
        errors_list.display = bool(message.errors)
        errors_title = self.query_one("#profile-errors-title", Static)
        if message.errors:
            errors_title.update(Content(f"Problems ({len(message.errors)}): select one to go to its line · n next"))
        else:
            errors_title.update(Content(""))
        errors_title.display = bool(message.errors)
        if message.warnings:
            self.notify("\n".join(message.warnings), title="Warnings", severity="warning")

        table = self.query_one("#profile-conversations", DataTable)
        table.clear()
        table.add_rows([[Text(cell) for cell in spec_cells(spec)] for spec in message.specs])
        table.display = bool(message.specs)
        title = self.query_one("#profile-conversations-title", Static)
        if kind in ("personality", "template"):
            title.update(Content(f"A {kind} file: it makes no conversations of its own."))
        elif message.errors:
            title.update(Content("No conversations until the problems are fixed."))
        else:
            title.update(
                Content(f"{n} conversation{'s' if n != 1 else ''} (seed {SEED}) · run them: parley run {runnable_path(message.path)}")
            )
        if message.errors:
            self.go_to_error(0)

    def _error_line(self, error: ProfileError, path: Path) -> str:
        where = f"line {error.line}" if error.line is not None else "file"
        if error.line is not None and error.column is not None:
            where += f", col {error.column}"
        if error.file and Path(error.file).resolve() != path.resolve():
            where = f"{self._shown_as(Path(error.file))} {where}"
        field = f"{error.field_path}: " if error.field_path else ""
        return f"{where}  {field}{error.reason}"

    def _header(self, text: str) -> None:
        self.query_one("#profile-header", Static).update(Content(text))

    # ---- errors -----------------------------------------------------------------------------------

    @on(OptionList.OptionSelected, "#profile-errors")
    def _error_selected(self, event: OptionList.OptionSelected) -> None:
        self.go_to_error(int(event.option.id or 0), focus=True)

    def go_to_error(self, index: int, *, focus: bool = False) -> None:
        """Move the source view's cursor to error `index`'s line (if it has one in this file)."""
        if not self.errors or self.path is None:
            return
        index %= len(self.errors)
        error = self.errors[index]
        errors_list = self.query_one("#profile-errors", OptionList)
        errors_list.highlighted = index
        same_file = not error.file or Path(error.file).resolve() == self.path.resolve()
        if error.line is not None and same_file:
            source = self.query_one(SourceView)
            source.go_to_line(error.line, error.column or 1)
            if focus:
                source.focus()

    # ---- actions ----------------------------------------------------------------------------------

    def action_next_error(self) -> None:
        if not self.errors:
            self.notify("No problems in this file.")
            return
        current = self.query_one("#profile-errors", OptionList).highlighted
        self.go_to_error(0 if current is None else current + 1, focus=True)

    def selected_source(self) -> str:
        """The file or folder under the tree's cursor (else the open file, else the first
        folder), as a path to run (see `runnable_path`)."""
        node = self.query_one(ProfileTree).cursor_node
        path: Path | None = Path(node.data) if node is not None and node.data is not None else self.path
        if path is None and self.profile_dirs:
            path = self.profile_dirs[0]
        return "" if path is None else runnable_path(path)

    def action_run_batch(self) -> None:
        self.parley.launch_batch(self.selected_source())

    def action_reload(self) -> None:
        self._list_files()
        if self.path is not None:
            self.open_file(self.path)

    async def action_edit(self) -> None:
        """Open the file in $EDITOR (the app steps aside while it runs), then read, validate and
        expand it again."""
        if self.path is None:
            self.notify("Select a file first.", severity="warning")
            return
        command = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
        path = self.path
        try:
            with self.app.suspend():
                code = await asyncio.to_thread(_run_editor, [*command, str(path)])
        except SuspendNotSupported:  # no terminal to hand over (a headless run): run it as it is
            code = await asyncio.to_thread(_run_editor, [*command, str(path)])
        if code is None:
            self.notify(f"No editor {command[0]!r}: set EDITOR (e.g. EDITOR=nano).", title="Edit", severity="error")
            return
        self.open_file(path)
        self.notify(f"{self._shown_as(path)} reloaded and checked again.", title="Edited")
