"""The Profiles pane on files that used to break its loader: each shows its error at its line,
never a pane stuck at "loading…"."""

from __future__ import annotations

from textual.widgets import OptionList

from tests.test_tui_profiles import _select
from tests.test_tui_support import SIZE, db_path, make_app, settle  # noqa: F401  (fixture)
from tests.test_yaml_hostile import ALIAS_BOMB, PROFILE_HEAD


async def test_an_unquoted_impossible_date_shows_its_error_instead_of_loading(db_path, tmp_path):
    folder = tmp_path / "my-profiles"
    folder.mkdir()
    impossible = folder / "impossible_date.yaml"
    impossible.write_text(PROFILE_HEAD + "world:\n  today: 2026-13-40\n", encoding="utf-8")
    bomb = folder / "bomb.yaml"
    bomb.write_text(PROFILE_HEAD + ALIAS_BOMB, encoding="utf-8")
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for path, line, says in ((impossible, 7, "'2026-13-40' is not a date"), (bomb, 10, "aliases expand")):
            await _select(pilot, path)
            header = str(app.query_one("#profile-header").render())
            assert "loading" not in header and "1 problem" in header, header
            errors = app.query_one("#profile-errors", OptionList)
            assert errors.display and errors.option_count == 1
            shown = str(errors.get_option_at_index(0).prompt)
            assert f"line {line}" in shown and says in shown, shown
