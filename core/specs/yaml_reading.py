"""Reading YAML safely: every profile, playbook, scenario file, personality and connector file
parley reads goes through `read_yaml`.

Round-trip ruamel.yaml (mappings and lists keep each value's line and column), with limits that
a hostile or broken file cannot get past, each reported where it is (file:line:col):
- nesting: at most MAX_DEPTH levels. Flow collections (`[[[[...`) are refused by the scanner as
  they open, before ruamel's simple-key bookkeeping turns quadratic (seconds of CPU for one line
  of brackets); block nesting by the composer. No RecursionError however deep the file goes.
- aliases: with every alias expanded, a document may hold at most MAX_EXPANDED_NODES values. A
  few hundred bytes of nested aliases (a "billion laughs") expand to 10^8 values and more, and
  whatever walks the data pays for each; the expanded size is counted on the composed node
  graph, in time linear in the file, before anything walks it.
- a plain value that looks like a date but is not one (`today: 2026-13-40`) is an error at that
  value, not a ValueError from inside the constructor.
- a surrogate escape in a double-quoted string: a pair (`"\\ud83d\\ude00"`, how JSON and
  `json.dumps` write an emoji) is the one character it stands for; a lone one is an error at
  that value (no text holding it can be written, stored or sent).

`read_yaml_documents` reads a stream of several documents (Sensei's conversation files hold
three) and can read them as YAML 1.1, the way PyYAML (and so Sensei) types plain values:
`yes`/`no`/`on`/`off` are booleans, `010` is octal, `1:30` is 90, and a float needs a dot in its
mantissa (`1e3` stays text).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer, ComposerError, MaxDepthExceededError
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, SequenceNode
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scanner import RoundTripScanner, ScannerError

from parley.core.errors import ProfileError

MAX_DEPTH = 64
"""Nesting levels of mappings and lists; parley's own formats need fewer than ten."""
MAX_EXPANDED_NODES = 100_000
"""Values in one document with its aliases expanded; a shipped profile holds a few hundred."""

_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"


class YamlLimitError(ProfileError):
    """A document past one of the limits above (too deep, aliases expanding too far)."""


class _Scanner(RoundTripScanner):
    def fetch_flow_collection_start(self, TokenClass: Any, to_push: Any) -> None:  # noqa: N803 - ruamel's signature
        if self.flow_level >= MAX_DEPTH:
            raise ScannerError(None, None, _TOO_DEEP, self.reader.get_mark())
        super().fetch_flow_collection_start(TokenClass, to_push)


class _Composer(Composer):
    def compose_document(self) -> Any:
        node = super().compose_document()
        _check_expansion(node)
        return node


_SURROGATE = re.compile("[\ud800-\udfff]")


class _Constructor(RoundTripConstructor):
    def construct_scalar(self, node: Any) -> Any:
        value = super().construct_scalar(node)
        if isinstance(value, str) and _SURROGATE.search(value):
            return _surrogates_joined(value, node)
        return value

    def construct_checked_timestamp(self, node: Any, values: Any = None) -> Any:
        try:
            return self.construct_yaml_timestamp(node, values)
        except (ValueError, OverflowError) as exc:
            raise ConstructorError(
                None, None, f"'{node.value}' is not a date ({exc}); quote it to keep it as text", node.start_mark
            ) from None


_Constructor.add_constructor("tag:yaml.org,2002:timestamp", _Constructor.construct_checked_timestamp)


def _surrogates_joined(value: str, node: Any) -> str:
    """`value` with each pair of surrogate escapes made the character it stands for; a
    ConstructorError at the value for one left alone."""
    joined = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    lone = _SURROGATE.search(joined)
    if lone is not None:
        raise ConstructorError(
            None,
            None,
            f"the text holds a lone surrogate escape (\\u{ord(lone.group()):04x}): half of a character "
            "(an emoji is written as two escapes, \\ud83d\\ude00, or as itself)",
            node.start_mark,
        )
    return type(value)(joined) if type(value) is not str else joined


# PyYAML's YAML 1.1 float: a dot in the mantissa, a signed exponent. ruamel's 1.1 resolver also
# takes `1e3` and `1.5e3` as floats; PyYAML keeps them as text, and so must a reader of its files.
_YAML_1_1_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class _Constructor11(_Constructor):
    def construct_yaml_float(self, node: Any) -> Any:
        if isinstance(node.value, str) and not _YAML_1_1_FLOAT.match(node.value):
            return self.construct_scalar(node)
        return super().construct_yaml_float(node)


