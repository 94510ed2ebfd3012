"""Reading a judge model's reply into a score of 1-3 and a comment. Pure: text in, result out.

Models asked for `{"score": 1|2|3, "comment": "..."}` answer in many shapes: the object inside
a ```json fence or between sentences, `"score": "3"`, a bare `2`, `"2"`, `[3]`, `Score: 2`,
`2/3`. All of those are read. A score outside 1-3 (0, 5, 2.5) or a reply with no score at all
is a `JudgeParseError`: the caller treats it as a judge error, never as a score.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Score = Literal[1, 2, 3]

_SCORE_KEYS = ("score", "rating", "grade", "puntuacion", "puntuación", "оценка")
_COMMENT_KEYS = ("comment", "comments", "reason", "reasoning", "explanation", "justification", "feedback", "rationale", "комментарий")

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|js|javascript)?[ \t]*\n?(.*?)```", re.DOTALL)
_LABELLED = re.compile(
    r"\b(?:score|rating|grade)\b\s*(?:is|of|=|:)?\s*[\"'*]*\s*([+-]?\d+(?:\.\d+)?)(?:\s*(?:/|out\s+of)\s*3\b)?",
    re.IGNORECASE,
)
_OUT_OF_THREE = re.compile(r"(?<![\w.])([+-]?\d+(?:\.\d+)?)\s*(?:/|out\s+of)\s*3\b", re.IGNORECASE)
_BARE = re.compile(r"^[\s\"'`\[\(*]*([+-]?\d+(?:\.\d+)?)[\s\"'`\]\)*.!]*$")


class JudgeParseError(ValueError):
    """The reply holds no usable score (none at all, or one outside 1-3)."""


class ParsedJudgement(BaseModel):
    """A readable judge reply: the score, and the comment if it gave one."""

    model_config = ConfigDict(frozen=True)

    score: Score
    comment: str | None = None


def parse_judge_reply(text: str | None) -> ParsedJudgement:
    """The score and comment in a judge model's reply; JudgeParseError when there is none usable.

    Tried in order: JSON (the whole reply, each fenced block, each `{...}`/`[...]` embedded in
    prose), a labelled score (`Score: 2`, `rating = 3`), `2/3` or `2 out of 3`, a bare number.
    The first score found decides; if it is outside 1-3 the reply is an error (not a clamp).
    """
    if text is None or not text.strip():
        raise JudgeParseError("the judge's reply was empty")
    stripped = text.strip()

    for value, whole in json_values(stripped):
        found = _from_json(value)
        if found is not None:
            raw_score, comment = found
            if comment is None and not whole:
                comment = _prose_comment(stripped, None)
            return ParsedJudgement(score=_checked(raw_score), comment=comment)

    for pattern in (_LABELLED, _OUT_OF_THREE, _BARE):
        match = pattern.search(stripped)
        if match:
            return ParsedJudgement(score=_checked(match.group(1)), comment=_prose_comment(stripped, match))

    snippet = stripped if len(stripped) <= 120 else stripped[:117] + "..."
    raise JudgeParseError(f"no score of 1-3 found in the judge's reply: {snippet!r}")


def json_values(text: str) -> list[tuple[Any, bool]]:
    """Every JSON value the text holds: the whole of it, fenced blocks, then embedded ones;
    each with whether it was the whole reply (then there is no prose around it)."""
    values: list[tuple[Any, bool]] = []
    sources = [text] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    decoder = json.JSONDecoder()
    for n, source in enumerate(sources):
        try:
            values.append((json.loads(source), n == 0))
            continue
        except ValueError:
            pass
        i = 0
        while i < len(source):
            if source[i] in "{[":
                try:
                    value, end = decoder.raw_decode(source, i)
                except ValueError:
                    i += 1
                    continue
                values.append((value, False))
                i = end
            else:
                i += 1
    return values


def _from_json(value: Any) -> tuple[Any, str | None] | None:
    """(raw score, comment) from a decoded JSON value, or None if it holds no score."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value, None
    if isinstance(value, str):
        return (value, None) if _BARE.match(value) else None
    if isinstance(value, list):
        if len(value) == 1 and not isinstance(value[0], (list, dict)):
            return _from_json(value[0])
        for item in value:
            if isinstance(item, dict):
                found = _from_json(item)
                if found is not None:
                    return found
        return None
    if isinstance(value, dict):
        lowered = {str(k).strip().lower(): v for k, v in value.items()}
        for key in _SCORE_KEYS:
            if key in lowered:
                comment = next((str(lowered[k]).strip() for k in _COMMENT_KEYS if lowered.get(k) not in (None, "")), None)
                raw = lowered[key]
                if isinstance(raw, list) and len(raw) == 1:
                    raw = raw[0]
                return raw, comment
        for nested in value.values():  # {"evaluation": {"score": 2, ...}}
            if isinstance(nested, dict):
                found = _from_json(nested)
                if found is not None:
                    return found
    return None


def _checked(raw: Any) -> Score:
    """`raw` as 1, 2 or 3; JudgeParseError for anything else (never clamped)."""
    if isinstance(raw, bool):
        raise JudgeParseError(f"the judge's score {raw!r} is not a number")
    if isinstance(raw, str):
        match = _BARE.match(raw)
        if not match:
            raise JudgeParseError(f"the judge's score {raw!r} is not a number")
        raw = match.group(1)
    try:
        number = float(raw)
    except (TypeError, ValueError):
        raise JudgeParseError(f"the judge's score {raw!r} is not a number") from None
    if number not in (1.0, 2.0, 3.0):
        shown = int(number) if number.is_integer() else number
        raise JudgeParseError(f"the judge's score {shown} is outside 1-3")
    return int(number)  # type: ignore[return-value]


def _prose_comment(text: str, match: re.Match[str] | None) -> str | None:
    """What the reply says besides its score, for replies with no comment field."""
    rest = text if match is None else (text[: match.start()] + " " + text[match.end() :])
    rest = _FENCE.sub(" ", rest)
    if match is None:  # the score came from JSON: drop the JSON, keep the prose around it
        rest = re.sub(r"[\{\[].*[\}\]]", " ", rest, flags=re.DOTALL)
    rest = re.sub(r"\s+", " ", rest).lstrip(" .-:;,*\"'`])").rstrip(" :;,*\"'`[(")
    return rest if any(ch.isalnum() for ch in rest) else None
