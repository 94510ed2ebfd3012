"""The documentation's pictures, from real runs (`make screenshots`): docs/images/*.png.

In a fresh folder holding the shipped suite, `parley run` stores real offline batches; the app
then opens on that database through Textual's Pilot, a person's keys are pressed (a chat with
the offline bot, each pane in turn) and each screen is saved as SVG; headless Chromium (Debian's
`chromium`) turns each SVG, and the batch's HTML report, into PNG. Chromium runs in a network
namespace of its own where the machine allows it (`unshare -n`): the SVGs name a web font, which
is never fetched, and the local monospace font draws them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
SIZE = (120, 34)  # columns, rows: the app as a roomy terminal shows it
TODAY = dt.date(2026, 11, 21)  # the shipped profiles' date: order ages as they are written
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
]


def parley(*args: str, cwd: Path) -> None:
    subprocess.run([str(Path(sys.executable).with_name("parley")), *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)


async def app_screens(folder: Path, svgs: Path) -> None:
    """Each pane after a person's keys, saved as SVG."""
    from textual.widgets import Input

    from parley.tui.app.app import ParleyApp

    app = ParleyApp(db_path=folder / "sessions" / "parley.db", profile_dirs=[], today=TODAY)
    async with app.run_test(size=SIZE) as pilot:

        async def settle() -> None:
            for _ in range(20):
                await pilot.pause(0.05)
                if not any(worker.is_running for worker in app.workers):
                    await pilot.pause(0.1)
                    return

        async def shot(name: str) -> None:
            await settle()
            for widget in app.query("Input, TextArea"):
                widget.cursor_blink = False  # type: ignore[attr-defined]
            app.save_screenshot(f"{name}.svg", str(svgs))

        await settle()
        for line in ("where is ORD-1003?", "please cancel ORD-1004", "yes"):
            field = app.query_one("#chat-input", Input)
            field.focus()
            field.value = line
            await pilot.press("enter")
            await settle()
        await shot("chat")

        await pilot.press("f2")
        await settle()
        await pilot.press(*["down"] * 16, "enter")  # track_shipped_order.yaml, under the three folders
        await shot("profiles")

        await pilot.press("f3")
        await settle()
        await pilot.press("enter")
        await shot("batches")

        await pilot.press("f4")
        await settle()
        await pilot.press("down", "enter")  # past the chat above: a simulated conversation and its verdict
        await shot("sessions")


def network_namespace() -> list[str]:
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        return ["unshare", "-n"]
    return []


def to_png(page: Path, png: Path, width: int, height: int, profile: Path) -> None:
    """One page (an SVG, an HTML file) as a PNG of width x height, drawn by headless Chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("make screenshots needs Chromium: apt-get install chromium")
    subprocess.run(
        [
            *network_namespace(),
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
    )


def svg_size(svg: Path) -> tuple[int, int]:
    import re

    found = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text(encoding="utf-8"))
    assert found, f"{svg}: no viewBox"
    return round(float(found.group(1))), round(float(found.group(2)))


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="parley-screens-") as tmp:
        folder = Path(tmp)
        (folder / "profiles").symlink_to(ROOT / "profiles")
        os.environ["PARLEY_DB"] = str(folder / "sessions" / "parley.db")
        os.chdir(folder)
        parley("run", "profiles/", cwd=folder)
        parley("run", "profiles/", "--trials", "2", "--seed", "7", cwd=folder)
        parley("report", "latest", "--output", "report.html", cwd=folder)
        svgs = folder / "svg"
        svgs.mkdir()
        asyncio.run(app_screens(folder, svgs))
        for svg in sorted(svgs.glob("*.svg")):
            width, height = svg_size(svg)
            to_png(svg, IMAGES / f"{svg.stem}.png", width, height, folder / "chromium")
            print(f"wrote {(IMAGES / svg.stem).relative_to(ROOT)}.png ({width}x{height})")
        to_png(folder / "report.html", IMAGES / "html-report.png", 1200, 900, folder / "chromium")
        print(f"wrote {(IMAGES / 'html-report.png').relative_to(ROOT)}")


if __name__ == "__main__":
    main()
