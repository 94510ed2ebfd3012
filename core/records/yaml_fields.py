"""Records that read parley's YAML formats: the checks their fields share, each with the message
a person reads, and the reading they report to.

A record reads YAML when it is validated with a `Reading` as its context
(`Profile.model_validate(data, context=reading)`; parley.core.specs.yaml_validation makes one
per file). It then takes the shapes people write (`goal_style: {steps: 5}`, a style without its
list, `null` for "the default") and reports each problem as a pydantic error of type "parley"
whose message is the reason; the reading turns the error's `loc` into file:line:col. Built in
code or read back from the store, a record takes its own shape, under the same constraints.

Problems about a value are raised where it is validated (`fail`, or `Problems` for several at
once), with `at`, a path below the value, when the problem lies deeper or at a key; pydantic puts
the path down to the value in front. Warnings (accepted, but worth a look) cannot be raised: a
record hands them to the reading with the YAML mapping or list they are about (`Reading.warn`),
and the reading finds where that is.
"""

# No `from __future__ import annotations` here: annotations evaluated as each class is made spare
# pydantic evaluating every annotation string again (a sixth of this module's import).

import datetime
import difflib
import functools
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from parley.core.errors import ProfileError
from parley.core.records.world_facts import WorldFacts

Loc = tuple[Any, ...]
"""A path into YAML data: mapping keys and list indexes."""
PROBLEM = "parley"
"""The pydantic error type of every problem a record reports itself."""


# -- words for messages ------------------------------------------------------------------------------


def did_you_mean(word: Any, options: Iterable[Any]) -> str:
    """`; did you mean 'x'?` when `word` is close to one of `options`, else ``."""
    matches = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f"; did you mean '{matches[0]}'?" if matches else ""


def describe(value: Any) -> str:
    """A few words for a YAML value in an error message."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def plain_value(value: Any, unknown: Callable[[Any], Any] | None = None) -> Any:
    """ruamel's round-trip values (ScalarFloat, LiteralScalarString, TimeStamp, CommentedMap...)
    as the plain Python values PyYAML gives. A value of any other type is returned as it is, or
    what `unknown` makes of it (which may raise)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, datetime.datetime):
        return datetime.datetime(
            value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond, tzinfo=value.tzinfo
        )
    if isinstance(value, datetime.date | bytes):
        return value
    if isinstance(value, dict):
        return {plain_value(k, unknown): plain_value(v, unknown) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v, unknown) for v in value]
    if isinstance(value, set):
        return {plain_value(v, unknown) for v in value}
    return value if unknown is None else unknown(value)


# -- problems ------------------------------------------------------------------------------------------


def problem(reason: str, *, at_key: bool = False) -> PydanticCustomError:
    """A problem as a pydantic error; `at_key`: point at the key that names the value."""
    return PydanticCustomError(PROBLEM, "{reason}", {"reason": reason, "at_key": at_key})


