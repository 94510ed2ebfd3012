"""One entry point from files to conversations: `load_specs(paths, seed=...) -> SpecSet`.

Files and folders are walked in sorted order (so a seed always gives the same specs) and each
file is read by what it is:
- `.yml`/`.yaml` with `test_name:`/`user:` (or the keys of Sensei's old flat layout): a Sensei
  profile, expanded into its conversations (parley.core.specs.expansion);
- `.yml`/`.yaml` with `steps:`: a playbook (parley.core.specs.playbook);
- `.json`: a scenario file (parley.core.specs.scenario_file), with the prompt templates of a
  `prompts/` folder in or beside its folder when there is one (a note says so).
Inside folders, `personalities/` files are checked as personality files (they make no
conversations); `templates/`, `prompts/`, `list_functions/`, `connectors/`, hidden and
dependency folders are left alone, and so is any YAML or JSON file that is clearly something
else (a Sensei rule file, a connector, a Docker Compose file, a run configuration, a chatbot's
own sources): each is listed in `skipped` with the reason. A path named explicitly must be one
of the kinds above, or a `.txt` prompt template (checked for its placeholders).

Every problem of every file is collected with its location; a file with errors contributes no
specs, the others still do. Errors of files found inside a folder do not stop a batch (they are
`left_out`); errors of files named explicitly, and of the options, do (`blocking`).
Two files with the same content are read once. Files that share a test name (one name per
chatbot is common in real suites) keep it as their name, and their spec ids become
`<name>/<path>#<index>`, with the shortest end of each file's path that tells them apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from parley.core.errors import ProfileError
from parley.core.records import ConversationSpec, LoadOptions, Profile, make_spec_id
from parley.core.specs.expansion import expand
from parley.core.specs.json_positions import load_positioned
from parley.core.specs.paths import ProfilePaths
from parley.core.specs.playbook import PLAYBOOK_KEYS, check_playbook_data, looks_like_playbook, playbook_spec
from parley.core.specs.profile_loader import check_profile_text, read_personality
from parley.core.specs.profile_validation import describe, did_you_mean
from parley.core.specs.scenario_file import (
    TEMPLATE_ROLES,
    PromptTemplates,
    TemplateRole,
    check_scenario_file,
    prompt_folder,
    prompt_folder_templates,
    read_template,
    read_templates,
)
from parley.core.specs.world_ids import world_id_errors
from parley.core.specs.yaml_reading import read_yaml

FileKind = Literal["profile", "playbook", "scenario", "personality", "template"]

YAML_SUFFIXES = (".yml", ".yaml")
JSON_SUFFIXES = (".json",)
TEMPLATE_SUFFIXES = (".txt",)
PERSONALITY_DIRS = frozenset({"personalities"})
# connectors/ holds bot connector files (`--bot http:FILE.yaml`), prompts/ a scenario folder's
# templates; the others are code and dependencies.
SKIPPED_DIRS = frozenset({"templates", "prompts", "list_functions", "connectors", "__pycache__", "node_modules", "venv", "site-packages"})
# Keys only a profile has (the last ones: Sensei's old flat layout, which gets its own hint).
PROFILE_MARKERS = frozenset({"test_name", "user", "chatbot", "conversation", "role", "ask_about", "goals", "fallback", "is_starter"})


@dataclass
class SpecFile:
    """One file that was read: what it is, how many conversations it made, its error count,
    and whether it was found inside a folder (rather than named)."""

    path: str
    kind: FileKind | None
    specs: int = 0
    errors: int = 0
    in_folder: bool = False


@dataclass
class SpecSet:
    """The conversations of some files, every error found, and what each file was."""

    specs: list[ConversationSpec] = field(default_factory=list)
    errors: list[ProfileError] = field(default_factory=list)
    files: list[SpecFile] = field(default_factory=list)
    blocking: list[ProfileError] = field(default_factory=list)
    """The errors that stop a batch: those of files named explicitly, and of the options."""
    warnings: list[str] = field(default_factory=list)
    """Located warnings (`file:line:col: field: reason`), each once."""
    notes: list[str] = field(default_factory=list)
    """What was read from where: personality and prompt files, shared test names, duplicates."""
    skipped: list[str] = field(default_factory=list)
    """`path: why`, for each file of a folder that is not a profile, playbook or scenario file."""

    @property
    def ok(self) -> bool:
        return not self.errors

    def count(self, kind: str) -> int:
        """How many files of `kind` (profile, playbook, scenario, personality) were read."""
        return sum(1 for f in self.files if f.kind == kind)

    @property
    def files_with_errors(self) -> list[SpecFile]:
        return [f for f in self.files if f.errors]

    @property
    def left_out(self) -> list[SpecFile]:
        """Files found inside a folder whose errors leave them out of a batch."""
        return [f for f in self.files if f.errors and f.in_folder]


@dataclass
class _Read:
    """A file read in the first pass: its specs (playbook, scenario) or its profile, to expand
    once the names of every file are known."""

    path: Path
    kind: FileKind
    in_folder: bool
    names: list[str]
    specs: list[ConversationSpec] = field(default_factory=list)
    profile: Profile | None = None
    errors: list[ProfileError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load_specs(
    paths: Sequence[str | Path],
    *,
    seed: int,
    agent_template: str | Path | None = None,
    client_template: str | Path | None = None,
    evaluator_template: str | Path | None = None,
    profile_hook: Callable[[Profile], Profile] | None = None,
    personality_dirs: Sequence[str | Path] = (),
    from_working_dir: bool = True,
) -> SpecSet:
    """Every conversation the files and folders in `paths` make for batch `seed`, and every
    problem found (see the module doc).

    Scenario files use the shipped prompt templates, or a `prompts/` folder's, unless a
    template is given. Files a profile names are searched as `parley.core.specs.paths` says:
    `personality_dirs` are the `--personalities` folders; `from_working_dir=False` (the batch
    service) searches neither the working directory nor a profile's parent folders.
    `profile_hook`, when given, gets each valid profile before it is expanded and returns the
    profile to expand (the batch runner swaps in profiles whose any() items an LLM filled)."""
    result = SpecSet()
    search = ProfilePaths(
        working_dir=Path.cwd() if from_working_dir else None,
        personality_dirs=tuple(Path(d) for d in personality_dirs),
    )
    chosen = {"agent": agent_template, "client": client_template, "evaluator": evaluator_template}
    templates = _Templates(chosen, result)
    seen: set[Path] = set()
    digests: dict[str, str] = {}
    read: list[_Read] = []

    for path, kind_hint, in_folder in _walk(paths, result):
        resolved = path.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        source = str(path)
        if kind_hint == "personality":
            _lines, errors = read_personality(path)
            _file_done(result, SpecFile(source, "personality", errors=len(errors), in_folder=in_folder), errors)
            continue
        if kind_hint == "template":
            role = path.stem if path.stem in TEMPLATE_ROLES else "agent"
            _template, errors = read_template(path, role)
            _file_done(result, SpecFile(source, "template", errors=len(errors), in_folder=in_folder), errors)
            continue
        try:
            raw = path.read_bytes()
        except OSError as exc:
            error = ProfileError(f"cannot read file: {exc.strerror or exc}", file=source)
            _file_done(result, SpecFile(source, None, errors=1, in_folder=in_folder), [error])
            continue
        digest = hashlib.sha256(raw).hexdigest()
        if digest in digests:
            result.notes.append(f"{source}: the same bytes as {digests[digest]}; read once")
            continue
        digests[digest] = source
        if path.suffix.lower() in JSON_SUFFIXES:
            item = _json_file(path, raw, seed, in_folder, templates, result)
        else:
            item = _yaml_file(path, raw, seed, in_folder, search, result)
        if item is not None:
            read.append(item)

    _expand_all(read, seed, profile_hook, result)
    return result


def load_specs_as(
    paths: Sequence[str | Path],
    options: LoadOptions,
    *,
    seed: int,
    profile_hook: Callable[[Profile], Profile] | None = None,
) -> SpecSet:
    """`load_specs` as a batch's stored LoadOptions say (templates, --personalities, ...)."""
    return load_specs(
        paths,
        seed=seed,
        agent_template=options.agent_template,
        client_template=options.client_template,
        evaluator_template=options.evaluator_template,
        personality_dirs=options.personality_dirs,
        from_working_dir=options.from_working_dir,
        profile_hook=profile_hook,
    )


