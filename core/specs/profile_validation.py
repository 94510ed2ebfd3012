"""Checking YAML against the profile format, collecting every error with its position.

`Node` is a cursor into the round-trip YAML tree (ruamel.yaml's CommentedMap/CommentedSeq keep
the line and column of every key and item); `Checker` reads typed values through it and records
a ProfileError for each problem instead of stopping at the first, so `parley profiles validate`
can list them all. `SectionParser` checks and builds the sections that stand on their own
(llm, chatbot, conversation, world, expect); `parley.core.specs.profile_loader` does user and goals.
"""

from __future__ import annotations

import datetime
import difflib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from parley.core.errors import ProfileError
from parley.core.records import (
    FORMAT_TYPES,
    MAX_STEPS,
    ORDER_STATUSES,
    OUTPUT_TYPES,
    STYLE_NAMES,
    TOOL_NAMES,
    ChatbotSection,
    ConversationNumber,
    ConversationSection,
    Expectations,
    GoalStyle,
    GoalStyleKind,
    InteractionStyle,
    JudgeSpec,
    LlmFormat,
    LlmSettings,
    OrderOverride,
    OutputField,
    RandomStyles,
    SourceLocation,
    Variable,
    WorldSpec,
    qualify_model_name,
    yaml_keys,
)
from parley.core.specs.combinations import combination_count, forward_plan, sample_size
from parley.mockapi.fixture import date_problem

MAX_CONVERSATIONS = 10_000

LLM_KEYS = yaml_keys(LlmSettings)
FORMAT_KEYS = yaml_keys(LlmFormat)
CHATBOT_KEYS = yaml_keys(ChatbotSection)
OUTPUT_KEYS = yaml_keys(OutputField)
CONVERSATION_KEYS = yaml_keys(ConversationSection)
# The goal style's key: the kind as Sensei writes it ("random steps" with a space).
GOAL_STYLES = tuple(kind.replace("_steps", " steps") for kind in get_args(GoalStyleKind))
_GOAL_STYLE_ALIASES = {"random_steps": "random steps", "all answered": "all_answered"}
_STYLE_ALIASES = {"long phrase": "long phrases"}
ALL_ANSWERED_KEYS = yaml_keys(GoalStyle, under="all_answered")
WORLD_KEYS = yaml_keys(WorldSpec)
ORDER_OVERRIDE_KEYS = yaml_keys(OrderOverride)
EXPECT_KEYS = yaml_keys(Expectations)
MAX_CRITERION_CHARS = 500
JUDGE_KEYS = yaml_keys(JudgeSpec)

ORDER_ID_RE = re.compile(r"^ORD-[0-9]{1,10}$")  # ASCII digits, as the order API checks them
CUSTOMER_ID_RE = re.compile(r"^C-[0-9]{1,10}$")
_SAMPLE_RE = re.compile(r"^\s*sample\s*\(\s*([^()]*?)\s*\)\s*$")


@dataclass(frozen=True)
class Node:
    """A value in the YAML tree, with its field path and 1-based positions.

    `line`/`column` point at the value; `key_line`/`key_column` at the key that names it (the
    same as the value's position for list items and the root). Errors about a value's content
    point at the value; errors about a whole entry (an unknown key, an empty list) at the key.
    """

    value: Any
    path: str
    line: int | None
    column: int | None
    key_line: int | None
    key_column: int | None

    @classmethod
    def root(cls, value: Any) -> Node:
        return cls(value, "", 1, 1, 1, 1)

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_seq(self) -> bool:
        return isinstance(self.value, list)

    def has(self, key: str) -> bool:
        return self.is_map and key in self.value

    def child(self, key: Any) -> Node:
        """The value under `key` of this mapping (positions of the key and of the value)."""
        mapping = self.value
        value = mapping.get(key)
        path = f"{self.path}.{key}" if self.path else str(key)
        key_pos = _lc(mapping, "key", key) or (self.key_line, self.key_column)
        value_pos = key_pos
        # ruamel places an empty value after the line; a collection's position is its first
        # entry. Point at the key for both, and at the value itself for scalars.
        if value is not None and not isinstance(value, (dict, list)):
            value_pos = _lc(mapping, "value", key) or key_pos
        return Node(value, path, value_pos[0], value_pos[1], key_pos[0], key_pos[1])

    def item(self, index: int) -> Node:
        """Item `index` of this list."""
        pos = _lc(self.value, "item", index) or (self.key_line, self.key_column)
        return Node(self.value[index], f"{self.path}[{index}]", pos[0], pos[1], pos[0], pos[1])

    def items(self) -> list[Node]:
        return [self.item(i) for i in range(len(self.value))] if self.is_seq else []

    def entries(self) -> list[tuple[Any, Node]]:
        return [(key, self.child(key)) for key in self.value] if self.is_map else []

    def location(self, file: str, *, at_key: bool = False) -> SourceLocation:
        line, column = (self.key_line, self.key_column) if at_key else (self.line, self.column)
        return SourceLocation(file=file, line=line, column=column, field_path=self.path or None)


