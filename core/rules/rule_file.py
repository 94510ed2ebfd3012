"""Sensei rule files: reading one, checking every field, compiling its expressions.

A rule file is one YAML mapping:
    name: session_price_exact          # several files may share a name: the file is the key
    description: A photo is 50$
    active: True                       # optional (true); inactive rules are skipped
    conversations: 1                   # optional (1): 1 per conversation, 2 per ordered pair, all
    when: operation[0] == 'adding'     # optional: which conversations the rule is about
    if: currency(cost) == 'USD'        # optional: a further condition
    oracle: extract_float(cost) == 50  # (or `then:`) what must hold
    yields: f"got {cost}"              # optional: the text shown on a failure
Every problem is a `RuleFileError` at `file:line: rule.field: reason`, the expressions' included
(`parley.core.rules.expression_compiler`), before anything is evaluated. Plain values are typed
as PyYAML types them (`active: yes` is true), since Sensei reads these files with PyYAML.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString

from parley.core.errors import ProfileError
from parley.core.rules.expression_compiler import CompiledExpression, ExpressionRefused, compile_expression
from parley.core.rules.model_helpers import MODEL_HELPERS
from parley.core.rules.results import RuleCount
from parley.core.rules.rule_scope import FUNCTION_NAMES
from parley.core.specs import read_yaml_documents

log = logging.getLogger("parley.rules")

MAX_RULE_FILE_BYTES = 1024 * 1024
KNOWN_KEYS = ("name", "description", "active", "conversations", "when", "if", "oracle", "then", "yields")
_BOOLEAN_WORDS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}


class RuleFileError(ProfileError):
    """A rule file that cannot be used, at `file:line: rule.field: reason`."""


@dataclass(frozen=True)
class CompiledRule:
    """A rule file, checked, with its expressions compiled."""

    rule_file: str
    name: str
    description: str
    active: bool
    conversations: RuleCount
    when: CompiledExpression
    condition: CompiledExpression
    oracle: CompiledExpression
    yields: CompiledExpression | None
    source: str
    lines: dict[str, int] = field(default_factory=dict)

    @property
    def needs_model(self) -> list[str]:
        """The model helpers the rule may call (sorted)."""
        called: set[str] = set()
        for expression in (self.when, self.condition, self.oracle, self.yields):
            if expression is not None:
                called |= expression.functions
        return sorted(called & MODEL_HELPERS)


@dataclass
class RuleSet:
    """The rules of a folder, the errors of the files that are not rules (each file's by its name
    under the folder, in `refused`), and warnings."""

    rules: list[CompiledRule] = field(default_factory=list)
    errors: list[RuleFileError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refused: dict[str, list[RuleFileError]] = field(default_factory=dict)

    def refuse(self, rule_file: str, errors: list[RuleFileError]) -> None:
        """Record the problems of the file named `rule_file`."""
        self.errors.extend(errors)
        self.refused.setdefault(rule_file, []).extend(errors)


def rule_files(root: Path) -> list[tuple[Path, str]]:
    """The .yaml/.yml files under `root` (or `root` itself) with their names under it, sorted as
    Sensei's checker sorts them; hidden files and folders are skipped."""
    if root.is_file():
        return [(root, root.name)]
    found = []
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if path.suffix in (".yaml", ".yml") and path.is_file() and not any(part.startswith(".") for part in relative.parts):
            found.append((path, relative.as_posix()))
    return sorted(found, key=lambda item: str(item[0]))


def load_rules(root: Path) -> RuleSet:
    """Every rule file under `root`; each file's problems are collected, none is evaluated.
    Messages name the files by their path as `root` leads to them."""
    result = RuleSet()
    for path, name in rule_files(root):
        source = str(path)
        try:
            if path.stat().st_size > MAX_RULE_FILE_BYTES:
                raise RuleFileError(f"larger than {MAX_RULE_FILE_BYTES // 1024} KiB", file=source)
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            result.refuse(name, [RuleFileError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=source)])
            continue
        except OSError as exc:
            result.refuse(name, [RuleFileError(f"cannot be read: {exc.strerror or exc}", file=source)])
            continue
        except RuleFileError as exc:
            result.refuse(name, [exc])
            continue
        rule, errors, warnings = parse_rule(text, name, source)
        if errors:
            result.refuse(name, errors)
        result.warnings.extend(warnings)
        if rule is not None:
            result.rules.append(rule)
    return result


def parse_rule(text: str, rule_file: str, source: str) -> tuple[CompiledRule | None, list[RuleFileError], list[str]]:
    """The rule in `text` (named `rule_file`), or None with every problem found; warnings name
    keys Sensei ignores (a misspelt `yeilds:` would otherwise vanish silently)."""
    try:
        documents = read_yaml_documents(text, source, yaml_1_1=True)
    except ProfileError as exc:
        return None, [RuleFileError(exc.reason, file=source, line=exc.line, column=exc.column)], []
    if len(documents) != 1 or not isinstance(documents[0], dict):
        what = (
            "empty" if not documents or documents[0] is None else f"{len(documents)} documents" if len(documents) != 1 else "not a mapping"
        )
        return (
            None,
            [RuleFileError(f"a rule file is one mapping (name, description, oracle, ...); this one is {what}", file=source, line=1)],
            [],
        )
    return _RuleReader(documents[0], rule_file, source).read()


