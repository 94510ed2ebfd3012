"""Where a mutant notes what it did in one conversation: the conversation's metadata, under
`mutant` (kept with the stored record, read back by `parley mutate` to tell a mutant that acted
from one that never got the chance).

    {"mutant": {"name": "acts_twice", "acted": [{"turn": 2, "what": "...", "visible": false}],
                "not_exercisable": null}}

`visible` is False where the mutant acted and nothing changed that anything could see (the second
of two cancellations refused by the world): such acts do not count as a chance to catch it.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["MUTANT_KEY", "Act", "MutantNotes", "notes_of", "seeded"]

MUTANT_KEY = "mutant"


class Act(BaseModel):
    """One thing a mutant did in a conversation."""

    turn: int
    """The bot's turn (1-based, counting its answers) it acted in."""
    what: str
    visible: bool = True


class MutantNotes(BaseModel):
    """What a mutant did in one conversation (see the module doc)."""

    name: str
    acted: list[Act] = Field(default_factory=list)
    not_exercisable: str | None = None
    """Why the mutant cannot act on this conversation's world at all (None: it can)."""

    @property
    def exercised(self) -> bool:
        """The mutant acted somewhere visible."""
        return any(a.visible for a in self.acted)


def notes_of(metadata: dict[str, Any]) -> MutantNotes | None:
    """A stored conversation's mutant notes (None: it ran under no mutant)."""
    raw = metadata.get(MUTANT_KEY)
    return MutantNotes.model_validate(raw) if isinstance(raw, dict) else None


def seeded(*parts: object) -> random.Random:
    """A random source seeded from what it is used for (the mutant, the customer, the value at
    stake): the same conversation is mutated the same way on every run."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