class Problems:
    """Problems found while reading one value, raised together (one ValidationError)."""

    def __init__(self) -> None:
        self._details: list[InitErrorDetails] = []

    def __bool__(self) -> bool:
        return bool(self._details)

    def add(self, reason: str, *, at: Loc = (), at_key: bool = False) -> None:
        self._details.append({"type": problem(reason, at_key=at_key), "loc": tuple(at), "input": None})

    def absorb(
        self,
        exc: ValidationError | PydanticCustomError,
        at: Loc = (),
        *,
        rename: Mapping[Any, Loc] | None = None,
        reported: Iterable[str] = (),
    ) -> None:
        """Take over the problems of a value validated apart, found at `at` below this one;
        `rename` moves the problems of a field to where the YAML wrote it; missing keys already
        `reported` are not reported again."""
        if isinstance(exc, PydanticCustomError):
            self._details.append({"type": exc, "loc": tuple(at), "input": None})
            return
        reported = set(reported)
        for error in exc.errors(include_url=False):
            loc = error["loc"]
            if error["type"] == "missing" and len(loc) == 1 and loc[0] in reported:
                continue
            if rename and loc and loc[0] in rename:
                loc = (*rename[loc[0]], *loc[1:])
            ctx = error.get("ctx")
            detail: InitErrorDetails
            if error["type"] == PROBLEM and ctx is not None:
                detail = {"type": problem(ctx["reason"], at_key=ctx.get("at_key", False)), "loc": (*at, *loc), "input": None}
            else:  # one of pydantic's own
                detail = {"type": error["type"], "loc": (*at, *loc), "input": error.get("input")}
                if ctx is not None:
                    detail["ctx"] = ctx
            self._details.append(detail)

    def check(self, validate: Callable[..., Any], *args: Any, at: Loc = (), **kwargs: Any) -> Any:
        """`validate(*args, **kwargs)`, or None after taking over its problems (at `at`)."""
        try:
            return validate(*args, **kwargs)
        except (ValidationError, PydanticCustomError) as exc:
            self.absorb(exc, at)
            return None

    def stop(self, reason: str, *, at: Loc = (), at_key: bool = False) -> NoReturn:
        """Add a problem that ends the reading of this value, and raise all found so far."""
        self.add(reason, at=at, at_key=at_key)
        raise self.as_error()

    def as_error(self) -> ValidationError:
        """These problems as one ValidationError (as validation would raise them)."""
        return ValidationError.from_exception_data(PROBLEM, self._details)

    def raise_if_any(self) -> None:
        if self._details:
            raise self.as_error()

    def then(
        self, handler: Callable[[Any], Any], data: Any, *, rename: Mapping[Any, Loc] | None = None, reported: Iterable[str] = ()
    ) -> Any:
        """`handler(data)` (pydantic's own validation of the fields), its problems raised along
        with these (see `absorb`)."""
        try:
            result = handler(data)
        except ValidationError as exc:
            self.absorb(exc, rename=rename, reported=reported)
            self.raise_if_any()
            raise
        self.raise_if_any()
        return result


