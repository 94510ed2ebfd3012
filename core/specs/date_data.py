"""Sensei's date generator: `data: {date: {...}}` for a string variable.

The forms, as Sensei's code makes them (dates are written `dd/mm/yyyy`):
- `custom: TEXT` or `custom: [TEXT, ...]`: those texts, as written;
- `random: N`: N dates of any year from 0 to 3000, written unpadded (`7/3/1024`);
- `set: ">today(N)"` / `"<today(N)"`: N dates 1 to 365 days after / before today;
- `range: {min: dd/mm/yyyy, max: dd/mm/yyyy, step: day(N) | month(N) | year(N) | linspace(N)}`:
  from min in steps of N days (a month is 30 days, a year 365) until max is reached or passed,
  so the last date may lie after max; linspace(N): N dates evenly spaced from min to max;
- `range: {min, max, random: N}`: N random days from min to max;
- `fake: N`: N impossible dates (day 29-99, month 13-99), for testing a bot's date checks.
The list is the random dates, then set, range, fake, then custom, as in Sensei.

Sensei draws random dates anew on every run; parley draws them once per load from a generator
seeded with the variable's name, so a profile gives the same dates every time (and `--resume`
plans the same conversations). "today" is the profile's `world.today` when it pins one.
"""

from __future__ import annotations

import datetime
import random
import re
from typing import Any

from parley.core.records import Problems, Reading, check_keys, describe, expect_mapping, fail, read_integer, read_text

DATE_KEYS = ("custom", "random", "set", "range", "fake")
RANGE_KEYS = ("min", "max", "step", "random")
STEP_UNITS = {"day": 1, "month": 30, "year": 365}
MAX_DATES = 10_000
DATE_FORMAT = "%d/%m/%Y"
_SET_RE = re.compile(r"^\s*([<>])\s*today\s*\(\s*(\d+)\s*\)\s*$")
_STEP_RE = re.compile(r"^\s*(linspace|day|month|year)\s*\(\s*(\d+)\s*\)\s*$")


def date_values(reading: Reading, data: Any, *, today: datetime.date, seed: str) -> list[str]:
    """The dates `data` (the mapping under `date:`) makes; problems are raised below it."""
    mapping = expect_mapping(data, f"a date generator ({', '.join(DATE_KEYS)})")
    problems = Problems()
    check_keys(mapping, DATE_KEYS, reading, problems, sensei=True)
    rng = random.Random(f"parley-dates:{seed}")
    made: list[list[str] | None] = []  # each form's dates; None where the form is wrong
    if "random" in mapping:
        count = problems.check(_count, mapping["random"], at=("random",))
        made.append(None if count is None else [_random_date(rng) for _ in range(count)])
    if "set" in mapping:
        made.append(problems.check(_set_dates, mapping["set"], today, rng, at=("set",)))
    if "range" in mapping:
        made.append(problems.check(_range_dates, reading, mapping["range"], rng, at=("range",)))
    if "fake" in mapping:
        count = problems.check(_count, mapping["fake"], at=("fake",))
        made.append(None if count is None else [_fake_date(rng) for _ in range(count)])
    if "custom" in mapping:
        written = mapping["custom"]
        items = list(enumerate(written)) if isinstance(written, list) else [(None, written)]
        texts = [
            problems.check(read_text, item, "a date written as text (quote it)", at=("custom",) if i is None else ("custom", i))
            for i, item in items
        ]
        made.append(None if None in texts else texts)
    if None in made:
        problems.raise_if_any()
    dates = [date for dates in made for date in dates or []]
    if not dates:
        problems.add("the date generator makes no dates", at_key=True)
    problems.raise_if_any()
    return dates


def _count(value: Any) -> int:
    return read_integer(value, minimum=0, maximum=MAX_DATES)


def _random_date(rng: random.Random) -> str:
    year = rng.randint(0, 3000)
    month = rng.randint(1, 12)
    if month == 2:
        last = 29 if year % 4 == 0 else 28
    else:
        last = 31 if month in (1, 3, 5, 7, 8, 10, 12) else 30
    return f"{rng.randint(1, last)}/{month}/{year}"


