"""One conversation as a rule's `conv[i]`: its values as read-only attributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ConversationView:
    """One conversation as a rule's `conv[i]`: its values as attributes, read-only.

    The only object whose attributes a rule may read by any name; a name it does not have is an
    AttributeError, as on Sensei's SimpleNamespace."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = values

    def attribute(self, name: str) -> Any:
        """The value named `name`; AttributeError when the conversation has none."""
        try:
            return self._values[name]
        except (KeyError, TypeError):
            raise AttributeError(f"the conversation has no value named {name!r}") from None

    def has(self, name: str) -> bool:
        """Whether the conversation has a value named `name` (a rule's `hasattr(conv[0], name)`)."""
        try:
            return name in self._values
        except TypeError:
            return False

    def items(self) -> list[tuple[str, Any]]:
        """Its values by name (what comparing, hashing or showing it walks through)."""
        return list(self._values.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConversationView) and dict(self._values) == dict(other._values)

    __hash__ = None  # type: ignore[assignment]  # like SimpleNamespace: equal by content, unhashable

    def __repr__(self) -> str:
        inner = ", ".join(f"{key}={value!r}" for key, value in self._values.items())
        return f"namespace({inner})"