def below(at: Loc, validate: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`validate(*args, **kwargs)` for a value found at `at` below this one: its problems are
    raised there."""
    problems = Problems()
    result = problems.check(validate, *args, at=at, **kwargs)
    problems.raise_if_any()
    return result


def fail(reason: str, *, at: Loc = (), at_key: bool = False) -> NoReturn:
    """Raise one problem, at `at` below the value being validated."""
    if not at:
        raise problem(reason, at_key=at_key)
    problems = Problems()
    problems.add(reason, at=at, at_key=at_key)
    problems.raise_if_any()
    raise AssertionError("unreachable")


# -- the reading -----------------------------------------------------------------------------------------


class SourceLocation(BaseModel):
    """Where something was written: enough to raise a ProfileError pointing at it later."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int | None = None
    column: int | None = None
    field_path: str | None = None

    def error(self, reason: str) -> ProfileError:
        """A ProfileError at this place."""
        return ProfileError(reason, file=self.file, line=self.line, column=self.column, field_path=self.field_path)

    def render(self, reason: str) -> str:
        """`file:line:col: field: reason`: how warnings about this place are written."""
        return self.error(reason).render()


class Reading(ABC):
    """One file being read: where warnings and notes go, and where a YAML mapping or list was
    written. `container` is a mapping or list of the data being validated (as read, not a copy);
    `at` a path below it."""

    file: str

    @abstractmethod
    def warn(self, container: Any, at: Loc, reason: str, *, at_key: bool = False) -> None:
        """A located warning: accepted, but worth a look."""
        raise NotImplementedError

    @abstractmethod
    def note(self, container: Any, at: Loc, reason: str, *, at_key: bool = False) -> None:
        """A located note: what was read from where."""
        raise NotImplementedError

    @abstractmethod
    def location(self, container: Any, at: Loc = (), *, at_key: bool = False) -> SourceLocation:
        """Where `at` below `container` was written (its key with `at_key`)."""
        raise NotImplementedError

    @classmethod
    def of(cls, reading: "Reading", what: str) -> Self:
        """`reading` as this kind of reading, which `what` needs; TypeError when it is another
        (a bug: a record read by the wrong reader)."""
        if not isinstance(reading, cls):
            raise TypeError(f"{what} is read with a {cls.__name__}, not {type(reading).__name__}")
        return reading

    @abstractmethod
    def read_world(self, data: Mapping[Any, Any]) -> tuple[WorldFacts, list[tuple[Loc, str]]]:
        """The world a file's `world:` mapping names (`name:` or `path:`; the default world when it
        names none) and every problem of the mapping against that world (a row against its schema, a
        customer it does not hold, a date it cannot be dated at), each at its place below the
        mapping. The reading remembers the world: `expect:` is checked against it. A world is not a
        record's to load: the reader does it."""
        raise NotImplementedError

    @abstractmethod
    def world_facts(self) -> WorldFacts:
        """The world of the file being read: the one its `world:` named, else the default world."""
        raise NotImplementedError


def reading_of(info: ValidationInfo) -> Reading | None:
    """The reading when a record is reading YAML; None when it is built in code."""
    context = info.context
    return context if isinstance(context, Reading) else None


# -- field checks -----------------------------------------------------------------------------------------
#
# Each returns a BeforeValidator for `Annotated[...]`. None is refused while reading YAML (a
# null that means "the default" never gets this far: see YamlRecord) and, for records built in
# code, passed on to a field that allows it.


def checked(read: Callable[[Any], Any], *, optional: bool = False) -> BeforeValidator:
    """A field read by `read(value)` (which raises a problem or returns the value)."""

    def validate(value: Any, info: ValidationInfo) -> Any:
        if value is None and optional and reading_of(info) is None:
            return None
        return read(value)

    return BeforeValidator(validate)


def read_text(value: Any, what: str = "text", *, allow_empty: bool = False) -> str:
    """`value` if it is text (not blank, unless `allow_empty`); else `expected {what}, got ...`."""
    if isinstance(value, str) and (allow_empty or value.strip()):
        return str(value)
    if isinstance(value, str):
        fail(f"expected {what}, got an empty string")
    fail(f"expected {what}, got {describe(value)}", at_key=value is None)


def as_text(what: str = "text", *, allow_empty: bool = False, strip: bool = False, optional: bool = False) -> BeforeValidator:
    """Text that is not blank (unless `allow_empty`)."""

    def check(value: Any) -> str:
        result = read_text(value, what, allow_empty=allow_empty)
        return result.strip() if strip else result

    return checked(check, optional=optional)


def text_list(value: Any, what: str, *, non_empty: bool) -> list[str]:
    """A list of text: `expected a list of {what}`, each item `expected {what}`."""
    if not isinstance(value, list):
        fail(f"expected a list of {what}, got {describe(value)}", at_key=value is None)
    if non_empty and not value:
        fail("must not be empty", at_key=True)
    problems = Problems()
    texts = [problems.check(read_text, item, what, at=(i,)) for i, item in enumerate(value)]
    problems.raise_if_any()
    return texts


def _bounded(value: Any, minimum: Any, maximum: Any) -> Any:
    if minimum is not None and value < minimum:
        fail(f"must be {f'between {minimum} and {maximum}' if maximum is not None else f'at least {minimum}'}, got {value}")
    if maximum is not None and value > maximum:
        fail(f"must be {f'between {minimum} and {maximum}' if minimum is not None else f'at most {maximum}'}, got {value}")
    return value


def _read_bounded(value: Any, what: str, is_kind: Callable[[Any], bool], convert: Callable[[Any], Any], minimum: Any, maximum: Any) -> Any:
    """`value` as `convert` makes it when it is `what` (`is_kind`) within the bounds; else the problem."""
    if not is_kind(value):
        fail(f"expected {what}, got {describe(value)}", at_key=value is None)
    return _bounded(convert(value), minimum, maximum)


def read_integer(value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    return int(_read_bounded(value, "an integer", is_int, int, minimum, maximum))


def integer(minimum: int | None = None, maximum: int | None = None, *, optional: bool = False) -> BeforeValidator:
    """An integer (not a boolean) within the bounds."""
    return checked(functools.partial(read_integer, minimum=minimum, maximum=maximum), optional=optional)


def read_number(value: Any, minimum: float | None = None, maximum: float | None = None) -> float:
    return float(_read_bounded(value, "a number", is_number, float, minimum, maximum))


def number(minimum: float | None = None, maximum: float | None = None, *, optional: bool = False) -> BeforeValidator:
    """A number (not a boolean) within the bounds."""
    return checked(functools.partial(read_number, minimum=minimum, maximum=maximum), optional=optional)


# Sensei read profiles with PyYAML (YAML 1.1), where yes/no/on/off are booleans.
_YAML11_BOOLEANS = {"yes": True, "on": True, "y": True, "no": False, "off": False, "n": False}


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _YAML11_BOOLEANS:
        return _YAML11_BOOLEANS[value.strip().lower()]
    fail(f"expected true or false, got {describe(value)}", at_key=value is None)


def boolean(*, optional: bool = False) -> BeforeValidator:
    """true/false, and YAML 1.1's yes/no/on/off."""
    return checked(_boolean, optional=optional)


def _date(value: Any) -> datetime.date:
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value.strip())
        except ValueError:
            pass
    fail(f"expected a date like 2026-11-21, got {describe(value)}", at_key=value is None)


def date(*, optional: bool = False) -> BeforeValidator:
    """An ISO date (a YAML date, or text like 2026-11-21)."""
    return checked(_date, optional=optional)


def matching(pattern: str, what: str, *, optional: bool = False) -> BeforeValidator:
    """Text that, stripped, matches `pattern` (ids: the order API's own patterns)."""
    compiled = re.compile(pattern)

    def check(value: Any) -> str:
        written = read_text(value, what)
        if not compiled.match(written.strip()):
            fail(f"expected {what}, got '{written}'")
        return written.strip()

    return checked(check, optional=optional)


def read_choice(value: Any, options: tuple[str, ...], *, what: str, noun: str) -> str:
    """One of `options`, stripped and lowercased; a near miss gets a suggestion."""
    written = read_text(value, what)
    word = written.strip().lower()
    if word not in options:
        fail(f"unknown {noun} '{written}'{did_you_mean(word, options) or '; use one of ' + ', '.join(options)}")
    return word


def one_of(options: tuple[str, ...], *, what: str, noun: str, optional: bool = False) -> BeforeValidator:
    """One of `options` (see read_choice)."""
    return checked(functools.partial(read_choice, options=options, what=what, noun=noun), optional=optional)


def yaml_only(read: Callable[[Any, Reading], Any]) -> BeforeValidator:
    """A field whose YAML is read by `read(value, reading)` (a shape of its own); values built
    in code are left to the field's type."""

    def validate(value: Any, info: ValidationInfo) -> Any:
        reading = reading_of(info)
        return value if reading is None else read(value, reading)

    return BeforeValidator(validate)


# -- records that read YAML ----------------------------------------------------------------------------------


def derived(default: Any = ..., **kwargs: Any) -> Any:
    """A field worked out while reading (positions, resolved paths): no YAML key of its own."""
    return Field(default, json_schema_extra={"yaml": None}, **kwargs)


def yaml_under(parent: str, default: Any = ..., **kwargs: Any) -> Any:
    """A field written under the key `parent` (e.g. `all_answered: {limit: 8}`)."""
    return Field(default, json_schema_extra={"yaml_under": parent}, **kwargs)


class YamlRecord(BaseModel):
    """A record that can read itself from YAML: by default a mapping of its fields' keys (a
    field's `validation_alias` where it has one), with unknown keys reported near their closest
    known key, and `null` meaning "the default" for a field that has one.

    Class settings: `yaml_what` (what the mapping is, for "expected ..."), `yaml_sensei` (a
    section of Sensei's format, whose loader ignores keys it does not know: an unknown key is a
    warning unless it looks like a misspelling of a key that is missing), `yaml_entry` (an entry
    that is nothing without its required keys: a missing one stops the checks of the others),
    `yaml_keeps_null` (fields where `null` is a value to check). Records with other shapes
    override `read_yaml`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True)

    yaml_what: ClassVar[str] = "a mapping"
    yaml_sensei: ClassVar[bool] = False
    yaml_entry: ClassVar[bool] = False
    yaml_keeps_null: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="wrap")
    @classmethod
    def _read(cls, data: Any, handler: Any, info: ValidationInfo) -> Any:
        reading = reading_of(info)
        if reading is None or isinstance(data, BaseModel):
            return handler(data)
        return cls.read_yaml(data, handler, reading)

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        """The record from YAML `data`; `handler` is pydantic's validation of the fields."""
        return read_mapping(cls, data, handler, reading)

    @classmethod
    def yaml_keys(cls, *, under: str | None = None) -> tuple[str, ...]:
        """The YAML keys of this record (or of its `under:` sub-mapping), in field order."""
        return tuple(_key_fields(cls, under))

    @classmethod
    def yaml_required(cls) -> tuple[str, ...]:
        """The keys a mapping of this record must have."""
        return _required_keys(cls)


@functools.cache
def _key_fields(model: type[BaseModel], under: str | None = None) -> dict[str, str]:
    """YAML key -> field name, for the fields written in the record's mapping (or under `under`)."""
    keys: dict[str, str] = {}
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if extra.get("yaml_under") != under or ("yaml" in extra and extra["yaml"] is None):
            continue
        alias = field.validation_alias
        keys[alias if isinstance(alias, str) else name] = name
    return keys


@functools.cache
def _required_keys(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(key for key, name in _key_fields(model).items() if model.model_fields[name].is_required())


def check_keys(
    data: Mapping[Any, Any],
    allowed: Iterable[str],
    reading: Reading,
    problems: Problems,
    *,
    sensei: bool = False,
    required: Iterable[str] = (),
    at: Loc = (),
) -> bool:
    """Report unknown keys of `data` (warned about in a Sensei section) and missing required
    ones; False when a required key is missing."""
    allowed = list(allowed)
    for key in data:
        if isinstance(key, str) and key in allowed:
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
        if sensei and not (close and close[0] not in data):
            reading.warn(data, (key,), f"unknown key '{key}' is ignored, as Sensei ignores it", at_key=True)
            continue
        hint = f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(allowed)}"
        problems.add(f"unknown key '{key}'{hint}", at=(*at, key), at_key=True)
    complete = True
    for key in required:
        if key not in data:
            problems.add(f"missing required key '{key}'", at=at, at_key=True)
            complete = False
    return complete


def expect_mapping(data: Any, what: str) -> Mapping[Any, Any]:
    """`data` if it is a mapping; else `expected {what}, got ...`."""
    if not isinstance(data, dict):
        fail(f"expected {what}, got {describe(data)}", at_key=data is None)
    return data


def read_mapping(model: type[YamlRecord], data: Any, handler: Any, reading: Reading, *, extra: Mapping[str, Any] | None = None) -> Any:
    """A YamlRecord from a mapping of its keys; `extra` adds fields worked out by the caller."""
    mapping = expect_mapping(data, model.yaml_what)
    problems = Problems()
    keys = _key_fields(model)
    required = [key for key in model.yaml_required() if key not in (extra or {})]
    if not check_keys(mapping, keys, reading, problems, sensei=model.yaml_sensei, required=required) and model.yaml_entry:
        problems.raise_if_any()
    fields: dict[str, Any] = {}
    for key, value in mapping.items():
        name = keys.get(key) if isinstance(key, str) else None
        if name is None:
            continue
        if value is None and name not in model.yaml_keeps_null and not model.model_fields[name].is_required():
            continue  # `key:` with nothing after it: the default, as Sensei reads it
        fields[key] = value
    fields.update(extra or {})
    return problems.then(handler, fields, reported=required)


@dataclass(frozen=True, slots=True)
class Keyed:
    """A YAML entry written as `name: ...` (an output, a goal variable, a playbook step): the
    name and what follows it, for a record that takes its name or kind from the key."""

    name: str
    body: Any
