"""What the batch service sends back, without the server's absolute paths.

A loader error names files as the service sees them (`/srv/parley/profiles/x.yaml`, the request's
own folder under service-inputs/). Clients only need to know which file or field: a profile
folder is shown by its name (`profiles/x.yaml`), a file the service wrote from the request by
its name alone, and any other absolute path by its last part. The service's records (a batch's
`sources`, a result's `source`, a spec's notes) show the service's own folders by their names
the same way (`deep`); other text in them (what a bot said) is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# An absolute path: a "/" that does not continue a word, a URL or a relative path, then parts.
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])(?:/[^\s/'\"(),;\[\]{}<>`]+)+/?")


class PathScrubber:
    """Replaces the service's absolute paths in text (see the module doc)."""

    def __init__(self, roots: Sequence[Path], inputs_dir: Path, others: Sequence[Path] = ()) -> None:
        # Longest first, so a folder inside another is replaced by its own name.
        named = [(str(root), root.name or "/") for root in [*roots, *others]] + [(str(inputs_dir), inputs_dir.name)]
        self._named = sorted(named, key=lambda pair: len(pair[0]), reverse=True)

    def folders(self, text: str) -> str:
        """`text` with each of the service's folders shown by its name (`profiles/x.yaml`)."""
        for path, name in self._named:
            if path in text:
                text = re.sub(re.escape(path) + r"(?=/|\b|$)", name, text)
        return text

    def deep(self, value: Any) -> Any:
        """`value` (a record as JSON: mappings, lists, text) with the service's folders shown by their names."""
        if isinstance(value, str):
            return self.folders(value)
        if isinstance(value, dict):
            return {key: self.deep(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.deep(item) for item in value]
        return value

    def __call__(self, text: str, request_folder: Path | None = None) -> str:
        if request_folder is not None:
            text = text.replace(str(request_folder) + "/", "").replace(str(request_folder), "the request")
        return _ABSOLUTE.sub(_last_part, self.folders(text))


def _last_part(match: re.Match[str]) -> str:
    path = match.group(0)
    if path.startswith("/api/"):
        return path  # the service's own routes
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return f"…/{last}" if last else "…"
