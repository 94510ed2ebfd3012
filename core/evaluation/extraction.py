"""Typed output extraction: the profile's `chatbot.output` values read from the bot's messages.

Pure and deterministic. For each output field every bot message is scanned for values of the
field's type; then one is chosen:

1. a value whose sentence contains one of the field's *hint words* beats one whose sentence has
   none. Hint words are the description's words (minus filler like "the", "how", "going"), the
   parts of the field's name, and a few words typical of the type ("total", "cost" for money;
   "ready", "wait" for time; "delivery", "arrive" for date; "id", "number", "code" for str).
   Words match by their first five letters, so "price" hits "prices" and "order" hits "ordered";
2. for str, an id-like token beats a quoted value, which beats a "<hint> is X" phrase;
3. then the newest message (the bot usually confirms the final value last);
4. then more hint words, then the later position in the message ("pizza $10, delivery $2.50,
   total $12.50" gives $12.50).

Types and the values they give:
- int: 3, 1,250, "three" -> 3; numbers inside order ids, dates, times and amounts of money
  are not counted (an amount is used only when no other number is there).
- float: 2.5, 2,5 (decimal comma), 1,250.75 -> 1250.75; same exclusions as int.
- money: $12.50, 12,50 €, EUR 99.00, USD 5, 20 dollars -> {"amount": 12.5, "currency": "USD"}.
  `$` is read as USD, `€` EUR, `£` GBP, `¥` JPY; a number without a currency is not money.
- str: an id-like token (ORD-1234, 1Z999AA10123456784), else a quoted value ("...", '...',
  `...`, “...”, **...**), else the word after "<hint word> is" / "<hint word>:".
- time: a clock time (14:30, 2:30 pm, 2 pm, noon) -> "14:30"; a duration (in 20 minutes,
  1 hour 30 minutes, half an hour) -> ISO 8601 "PT20M", "PT1H30M"; a range ("20-30 minutes")
  gives its upper bound, the longest the customer is told to wait.
- date: ISO 2026-11-23, November 23, 2026, 23 Nov, 23/11/2026 (day first unless that cannot be:
  11/23/2026 is read as month first), and, against the world's `today`, today / tomorrow /
  yesterday / the day after tomorrow / in 3 days / 2 weeks ago / next Monday -> "2026-11-23".
  Without `today`, relative dates and dates without a year are not read.
"""

from __future__ import annotations

import bisect
import datetime
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from parley.core.records import ExtractedOutput, OutputField

__all__ = [
    "Candidate",
    "extract_output",
    "extract_outputs",
    "find_dates",
    "find_floats",
    "find_ints",
    "find_money",
    "find_strs",
    "find_times",
    "hint_words",
]


class Candidate(BaseModel):
    """A value of some type found in a text, with where it was. Higher `rank` is preferred."""

    model_config = ConfigDict(frozen=True)

    value: Any
    raw: str
    start: int
    end: int
    rank: int = 1


def _candidate(value: Any, raw: str, start: int, end: int, rank: int = 1) -> Candidate:
    return Candidate(value=value, raw=raw, start=start, end=end, rank=rank)


# -- numbers ---------------------------------------------------------------------------------

_NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "forty-five": 45,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_INT = re.compile(r"(?<![\w.,/:$€£¥-])[+-]?(\d{1,3}(?:,\d{3})+|\d+)(?!\w|[.,:/]\d)")
_FLOAT = re.compile(r"(?<![\w.,/:$€£¥-])[+-]?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(?!\w|[.,:/]\d)")


def _parse_number(text: str, *, dot_thousands: bool = False) -> float:
    """`1,250.75`, `1.250,75`, `12,5`, `1,000` as a float. With one separator, a comma followed
    by exactly three digits groups thousands; so does a dot when `dot_thousands` (money:
    `12.500 €`). Otherwise the last separator is the decimal point."""
    sign = -1.0 if text.startswith("-") else 1.0
    s = text.lstrip("+-")
    if "," in s and "." in s:
        decimal = "," if s.rfind(",") > s.rfind(".") else "."
        other = "." if decimal == "," else ","
        s = s.replace(other, "").replace(decimal, ".")
    elif "," in s or "." in s:
        sep = "," if "," in s else "."
        parts = s.split(sep)
        thousands = len(parts) > 2 or (len(parts[-1]) == 3 and (sep == "," or dot_thousands))
        s = s.replace(sep, "") if thousands else s.replace(sep, ".")
    return sign * float(s)


