"""Reading parley's HTML reports back as a person's browser would see them, for the tests (this
module holds no tests): every element with its attributes and text, parsed by the standard
library's HTML parser (no browser)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

VOID = {"meta", "br", "img", "input", "link", "hr", "area", "base", "col", "embed", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def all_text(self) -> str:
        return self.text + "".join(c.all_text() for c in self.children)

    def iter(self):
        yield self
        for child in self.children:
            yield from child.iter()

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        # text after a child belongs to the parent: kept as a text-only child, so order is kept
        self.stack[-1].children.append(Element("#text", {}, data))


def parse(html: str) -> Element:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root


def at(document: Any, path: str) -> Any:
    """The value at a dotted path of a JSON document (`summary.pass_k.1.value`)."""
    value = document
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def written(value: Any, fmt: str) -> str:
    """How the report writes a number (parley.core.reports.html_page.shown), worked out here."""
    if value is None:
        return "unknown" if fmt == "usd" else "n/a"
    return {
        "int": lambda v: f"{int(v):,}",
        "pct": lambda v: f"{v * 100:.1f}%",
        "num": lambda v: f"{v:.2f}",
        "num1": lambda v: f"{v:.1f}",
        "usd": lambda v: f"${v:.4f}",
        "seconds": lambda v: f"{v:.2f} s" if v >= 0.1 or v == 0 else (f"{v * 1000:.1f} ms" if v >= 0.001 else f"{v * 1000:.2f} ms"),
    }[fmt](value)


def marked_numbers(root: Element) -> list[tuple[str, Any, str, str]]:
    """Every number marked with its JSON field: (field, value, format, text shown)."""
    return [
        (e.attrs["data-field"], json.loads(e.attrs["data-value"]), e.attrs["data-format"], e.all_text())
        for e in root.iter()
        if "data-field" in e.attrs
    ]