class _RuleReader:
    def __init__(self, data: dict[Any, Any], rule_file: str, source: str) -> None:
        self.data = data
        self.rule_file = rule_file
        self.source = source
        self.errors: list[RuleFileError] = []
        name = data.get("name")
        self.rule_name = name if isinstance(name, str) and name.strip() else rule_file

    def read(self) -> tuple[CompiledRule | None, list[RuleFileError], list[str]]:
        warnings = [
            f"{self.source}:{self.line(key)}: {self.rule_name}: the key {key!r} is not part of a rule and is ignored (the keys are {', '.join(KNOWN_KEYS)})"
            for key in self.data
            if key not in KNOWN_KEYS
        ]
        name = self.text("name")
        description = self.text("description")
        active = self.active()
        conversations = self.conversations()
        when = self.expression("when", default="True")
        condition = self.expression("if", default="True")
        if "oracle" in self.data and "then" in self.data:
            self.error("then", "give the oracle once, as `oracle:` or as `then:`, not both")
        oracle_key = "oracle" if "oracle" in self.data else "then"
        oracle = self.expression(oracle_key, default=None)
        yields = self.expression("yields", default=None, optional=True)
        if self.errors or name is None or description is None or active is None or conversations is None:
            return None, self.errors, warnings
        assert when is not None and condition is not None and oracle is not None
        lines = {key: self.line(key) for key in KNOWN_KEYS if key in self.data}
        rule = CompiledRule(self.rule_file, name, description, active, conversations, when, condition, oracle, yields, self.source, lines)
        return rule, [], warnings

    # -- fields -------------------------------------------------------------------------------------

    def text(self, key: str) -> str | None:
        if key not in self.data:
            self.error(None, f"the rule has no {key}: every rule has a name, a description and an oracle", field=key)
            return None
        value = self.data[key]
        if isinstance(value, str) and not value.strip():
            self.error(key, "is empty")
            return None
        if not isinstance(value, str):
            hint = " (YAML reads yes, no, on, off as true/false: quote it)" if isinstance(value, bool) else ""
            self.error(key, f"must be text, not {_kind(value)}{hint}")
            return None
        return str(value)

    def active(self) -> bool | None:
        value = self.data.get("active", True)
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _BOOLEAN_WORDS:
            return _BOOLEAN_WORDS[value.strip().lower()]
        self.error("active", f"must be true or false, not {_kind(value)}")
        return None

    def conversations(self) -> RuleCount | None:
        value = self.data.get("conversations", 1)
        if isinstance(value, str) and value.strip() in ("1", "2", "all"):
            value = value.strip()
            return "all" if value == "all" else 1 if value == "1" else 2
        if isinstance(value, int) and not isinstance(value, bool) and value in (1, 2):
            return 1 if value == 1 else 2
        self.error("conversations", f"must be 1 (each conversation), 2 (each ordered pair) or all (the batch), not {value!r}")
        return None

    def expression(self, key: str, *, default: str | None, optional: bool = False) -> CompiledExpression | None:
        if key not in self.data:
            if default is not None:
                return compile_expression(default, FUNCTION_NAMES)
            if not optional:
                self.error(None, "the rule has no oracle: give what must hold as `oracle:` (or `then:`)", field="oracle")
            return None
        value = self.data[key]
        if isinstance(value, bool):  # `when: true`: Sensei's reader refuses it, but its meaning is plain
            value = str(value)
        if not isinstance(value, str):
            what = (
                "empty: remove the key or write an expression"
                if value is None
                else f"must be a Python expression in text, not {_kind(value)}"
            )
            self.error(key, what)
            return None
        try:
            return compile_expression(value, FUNCTION_NAMES)
        except ExpressionRefused as exc:
            self.error(key, exc.reason, line=self.expression_line(key, value, exc.line))
            return None

    # -- positions ----------------------------------------------------------------------------------

    def line(self, key: Any) -> int:
        try:
            return int(self.data.lc.key(key)[0]) + 1  # type: ignore[attr-defined]
        except (AttributeError, KeyError, TypeError):
            return 1

    def expression_line(self, key: str, value: str, line_in_expression: int) -> int:
        """The file line of line `line_in_expression` of the (stripped) expression under `key`."""
        try:
            start = int(self.data.lc.value(key)[0]) + 1  # type: ignore[attr-defined]
        except (AttributeError, KeyError, TypeError):
            return self.line(key)
        if isinstance(value, LiteralScalarString | FoldedScalarString):
            start += 1  # a block scalar's text begins on the line after its `|` or `>`
        skipped = value[: len(value) - len(value.lstrip())].count("\n")
        return start + skipped + line_in_expression - 1

    def error(self, key: str | None, reason: str, *, field: str | None = None, line: int | None = None) -> None:
        where = line if line is not None else self.line(key) if key is not None else 1
        self.errors.append(RuleFileError(reason, file=self.source, line=where, field_path=f"{self.rule_name}.{field or key}"))


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    for kind, word in (
        (bool, "true/false"),
        (int, "a number"),
        (float, "a number"),
        (str, "text"),
        (list, "a list"),
        (dict, "a mapping"),
    ):
        if isinstance(value, kind):
            return word
    return type(value).__name__
