"""Where the parts of a profile, playbook or scenario file are written, for messages about a
file that has already been read (`FilePlaces(source).at("expect", "judge")`, `.goal(2)`).

The file is read again, once per FilePlaces, with positions (YAML through
parley.core.specs.yaml_reading, JSON through parley.core.specs.json_positions); a part that
cannot be found (the file changed, or is gone) is placed at the file alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parley.core.errors import ProfileError
from parley.core.records import SourceLocation
from parley.core.specs.json_positions import load_positioned
from parley.core.specs.yaml_reading import read_yaml
from parley.core.specs.yaml_validation import Node

__all__ = ["FilePlaces"]


class FilePlaces:
    """The positions of one file's parts (see the module doc)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.root: Node | None = None
        try:
            text = Path(source).read_text(encoding="utf-8")
            data: Any = load_positioned(text) if source.lower().endswith(".json") else read_yaml(text, source)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError, ProfileError):
            return  # placed at the file alone
        self.root = Node.root(data)

    def at(self, *path: str | int, at_key: bool = True) -> SourceLocation:
        """The place of the value under `path` (keys and list indexes), at its key by default."""
        node = self.root
        for step in path:
            if node is None:
                break
            if isinstance(step, int):
                node = node.item(step) if node.is_seq and 0 <= step < len(node.value) else None
            else:
                node = node.child(step) if node.has(step) else None
        if node is None:
            return SourceLocation(file=self.source, field_path=_dotted(path))
        return node.location(self.source, at_key=at_key)

    def goal(self, index: int) -> SourceLocation:
        """The place of a profile's goal `index` (0-based, counting the goal texts of `user.goals`
        or `ask_about`, not the variable definitions among them)."""
        user = self.root.child("user") if self.root is not None and self.root.has("user") else None
        key = "goals" if user is not None and user.has("goals") else "ask_about"
        goals = user.child(key) if user is not None and user.has(key) else None
        texts = [item for item in goals.items() if isinstance(item.value, str)] if goals is not None else []
        if 0 <= index < len(texts):
            return texts[index].location(self.source)
        return SourceLocation(file=self.source, field_path=f"user.goals[{index}]")


def _dotted(path: tuple[str | int, ...]) -> str | None:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text or None