def _spans_overlap(a: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    return any(a[0] < end and start < a[1] for start, end in spans)


def _claimed_spans(text: str, today: datetime.date | None) -> list[tuple[int, int]]:
    """Where ids, dates and clock times are: numbers inside them are not ints or floats
    (durations are: "20 minutes" may well be the number asked for)."""
    spans = [(m.start(), m.end()) for m in _ID.finditer(text)]
    spans += [(c.start, c.end) for c in _dates(text, today, False)]
    spans += [(c.start, c.end) for c in _times(text) if not c.value.startswith("PT")]
    return spans


def find_ints(text: str, *, today: datetime.date | None = None) -> list[Candidate]:
    """Whole numbers (digits or number words); amounts of money only as a last resort."""
    return list(_ints(text, today))


# Every finder is cached on its text: a conversation's messages are scanned once per output
# field and type, and the number finders reuse the date, time and money finders.
@lru_cache(maxsize=1024)
def _ints(text: str, today: datetime.date | None) -> tuple[Candidate, ...]:
    claimed = _claimed_spans(text, today)
    money = _money(text)
    out: list[Candidate] = []
    for m in _INT.finditer(text):
        span = (m.start(), m.end())
        if _spans_overlap(span, claimed) or _spans_overlap(span, [(c.start, c.end) for c in money]):
            continue
        out.append(_candidate(int(m.group(0).replace(",", "")), m.group(0), *span, rank=2))
    for m in _NUMBER_WORD.finditer(text):
        if not _spans_overlap((m.start(), m.end()), claimed):
            out.append(_candidate(_NUMBER_WORDS[m.group(1).lower()], m.group(0), m.start(), m.end(), rank=1))
    for c in money:
        amount = c.value["amount"]
        if float(amount).is_integer():
            out.append(_candidate(int(amount), c.raw, c.start, c.end, rank=0))
    return tuple(out)


def find_floats(text: str, *, today: datetime.date | None = None) -> list[Candidate]:
    """Decimal numbers (a whole number counts too); amounts of money only as a last resort."""
    return list(_floats(text, today))


@lru_cache(maxsize=1024)
def _floats(text: str, today: datetime.date | None) -> tuple[Candidate, ...]:
    claimed = _claimed_spans(text, today)
    money = _money(text)
    out: list[Candidate] = []
    for m in _FLOAT.finditer(text):
        span = (m.start(), m.end())
        if _spans_overlap(span, claimed) or _spans_overlap(span, [(c.start, c.end) for c in money]):
            continue
        out.append(_candidate(_parse_number(m.group(0)), m.group(0), *span, rank=2))
    for m in _NUMBER_WORD.finditer(text):
        if not _spans_overlap((m.start(), m.end()), claimed):
            out.append(_candidate(float(_NUMBER_WORDS[m.group(1).lower()]), m.group(0), m.start(), m.end(), rank=1))
    out += [_candidate(float(c.value["amount"]), c.raw, c.start, c.end, rank=0) for c in money]
    return tuple(out)


# -- money -----------------------------------------------------------------------------------

_AMOUNT = r"(?<![\w.,])(?P<amt>[+-]?(?:\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?))(?![\d]|[.,]\d)"
_SYMBOLS = {"US$": "USD", "R$": "BRL", "C$": "CAD", "A$": "AUD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
_CODES = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "MXN", "BRL", "INR", "CNY", "SEK", "NOK", "DKK", "PLN")
_WORDS = {"dollar": "USD", "dollars": "USD", "euro": "EUR", "euros": "EUR", "pound": "GBP", "pounds": "GBP", "yen": "JPY"}
_SYMBOL_RE = "|".join(re.escape(s) for s in _SYMBOLS)
_CODE_RE = "|".join(_CODES)
_MONEY_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"(?P<cur>{_SYMBOL_RE})\s?" + _AMOUNT.replace("(?<![\\w.,])", "")), "symbol"),
    (re.compile(_AMOUNT + rf"\s?(?P<cur>{_SYMBOL_RE})"), "symbol"),
    (re.compile(rf"\b(?P<cur>{_CODE_RE})\s?" + _AMOUNT.replace("(?<![\\w.,])", ""), re.IGNORECASE), "code"),
    (re.compile(_AMOUNT + rf"\s?(?P<cur>{_CODE_RE})\b", re.IGNORECASE), "code"),
    (re.compile(_AMOUNT + r"\s?(?P<cur>dollars?|euros?|pounds?|yen)\b", re.IGNORECASE), "word"),
]


