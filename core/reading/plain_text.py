"""A message as a person reads it: what an LLM bot's markdown, emoji and line wrapping show, and
the letters they look like, before any phrase is matched against it.

`as_read(text)`:
- Unicode normalised (NFKC: full-width letters, ligatures, composed accents), invisible marks
  removed (zero-width spaces and joiners, soft hyphens, variation selectors), and letters that
  look like Latin ones folded into them (Cyrillic and Greek а е о р с х у і ѕ ο α ...): "cаncelled"
  with a Cyrillic а reads as "cancelled";
- markdown shown as its words: `**cancelled**`, `_cancelled_` and `code` lose their marks (an
  underscore inside a word, `cancel_order`, stays), struck-out text (`~~cancelled~~`) is gone, a
  line's bullet, number, heading or quote mark is dropped, `[text](url)` is its text;
- emoji and other pictographs dropped, except that a cross or a no-entry sign (❌ ✖ ✗ 🚫 ⛔) reads
  as "not", put before the line it stands in ("ORD-1004: cancelled ❌" is no claim);
- a line break inside a sentence joined with a space (a line that ends without . ! ? : and is
  followed by one that starts no new item); a bullet or a numbered item stays a line of its own,
  and a blank line a paragraph.

Linear in the text's length: bot text is data, and this runs on every bot message.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["as_read"]

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\ufe0e\ufe0f"))
# Letters of other scripts drawn like Latin ones (the common confusables of Unicode's list).
_LOOKALIKES = str.maketrans(
    {
        **dict(zip("АВЕКМНОРСТХУЅІЈаеорсхуѕіјһԁԛԝ", "ABEKMHOPCTXYSIJaeopcxysijhdqw", strict=True)),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοαιν", "ABEZHIKMNOPTYXoaiv", strict=True)),
    }
)
_NEGATIVE_MARKS = frozenset("❌✖✗✘🚫⛔❎")
_ITEM = re.compile(r"^[ \t]*(?:[-*+•◦▪‣·]|\d{1,3}[.)]|#{1,6}|>+)[ \t]+")
_LINK = re.compile(r"\[([^\]\n]{0,500})\]\([^)\s]{0,2000}\)")
_STRUCK = re.compile(r"~~[^~\n]{0,500}~~")
_MARKS = re.compile(r"\*+|~~|`+")
# An underscore that opens or closes emphasis: at a word's edge, not inside it (cancel_order).
_UNDERSCORE = re.compile(r"(?<!\w)_+(?=\w)|(?<=\w)_+(?!\w)")
_SPACES = re.compile(r"[ \t]+")
_ENDS_A_SENTENCE = tuple(".!?…:;")


def _pictograph(char: str) -> bool:
    if char in _NEGATIVE_MARKS:
        return False
    return unicodedata.category(char) in ("So", "Sk", "Cs", "Co") or 0x1F000 <= ord(char) <= 0x1FAFF


def _line(raw: str, plain: bool) -> tuple[str, bool]:
    """One line as read, and whether it opens an item of its own (a bullet, a number, a heading).
    `plain`: the line is ASCII (no pictograph to look for)."""
    item = _ITEM.match(raw)
    line = raw[item.end() :] if item else raw
    if "[" in line:
        line = _LINK.sub(r"\1", line)
    if "~~" in line:
        line = _STRUCK.sub(" ", line)
    if "*" in line or "~" in line or "`" in line:
        line = _MARKS.sub("", line)
    if "_" in line:
        line = _UNDERSCORE.sub("", line)
    negative = False
    if not plain:
        negative = any(c in _NEGATIVE_MARKS for c in line)
        if negative or any(ord(c) > 0x2000 for c in line):
            line = "".join(" " if _pictograph(c) or c in _NEGATIVE_MARKS else c for c in line)
    line = _SPACES.sub(" ", line).strip()
    if negative and line:
        line = "not " + line
    return line, item is not None


def as_read(text: str) -> str:
    """`text` as a person reads it (see the module)."""
    plain = text.isascii()
    if not plain:
        text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_LOOKALIKES)
    out: list[str] = []
    previous = ""
    for raw in text.splitlines():
        line, item = _line(raw, plain)
        if not line:
            if out and out[-1] != "\n":
                out.append("\n")
            previous = ""
            continue
        if out and out[-1] != "\n":
            out.append("\n" if item or previous.endswith(_ENDS_A_SENTENCE) else " ")
        out.append(line)
        previous = line
    return "".join(out).strip()