_Constructor11.add_constructor("tag:yaml.org,2002:float", _Constructor11.construct_yaml_float)


def _check_expansion(root: Node | None) -> None:
    """ComposerError at the first node whose size, aliases expanded, passes the budget."""
    if root is None:
        return
    sizes: dict[int, int] = {}
    # Post-order over the node graph without recursion. A node reached again through an alias
    # is counted again (that is what expanding the alias costs) but computed once.
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if not children_done:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        total = 1 + sum(sizes[id(child)] for child in children)
        if total > MAX_EXPANDED_NODES:
            raise ComposerError(
                None,
                None,
                f"its aliases expand to more than {MAX_EXPANDED_NODES} values (aliases nested in aliases)",
                node.start_mark,
            )
        sizes[id(node)] = total


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _yaml(*, yaml_1_1: bool = False) -> YAML:
    yaml = YAML(typ="rt")
    yaml.Scanner = _Scanner
    yaml.Composer = _Composer
    yaml.Constructor = _Constructor11 if yaml_1_1 else _Constructor
    yaml.max_depth = MAX_DEPTH
    if yaml_1_1:
        yaml.version = (1, 1)
    return yaml


def read_yaml(text: str, source: str) -> Any:
    """The YAML document in `text` (round-trip: mappings and lists keep their positions).

    Invalid YAML raises ProfileError at the parser's mark; a document past the limits of this
    module raises YamlLimitError (a ProfileError) where it passes them."""
    with _errors_located(text, source):
        return _yaml().load(text)


def read_yaml_documents(text: str, source: str, *, count: int | None = None, yaml_1_1: bool = False) -> list[Any]:
    """The documents of the YAML stream in `text`, at most `count` of them (the rest is not
    read, as a reader that stops there would not see it), with the errors and limits of
    `read_yaml`. `yaml_1_1` types plain values as PyYAML does (see the module's docstring)."""
    documents: list[Any] = []
    with _errors_located(text, source):
        for document in _yaml(yaml_1_1=yaml_1_1).load_all(text):
            documents.append(document)
            if count is not None and len(documents) >= count:
                break
    return documents


@contextmanager
def _errors_located(text: str, source: str) -> Iterator[None]:
    """ruamel's errors as ProfileErrors at their place in `source`."""
    try:
        yield
    except (ScannerError, MaxDepthExceededError, ComposerError) as exc:
        if exc.problem == _TOO_DEEP or isinstance(exc, MaxDepthExceededError):
            raise _located(YamlLimitError, _TOO_DEEP, exc.problem_mark, source) from None
        if exc.problem and exc.problem.startswith("its aliases expand"):
            raise _located(YamlLimitError, exc.problem, exc.problem_mark, source) from None
        raise _marked(exc, source) from None
    except MarkedYAMLError as exc:
        raise _marked(exc, source) from None
    except ReaderError as exc:  # a character YAML does not allow (NUL, other control characters)
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        reason = f"invalid YAML: the character U+{code:04X} is not allowed in YAML"
        raise ProfileError(reason, file=source, line=line, column=column) from None
    except YAMLError as exc:
        raise ProfileError(f"invalid YAML: {exc}", file=source) from None
    except RecursionError:  # the limits above stop far earlier; kept as a last guard
        raise YamlLimitError(f"invalid YAML: {_TOO_DEEP}", file=source) from None


def check_depth(data: Any, source: str) -> None:
    """YamlLimitError when plain data (JSON parsed without this reader) nests deeper than
    MAX_DEPTH, as read_yaml would have refused it."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                raise YamlLimitError(f"invalid JSON: {_TOO_DEEP}", file=source)
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)


def _marked(exc: MarkedYAMLError, source: str) -> ProfileError:
    mark = exc.problem_mark or exc.context_mark
    reason = exc.problem or exc.context or "invalid YAML"
    if exc.problem and exc.context and exc.context_mark is not None and exc.context_mark is not mark:
        where = f"line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
        reason += f" ({exc.context} at {where})"
    return _located(ProfileError, reason, mark, source)


def _located(kind: type[ProfileError], reason: str, mark: Any, source: str) -> ProfileError:
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
    return kind(f"invalid YAML: {reason}", file=source, line=line, column=column)