def find_money(text: str) -> list[Candidate]:
    """Amounts with a currency: a symbol, an ISO code or a currency word before or after."""
    return [c.model_copy(deep=True) for c in _money(text)]  # the cached values stay untouched


@lru_cache(maxsize=1024)
def _money(text: str) -> tuple[Candidate, ...]:
    out: list[Candidate] = []
    for pattern, kind in _MONEY_PATTERNS:
        for m in pattern.finditer(text):
            span = (m.start(), m.end())
            if _spans_overlap(span, [(c.start, c.end) for c in out]):
                continue
            cur = m.group("cur")
            currency = _SYMBOLS[cur] if kind == "symbol" else cur.upper() if kind == "code" else _WORDS[cur.lower()]
            amount = round(_parse_number(m.group("amt"), dot_thousands=True), 2)
            out.append(_candidate({"amount": amount, "currency": currency}, m.group(0), *span))
    return tuple(sorted(out, key=lambda c: c.start))


# -- str -------------------------------------------------------------------------------------

_ID = re.compile(r"(?<![\w-])(?:[A-Z]{1,6}-\d{2,}[A-Z0-9-]*|(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6,})(?![\w-])")
_QUOTED = re.compile(r"\"([^\"\n]{1,80})\"|“([^”\n]{1,80})”|(?<!\w)'([^'\n]{1,80})'(?!\w)|`([^`\n]{1,80})`|\*\*([^*\n]{1,80})\*\*")


def find_strs(text: str, hints: Sequence[str] = ()) -> list[Candidate]:
    """Id-like tokens (rank 3), quoted values (rank 2), the word after "<hint> is"/"<hint>:" (1)."""
    return list(_strs(text, tuple(hints)))


@lru_cache(maxsize=1024)
def _strs(text: str, hints: tuple[str, ...]) -> tuple[Candidate, ...]:
    out = [_candidate(m.group(0), m.group(0), m.start(), m.end(), rank=3) for m in _ID.finditer(text)]
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None).strip()
        if inner and not _spans_overlap((m.start(), m.end()), [(c.start, c.end) for c in out]):
            out.append(_candidate(inner, m.group(0), m.start(), m.end(), rank=2))
    if hints:
        labelled = re.compile(
            r"\b(?:" + "|".join(re.escape(h[:5]) for h in hints) + r")\w*\s*(?:is|was|will be|:|=|#)\s*"
            r"(?P<val>[\w][\w./#-]*)",
            re.IGNORECASE,
        )
        for m in labelled.finditer(text):
            span = (m.start("val"), m.end("val"))
            value = m.group("val").rstrip(".-")
            if value.lower() in _STOPWORDS or _spans_overlap(span, [(c.start, c.end) for c in out]):
                continue
            out.append(_candidate(value, m.group(0).rstrip(".-"), *span, rank=1))
    return tuple(out)


# -- time ------------------------------------------------------------------------------------

