"""The site loads nothing from outside itself (a mkdocs hook): after the build, every page,
stylesheet and picture is read, and a script, stylesheet, font, image or frame fetched from
another host fails the build with the file and the address. Links a reader follows (`<a href>`)
may point anywhere; nothing is loaded by opening a page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

# What a browser fetches on its own: src= of any element, href= of <link>, url(...) and @import in styles.
LOADED = [
    re.compile(r"""<[a-z]+[^>]*?\ssrc\s*=\s*["']?(?P<url>(?:https?:)?//[^"'\s>]+)""", re.IGNORECASE),
    re.compile(r"""<link\b[^>]*?\shref\s*=\s*["']?(?P<url>(?:https?:)?//[^"'\s>]+)""", re.IGNORECASE),
    re.compile(r"""url\(\s*["']?(?P<url>(?:https?:)?//[^"')\s]+)""", re.IGNORECASE),
    re.compile(r"""@import\s+(?:url\()?\s*["']?(?P<url>(?:https?:)?//[^"')\s;]+)""", re.IGNORECASE),
    re.compile(r"""<image\b[^>]*?\shref\s*=\s*["']?(?P<url>(?:https?:)?//[^"'\s>]+)""", re.IGNORECASE),
]
READ = (".html", ".css", ".svg")


def external_loads(site: Path) -> list[str]:
    """Each address outside the site that a file of it would load, as `file: address`."""
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in READ or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in LOADED:
            found += [f"{path.relative_to(site)}: {match.group('url')}" for match in pattern.finditer(text)]
    return found


def on_post_build(config: Any) -> None:
    """Fails the build when the site would load anything from another host."""
    found = external_loads(Path(config["site_dir"]))
    if found:
        raise PluginError("the site loads from outside itself (it must work offline):\n  " + "\n  ".join(found))