def _fake_date(rng: random.Random) -> str:
    return f"{rng.randint(29, 99)}/{rng.randint(13, 99)}/{rng.randint(2000, 2099)}"


def _set_dates(value: Any, today: datetime.date, rng: random.Random) -> list[str]:
    text = read_text(value, "'>today(N)' or '<today(N)'")
    match = _SET_RE.match(text)
    if match is None:
        fail(f"expected '>today(N)' (N dates after today) or '<today(N)' (before), got {describe(text)}")
    direction = 1 if match.group(1) == ">" else -1
    count = int(match.group(2))
    if count > MAX_DATES:
        fail(f"{count} dates is more than the limit of {MAX_DATES}")
    return [(today + datetime.timedelta(days=direction * rng.randint(1, 365))).strftime(DATE_FORMAT) for _ in range(count)]


def _parse(value: Any) -> datetime.date:
    text = read_text(value, "a date written dd/mm/yyyy")
    try:
        return datetime.datetime.strptime(text.strip(), DATE_FORMAT).date()
    except ValueError:
        fail(f"expected a date written dd/mm/yyyy, got {describe(text)}")


def _range_dates(reading: Reading, value: Any, rng: random.Random) -> list[str]:
    mapping = expect_mapping(value, "a date range (min, max, step or random)")
    problems = Problems()

    if not check_keys(mapping, RANGE_KEYS, reading, problems, required=("min", "max")):
        problems.raise_if_any()
    start = problems.check(_parse, mapping["min"], at=("min",))
    end = problems.check(_parse, mapping["max"], at=("max",))
    if start is None or end is None:
        problems.raise_if_any()
    if "step" in mapping and "random" in mapping:
        problems.stop("give step or random, not both", at_key=True)
    if "random" in mapping:
        count = problems.check(_count, mapping["random"], at=("random",))
        problems.raise_if_any()
        span = max(0, (end - start).days)
        return [(start + datetime.timedelta(days=rng.randint(0, span))).strftime(DATE_FORMAT) for _ in range(count)]
    if "step" not in mapping:
        problems.stop("a date range needs step (day(N), month(N), year(N), linspace(N)) or random: N", at_key=True)
    text = problems.check(read_text, mapping["step"], "day(N), month(N), year(N) or linspace(N)", at=("step",))
    if text is None:
        problems.raise_if_any()
    match = _STEP_RE.match(text)
    if match is None:
        problems.stop(f"expected day(N), month(N), year(N) or linspace(N), got {describe(text)}", at=("step",))
    unit, amount = match.group(1), int(match.group(2))
    if unit == "linspace":
        if amount > MAX_DATES:
            problems.stop(f"{amount} dates is more than the limit of {MAX_DATES}", at=("step",))
        problems.raise_if_any()
        seconds = (end - start).total_seconds()
        interval = seconds / (amount - 1) if amount > 1 else 0
        begin = datetime.datetime.combine(start, datetime.time())
        return [(begin + datetime.timedelta(seconds=interval * i)).strftime(DATE_FORMAT) for i in range(amount)]
    if amount < 1:
        problems.stop(f"{unit}() needs a step of at least 1, got {amount}", at=("step",))
    step = datetime.timedelta(days=STEP_UNITS[unit] * amount)
    if end > start and (end - start) // step > MAX_DATES:
        problems.stop(f"the range makes more than {MAX_DATES} dates", at=("step",))
    problems.raise_if_any()
    dates = [start]
    while end > dates[-1]:
        dates.append(dates[-1] + step)
    if dates[-1] > end:
        reading.warn(
            mapping,
            ("step",),
            f"the last date, {dates[-1].strftime(DATE_FORMAT)}, lies after max: Sensei steps from min "
            "until it reaches or passes max, and parley does the same",
        )
    return [d.strftime(DATE_FORMAT) for d in dates]
