"""Two keys of `expect:`, and the run's defaults of the second: checks written in Python
(`python:`) and limits on what a conversation cost (`limits:`).

    expect:
      python:
        - my_checks:refund_is_polite          # MODULE:NAME, imported once before the batch
        - short_replies: {words: 60}          # a check parley ships, with its arguments
      limits:
        reply_seconds: 8                      # each bot reply within 8 s
        p95_reply_seconds: 5                  # the 95th percentile of the conversation's replies
        cost_usd: 0.02                        # the bot's cost per conversation
        tokens: 6000                          # the bot's tokens (in and out) per conversation
        turns_to_pass: 3                      # every check asked for held by the bot's 3rd turn

How each becomes a check: parley.core.evaluation.python_checks and .limit_checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from parley.core.records.yaml_fields import (
    Problems,
    YamlRecord,
    describe,
    fail,
    integer,
    number,
    plain_value,
    yaml_only,
)

__all__ = ["LIMIT_KEYS", "SHIPPED_CHECKS", "CheckLimits", "PythonCheck", "read_limits", "read_python_checks"]

SHIPPED_CHECKS: tuple[str, ...] = ("short_replies", "no_repeated_reply", "no_asking_again")
"""The checks parley ships, named without a module (parley.core.evaluation.shipped_checks)."""
_TARGET = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
_FORM = "MODULE:NAME (e.g. my_checks:refund_is_polite) or a shipped check: " + ", ".join(SHIPPED_CHECKS)


class PythonCheck(BaseModel):
    """A check written in Python: `target` names the callable (`MODULE:NAME`, or a shipped
    check's name) and `args` are the keywords it is called with beside the conversation."""

    model_config = ConfigDict(frozen=True)

    target: str
    args: dict[str, Any] = Field(default_factory=dict)

    @property
    def name(self) -> str:
        """What reports call it: the target, and its arguments when it has any."""
        if not self.args:
            return self.target
        return f"{self.target}({', '.join(f'{k}={v!r}' for k, v in self.args.items())})"


def _target(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        fail(f"expected a check written in Python, {_FORM}; got {describe(value)}", at_key=value is None)
    target = value.strip().removeprefix("python:")
    if target in SHIPPED_CHECKS or _TARGET.match(target):
        return target
    if ":" not in target:
        fail(f"{target!r} is not a check parley ships ({', '.join(SHIPPED_CHECKS)}); a check of yours is named MODULE:NAME")
    fail(f"{target!r} is not {_FORM}")


def _check(item: Any) -> PythonCheck:
    if isinstance(item, PythonCheck):
        return item
    if isinstance(item, Mapping):
        if len(item) != 1:
            fail(f"expected one check with its arguments, such as {{short_replies: {{words: 60}}}}, got {describe(item)}")
        ((key, args),) = item.items()
        if args is not None and not isinstance(args, Mapping):
            fail(f"expected the check's arguments as a mapping, such as {{words: 60}}, got {describe(args)}", at=(key,))
        return PythonCheck(target=_target(key), args=dict(plain_value(args or {})))
    return PythonCheck(target=_target(item))


def read_python_checks(value: Any, reading: Any = None) -> list[PythonCheck]:
    """`python:`: a list of checks, each `MODULE:NAME` (or a shipped check's name), or a mapping of
    one of them to its arguments; every item is checked."""
    if value is None:
        return []
    if isinstance(value, (str, Mapping)) or not isinstance(value, Iterable):
        fail(f"expected a list of checks written in Python ({_FORM}), got {describe(value)}")
    problems = Problems()
    checks = [problems.check(_check, item, at=(i,)) for i, item in enumerate(value)]
    problems.raise_if_any()
    return [c for c in checks if c is not None]


class CheckLimits(YamlRecord):
    """Limits on what a conversation cost (see the module doc); each one given is a check."""

    yaml_what = "limits such as {reply_seconds: 8, cost_usd: 0.02}"

    reply_seconds: Annotated[float | None, number(0.0, optional=True)] = Field(default=None, gt=0)
    """The most seconds any one bot reply may take."""
    p95_reply_seconds: Annotated[float | None, number(0.0, optional=True)] = Field(default=None, gt=0)
    """The most seconds the 95th percentile of the conversation's bot replies may take."""
    cost_usd: Annotated[float | None, number(0.0, optional=True)] = Field(default=None, ge=0)
    """The most the bot's model calls of one conversation may cost, USD."""
    tokens: Annotated[int | None, integer(0, optional=True)] = Field(default=None, ge=0)
    """The most tokens (input and output) the bot's model calls of one conversation may use."""
    turns_to_pass: Annotated[int | None, integer(1, optional=True)] = Field(default=None, ge=1)
    """By which of its turns the bot must have made every check the author asked for hold."""

    def over(self, defaults: CheckLimits | None) -> CheckLimits:
        """These limits, each one not given taken from `defaults` (a run's `--limit`s)."""
        if defaults is None:
            return self
        return defaults.model_copy(update=self.model_dump(exclude_none=True))

    @property
    def given(self) -> bool:
        return any(v is not None for v in self.model_dump().values())


LIMIT_KEYS: tuple[str, ...] = tuple(CheckLimits.model_fields)
LIMIT_FORM = f"KEY=VALUE, KEY one of {', '.join(LIMIT_KEYS)} (e.g. reply_seconds=8)"


def read_limits(value: Any) -> CheckLimits | None:
    """A run's default limits from `KEY=VALUE` entries (`--limit`, the service), or a mapping (the
    Python API, a stored batch); None for none. ValueError naming the entry otherwise."""
    if value is None or isinstance(value, CheckLimits):
        return value
    if isinstance(value, Mapping):
        return CheckLimits.model_validate(dict(value)) if value else None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"expected {LIMIT_FORM} entries, got {type(value).__name__}")
    given: dict[str, float] = {}
    for entry in value:
        key, sep, text = str(entry).partition("=")
        key = key.strip()
        if not sep or key not in LIMIT_KEYS:
            raise ValueError(f"{entry!r}: give {LIMIT_FORM}")
        try:
            given[key] = int(text) if key in ("tokens", "turns_to_pass") else float(text)
        except ValueError:
            raise ValueError(f"{entry!r}: {key} takes a {'whole ' if key in ('tokens', 'turns_to_pass') else ''}number") from None
    if not given:
        return None
    try:
        return CheckLimits.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None


PythonChecks = Annotated[list[PythonCheck], yaml_only(read_python_checks)]
"""`expect.python` as a field (values built in code are PythonCheck records or their mappings)."""