def read_profile(path: Path, options: LoadOptions) -> tuple[Profile | None, list[ProfileError]]:
    """The profile at `path` read as `load_specs_as` reads it (not expanded)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [ProfileError(f"cannot read file: {exc}", file=str(path))]
    search = ProfilePaths(
        working_dir=Path.cwd() if options.from_working_dir else None,
        personality_dirs=tuple(Path(d) for d in options.personality_dirs),
    )
    return check_profile_text(text, source=str(path), paths=search.for_profile(path.resolve().parent))


def _file_done(result: SpecSet, file: SpecFile, errors: list[ProfileError]) -> None:
    result.files.append(file)
    result.errors += errors
    if not file.in_folder:
        result.blocking += errors


class _Templates:
    """The prompt templates of each scenario file: the options', else its prompts/ folder's,
    else the shipped ones; each set read once."""

    def __init__(self, chosen: dict[str, str | Path | None], result: SpecSet) -> None:
        self.chosen = chosen
        self.result = result
        self.cache: dict[tuple[str, ...], tuple[PromptTemplates | None, list[ProfileError]]] = {}
        self.option_errors: list[ProfileError] | None = None

    def for_file(self, path: Path) -> tuple[PromptTemplates | None, list[ProfileError], list[str]]:
        """(templates, errors of this file's own prompt folder, notes on where they came from)."""
        if self.option_errors is None:  # the options' own files: checked once, blocking
            given = {role: p for role, p in self.chosen.items() if p is not None}
            _t, self.option_errors = read_templates(**{r: given.get(r) for r in ("agent", "client", "evaluator")})
            self.result.errors += self.option_errors
            self.result.blocking += self.option_errors
        if self.option_errors:
            return None, [], []
        folder = prompt_folder(path)
        found: dict[TemplateRole, Path] = {}
        errors: list[ProfileError] = []
        if folder is not None:
            found, errors = prompt_folder_templates(folder)
        roles = {role: self.chosen[role] or found.get(role) for role in TEMPLATE_ROLES}
        key = tuple(str(roles[r] or "") for r in TEMPLATE_ROLES)
        if key not in self.cache:
            self.cache[key] = read_templates(roles["agent"], roles["client"], roles["evaluator"])
        templates, template_errors = self.cache[key]
        notes = []
        used = {role: found[role] for role in TEMPLATE_ROLES if role in found and self.chosen[role] is None}
        if folder is not None and used:
            listed = [f"{role}: {p.name}" for role, p in used.items()]
            listed += [f"{role}: {'given' if self.chosen[role] else 'shipped'}" for role in TEMPLATE_ROLES if role not in used]
            notes.append(f"{path}: prompt templates from {folder} ({', '.join(listed)})")
        if templates is not None and templates.evaluator.literal:
            notes.append(
                f"{path}: the evaluator template {templates.evaluator.path} uses none of the known placeholders: "
                "sent as written, as the service does"
            )
        return templates, errors + template_errors, notes


def _json_file(path: Path, raw: bytes, seed: int, in_folder: bool, templates: _Templates, result: SpecSet) -> _Read | None:
    source = str(path)
    if in_folder:
        reason = _not_scenarios(raw)
        if reason is not None:
            result.skipped.append(f"{source}: {reason}")
            return None
    chosen, errors, notes = templates.for_file(path)
    if chosen is None or errors:
        return _Read(path, "scenario", in_folder, [], errors=errors)
    result.notes += notes
    specs, errors = check_scenario_file(path, seed=seed, templates=chosen)
    if not errors:
        errors = world_id_errors(_positioned_json(raw), source, "scenario")
    warnings = [w for spec in specs for w in spec.warnings]
    return _Read(path, "scenario", in_folder, [s.name for s in specs], specs=specs, errors=errors, warnings=warnings)


def _positioned_json(raw: bytes) -> Any:
    """A valid scenario file's data with each value's position (the file's own check read it
    already: this reads it again, in milliseconds, only to locate its ids)."""
    text = raw.decode("utf-8")
    try:
        return load_positioned(text)
    except (ValueError, RecursionError):
        return json.loads(text)  # no positions: errors point at the file


def _not_scenarios(raw: bytes) -> str | None:
    """Why a JSON file found in a folder is clearly not a scenario file, or None."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None  # broken JSON: reported where it breaks
    if isinstance(data, dict) and "scenarios" not in data:
        keys = ", ".join(list(map(str, data))[:6]) or "none"
        return f"a JSON file that is not a scenario file (no scenarios; keys: {keys})"
    items = data.get("scenarios") if isinstance(data, dict) else data
    if not isinstance(items, list) or (items and not any(isinstance(i, dict) and ("name" in i or "variables" in i) for i in items)):
        return "a JSON file that is not a scenario file (no list of {name, variables})"
    return None


def _yaml_file(path: Path, raw: bytes, seed: int, in_folder: bool, search: ProfilePaths, result: SpecSet) -> _Read | None:
    source = str(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Read(path, "profile", in_folder, [], errors=[ProfileError(f"cannot read file: {exc}", file=source)])
    try:
        data: Any = read_yaml(text, source)
    except ProfileError as exc:
        return _Read(path, "profile", in_folder, [], errors=[exc])
    kind, reason = yaml_kind(path, data)
    if kind is None:
        if in_folder:
            result.skipped.append(f"{source}: {reason}")
            return None
        return _Read(path, "profile", in_folder, [], errors=[ProfileError(f"not a profile or playbook: {reason}", file=source)])
    if kind == "playbook":
        playbook, errors = check_playbook_data(data, source=source)
        errors = sorted([*errors, *world_id_errors(data, source, "playbook")], key=lambda e: (e.line or 0, e.column or 0))
        if playbook is None or errors:  # every mistake at once: the ids its steps name too
            return _Read(path, "playbook", in_folder, [], errors=errors)
        return _Read(path, "playbook", in_folder, [playbook.name], specs=[playbook_spec(playbook, seed)])
    profile, errors = check_profile_text(text, source=source, paths=search.for_profile(path.resolve().parent))
    if profile is None or (errors := world_id_errors(data, source, "profile")):
        return _Read(path, "profile", in_folder, [], errors=errors)
    return _Read(path, "profile", in_folder, [profile.test_name], profile=profile, notes=list(profile.notes))


def yaml_kind(path: Path, data: Any) -> tuple[FileKind | None, str]:
    """("profile" | "playbook", "") for YAML that is one, else (None, why it clearly is not)."""
    if data is None:
        return None, "an empty file"
    if not isinstance(data, dict):
        return None, f"holds {describe(data)}, not a mapping of sections"
    keys = {str(k) for k in data}
    if "oracle" in keys:
        return None, "a Sensei rule file (oracle:), checked on conversations by sensei-check, not run"
    if keys & PROFILE_MARKERS:
        return "profile", ""
    if "services" in keys or path.name.startswith(("docker-compose", "compose.")):
        return None, "a Docker Compose file"
    if keys & {"base_url", "send_message", "response_path"}:
        return None, "a chatbot connector file (give it to --bot http:FILE)"
    if "context" in keys and keys <= {"name", "context"}:
        return None, "a personality file (a profile names it with personality:)"
    if "steps" in keys or ("name" in keys and all(k in PLAYBOOK_KEYS or did_you_mean(k, PLAYBOOK_KEYS) for k in keys)):
        return "playbook", ""
    if looks_like_playbook(data) and not keys - set(PLAYBOOK_KEYS):
        return "playbook", ""
    shown = ", ".join(sorted(keys)[:6]) + (", ..." if len(keys) > 6 else "")
    return None, f"not a profile, playbook or scenario file (no test_name or user:; keys: {shown})"


def _expand_all(read: list[_Read], seed: int, profile_hook: Callable[[Profile], Profile] | None, result: SpecSet) -> None:
    """Expand the profiles and give every file's specs their ids, now that all names are known."""
    users: dict[str, list[_Read]] = {}
    for item in read:
        for name in dict.fromkeys(item.names):
            users.setdefault(name, []).append(item)
    labels: dict[tuple[str, int], str] = {}
    for name, items in users.items():
        if len(items) < 2:
            continue
        for item, label in zip(items, _distinct_labels([i.path for i in items]), strict=True):
            labels[(name, id(item))] = f"{name}/{label}"
        shown = ", ".join(f"{name}/{_distinct_labels([i.path for i in items])[k]}#N" for k, _ in enumerate(items[:3]))
        more = ", ..." if len(items) > 3 else ""
        result.notes.append(f"the test name '{name}' is used by {len(items)} files: their conversations are {shown}{more}")
    owners: dict[str, str] = {}
    for item in read:
        source = str(item.path)
        specs = item.specs
        errors = list(item.errors)
        if item.profile is not None and not errors:
            base = labels.get((item.profile.test_name, id(item)))
            try:
                profile = profile_hook(item.profile) if profile_hook is not None else item.profile
                specs = expand(profile, seed, id_base=base)
            except ProfileError as exc:  # e.g. any() items that need an LLM and nothing else
                errors.append(exc)
                specs = []
            item.warnings = list(specs[0].warnings) if specs else list(item.profile.warnings)
        elif not errors:
            specs = [_relabel(spec, labels.get((spec.name, id(item)))) for spec in item.specs]
        clashes = [s for s in specs if s.spec_id in owners]
        for spec in clashes[:1]:
            errors.append(ProfileError(f"the spec id '{spec.spec_id}' is already made by {owners[spec.spec_id]}", file=source))
        if errors:
            specs = []
        for spec in specs:
            owners[spec.spec_id] = source
        _file_done(result, SpecFile(source, item.kind, specs=len(specs), errors=len(errors), in_folder=item.in_folder), errors)
        if not errors:
            result.specs += specs
            result.warnings += [w for w in item.warnings if w not in result.warnings]
            result.notes += item.notes


def _relabel(spec: ConversationSpec, base: str | None) -> ConversationSpec:
    return spec if base is None else spec.model_copy(update={"spec_id": make_spec_id(base, spec.index)})


def _distinct_labels(paths: Sequence[Path]) -> list[str]:
    """For each path, the shortest end of it (without the suffix) that no other path ends with."""
    parts = [list(p.with_suffix("").parts) for p in paths]
    labels = []
    for index, own in enumerate(parts):
        others = [p for i, p in enumerate(parts) if i != index]
        for length in range(1, len(own) + 1):
            if all(other[-length:] != own[-length:] for other in others):
                labels.append("/".join(own[-length:]))
                break
        else:
            labels.append("/".join(own))
    return labels


def _walk(paths: Sequence[str | Path], result: SpecSet) -> Iterator[tuple[Path, str | None, bool]]:
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for entry, hint in _walk_dir(path, in_personalities=path.name in PERSONALITY_DIRS):
                yield entry, hint, True
        elif path.is_file():
            suffix = path.suffix.lower()
            if suffix in YAML_SUFFIXES:
                yield path, "personality" if path.parent.name in PERSONALITY_DIRS else None, False
            elif suffix in JSON_SUFFIXES:
                yield path, None, False
            elif suffix in TEMPLATE_SUFFIXES:
                yield path, "template", False
            else:
                error = ProfileError(
                    "not a profile, playbook, scenario file or prompt template: expected .yml, .yaml, .json or .txt",
                    file=str(path),
                )
                _file_done(result, SpecFile(str(path), None, errors=1), [error])
        else:
            _file_done(result, SpecFile(str(path), None, errors=1), [ProfileError("no such file or folder", file=str(path))])


def _walk_dir(folder: Path, *, in_personalities: bool) -> Iterator[tuple[Path, str | None]]:
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if entry.name in SKIPPED_DIRS:
                continue
            yield from _walk_dir(entry, in_personalities=in_personalities or entry.name in PERSONALITY_DIRS)
            continue
        suffix = entry.suffix.lower()
        if in_personalities:
            if suffix in YAML_SUFFIXES:
                yield entry, "personality"
        elif suffix in YAML_SUFFIXES or suffix in JSON_SUFFIXES:
            yield entry, None
