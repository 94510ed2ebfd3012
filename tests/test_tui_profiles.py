"""The Profiles pane: browse the folders, read a file highlighted, see its problems with line
numbers where they are, and the conversations it expands to."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from textual.widgets import DataTable, OptionList, TextArea

from parley.core.specs.profile_loader import validate_profile
from parley.core.specs.sources import load_specs
from parley.tui.app.panes.profiles_pane import ProfilesPane, ProfileTree
from parley.tui.app.widgets.source_view import SourceView
from tests.test_tui_support import PROFILES, SIZE, db_path, make_app, settle  # noqa: F401  (fixture)

BROKEN = """\
test_name: broken_profile

user:
  language: English
  role: a customer
  goals:
    - track order ORD-1003

conversation:
  number: 1
  goal_style:
    all_answered:
      limit: lots
  interaction_style:
    - single question
"""


async def _select(pilot, path: Path) -> None:
    """Select a file's node in the tree, as Enter on it would."""
    tree = pilot.app.query_one(ProfileTree)
    node = tree.find_file(path)
    assert node is not None, f"{path} is not in the tree"
    parent = node.parent
    while parent is not None:
        parent.expand()
        parent = parent.parent
    await pilot.pause()
    tree.move_cursor(node)
    await pilot.pause()
    assert tree.cursor_node is node
    tree.focus()
    await pilot.press("enter")
    await settle(pilot)


async def test_selecting_a_shipped_profile_shows_its_yaml_and_conversations(db_path):
    path = PROFILES / "impatient_customer.yaml"
    app = make_app(initial_pane="profiles", profile_dirs=[PROFILES])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(ProfileTree)
        labels = [str(n.label) for n in tree.root.children]
        assert labels == ["profiles/"]
        await _select(pilot, path)

        source = app.query_one(SourceView)
        assert source.text == path.read_text() and source.language == "yaml"
        assert source.read_only
        header = str(app.query_one("#profile-header").render())
        assert "profiles/impatient_customer.yaml" in header and "profile" in header and "valid" in header

        expected = load_specs([path], seed=0).specs
        table = app.query_one("#profile-conversations", DataTable)
        assert table.row_count == len(expected) > 0
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == [s.spec_id for s in expected]
        assert not app.query_one("#profile-errors", OptionList).display

        await pilot.press("r")  # running a batch: the launch form, prefilled with this file
        await pilot.pause()
        from parley.tui.app.screens.launch_batch import LaunchBatchScreen

        assert isinstance(app.screen, LaunchBatchScreen)
        assert app.screen.query_one("#launch-sources").value.endswith("profiles/impatient_customer.yaml")


async def test_a_scenario_file_shows_as_json(db_path):
    path = PROFILES / "scenarios" / "sample_scenarios.json"
    app = make_app(initial_pane="profiles", profile_dirs=[PROFILES])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _select(pilot, path)
        assert app.query_one(SourceView).language == "json"
        assert app.query_one("#profile-conversations", DataTable).row_count == len(load_specs([path], seed=0).specs)


async def test_a_broken_profile_shows_its_error_at_its_line(db_path, tmp_path):
    folder = tmp_path / "my-profiles"
    folder.mkdir()
    broken = folder / "broken.yaml"
    broken.write_text(BROKEN)
    errors = validate_profile(broken)
    assert errors and errors[0].line == 13  # what the pane must point at

    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(ProfileTree)
        assert [str(n.label) for n in tree.root.children][-1] == "my-profiles/"
        await _select(pilot, broken)

        listing = app.query_one("#profile-errors", OptionList)
        assert listing.display and listing.option_count == len(errors)
        shown = str(listing.get_option_at_index(0).prompt)
        assert shown.startswith("line 13, col") and errors[0].reason in shown
        assert "1 problem" in str(app.query_one("#profile-header").render())
        assert app.query_one("#profile-conversations", DataTable).row_count == 0

        source = app.query_one(SourceView)
        source.move_cursor((0, 0))
        listing.focus()
        listing.highlighted = 0
        await pilot.press("enter")  # choosing the error takes the cursor to its line
        await pilot.pause()
        assert source.cursor_location[0] == 12
        assert app.focused is source


