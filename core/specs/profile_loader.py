"""Load and validate user profiles in the Sensei YAML format (plus parley's `world:`/`expect:`).

Two entry points:
- `validate_profile(path) -> list[ProfileError]`: every problem of the file, in file order
  (empty when the profile is valid). This is what `parley profiles validate` prints.
- `load_profile(path) -> Profile`: the validated profile, or raises `InvalidProfile`, a
  ProfileError whose position is the first problem's and which carries all of them in
  `.errors` (its message lists each on its own line).

Everything that can be checked without running a conversation is checked here: YAML syntax,
unknown keys (with did-you-mean), types and ranges, personality files, list functions (they are
run once, here), `{{var}}` placeholders against variable definitions, forward() chains.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parley.core.errors import ProfileError
from parley.core.records import (
    VARIABLE_TYPES,
    ChatbotSection,
    ConversationSection,
    LlmSettings,
    Personality,
    Profile,
    UserSection,
    Variable,
    VariableFunction,
    WorldSpec,
    yaml_keys,
)
from parley.core.specs.paths import ProfilePaths, search_for
from parley.core.specs.profile_validation import Checker, Node, SectionParser, describe, did_you_mean
from parley.core.specs.variables import VARIABLE_NAME_RE, DataContext, parse_data, parse_function
from parley.core.specs.yaml_reading import read_yaml

TOP_LEVEL_KEYS = yaml_keys(Profile)
# `ask_about` is the name older Sensei versions gave to `goals`.
USER_KEYS = (*yaml_keys(UserSection), "ask_about")
VARIABLE_KEYS = yaml_keys(Variable)
PERSONALITY_KEYS = yaml_keys(Personality)
# Sensei's layout before 2024: these keys stood at the top level, with no user:/chatbot: sections.
FLAT_LAYOUT_KEYS = ("role", "context", "ask_about", "goals", "language", "fallback", "is_starter", "output", "conversations")
FLAT_LAYOUT_HINT = (
    "this is Sensei's old flat layout (before 2024): role, context, language and ask_about (now goals) "
    "go under user:; fallback, is_starter and output under chatbot:; conversations becomes conversation: "
    "(one mapping of number, goal_style and interaction_style)"
)

PLACEHOLDER_RE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


class InvalidProfile(ProfileError):
    """A profile with one or more problems. Positioned at the first; `errors` holds them all."""

    def __init__(self, errors: Sequence[ProfileError]) -> None:
        if not errors:
            raise ValueError("InvalidProfile needs at least one error")
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.reason, file=first.file, line=first.line, column=first.column, field_path=first.field_path)

    def render(self) -> str:
        return "\n".join(error.render() for error in self.errors)


# -- public API ---------------------------------------------------------------------------------


def validate_profile(
    path: str | Path, *, personality_dirs: Sequence[Path] | None = None, paths: ProfilePaths | None = None
) -> list[ProfileError]:
    """Every problem of the profile at `path`, in file order; empty if it is valid."""
    _profile, errors = _check_file(path, _paths_for(path, personality_dirs, paths))
    return errors


def load_profile(path: str | Path, *, personality_dirs: Sequence[Path] | None = None, paths: ProfilePaths | None = None) -> Profile:
    """The validated profile at `path`; raises InvalidProfile (a ProfileError) listing every problem.

    Files the profile names are looked for as `parley.core.specs.paths` says: from the working
    directory, beside the profile and its parents, in `personality_dirs` (`--personalities`),
    then among the shipped personalities. `paths` replaces that search altogether.
    """
    profile, errors = _check_file(path, _paths_for(path, personality_dirs, paths))
    if errors or profile is None:
        raise InvalidProfile(errors)
    return profile


def parse_profile(
    text: str,
    *,
    source: str = "<profile>",
    base_dir: Path | None = None,
    personality_dirs: Sequence[Path] | None = None,
) -> Profile:
    """Like load_profile, from YAML text; relative files resolve against `base_dir`."""
    profile, errors = check_profile_text(text, source=source, base_dir=base_dir, personality_dirs=personality_dirs)
    if errors or profile is None:
        raise InvalidProfile(errors)
    return profile


def check_profile_text(
    text: str,
    *,
    source: str = "<profile>",
    base_dir: Path | None = None,
    personality_dirs: Sequence[Path] | None = None,
    paths: ProfilePaths | None = None,
) -> tuple[Profile | None, list[ProfileError]]:
    """(profile or None, every error) for YAML text. Files it names are searched from the
    working directory, then `base_dir` and its parents, then `personality_dirs` (unless `paths`
    says otherwise)."""
    try:
        data = read_yaml(text, source)
    except ProfileError as exc:
        return None, [exc]
    if paths is None:
        paths = ProfilePaths(base_dir, Path.cwd(), tuple(personality_dirs or ()))
    builder = _ProfileBuilder(source, paths)
    profile = builder.build(data)
    errors = sorted(builder.checker.errors, key=lambda e: _error_order(e, source))
    return (None if errors else profile), errors


# -- internals -----------------------------------------------------------------------------------


def _paths_for(path: str | Path, personality_dirs: Sequence[Path] | None, paths: ProfilePaths | None) -> ProfilePaths:
    if paths is not None:
        return paths.for_profile(Path(path).resolve().parent)
    return search_for(path, working_dir=Path.cwd(), personality_dirs=personality_dirs or ())


def _check_file(path: str | Path, paths: ProfilePaths) -> tuple[Profile | None, list[ProfileError]]:
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, [ProfileError(f"cannot read profile: {reason}", file=source)]
    return check_profile_text(text, source=source, paths=paths)


def _error_order(error: ProfileError, source: str) -> tuple[int, str, int, int]:
    # The profile's own errors first, in file order (a hint with no line before them); then
    # those inside personality files.
    return (0 if error.file == source else 1, error.file or "", error.line or 0, error.column or 0)


class _ProfileBuilder(SectionParser):
    """Walks the YAML once, checking each section and building the models when all is well."""

    def __init__(self, source: str, paths: ProfilePaths) -> None:
        self.source = source
        self.paths = paths
        self.checker = Checker(source)
        self.personalities: list[str] = []
        self.functions: dict[str, tuple[VariableFunction, Node]] = {}
        self.today = datetime.date.today()

    def build(self, data: Any) -> Profile | None:
        c = self.checker
        root = Node.root(data)
        if data is None:
            c.error(root, "the profile is empty; expected a mapping with test_name, user, ...")
            return None
        if root.is_map and not root.has("user") and any(root.has(key) for key in FLAT_LAYOUT_KEYS):
            c.errors.append(ProfileError(FLAT_LAYOUT_HINT, file=self.source))
        if not c.mapping(root, TOP_LEVEL_KEYS, required=("test_name", "user"), what="a mapping of sections", sensei=True):
            return None

        test_name = c.string(root.child("test_name")) if root.has("test_name") else None
        llm = self._llm(root.child("llm")) if _given(root, "llm") else LlmSettings()
        # world first: its `today` is the today of the date generator's >today / <today.
        world = self._world(root.child("world")) if _given(root, "world") else WorldSpec()
        if world is not None and world.today is not None:
            self.today = world.today
        user = self._user(root.child("user")) if root.has("user") else None
        chatbot = self._chatbot(root.child("chatbot")) if _given(root, "chatbot") else ChatbotSection()
        variables = user["variables"] if user else None
        conversation = self._conversation(root.child("conversation"), variables) if _given(root, "conversation") else ConversationSection()
        expect = self._expect(root.child("expect")) if root.has("expect") else None

        if c.errors or test_name is None or llm is None or user is None or chatbot is None or conversation is None or world is None:
            return None
        if root.has("expect") and expect is None:
            return None
        return Profile(
            source=self.source,
            test_name=test_name,
            llm=llm,
            user=UserSection(personalities=self.personalities, **user),
            chatbot=chatbot,
            conversation=conversation,
            world=world,
            expect=expect,
            warnings=list(c.warnings),
            notes=list(c.notes),
        )

    # -- user ---------------------------------------------------------------------------------------

    def _user(self, node: Node) -> dict[str, Any] | None:
        c = self.checker
        if not c.mapping(node, USER_KEYS, required=("role",), sensei=True):
            return None
        goals_key = "goals"
        if node.has("ask_about"):
            if node.has("goals"):
                c.error(node.child("ask_about"), "give either goals or ask_about (its old name), not both", at_key=True)
                return None
            goals_key = "ask_about"
        elif not node.has("goals"):
            c.error(node, "missing required key 'goals'", at_key=True)

        language: str | None = "English"
        if node.has("language") and node.value["language"] is not None:
            language = c.string(node.child("language"), what="a language such as English")
        role = c.string(node.child("role"), what="a role prompt") if node.has("role") else None
        context = self._context(node.child("context")) if _given(node, "context") else []
        goals = self._goals(node.child(goals_key)) if node.has(goals_key) else None
        if language is None or role is None or context is None or goals is None:
            return None
        texts, variables = goals
        return {"language": language, "role": role, "context": context, "goals": texts, "variables": variables}

    def _context(self, node: Node) -> list[str] | None:
        """Context lines; a `personality:` entry adds its file's lines where it stands. Sensei also
        takes the context written as one mapping, `context: {personality: FILE}`."""
        c = self.checker
        if node.is_map:
            if not c.mapping(node, ("personality",), required=("personality",), what="a personality: entry") or not node.has("personality"):
                return None
            # Sensei ignores a personality it cannot find when the context is a mapping.
            return self._personality(node.child("personality"), missing_ok=True)
        if not c.sequence(node, what="a list of context lines and personality: entries", non_empty=False):
            return None
        lines: list[str] = []
        ok = True
        personalities = 0
        for item in node.items():
            if isinstance(item.value, str):
                text = c.string(item, what="a context line")
                if text is None:
                    ok = False
                else:
                    lines.append(text)
            elif item.is_map:
                if not c.mapping(item, ("personality",), required=("personality",)) or "personality" not in item.value:
                    ok = False
                    continue
                personalities += 1
                if personalities > 1:
                    c.error(item, "Sensei takes one personality: entry per context; merge the files or keep one", at_key=True)
                    ok = False
                    continue
                personality = self._personality(item.child("personality"))
                if personality is None:
                    ok = False
                else:
                    lines.extend(personality)
            else:
                c.error(item, f"expected a context line or 'personality: <file>', got {describe(item.value)}")
                ok = False
        return lines if ok else None

    def _personality(self, node: Node, *, missing_ok: bool = False) -> list[str] | None:
        c = self.checker
        text = c.string(node, what="the path of a personality file")
        if text is None:
            return None
        found = self.paths.find(text, personality=True)
        if found is None:
            places = ", ".join(self.paths.places(personality=True)) or "nowhere"
            if missing_ok:
                c.warn(node, f"personality file '{text}' not found (looked in {places}); ignored, as Sensei ignores it here")
                return []
            c.error(node, f"personality file '{text}' not found (looked in {places})")
            return None
        lines, errors = read_personality(found.path)
        if errors:
            c.extend(errors)
            c.error(node, f"personality file '{text}' is invalid (see {found.path})")
            return None
        if found.where == "shipped":
            c.warn(
                node,
                f"personality file '{text}' is not in the working directory, beside the profile or in a "
                f"--personalities folder: using parley's shipped {found.path}",
            )
        else:
            c.note(node, f"personality '{text}' read from {found.path} ({found.where})")
        self.personalities.append(str(found.path))
        return lines

    def _goals(self, node: Node) -> tuple[list[str], list[Variable]] | None:
        c = self.checker
        if not c.sequence(node, what="a list of goals and variable definitions"):
            return None
        texts: list[tuple[str, Node]] = []
        variables: list[Variable] = []
        declared: dict[str, Node] = {}
        ok = True
        for item in node.items():
            if isinstance(item.value, str):
                text = c.string(item, what="a goal")
                if text is None:
                    ok = False
                else:
                    texts.append((text, item))
            elif item.is_map and item.value:
                for name, var_node in item.entries():
                    if not isinstance(name, str) or not VARIABLE_NAME_RE.match(name):
                        c.error(
                            var_node,
                            f"variable name {describe(name)} must start with a letter and hold only letters, digits, _ and -",
                            at_key=True,
                        )
                        ok = False
                        continue
                    if name in declared:
                        first = declared[name]
                        reason = f"variable '{name}' is defined twice (first at line {first.key_line})"
                        c.error(var_node, reason, at_key=True)
                        ok = False
                        continue
                    declared[name] = var_node
                    variable = self._variable(name, var_node)
                    if variable is None:
                        ok = False
                    else:
                        variables.append(variable)
            else:
                c.error(
                    item,
                    f"a goal must be text or a variable definition (name: function/type/data), got {describe(item.value)}",
                )
                ok = False
        if not texts and ok:
            c.error(node, "needs at least one goal text besides variable definitions", at_key=True)
            ok = False

        self._check_placeholders(texts, declared)
        ok &= self._check_forward(self.functions, declared)
        return ([t for t, _ in texts], variables) if ok else None

    def _variable(self, name: str, node: Node) -> Variable | None:
        c = self.checker
        what = "a variable definition with function, type and data"
        if not c.mapping(node, VARIABLE_KEYS, required=VARIABLE_KEYS, what=what, sensei=True):
            return None
        if any(key not in node.value for key in VARIABLE_KEYS):
            return None
        type_node, function_node, data_node = node.child("type"), node.child("function"), node.child("data")
        var_type = self._variable_type(type_node)
        if function_node.value is None or (isinstance(function_node.value, str) and not function_node.value.strip()):
            function: VariableFunction | None = VariableFunction(kind="default", text="default()")  # as Sensei
        else:
            function = parse_function(c, function_node)
        if function is not None:
            self.functions[name] = (function, function_node)
        context = DataContext(paths=self.paths, today=self.today, name=name)
        parsed = parse_data(c, data_node, var_type, context) if var_type else None
        if var_type is None or function is None or parsed is None:
            return None
        values, prompts, form = parsed
        if function.kind == "random" and function.count and not prompts and function.count > len(values):
            c.warn(
                function_node,
                f"{function.text} picks {function.count} items but '{name}' has only {len(values)}: "
                f"every conversation gets all {len(values)}, in a random order, as in Sensei",
            )
        return Variable(
            name=name,
            type=var_type,
            function=function,
            values=values,
            any_prompts=prompts,
            data_form=form,
            location=node.location(self.source, at_key=True),
            function_location=function_node.location(self.source),
            data_location=data_node.location(self.source, at_key=True),
        )

    def _variable_type(self, node: Node) -> str | None:
        c = self.checker
        text = c.string(node, what="a type (int, float or string)")
        if text is None:
            return None
        word = text.strip().lower()
        if word == "str":
            c.error(node, "unknown type 'str'; write string (Sensei's code takes int, float and string only)")
            return None
        if word in VARIABLE_TYPES:
            return word
        c.error(node, f"unknown type '{text}'{did_you_mean(word, VARIABLE_TYPES) or '; use int, float or string'}")
        return None

    def _check_placeholders(self, texts: list[tuple[str, Node]], declared: dict[str, Node]) -> None:
        """Warnings: Sensei leaves a {{name}} with no variable as it is written, and a variable no
        goal uses still takes part in the forward() combinations."""
        c = self.checker
        used: set[str] = set()
        for text, item in texts:
            for match in PLACEHOLDER_RE.finditer(text):
                name = match.group(1)
                used.add(name)
                if name not in declared:
                    hint = did_you_mean(name, declared) or (
                        f"; defined: {', '.join(declared)}" if declared else "; define it in the goals list"
                    )
                    c.warn(
                        item,
                        f"goal uses {{{{{name}}}}} but no variable '{name}' is defined{hint}; it stays as written, as in Sensei",
                    )
        for name, node in declared.items():
            if name not in used:
                c.warn(node, f"variable '{name}' is defined but no goal uses {{{{{name}}}}}", at_key=True)

    def _check_forward(self, functions: dict[str, tuple[VariableFunction, Node]], declared: dict[str, Node]) -> bool:
        """forward(x) must name a defined forward() variable, and nesting must not loop.
        Works from the parsed functions alone, so a variable with bad data is still checked."""
        c = self.checker
        ok = True
        for function, node in functions.values():
            target = function.nests
            if target is None:
                continue
            if target not in declared:
                hint = did_you_mean(target, declared) or ""
                c.error(node, f"{function.text} names unknown variable '{target}'{hint}")
                ok = False
            elif target in functions and functions[target][0].kind != "forward":
                c.error(
                    node,
                    f"{function.text} nests '{target}', whose function is {functions[target][0].text}; "
                    "only forward() variables can be nested",
                )
                ok = False
        reported: set[frozenset[str]] = set()
        for name in functions:
            chain = [name]
            current = functions[name][0].nests
            while current is not None and current in functions and current not in chain:
                chain.append(current)
                current = functions[current][0].nests
            if current is None or current not in chain:
                continue
            cycle = chain[chain.index(current) :]
            if frozenset(cycle) in reported:
                continue
            reported.add(frozenset(cycle))
            first = next(n for n in functions if n in cycle)  # report at the first one defined
            start = cycle.index(first)
            ordered = cycle[start:] + cycle[:start] + [first]
            c.error(
                functions[first][1],
                f"forward() cycle: {' -> '.join(ordered)}; a nesting chain must end in a plain forward()",
            )
            ok = False
        return ok


def _given(node: Node, key: str) -> bool:
    """The key is there with a value: an empty `llm:` means "the defaults", as in Sensei."""
    return node.has(key) and node.value[key] is not None


# -- personality files ----------------------------------------------------------------------------


def read_personality(path: Path) -> tuple[list[str], list[ProfileError]]:
    """The context lines of a personality file (`name:` optional, `context:` a list of text)."""
    source = str(path)
    try:
        data = read_yaml(path.read_text(encoding="utf-8"), source)
    except ProfileError as exc:
        return [], [exc]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [ProfileError(f"cannot read personality file: {exc}", file=source)]
    checker = Checker(source)
    root = Node.root(data)
    if not checker.mapping(root, PERSONALITY_KEYS, required=("context",), what="a personality (name and context)", sensei=True):
        return [], checker.errors
    if root.has("name") and root.value["name"] is not None:
        checker.string(root.child("name"), what="a name")
    lines: list[str] = []
    if root.has("context"):
        lines = [text for text, _ in checker.string_list(root.child("context"), what="context lines")]
    return lines, checker.errors