_AMPM = r"(?P<ampm>[ap])\.?\s?m\b\.?"
_CLOCK = re.compile(r"(?<![\d:.])(?P<h>[01]?\d|2[0-3])(?::|h(?=\d))(?P<m>[0-5]\d)(?![\d:])(?:\s?" + _AMPM + ")?", re.IGNORECASE)
_HOUR_AMPM = re.compile(r"(?<![\d:.])(?P<h>1[0-2]|0?[1-9])\s?" + _AMPM, re.IGNORECASE)
_NOON = re.compile(r"\b(noon|midday|midnight)\b", re.IGNORECASE)
_QTY = r"(?:\d+(?:[.,]\d+)?|an?|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_UNIT = r"(?:hours?|hrs?|h(?=\b)|minutes?|mins?|seconds?|secs?)"
_DURATION = re.compile(
    rf"\b(?P<q>{_QTY})(?:\s?(?:-|–|to)\s?(?P<q2>{_QTY}))?\s?(?P<u>{_UNIT})\b"
    rf"(?:,?\s(?:and\s)?(?P<q3>{_QTY})\s?(?P<u3>minutes?|mins?)\b|\s(?P<half>and a half)\b)?",
    re.IGNORECASE,
)
_HALF_HOUR = re.compile(r"\b(?:half an hour|half-an-hour|a half hour|quarter of an hour|a quarter hour)\b", re.IGNORECASE)


def _qty(text: str) -> float:
    t = text.lower()
    if t in ("a", "an"):
        return 1.0
    if t in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[t])
    return _parse_number(t)


def _iso_duration(seconds: float) -> str:
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    out = "PT"
    if hours:
        out += f"{hours}H"
    if minutes:
        out += f"{minutes}M"
    if secs or out == "PT":
        out += f"{secs}S"
    return out


def _unit_seconds(unit: str) -> int:
    u = unit.lower()
    return 3600 if u.startswith("h") else 60 if u.startswith("m") else 1


def find_times(text: str) -> list[Candidate]:
    """Clock times ("14:30") and durations ("PT20M")."""
    return list(_times(text))


@lru_cache(maxsize=1024)
def _times(text: str) -> tuple[Candidate, ...]:
    out: list[Candidate] = []

    def add(value: str, m: re.Match[str], rank: int = 1) -> None:
        if not _spans_overlap((m.start(), m.end()), [(c.start, c.end) for c in out]):
            out.append(_candidate(value, m.group(0), m.start(), m.end(), rank=rank))

    for m in _CLOCK.finditer(text):
        hour = int(m.group("h"))
        if m.group("ampm"):
            if hour > 12:
                continue
            hour = hour % 12 + (12 if m.group("ampm").lower() == "p" else 0)
        add(f"{hour:02d}:{m.group('m')}", m)
    for m in _HOUR_AMPM.finditer(text):
        hour = int(m.group("h")) % 12 + (12 if m.group("ampm").lower() == "p" else 0)
        add(f"{hour:02d}:00", m)
    for m in _NOON.finditer(text):
        add("00:00" if m.group(1).lower() == "midnight" else "12:00", m)
    for m in _HALF_HOUR.finditer(text):
        add("PT15M" if "quarter" in m.group(0).lower() else "PT30M", m)
    for m in _DURATION.finditer(text):
        amount = _qty(m.group("q2") or m.group("q"))  # a range: its upper bound
        seconds = amount * _unit_seconds(m.group("u"))
        if m.group("q3"):
            seconds += _qty(m.group("q3")) * 60
        if m.group("half"):
            seconds += 0.5 * _unit_seconds(m.group("u"))
        if seconds > 0:
            add(_iso_duration(seconds), m)
    return tuple(sorted(out, key=lambda c: c.start))


# -- date ------------------------------------------------------------------------------------