async def test_profiles_dir_and_shipped_folder_are_both_listed(db_path, tmp_path):
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "one.yaml").write_text(BROKEN)
    app = make_app(initial_pane="profiles", profile_dirs=[tmp_path / "extra"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(ProfilesPane)
        assert [p.name for p in pane.profile_dirs] == ["profiles", "extra"]
        assert [str(n.label) for n in app.query_one(ProfileTree).root.children] == ["profiles/", "extra/"]


async def test_the_personalities_setting_is_where_the_pane_finds_a_profile_s_personality(db_path, tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    profile = folder / "grumpy_customer.yaml"
    profile.write_text("test_name: grumpy\nuser:\n  role: r\n  context:\n    - personality: grumpy.yml\n  goals: [hi]\n")
    people = tmp_path / "people"
    people.mkdir()
    (people / "grumpy.yml").write_text("context: [you are grumpy]\n")
    app = make_app(initial_pane="profiles", profile_dirs=[folder], personality_dirs=[people])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _select(pilot, profile)
        assert "valid" in str(app.query_one("#profile-header").render())
        assert app.query_one("#profile-conversations", DataTable).row_count == 1


async def test_the_command_shown_for_a_profiles_dir_file_runs_from_here(db_path, tmp_path, monkeypatch):
    import shlex
    import subprocess

    elsewhere = tmp_path / "ux-profiles"
    elsewhere.mkdir()
    shutil.copy(PROFILES / "track_shipped_order.yaml", elsewhere / "track.yaml")
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)  # parley started here with --profiles-dir ../ux-profiles
    app = make_app(initial_pane="profiles", profile_dirs=[elsewhere])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _select(pilot, elsewhere / "track.yaml")
        title = str(app.query_one("#profile-conversations-title").render())
    command = title.split("run them: ", 1)[1]
    args = shlex.split(command)
    assert args[:2] == ["parley", "run"]
    parley = Path(sys.executable).parent / "parley"
    result = subprocess.run([str(parley), "run", *args[2:], "--db", str(tmp_path / "x.db")], cwd=workdir, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr  # the file is found, the batch runs


async def test_typing_into_the_source_says_it_is_read_only_and_e_edits_the_file(db_path, tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    broken = folder / "broken.yaml"
    broken.write_text(BROKEN)
    fixed = BROKEN.replace("limit: lots", "limit: 5")
    editor = tmp_path / "editor.py"
    editor.write_text(f"import sys, pathlib\npathlib.Path(sys.argv[1]).write_text({fixed!r})\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _select(pilot, broken)
        assert "1 problem" in str(app.query_one("#profile-header").render())
        source = app.query_one(SourceView)
        source.focus()
        await pilot.press("x", "y")  # a person trying to fix it in place
        await pilot.pause()
        assert source.text == BROKEN
        assert any("read-only" in n.message and "press e" in n.message for n in app._notifications)
        await pilot.press("e")
        await settle(pilot)
        assert broken.read_text() == fixed
        assert source.text == fixed  # reloaded
        assert "valid" in str(app.query_one("#profile-header").render())  # and checked again
        assert app.query_one("#profile-conversations").row_count > 0


async def test_the_source_is_highlighted_by_textual_syntax(db_path):
    path = PROFILES / "impatient_customer.yaml"
    app = make_app(initial_pane="profiles", profile_dirs=[PROFILES])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _select(pilot, path)
        source = app.query_one(SourceView)
        assert source.language == "yaml" and "yaml" in source.available_languages
        assert type(source)._build_highlight_map is TextArea._build_highlight_map  # no private override
        line = source.get_line(0)
        assert source.text.splitlines()[0] == str(line)
