"""`parley init --world NAME DIR` writes a world a user starts from: `parley worlds check` finds it
sound, and `parley run` runs its profile with its bot; a folder in use is never overwritten."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from parley.tui.cli.main import cli


def test_a_new_worlds_template_passes_its_check_and_its_profile_runs_with_its_bot(tmp_path):
    folder = tmp_path / "hotel"
    made = CliRunner().invoke(cli, ["init", "--world", "hotel", str(folder)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    assert sorted(p.name for p in folder.iterdir()) == ["bot.py", "cancel_booking.yaml", "world.py"]
    checked = CliRunner().invoke(cli, ["worlds", "check", str(folder / "world.py")], catch_exceptions=False)
    assert checked.exit_code == 0 and "world hotel is fine" in checked.output, checked.output
    ran = subprocess.run(  # as the template's next step says: from the folder, its bot by module name
        [sys.executable, "-m", "parley.tui.cli.main", "run", ".", "--bot", "python:bot:reply", "--db", str(tmp_path / "p.db")],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "Pass rate: 100.0% (1 of 1" in ran.stdout


def test_a_folder_in_use_is_not_overwritten(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "world.py").write_text("# mine\n", encoding="utf-8")
    made = CliRunner().invoke(cli, ["init", "--world", "hotel", str(folder)])
    assert made.exit_code != 0
    assert (folder / "world.py").read_text(encoding="utf-8") == "# mine\n"