_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO_DATE = re.compile(r"(?<![\d-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d]|-\d)")
_NUMERIC_DATE = re.compile(r"(?<![\d/.-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?![\d/-]|\.\d)")
_MONTH_FIRST = re.compile(rf"\b(?P<mon>{_MONTH_RE})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>\d{{4}}))?", re.IGNORECASE)
_DAY_FIRST = re.compile(
    rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<mon>{_MONTH_RE})\b\.?(?:,?\s+(?P<year>\d{{4}}))?", re.IGNORECASE
)
_RELATIVE_DAY = re.compile(r"\b(the day after tomorrow|the day before yesterday|today|tonight|tomorrow|yesterday)\b", re.IGNORECASE)
_IN_N = re.compile(rf"\bin\s+(?P<q>{_QTY})\s+(?P<u>days?|weeks?)\b", re.IGNORECASE)
_N_AGO = re.compile(rf"\b(?P<q>{_QTY})\s+(?P<u>days?|weeks?)\s+ago\b", re.IGNORECASE)
_WEEKDAY = re.compile(
    r"\b(?:(?P<pre>next|this|on|by|coming|until)\s+)(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.IGNORECASE
)
_RELATIVE_OFFSETS = {
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
    "yesterday": -1,
    "the day after tomorrow": 2,
    "the day before yesterday": -2,
}


def _date(year: int, month: int, day: int) -> datetime.date | None:
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return None


def find_dates(text: str, *, today: datetime.date | None = None, relative: bool = True) -> list[Candidate]:
    """Dates as ISO text. Relative ones (and ones without a year) need `today`."""
    return list(_dates(text, today, relative))


@lru_cache(maxsize=1024)
def _dates(text: str, today: datetime.date | None, relative: bool) -> tuple[Candidate, ...]:
    out: list[Candidate] = []

    def add(day: datetime.date | None, m: re.Match[str], rank: int = 1) -> None:
        if day is not None and not _spans_overlap((m.start(), m.end()), [(c.start, c.end) for c in out]):
            out.append(_candidate(day.isoformat(), m.group(0), m.start(), m.end(), rank=rank))

    for m in _ISO_DATE.finditer(text):
        add(_date(int(m.group(1)), int(m.group(2)), int(m.group(3))), m)
    for m in _NUMERIC_DATE.finditer(text):
        a, b, y = int(m.group(1)), int(m.group(3)), int(m.group(4))
        year = y + 2000 if y < 100 else y
        day, month = (b, a) if a <= 12 < b else (a, b)  # day first unless it cannot be
        add(_date(year, month, day), m)
    for pattern in (_MONTH_FIRST, _DAY_FIRST):
        for m in pattern.finditer(text):
            stated = int(m.group("year")) if m.group("year") else (today.year if today else None)
            if stated is not None:
                add(_date(stated, _MONTHS[m.group("mon").lower()], int(m.group("day"))), m)
    if today is not None and relative:
        for m in _RELATIVE_DAY.finditer(text):
            add(today + datetime.timedelta(days=_RELATIVE_OFFSETS[m.group(1).lower()]), m)
        for pattern, sign in ((_IN_N, 1), (_N_AGO, -1)):
            for m in pattern.finditer(text):
                days = _qty(m.group("q")) * (7 if m.group("u").lower().startswith("w") else 1)
                add(today + datetime.timedelta(days=sign * int(days)), m)
        for m in _WEEKDAY.finditer(text):
            ahead = (_WEEKDAYS[m.group("wd").lower()] - today.weekday()) % 7 or 7
            add(today + datetime.timedelta(days=ahead), m, rank=0)
    return tuple(sorted(out, key=lambda c: c.start))