def _lc(container: Any, kind: str, key: Any) -> tuple[int, int] | None:
    """1-based (line, column) from ruamel's `.lc`, or None for data built without positions."""
    lc = getattr(container, "lc", None)
    if lc is None:
        return None
    try:
        line, column = getattr(lc, kind)(key)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return line + 1, column + 1


def did_you_mean(word: str, options: Iterable[str]) -> str:
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


_YAML11_BOOLEANS = {"yes": True, "on": True, "y": True, "no": False, "off": False, "n": False}


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Checker:
    """Reads typed values from Nodes and collects a ProfileError for each problem, and located
    warnings (accepted, but worth a look) and notes (what was read from where)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.errors: list[ProfileError] = []
        self.warnings: list[str] = []
        self.notes: list[str] = []

    def _at(self, node: Node, reason: str, at_key: bool) -> ProfileError:
        line, column = (node.key_line, node.key_column) if at_key else (node.line, node.column)
        return ProfileError(reason, file=self.file, line=line, column=column, field_path=node.path or None)

    def error(self, node: Node, reason: str, *, at_key: bool = False) -> None:
        self.errors.append(self._at(node, reason, at_key))

    def warn(self, node: Node, reason: str, *, at_key: bool = False) -> None:
        """A located warning: `file:line:col: field: reason`."""
        self.warnings.append(self._at(node, reason, at_key).render())

    def note(self, node: Node, reason: str, *, at_key: bool = False) -> None:
        self.notes.append(self._at(node, reason, at_key).render())

    def extend(self, errors: Sequence[ProfileError]) -> None:
        self.errors.extend(errors)

    # -- structure ----------------------------------------------------------------------------

    def mapping(
        self,
        node: Node,
        allowed: Sequence[str],
        *,
        required: Sequence[str] = (),
        what: str = "a mapping",
        sensei: bool = False,
    ) -> bool:
        """True if `node` is a mapping; reports unknown keys (with a suggestion) and missing ones.

        `sensei`: a section of Sensei's format, whose loader ignores keys it does not know. An
        unknown key there is a warning, unless it looks like a misspelling of a key that is
        missing (`conversations:` for `conversation:`), which stays an error.
        """
        if not node.is_map:
            self.error(node, f"expected {what}, got {describe(node.value)}", at_key=node.value is None)
            return False
        for key, child in node.entries():
            if not isinstance(key, str) or key not in allowed:
                known = ", ".join(allowed)
                close = difflib.get_close_matches(str(key), list(allowed), n=1, cutoff=0.6)
                if sensei and not (close and close[0] not in node.value):
                    self.warn(child, f"unknown key '{key}' is ignored, as Sensei ignores it", at_key=True)
                    continue
                hint = f"; did you mean '{close[0]}'?" if close else f"; known keys: {known}"
                self.error(child, f"unknown key '{key}'{hint}", at_key=True)
        for key in required:
            if key not in node.value:
                self.error(node, f"missing required key '{key}'", at_key=True)
        return True

    def sequence(self, node: Node, *, what: str = "a list", non_empty: bool = True) -> bool:
        if not node.is_seq:
            self.error(node, f"expected {what}, got {describe(node.value)}", at_key=node.value is None)
            return False
        if non_empty and not node.value:
            self.error(node, "must not be empty", at_key=True)
            return False
        return True

    # -- scalars ------------------------------------------------------------------------------

    def string(self, node: Node, *, allow_empty: bool = False, what: str = "text") -> str | None:
        value = node.value
        if isinstance(value, str) and (allow_empty or value.strip()):
            return str(value)
        if isinstance(value, str):
            self.error(node, f"expected {what}, got an empty string")
        else:
            self.error(node, f"expected {what}, got {describe(value)}", at_key=value is None)
        return None

    def integer(self, node: Node, *, minimum: int | None = None, maximum: int | None = None) -> int | None:
        value = node.value
        if not is_int(value):
            self.error(node, f"expected an integer, got {describe(value)}", at_key=value is None)
            return None
        return self._bounded(node, int(value), minimum, maximum)

    def number(self, node: Node, *, minimum: float | None = None, maximum: float | None = None) -> float | None:
        value = node.value
        if not is_number(value):
            self.error(node, f"expected a number, got {describe(value)}", at_key=value is None)
            return None
        return self._bounded(node, float(value), minimum, maximum)

    def _bounded(self, node: Node, value: Any, minimum: Any, maximum: Any) -> Any:
        if minimum is not None and value < minimum:
            bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
            self.error(node, f"must be {bound}, got {value}")
            return None
        if maximum is not None and value > maximum:
            bound = f"between {minimum} and {maximum}" if minimum is not None else f"at most {maximum}"
            self.error(node, f"must be {bound}, got {value}")
            return None
        return value

    def boolean(self, node: Node) -> bool | None:
        value = node.value
        if isinstance(value, bool):
            return value
        # Sensei read profiles with PyYAML (YAML 1.1), where yes/no/on/off are booleans.
        if isinstance(value, str) and value.strip().lower() in _YAML11_BOOLEANS:
            return _YAML11_BOOLEANS[value.strip().lower()]
        self.error(node, f"expected true or false, got {describe(value)}", at_key=value is None)
        return None

    def date(self, node: Node) -> datetime.date | None:
        value = node.value
        if isinstance(value, datetime.datetime):
            return value.date()
        if isinstance(value, datetime.date):
            return value
        if isinstance(value, str):
            try:
                return datetime.date.fromisoformat(value.strip())
            except ValueError:
                pass
        self.error(node, f"expected a date like 2026-11-21, got {describe(value)}", at_key=value is None)
        return None

    def string_list(self, node: Node, *, non_empty: bool = True, what: str = "text") -> list[tuple[str, Node]]:
        """The strings of a list, each with its node; non-strings are reported and skipped."""
        if not self.sequence(node, what=f"a list of {what}", non_empty=non_empty):
            return []
        out = []
        for item in node.items():
            text = self.string(item, what=what)
            if text is not None:
                out.append((text, item))
        return out


def plain_value(value: Any) -> Any:
    """ruamel's scalar subclasses (ScalarFloat, LiteralScalarString...) as plain Python values."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {plain_value(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    return value