# -- choosing --------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    "a an the of to in on at by for from with and or but is are was were be been being it its this that "
    "these those my your our their his her me you we they i how what which who when where why will would "
    "can could should going go take takes taking long much many get got has have had do does did there "
    "here as if so than then into out up about after before all any each some no not only own same too "
    "very just also be value data".split()
)
_TYPE_HINTS: dict[str, tuple[str, ...]] = {
    "money": ("price", "total", "cost", "costs", "pay", "charge", "amount", "due", "refund", "fee"),
    "time": ("ready", "wait", "time", "minutes", "hours", "eta", "arrive"),
    "date": ("date", "day", "delivery", "deliver", "arrive", "expected", "placed", "ship"),
    "str": ("id", "number", "code", "reference", "name", "tracking"),
    "int": ("number", "count", "quantity"),
    "float": ("number", "amount", "rate"),
}
_WORD = re.compile(r"[a-zA-Z][a-zA-Z'-]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def hint_words(field: OutputField) -> list[str]:
    """The words that mark where the field's value is: from its description, its name, its type."""
    words: list[str] = []
    source = f"{field.description} {field.name.replace('_', ' ').replace('-', ' ')}"
    for word in _WORD.findall(source.lower()):
        if len(word) >= 2 and word not in _STOPWORDS and word not in words:
            words.append(word)
    for word in _TYPE_HINTS.get(field.type, ()):
        if word not in words:
            words.append(word)
    return words


@lru_cache(maxsize=1024)
def _sentences(text: str) -> tuple[tuple[int, ...], tuple[frozenset[str], ...]]:
    """Where each sentence starts, and the words of each as the keys `_hint_key` makes."""
    starts, keys = [0], []
    bounds = [m.span() for m in _SENTENCE_END.finditer(text)]
    begin = 0
    for end, next_begin in [*bounds, (len(text), len(text))]:
        words = (w.lower() for w in _WORD.findall(text[begin:end]))
        keys.append(frozenset(k for w in words for k in (w[:4], w[:5])))
        begin = next_begin
        starts.append(begin)
    return tuple(starts[: len(keys)]), tuple(keys)


def _hint_key(hint: str) -> str:
    # A word matches a hint when it starts with the hint's first five letters (four-letter
    # hints: the whole hint); shorter hints must be the whole word. A sentence's key set holds
    # every word's first four and five letters, which covers both cases.
    return hint[:5]


def _hits(text: str, position: int, keys: Sequence[str]) -> int:
    starts, sentence_keys = _sentences(text)
    words = sentence_keys[bisect.bisect_right(starts, position) - 1]
    return sum(1 for k in keys if k in words)


def _finder(field: OutputField, today: datetime.date | None, hints: Sequence[str]) -> Callable[[str], list[Candidate]]:
    match field.type:
        case "int":
            return lambda text: find_ints(text, today=today)
        case "float":
            return lambda text: find_floats(text, today=today)
        case "money":
            return find_money
        case "str":
            return lambda text: find_strs(text, hints)
        case "time":
            return find_times
        case "date":
            return lambda text: find_dates(text, today=today)
    raise ValueError(f"unknown output type {field.type!r}")


def extract_output(field: OutputField, bot_texts: Sequence[str], *, today: datetime.date | None = None) -> ExtractedOutput:
    """The field's value from the bot's messages (in conversation order; read newest first).
    `found` False (value and raw None) when no message holds a value of the field's type."""
    hints = hint_words(field)
    keys = [_hint_key(h) for h in hints]
    find = _finder(field, today, hints)
    best: tuple[tuple[Any, ...], Candidate] | None = None
    newest_first = list(reversed(bot_texts))
    for age, text in enumerate(newest_first):
        for cand in find(text or ""):
            hits = _hits(text, cand.start, keys)
            key: tuple[Any, ...]
            if field.type == "str":
                key = (hits > 0, cand.rank, -age, hits, cand.start)
            else:
                key = (hits > 0, cand.rank > 0, -age, hits, cand.rank, cand.start)
            if best is None or key > best[0]:
                best = (key, cand)
    base = {"name": field.name, "type": field.type, "description": field.description}
    if best is None:
        return ExtractedOutput(**base, found=False)
    value = best[1].value
    return ExtractedOutput(**base, found=True, value=dict(value) if isinstance(value, dict) else value, raw=best[1].raw)


def extract_outputs(
    fields: Sequence[OutputField], bot_texts: Sequence[str], *, today: datetime.date | None = None
) -> list[ExtractedOutput]:
    """Every field's value, in the fields' order."""
    return [extract_output(f, bot_texts, today=today) for f in fields]