class SectionParser:
    """Checks and builds the self-contained sections; each method returns None after
    reporting its errors to `self.checker`."""

    checker: Checker

    # -- llm --------------------------------------------------------------------------------------

    def _llm(self, node: Node) -> LlmSettings | None:
        c = self.checker
        if not c.mapping(node, LLM_KEYS, sensei=True):
            return None
        fields: dict[str, Any] = {}
        ok = True
        if node.has("model") and node.value["model"] is not None:
            model = c.string(node.child("model"), what="a model name such as gpt-4o")
            ok &= model is not None
            if model is not None:
                fields["model"] = model.strip()
                fields["qualified_model"] = qualify_model_name(model)
        if node.has("temperature") and node.value["temperature"] is not None:
            temperature = c.number(node.child("temperature"), minimum=0.0, maximum=2.0)
            ok &= temperature is not None
            fields["temperature"] = temperature
        if node.has("format") and node.value["format"] is not None:
            llm_format = self._llm_format(node.child("format"))
            ok &= llm_format is not None
            fields["format"] = llm_format
        return LlmSettings(**fields) if ok else None

    def _llm_format(self, node: Node) -> LlmFormat | None:
        """`format: {type: text|speech, config: FILE}` (the user-simulator fork); `format: speech` too."""
        c = self.checker
        type_node: Node | None = node
        if node.is_map:
            if not c.mapping(node, FORMAT_KEYS, sensei=True):
                return None
            type_node = node.child("type") if node.has("type") else None
        kind = "text"
        if type_node is not None and type_node.value is not None:
            word = c.string(type_node, what=f"a format type ({', '.join(FORMAT_TYPES)})")
            if word is None:
                return None
            kind = word.strip().lower()
            if kind not in FORMAT_TYPES:
                hint = did_you_mean(kind, FORMAT_TYPES) or f"; use one of {', '.join(FORMAT_TYPES)}"
                c.error(type_node, f"unknown format type '{word}'{hint}")
                return None
        config = None
        if node.is_map and node.has("config") and node.value["config"] is not None:
            config = c.string(node.child("config"), what="the path of a speech configuration")
            if config is None:
                return None
        if kind == "speech":
            c.warn(type_node or node, "parley simulates text conversations only: the speech format is ignored")
        return LlmFormat(type=kind, config=config)

    # -- chatbot ----------------------------------------------------------------------------------

    def _chatbot(self, node: Node) -> ChatbotSection | None:
        c = self.checker
        if not c.mapping(node, CHATBOT_KEYS, sensei=True):
            return None
        fields: dict[str, Any] = {}
        ok = True
        if node.has("is_starter") and node.value["is_starter"] is not None:
            fields["is_starter"] = c.boolean(node.child("is_starter"))
            ok &= fields["is_starter"] is not None
        if node.has("fallback") and node.value["fallback"] is not None:
            fields["fallback"] = c.string(node.child("fallback"), what="the chatbot's fallback message")
            ok &= fields["fallback"] is not None
        if node.has("output") and node.value["output"] is not None:
            outputs = self._outputs(node.child("output"))
            ok &= outputs is not None
            fields["outputs"] = outputs
        return ChatbotSection(**fields) if ok else None

    def _outputs(self, node: Node) -> list[OutputField] | None:
        c = self.checker
        if not c.sequence(node, what="a list of outputs (name: type/description)", non_empty=False):
            return None
        outputs: list[OutputField] = []
        seen: set[str] = set()
        ok = True
        for item in node.items():
            if not item.is_map or not item.value:
                example = "'price: {type: money, description: ...}'"
                c.error(item, f"expected an output like {example}, got {describe(item.value)}")
                ok = False
                continue
            for name, out_node in item.entries():
                if not isinstance(name, str):
                    c.error(out_node, f"output name {describe(name)} must be text", at_key=True)
                    ok = False
                    continue
                if name in seen:
                    c.error(out_node, f"output '{name}' is defined twice", at_key=True)
                    ok = False
                    continue
                seen.add(name)
                if not c.mapping(out_node, OUTPUT_KEYS, required=OUTPUT_KEYS, what="type and description"):
                    ok = False
                    continue
                if any(k not in out_node.value for k in OUTPUT_KEYS):
                    ok = False
                    continue
                type_node = out_node.child("type")
                out_type = c.string(type_node, what="an output type")
                if out_type is not None and out_type.strip().lower() not in OUTPUT_TYPES:
                    # Sensei's data extraction warns and extracts such a value as text.
                    c.warn(
                        type_node,
                        f"output type '{out_type}' is not one of {', '.join(OUTPUT_TYPES)}: extracted as str, as Sensei does",
                    )
                    out_type = "str"
                description = c.string(out_node.child("description"), what="a description")
                if out_type is None or description is None:
                    ok = False
                    continue
                outputs.append(OutputField(name=name, type=out_type.strip().lower(), description=description))
        return outputs if ok else None

    # -- conversation -------------------------------------------------------------------------------

    def _conversation(self, node: Node, variables: list[Variable] | None) -> ConversationSection | None:
        c = self.checker
        if node.is_seq:
            c.error(
                node,
                "expected a mapping, got a list: write number, goal_style and interaction_style as keys of one "
                "mapping, not as list items (Sensei's older layout; its current code rejects the list too)",
                at_key=True,
            )
            return None
        if not c.mapping(node, CONVERSATION_KEYS, sensei=True):
            return None
        fields: dict[str, Any] = {}
        ok = True
        if node.has("number") and node.value["number"] is not None:
            fields["number"] = self._number(node.child("number"), variables)
            ok &= fields["number"] is not None
        if node.has("goal_style") and node.value["goal_style"] is not None:
            fields["goal_style"] = self._goal_style(node.child("goal_style"))
            ok &= fields["goal_style"] is not None
        if node.has("interaction_style") and node.value["interaction_style"] is not None:
            fields["interaction_style"] = self._interaction_styles(node.child("interaction_style"))
            ok &= fields["interaction_style"] is not None
        return ConversationSection(**fields) if ok else None

    def _combinations_ok(self, node: Node, written: str, fraction: float, variables: list[Variable]) -> bool:
        """Check all_combinations / sample(f) against Sensei's count (see parley.core.specs.combinations);
        warn where that count surprises."""
        c = self.checker
        total = combination_count(variables)
        if total is None:
            return True  # any() items still to generate: counted after they are
        plan = forward_plan(variables)
        if total == 0:
            c.error(
                node,
                f"{written} counts the combinations of nested forward() variables (a forward(x) naming "
                "another forward() variable) and this profile has none, so Sensei runs 0 conversations; "
                "nest one forward() in another, or give a number",
            )
            return False
        wanted = fraction * total
        count = sample_size(fraction, total)
        if count == 0:
            c.error(
                node,
                f"{written} of {total} combinations is {wanted:g}, which rounds to 0 conversations "
                "(Sensei rounds with Python's round); raise the fraction or give a number",
            )
            return False
        if count > MAX_CONVERSATIONS:
            c.error(node, f"{written} gives {count} conversations; the limit is {MAX_CONVERSATIONS}")
            return False
        if written != "all_combinations" and wanted != count and wanted - math.floor(wanted) == 0.5:
            c.warn(node, f"{written} of {total} combinations is {wanted:g}, which Python's round (as Sensei) makes {count}")
        if plan.independent:
            names = ", ".join(f"'{v.name}'" for v in plan.independent)
            every = math.prod(len(v.values) for chain in plan.chains for v in chain) * math.prod(len(v.values) for v in plan.independent)
            c.warn(
                node,
                f"{names}: forward() that no other variable nests; as in Sensei it steps through its values, "
                f"one per conversation, and is left out of the count ({total}, not {every})",
            )
        return True

    def _number(self, node: Node, variables: list[Variable] | None) -> ConversationNumber | None:
        c = self.checker
        value = node.value
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            value = int(value.strip())
        if is_int(value):
            if value < 1:
                c.error(node, f"must be at least 1 conversation, got {value}")
                return None
            if value > MAX_CONVERSATIONS:
                c.error(node, f"{value} conversations is more than the limit of {MAX_CONVERSATIONS}")
                return None
            return ConversationNumber(kind="count", count=int(value))
        if isinstance(value, str) and value.strip() == "all_combinations":
            if variables is not None and not self._combinations_ok(node, "all_combinations", 1.0, variables):
                return None
            return ConversationNumber(kind="all_combinations")
        sample = _SAMPLE_RE.match(value) if isinstance(value, str) else None
        if sample is not None:
            arg = sample.group(1)
            try:
                fraction = float(arg)
            except ValueError:
                fraction = math.nan
            if not (0.0 < fraction <= 1.0):
                c.error(node, f"sample() takes a fraction above 0 and at most 1, such as sample(0.2); got '{arg}'")
                return None
            if variables is not None and not self._combinations_ok(node, value.strip(), fraction, variables):
                return None
            return ConversationNumber(kind="sample", fraction=fraction)
        hint = did_you_mean(str(value), ("all_combinations", "sample()")) if isinstance(value, str) else ""
        c.error(
            node,
            f"expected a number of conversations, all_combinations or sample(fraction), got {describe(value)}{hint}",
            at_key=value is None,
        )
        return None

    def _goal_style(self, node: Node) -> GoalStyle | None:
        c = self.checker
        value = node.value
        if isinstance(value, str):
            word = _GOAL_STYLE_ALIASES.get(value.strip(), value.strip())
            if word == "default":
                return GoalStyle(kind="default")
            if word == "all_answered":
                return GoalStyle(kind="all_answered")
            if word in ("steps", "random steps"):
                c.error(node, f"'{word}' needs a number, e.g. '{word}: 5'")
                return None
            c.error(node, f"unknown goal style '{value}'{did_you_mean(word, GOAL_STYLES) or self._goal_styles_hint()}")
            return None
        if not node.is_map or not value:
            c.error(node, f"expected a goal style ({', '.join(GOAL_STYLES)}), got {describe(value)}", at_key=True)
            return None
        if len(value) > 1:
            keys = " and ".join(str(k) for k in value)
            c.error(node, f"give one goal style, got {keys}", at_key=True)
            return None
        ((key, child),) = node.entries()
        word = _GOAL_STYLE_ALIASES.get(str(key).strip(), str(key).strip())
        if word == "steps":
            steps = c.integer(child, minimum=1, maximum=MAX_STEPS)  # Sensei refuses 20 or more
            return None if steps is None else GoalStyle(kind="steps", steps=steps)
        if word == "random steps":
            steps = c.integer(child, minimum=1, maximum=MAX_STEPS)
            return None if steps is None else GoalStyle(kind="random_steps", max_steps=steps)
        if word == "default":
            if child.value is not None:
                c.error(child, f"default takes no settings, got {describe(child.value)}")
                return None
            return GoalStyle(kind="default")
        if word == "all_answered":
            if child.value is None:
                return GoalStyle(kind="all_answered")
            if not c.mapping(child, ALL_ANSWERED_KEYS):
                return None
            fields: dict[str, Any] = {}
            if child.has("export") and child.value["export"] is not None:
                fields["export"] = c.boolean(child.child("export"))
            if child.has("limit") and child.value["limit"] is not None:
                fields["limit"] = c.integer(child.child("limit"), minimum=1)
            if None in fields.values():
                return None
            return GoalStyle(kind="all_answered", **fields)
        hint = did_you_mean(word, GOAL_STYLES) or self._goal_styles_hint()
        c.error(child, f"unknown goal style '{key}'{hint}", at_key=True)
        return None

    @staticmethod
    def _goal_styles_hint() -> str:
        return f"; use one of {', '.join(GOAL_STYLES)}"

    def _interaction_styles(self, node: Node) -> list[InteractionStyle | RandomStyles] | None:
        c = self.checker
        if isinstance(node.value, str):  # a single style written without the list
            style = self._style(node, in_random=False)
            return None if style is None else [style]
        if not c.sequence(node, what="a list of interaction styles"):
            return None
        styles: list[InteractionStyle | RandomStyles] = []
        ok = True
        for item in node.items():
            style = self._style(item, in_random=False)
            if style is None:
                ok = False
            else:
                styles.append(style)
        return styles if ok else None

    def _style(self, node: Node, *, in_random: bool) -> InteractionStyle | RandomStyles | None:
        c = self.checker
        known = (*STYLE_NAMES, "random") if not in_random else STYLE_NAMES
        if isinstance(node.value, str):
            word = " ".join(node.value.split()).lower()
            word = _STYLE_ALIASES.get(word, word)
            if word == "change language":
                c.error(node, "change language needs a list of languages, e.g. 'change language: [italian, chinese]'")
                return None
            if word == "random":
                example = "'random: [long phrases, all questions]'"
                c.error(node, f"random needs a list of styles to choose from, e.g. {example}")
                return None
            if word not in STYLE_NAMES:
                hint = did_you_mean(word, known) or self._styles_hint(known)
                c.error(node, f"unknown interaction style '{node.value}'{hint}")
                return None
            return InteractionStyle(name=word)
        if not node.is_map or not node.value:
            c.error(node, f"expected an interaction style, got {describe(node.value)}")
            return None
        if len(node.value) > 1:
            c.error(node, "write one interaction style per list item", at_key=True)
            return None
        ((key, child),) = node.entries()
        word = " ".join(str(key).split()).lower()
        if word == "change language":
            languages = c.string_list(child, what="language names")
            if not languages or len(languages) != len(child.value or []):
                return None
            return InteractionStyle(name="change language", languages=[text.strip() for text, _ in languages])
        if word == "random":
            if in_random:
                c.error(child, "random cannot be nested inside random", at_key=True)
                return None
            if not c.sequence(child, what="a list of interaction styles"):
                return None
            choices: list[InteractionStyle] = []
            ok = True
            for item in child.items():
                style = self._style(item, in_random=True)
                if style is None:
                    ok = False
                elif isinstance(style, InteractionStyle):
                    choices.append(style)
            return RandomStyles(choices=choices) if ok else None
        word = _STYLE_ALIASES.get(word, word)
        if word in STYLE_NAMES:
            c.error(child, f"'{word}' takes no settings, got {describe(child.value)}", at_key=True)
            return None
        hint = did_you_mean(word, known) or self._styles_hint(known)
        c.error(child, f"unknown interaction style '{key}'{hint}", at_key=True)
        return None

    @staticmethod
    def _styles_hint(known: Iterable[str]) -> str:
        return f"; use one of {', '.join(known)}"

    # -- world (parley) -------------------------------------------------------------------------------

    def _world(self, node: Node) -> WorldSpec | None:
        c = self.checker
        if not c.mapping(node, WORLD_KEYS):
            return None
        fields: dict[str, Any] = {}
        ok = True
        if node.has("customer_id"):
            customer = self._pattern(node.child("customer_id"), CUSTOMER_ID_RE, "a customer id like C-100")
            ok &= customer is not None
            fields["customer_id"] = customer
        if node.has("today") and node.value["today"] is not None:
            fields["today"] = c.date(node.child("today"))
            ok &= fields["today"] is not None
        if node.has("orders") and node.value["orders"] is not None:
            fields["orders"] = self._order_overrides(node.child("orders"))
            ok &= fields["orders"] is not None
        if ok:
            # The World must be able to date every order (year 1 to 9999) from its today.
            overrides = [o.as_override() for o in fields.get("orders") or []]
            problem = date_problem(fields.get("today") or datetime.date.today(), overrides)
            if problem is not None:
                c.error(node.child("today") if node.has("today") else node, problem, at_key=not node.has("today"))
                ok = False
        return WorldSpec(**fields) if ok else None

    def _pattern(self, node: Node, pattern: re.Pattern[str], what: str) -> str | None:
        text = self.checker.string(node, what=what)
        if text is None:
            return None
        if not pattern.match(text.strip()):
            self.checker.error(node, f"expected {what}, got '{text}'")
            return None
        return text.strip()

    def _order_overrides(self, node: Node) -> list[OrderOverride] | None:
        c = self.checker
        if not c.sequence(node, what="a list of order overrides (id plus fields)", non_empty=False):
            return None
        overrides: list[OrderOverride] = []
        seen: set[str] = set()
        ok = True
        for item in node.items():
            what = "an order override like {id: ORD-1001, status: shipped}"
            if not c.mapping(item, ORDER_OVERRIDE_KEYS, required=("id",), what=what):
                ok = False
                continue
            if "id" not in item.value:
                ok = False
                continue
            fields: dict[str, Any] = {}
            item_ok = True
            order_id = self._pattern(item.child("id"), ORDER_ID_RE, "an order id like ORD-1001")
            if order_id is not None and order_id in seen:
                c.error(item.child("id"), f"order {order_id} is overridden twice")
                order_id = None
            item_ok &= order_id is not None
            if order_id:
                seen.add(order_id)
                fields["id"] = order_id
            for key, child in item.entries():
                if key == "id" or key not in ORDER_OVERRIDE_KEYS:
                    continue
                value = self._override_field(key, child)
                if value is _INVALID:
                    item_ok = False
                else:
                    fields[key] = value
            if item_ok:
                overrides.append(OrderOverride(**fields))
            ok &= item_ok
        return overrides if ok else None

    def _override_field(self, key: str, node: Node) -> Any:
        c = self.checker
        result: Any
        if key == "customer_id":
            result = self._pattern(node, CUSTOMER_ID_RE, "a customer id like C-100")
        elif key == "placed_days_ago":
            result = c.integer(node, minimum=0)
        elif key == "status":
            result = self._status(node)
        elif key == "currency":
            result = c.string(node, what="a currency code like USD")
        elif key == "total":
            result = c.number(node, minimum=0)
        elif key == "items":
            if not c.sequence(node, what="a list of items (name, qty, unit_price, currency)"):
                return _INVALID
            bad = [i for i in node.items() if not i.is_map]
            for i in bad:
                c.error(i, f"expected an item mapping, got {describe(i.value)}")
            return _INVALID if bad else plain_value(node.value)
        else:  # tracking
            if node.value is None:
                return None
            if not node.is_map:
                c.error(node, f"expected a tracking mapping or null, got {describe(node.value)}")
                return _INVALID
            return plain_value(node.value)
        return _INVALID if result is None else result

    def _status(self, node: Node) -> str | None:
        c = self.checker
        text = c.string(node, what="an order status")
        if text is None:
            return None
        word = text.strip().lower()
        if word not in ORDER_STATUSES:
            hint = did_you_mean(word, ORDER_STATUSES) or f"; use one of {', '.join(ORDER_STATUSES)}"
            c.error(node, f"unknown order status '{text}'{hint}")
            return None
        return word

    # -- expect (parley) ------------------------------------------------------------------------------

    def _expect(self, node: Node) -> Expectations | None:
        c = self.checker
        if node.value is None:
            return Expectations()
        if not c.mapping(node, EXPECT_KEYS):
            return None
        fields: dict[str, Any] = {}
        ok = True
        for key, child in node.entries():
            if key not in EXPECT_KEYS or child.value is None:
                continue
            value: Any
            if key == "orders":
                value = self._expected_orders(child)
            elif key == "unchanged_others":
                value = c.boolean(child)
            elif key in ("tools_called", "tools_not_called"):
                value = self._tools(child)
            elif key in ("bot_says", "bot_never_says"):
                value = self._regexes(child)
            elif key == "criteria":
                value = self.criteria(child)
            else:
                value = self._judge(child)
            ok &= value is not None
            fields[key] = value
        if ok:
            both = set(fields.get("tools_called", [])) & set(fields.get("tools_not_called", []))
            for tool in sorted(both):
                reason = f"{tool} is in both tools_called and tools_not_called"
                c.error(node.child("tools_not_called"), reason, at_key=True)
                ok = False
        return Expectations(**fields) if ok else None

    def _expected_orders(self, node: Node) -> dict[str, str] | None:
        c = self.checker
        if not node.is_map:
            example = "{ORD-1004: cancelled}"
            c.error(node, f"expected a mapping of order ids to statuses, e.g. {example}, got {describe(node.value)}")
            return None
        out: dict[str, str] = {}
        ok = True
        for key, child in node.entries():
            if not isinstance(key, str) or not ORDER_ID_RE.match(key):
                c.error(child, f"expected an order id like ORD-1001, got {describe(key)}", at_key=True)
                ok = False
                continue
            status = self._status(child)
            if status is None:
                ok = False
            else:
                out[key] = status
        return out if ok else None

    def _tools(self, node: Node) -> list[str] | None:
        c = self.checker
        entries = c.string_list(node, non_empty=False, what="tool names")
        if not node.is_seq or len(entries) != len(node.value):
            return None
        tools: list[str] = []
        ok = True
        for text, item in entries:
            name = text.strip()
            if name not in TOOL_NAMES:
                hint = did_you_mean(name, TOOL_NAMES) or f"; tools are {', '.join(TOOL_NAMES)}"
                c.error(item, f"unknown tool '{name}'{hint}")
                ok = False
            elif name not in tools:
                tools.append(name)
        return tools if ok else None

    def _regexes(self, node: Node) -> list[str] | None:
        c = self.checker
        entries = c.string_list(node, non_empty=False, what="regular expressions")
        if not node.is_seq or len(entries) != len(node.value):
            return None
        ok = True
        for text, item in entries:
            try:
                re.compile(text)
            except re.error as exc:
                c.error(item, f"invalid regular expression {text!r}: {exc}")
                ok = False
        return [text for text, _ in entries] if ok else None

    def criteria(self, node: Node) -> list[str] | None:
        """`criteria:` (in `expect:`, or a scenario file's entry): sentences, each its own check
        named by its text, so each is written once; a criterion is a sentence or two, not a rubric.
        Every item is checked, whatever is wrong with the others."""
        c = self.checker
        if not c.sequence(node, what="a list of criteria in words (one sentence each)", non_empty=False):
            return None
        seen: dict[str, int] = {}
        out: list[str] = []
        ok = True
        for n, item in enumerate(node.items(), 1):
            text = c.string(item, what="a criterion in words (one sentence)")
            if text is None:
                ok = False
                continue
            sentence = " ".join(text.split())
            if len(sentence) > MAX_CRITERION_CHARS:
                c.error(item, f"a criterion is a sentence or two, at most {MAX_CRITERION_CHARS} characters; this one has {len(sentence)}")
                ok = False
            elif sentence.casefold() in seen:
                c.error(item, f"criterion {n} repeats criterion {seen[sentence.casefold()]}: each is its own check, named by its text")
                ok = False
            else:
                seen[sentence.casefold()] = n
                out.append(sentence)
        return out if ok else None

    def _judge(self, node: Node) -> JudgeSpec | None:
        c = self.checker
        if not c.mapping(node, JUDGE_KEYS, required=("rubric",)) or "rubric" not in node.value:
            return None
        rubric = c.string(node.child("rubric"), what="a rubric for the judge")
        min_score: int | None = 2
        if node.has("min_score") and node.value["min_score"] is not None:
            min_score = c.integer(node.child("min_score"), minimum=1, maximum=3)
        if rubric is None or min_score is None:
            return None
        return JudgeSpec(rubric=rubric, min_score=min_score)


class _Invalid:
    """Marks a field that failed validation (None is a valid value for some fields)."""


_INVALID = _Invalid()
