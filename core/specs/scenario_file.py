"""Scenario files (the batch service's format) and their three prompt templates.

A scenario file is JSON: a list of scenarios, or `{"scenarios": [...]}` (the batch API's body;
both are accepted everywhere, so the old README's curl example with a bare list works too):

    [{"name": "calm_track", "variables": {"PERSONALITY": "calm", "PATIENCE": 2, ...},
      "criteria": ["The agent gives the tracking number"]}]

`criteria` (optional) are checks in words for the judge, as a profile's `expect.criteria`, and
`expect` (optional) is a profile's whole `expect:` block (`{"orders": {"ORD-1003": "shipped"},
"tools_called": ["track_order"]}`): checks the offline roles decide too.

Each scenario fills three templates with Python `str.format` semantics: the agent's (the bot's
system prompt), the client's (the simulated customer's instructions) and the evaluator's (the
judge's instructions). Literal braces are written `{{` and `}}`. Besides the scenario's own
variables a template may use `{session_id}` (the spec id unless the scenario sets one). A
placeholder a scenario does not define is a ProfileError naming the scenario and the variable,
raised before anything runs, so no model ever sees a raw `{...}`.

Templates default to the shipped `profiles/scenarios/templates/{agent,client,evaluator}.txt`;
any of them can be replaced per run (`agent_template=` etc.), and a scenario file whose folder
holds a `prompts/` folder, or stands beside one (the service's own layout: `prompts/` next to
`scenarios/`), uses the templates found there (`prompt_folder_templates`): a file whose name
holds `agent`, `client` or `evaluator`.

The service sends its evaluator prompt as it is written, without formatting, so real evaluator
prompts hold literal JSON (`{ "score": 1 }`). An evaluator template that uses none of the
placeholders parley knows (`KNOWN_PLACEHOLDERS`) and is not a plain format string (single
braces, or other names) is therefore taken literally; one that uses them is a format template
like the others, checked as strictly.

Variables with a meaning to parley: SEED (an integer: the conversation's seed instead of one
derived from the batch seed), PATIENCE and AMB_LEVEL (0-3), ORDER_GOAL (the customer's goal),
CURRENT_DATE (when it starts with an ISO date, the World's today), CUSTOMER_ID (the signed-in
customer, default C-100).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict, Field

from parley.core.errors import ProfileError
from parley.core.records import (
    ConversationSpec,
    Expectations,
    ExpectBlock,
    Problems,
    Reading,
    SourceLocation,
    WorldSpec,
    YamlRecord,
    as_text,
    check_keys,
    checked,
    derive_seed,
    derived,
    describe,
    did_you_mean,
    fail,
    is_int,
    make_spec_id,
    plain_value,
    read_criteria,
    read_mapping,
    yaml_only,
)
from parley.core.specs.file_world import FileWorld
from parley.core.specs.input_files import read_input
from parley.core.specs.json_positions import load_positioned
from parley.core.specs.profile_loader import InvalidProfile
from parley.core.specs.shipped import SHIPPED_TEMPLATES_DIR
from parley.core.specs.yaml_reading import MAX_DEPTH, YamlLimitError, check_depth
from parley.core.specs.yaml_validation import YamlReading

TemplateRole = Literal["agent", "client", "evaluator"]
TEMPLATE_ROLES: tuple[TemplateRole, ...] = ("agent", "client", "evaluator")

FILE_KEYS = ("scenarios",)
BUILTIN_FIELDS = ("session_id",)
LEVEL_VARIABLES = {"PATIENCE": "0 very impatient ... 3 very patient", "AMB_LEVEL": "0 clear ... 3 contradicts itself"}
MAX_SEED = 2**63 - 1
"""Scenario files up to this many characters are also read as YAML, for each value's line and
column; ruamel reads JSON at tens of KB per second, so larger ones (generated, or sent to the
service) are located by field path alone."""

_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LEADING_DATE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})\b")
_FIELD_HEAD = re.compile(r"^[^.\[!:]*")
# The placeholders of the service's own templates (and parley's CUSTOMER_ID).
KNOWN_PLACEHOLDERS = (
    "session_id",
    "CURRENT_DATE",
    "LOCATIONS",
    "DELIVERY_DAYS",
    "PERSONALITY",
    "ORDER_GOAL",
    "PATIENCE",
    "AMB_LEVEL",
    "PURCHASE_HISTORY",
    "CUSTOMER_ID",
)
_PLACEHOLDER = re.compile(r"(?<!\{)\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:[!:][^{}]*)?\}(?!\})")
PROMPTS_DIR = "prompts"
TEMPLATE_SUFFIXES = (".txt", ".md")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TemplateField(_Model):
    """A `{name}` placeholder of a template and where it is."""

    name: str
    line: int
    column: int


class PromptTemplate(_Model):
    """One prompt template, read and checked. A `literal` one is used as written."""

    role: TemplateRole
    path: str
    text: str
    fields: list[TemplateField] = Field(default_factory=list)
    literal: bool = False

    @property
    def field_names(self) -> list[str]:
        """Each placeholder name once, in order of first use."""
        return list(dict.fromkeys(f.name for f in self.fields))

    def fill(self, values: Mapping[str, Any]) -> str:
        """The template with `values` filled in (str.format semantics), or as written if literal."""
        return self.text if self.literal else self.text.format_map(dict(values))


class PromptTemplates(_Model):
    agent: PromptTemplate
    client: PromptTemplate
    evaluator: PromptTemplate

    def all(self) -> list[PromptTemplate]:
        return [self.agent, self.client, self.evaluator]


def _read_variables(value: Any, reading: Reading) -> dict[str, Any]:
    """A scenario's variables: plain JSON values, those with a meaning to parley checked."""
    if not isinstance(value, dict):
        fail(f'expected a mapping of variables such as {{"PATIENCE": 2}}, got {describe(value)}', at_key=value is None)
    problems = Problems()
    variables: dict[str, Any] = {}
    for key, written in value.items():
        if not isinstance(key, str) or not _VARIABLE_NAME.match(key):
            problems.add(f"variable name {describe(key)} must be letters, digits and _ (a Python identifier)", at=(key,), at_key=True)
            continue
        variable = plain_value(written)
        if variable is None:
            problems.add(f"variable '{key}' has no value", at=(key,), at_key=True)
        elif key == "SEED" and not (is_int(variable) and 0 <= variable <= MAX_SEED):
            problems.add(f"SEED must be a whole number from 0 to {MAX_SEED}, got {describe(variable)}", at=(key,))
        elif key in LEVEL_VARIABLES and not (is_int(variable) and 0 <= variable <= 3):
            problems.add(f"{key} must be a whole number from 0 to 3 ({LEVEL_VARIABLES[key]}), got {describe(variable)}", at=(key,))
        elif key == "CURRENT_DATE" and isinstance(variable, str) and (problem := _current_date_problem(variable, reading)):
            problems.add(problem, at=(key,))
        elif key == "CUSTOMER_ID" and not (isinstance(variable, str) and variable.strip()):
            problems.add(f"CUSTOMER_ID must be a customer id (text), got {describe(variable)}", at=(key,))
        else:
            variables[key] = variable
    problems.raise_if_any()
    return variables


class Scenario(YamlRecord):
    """One scenario as written: its name, position and variables (plain JSON values)."""

    yaml_what = 'a scenario ({"name": ..., "variables": {...}})'
    yaml_entry = True

    name: Annotated[str, as_text("the scenario's name", strip=True)]
    index: int = derived(0)
    variables: Annotated[dict[str, Any], yaml_only(_read_variables)]
    criteria: Annotated[list[str], checked(read_criteria)] = Field(default_factory=list)
    """Checks in words for the judge (as a profile's `expect.criteria`)."""
    world: WorldSpec = WorldSpec()
    """The world it runs on, as a profile's `world:` (default: the order world); the CUSTOMER_ID
    variable, when given, is its customer."""
    expect: ExpectBlock = None
    """What must hold, as a profile's `expect:` block (records, tools, regexes...): checks the
    offline judge can decide, so a scenario is not unverified offline for want of them."""
    location: SourceLocation = derived()
    """The scenario's `variables` (or the scenario itself when it has none)."""

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        """Keys a scenario does not have are reported by the file (see parse_scenarios): the
        scenario still counts for the checks that follow."""
        where = reading.location(data, ("variables",), at_key=True)
        known = {key: value for key, value in data.items() if key in cls.yaml_keys()} if isinstance(data, dict) else data
        if isinstance(data, dict) and "world" not in data:
            reading.read_world({})  # the default world: the scenario's expect is checked against it
        return read_mapping(cls, known, handler, reading, extra={"location": where})

    @property
    def seed(self) -> int | None:
        value = self.variables.get("SEED")
        return value if is_int(value) else None

    def label(self) -> str:
        return f"scenario {self.index} '{self.name}'"


SCENARIO_KEYS = Scenario.yaml_keys()


# -- templates -----------------------------------------------------------------------------------


def default_template_path(role: TemplateRole) -> Path:
    return SHIPPED_TEMPLATES_DIR / f"{role}.txt"


def uses_known_placeholders(text: str) -> bool:
    """Whether `text` holds a `{NAME}` of `KNOWN_PLACEHOLDERS` (single braces)."""
    return any(match.group(1) in KNOWN_PLACEHOLDERS for match in _PLACEHOLDER.finditer(text))


def check_template_text(text: str, *, role: TemplateRole, source: str) -> tuple[PromptTemplate | None, list[ProfileError]]:
    """Read the placeholders of a template; stray braces and positional `{}` are errors. An
    evaluator template with none of the known placeholders is literal (see the module doc)."""
    if role == "evaluator" and text.strip() and not uses_known_placeholders(text):
        template, errors = _check_format(text, role=role, source=source)
        if errors or (template is not None and template.fields):  # literal JSON, or names parley does not know
            return PromptTemplate(role=role, path=source, text=text, literal=True), []
        return template, errors
    return _check_format(text, role=role, source=source)


def _check_format(text: str, *, role: TemplateRole, source: str) -> tuple[PromptTemplate | None, list[ProfileError]]:
    fields: list[TemplateField] = []
    errors: list[ProfileError] = []
    i, n = 0, len(text)

    def error(at: int, reason: str) -> None:
        line, column = _position(text, at)
        errors.append(ProfileError(reason, file=source, line=line, column=column))

    while i < n:
        ch = text[i]
        if ch == "{":
            if text.startswith("{", i + 1):
                i += 2
                continue
            end = text.find("}", i)
            nested = text.find("{", i + 1)
            if end < 0 or (0 <= nested < end):
                error(i, "unmatched '{'; write '{{' for a literal brace")
                i += 1
                continue
            field = text[i + 1 : end]
            head = _FIELD_HEAD.match(field).group(0).strip()  # type: ignore[union-attr]
            if not head or head.isdigit():
                error(
                    i, f"'{{{field}}}' has no variable name: write a name such as {{CURRENT_DATE}}, or '{{{{' and '}}}}' for literal braces"
                )
            elif not _VARIABLE_NAME.match(head):
                error(i, f"'{{{field}}}' is not a variable name; write '{{{{' and '}}}}' for literal braces")
            else:
                line, column = _position(text, i)
                fields.append(TemplateField(name=head, line=line, column=column))
            i = end + 1
        elif ch == "}":
            if text.startswith("}", i + 1):
                i += 2
                continue
            error(i, "single '}'; write '}}' for a literal brace")
            i += 1
        else:
            i += 1
    if not text.strip():
        errors.append(ProfileError(f"the {role} template is empty", file=source))
    if errors:
        return None, errors
    return PromptTemplate(role=role, path=source, text=text, fields=fields), []


def read_template(path: str | Path, role: TemplateRole) -> tuple[PromptTemplate | None, list[ProfileError]]:
    text, errors = read_input(path, f"the {role} template")
    if text is None:
        return None, errors
    return check_template_text(text, role=role, source=str(path))


def load_templates(
    *,
    agent_template: str | Path | None = None,
    client_template: str | Path | None = None,
    evaluator_template: str | Path | None = None,
) -> PromptTemplates:
    """The three templates (shipped defaults unless overridden); raises InvalidProfile."""
    templates, errors = read_templates(agent_template, client_template, evaluator_template)
    if errors or templates is None:
        raise InvalidProfile(errors)
    return templates


def prompt_folder(scenario_file: Path) -> Path | None:
    """The `prompts/` folder a scenario file carries: in its own folder, else beside it."""
    for folder in (scenario_file.parent, scenario_file.parent.parent):
        candidate = folder / PROMPTS_DIR
        if candidate.is_dir():
            return candidate
    return None


def prompt_folder_templates(folder: Path) -> tuple[dict[TemplateRole, Path], list[ProfileError]]:
    """The templates of a `prompts/` folder: for each role the .txt/.md file whose name holds the
    role's name (`agent_system.txt`); two files for one role are an error."""
    chosen: dict[TemplateRole, Path] = {}
    errors: list[ProfileError] = []
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in TEMPLATE_SUFFIXES)
    for role in TEMPLATE_ROLES:
        matches = [p for p in files if role in p.stem.lower()]
        if len(matches) > 1:
            names = ", ".join(p.name for p in matches)
            errors.append(
                ProfileError(
                    f"{len(matches)} {role} templates ({names}); keep one, or choose with --{role}-template",
                    file=str(folder),
                )
            )
        elif matches:
            chosen[role] = matches[0]
    return chosen, errors


def read_templates(
    agent: str | Path | None = None,
    client: str | Path | None = None,
    evaluator: str | Path | None = None,
) -> tuple[PromptTemplates | None, list[ProfileError]]:
    """(the three templates or None, every error): each path given, else the shipped default."""
    chosen = {"agent": agent, "client": client, "evaluator": evaluator}
    read: dict[str, PromptTemplate] = {}
    errors: list[ProfileError] = []
    for role in TEMPLATE_ROLES:
        template, problems = read_template(chosen[role] or default_template_path(role), role)
        errors += problems
        if template is not None:
            read[role] = template
    return (PromptTemplates(**read) if not errors else None), errors


# -- scenario files --------------------------------------------------------------------------------


def parse_scenarios(text: str, *, source: str = "<scenarios>") -> tuple[list[Scenario], list[ProfileError]]:
    """The scenarios of a scenario file's text, and every problem found (in file order)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [ProfileError(f"invalid JSON: {exc.msg}", file=source, line=exc.lineno, column=exc.colno)]
    except RecursionError:
        return [], [ProfileError(f"invalid JSON: nested more than {MAX_DEPTH} levels deep", file=source)]
    try:
        check_depth(data, source)
    except YamlLimitError as exc:
        return [], [exc]  # nested too deeply: refused as YAML files are
    try:  # each value's line and column, for errors (a fast JSON reader: files may be large)
        positioned = load_positioned(text)
    except (ValueError, RecursionError):
        positioned = None
    if positioned is None or plain_value(positioned) != data:
        positioned = data  # no positions: errors point at the file
    reading = YamlReading(source, positioned)
    problems = Problems()
    listing: Any = positioned
    at: tuple[Any, ...] = ()
    if isinstance(positioned, dict):
        if not check_keys(positioned, FILE_KEYS, reading, problems, required=("scenarios",)):
            return [], _sorted(reading.errors(problems.as_error()))
        listing, at = positioned["scenarios"], ("scenarios",)
    scenarios: list[Scenario] = []
    if not isinstance(listing, list) or not listing:
        what = 'a list of scenarios ({"name": ..., "variables": {...}})'
        if isinstance(listing, list):
            problems.add("must not be empty", at=at, at_key=True)
        else:
            problems.add(f"expected {what}, got {describe(listing)}", at=at, at_key=listing is None)
        return [], _sorted(reading.errors(problems.as_error()))
    names: dict[str, int] = {}
    for index, item in enumerate(listing):
        if isinstance(item, dict):
            check_keys(item, SCENARIO_KEYS, reading, problems, at=(*at, index))
        scenario = problems.check(Scenario.model_validate, item, context=reading, at=(*at, index))
        name = _written_name(item)
        if name is not None and name in names:
            problems.add(f"scenario name '{name}' is used twice (first by scenario {names[name]})", at=(*at, index, "name"))
        elif scenario is not None:
            scenarios.append(scenario.model_copy(update={"index": index}))
        if name is not None:
            names.setdefault(name, index)
    return scenarios, _sorted(reading.errors(problems.as_error())) if problems else []


def _written_name(item: Any) -> str | None:
    """A scenario's name as the duplicate check reads it (a scenario without both keys has none)."""
    if not isinstance(item, dict) or "variables" not in item or not isinstance(item.get("name"), str):
        return None
    return item["name"].strip() or None


def _sorted(errors: list[ProfileError]) -> list[ProfileError]:
    return sorted(errors, key=lambda e: (e.line or 0, e.column or 0))


def variable_text(value: Any) -> str:
    """A variable's value as it is written into a prompt (lists and mappings as JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _format_value(value: Any) -> Any:
    # Numbers stay numbers, so a template may write {PATIENCE:d}.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return variable_text(value)


def scenario_specs(
    scenarios: list[Scenario],
    templates: PromptTemplates,
    *,
    source: str,
    seed: int = 0,
) -> tuple[list[ConversationSpec], list[ProfileError]]:
    """One ConversationSpec per scenario, prompts filled; a scenario missing a variable some
    template needs gives an error (at the scenario) instead of a spec."""
    specs: list[ConversationSpec] = []
    errors: list[ProfileError] = []
    needed: dict[str, list[PromptTemplate]] = {}
    for template in templates.all():
        for name in template.field_names:
            needed.setdefault(name, []).append(template)
    for scenario in scenarios:
        missing = [n for n in needed if n not in scenario.variables and n not in BUILTIN_FIELDS]
        if missing:
            for name in missing:
                users = " and ".join(f"the {t.role} template ({_where_used(t, name)})" for t in needed[name])
                hint = did_you_mean(name, scenario.variables)
                errors.append(scenario.location.error(f"{scenario.label()} does not define {name}, which {users} needs{hint}"))
            continue
        spec, error = _spec(scenario, templates, source=source, seed=seed, needed=needed)
        if error is not None:
            errors.append(error)
        elif spec is not None:
            specs.append(spec)
    return specs, errors


def _where_used(template: PromptTemplate, name: str) -> str:
    field = next(f for f in template.fields if f.name == name)
    return f"{template.path}:{field.line}:{field.column}"


def _spec(
    scenario: Scenario,
    templates: PromptTemplates,
    *,
    source: str,
    seed: int,
    needed: dict[str, list[PromptTemplate]],
) -> tuple[ConversationSpec | None, ProfileError | None]:
    spec_id = make_spec_id(scenario.name, 0)
    values = {key: _format_value(value) for key, value in scenario.variables.items()}
    values.setdefault("session_id", spec_id)
    prompts: dict[str, str] = {}
    for template in templates.all():
        try:
            prompts[template.role] = template.fill(values)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            return None, scenario.location.error(f"{scenario.label()} cannot fill the {template.role} template ({template.path}): {exc}")
    texts = {key: variable_text(value) for key, value in scenario.variables.items()}
    typed: dict[str, Any] = {}
    for key, value in scenario.variables.items():
        if isinstance(value, bool) or isinstance(value, dict):
            typed[key] = texts[key]
        elif isinstance(value, list):
            typed[key] = value if all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in value) else texts[key]
        else:
            typed[key] = value
    unused = sorted(k for k in scenario.variables if k not in needed and k not in ("SEED", "CUSTOMER_ID"))
    warnings = [scenario.location.render(f"{scenario.label()}: no template uses {', '.join(unused)}")] if unused else []
    role, context = _role_and_context(prompts["client"])
    spec = ConversationSpec(
        spec_id=spec_id,
        kind="scenario",
        source=source,
        name=scenario.name,
        index=scenario.index,
        seed=scenario.seed if scenario.seed is not None else derive_seed(seed, scenario.name, 0),
        variables=texts,
        variable_values=typed,
        goals=[texts["ORDER_GOAL"]] if texts.get("ORDER_GOAL") else [],
        role=role,
        context=context,
        world=scenario.world.model_copy(
            update={
                "customer_id": str(scenario.variables["CUSTOMER_ID"]).strip()
                if "CUSTOMER_ID" in scenario.variables
                else scenario.world.customer_id,
                "today": _leading_date(texts.get("CURRENT_DATE")) or scenario.world.today,
            }
        ),
        warnings=warnings,
        expect=_expectations(scenario),
        extra={
            "agent_prompt": prompts["agent"],
            "client_prompt": prompts["client"],
            "evaluator_prompt": prompts["evaluator"],
            "session_id": str(values["session_id"]),
            "templates": {t.role: t.path for t in templates.all()},
        },
    )
    return spec, None


def _expectations(scenario: Scenario) -> Expectations | None:
    """The scenario's `expect:` block with its `criteria` added to the block's own."""
    if scenario.expect is None:
        return Expectations(criteria=scenario.criteria) if scenario.criteria else None
    if not scenario.criteria:
        return scenario.expect
    return scenario.expect.model_copy(update={"criteria": [*scenario.expect.criteria, *scenario.criteria]})


def _role_and_context(client_prompt: str) -> tuple[str, list[str]]:
    """The client prompt's first paragraph as the role, the other paragraphs as context lines."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", client_prompt) if p.strip()]
    if not paragraphs:
        return "", []
    return paragraphs[0], paragraphs[1:]


def _current_date_problem(text: str, reading: Reading) -> str | None:
    """Why CURRENT_DATE cannot be the World's today: a leading ISO date that is not a date, or
    one a World cannot hold. None when it has no leading date (then it is only text)."""
    match = _LEADING_DATE.match(text)
    if not match:
        return None
    try:
        day = datetime.date.fromisoformat(match.group(1))
    except ValueError:
        return f"starts with {match.group(1)}, which is not a date (the World's today is read from it)"
    world = reading.world() if isinstance(reading, FileWorld) else None
    hook = world.hooks.get("date_problem") if world is not None else None
    problem: str | None = hook(day, {}) if callable(hook) else None
    return problem


def _leading_date(text: str | None) -> datetime.date | None:
    match = _LEADING_DATE.match(text or "")
    if not match:
        return None
    try:
        return datetime.date.fromisoformat(match.group(1))
    except ValueError:
        return None


class TemplatePaths(TypedDict, total=False):
    """The prompt templates a scenario file is filled with, by path (`--agent-template` ...);
    each one not given (or None) is the shipped default."""

    agent_template: str | Path | None
    client_template: str | Path | None
    evaluator_template: str | Path | None


def check_scenario_text(
    text: str,
    *,
    source: str = "<scenarios>",
    seed: int = 0,
    templates: PromptTemplates | None = None,
    **paths: Unpack[TemplatePaths],
) -> tuple[list[ConversationSpec], list[ProfileError]]:
    """(specs, every error) for a scenario file's text, filled with `templates` (read from
    `paths` when not given). Template problems come first."""
    template_errors: list[ProfileError] = []
    if templates is None:
        templates, template_errors = read_templates(
            paths.get("agent_template"), paths.get("client_template"), paths.get("evaluator_template")
        )
    scenarios, errors = parse_scenarios(text, source=source)
    if templates is None:
        return [], template_errors + errors
    specs, fill_errors = scenario_specs(scenarios, templates, source=source, seed=seed)
    errors = sorted(errors + fill_errors, key=lambda e: (e.line or 0, e.column or 0))
    return (specs if not errors else []), errors


def check_scenario_file(
    path: str | Path, *, seed: int = 0, templates: PromptTemplates | None = None, **paths: Unpack[TemplatePaths]
) -> tuple[list[ConversationSpec], list[ProfileError]]:
    """(specs, every error) for the scenario file at `path`; no specs when there is an error."""
    text, errors = read_input(path, "scenario file")
    if text is None:
        return [], errors
    return check_scenario_text(text, source=str(path), seed=seed, templates=templates, **paths)


def validate_scenario_file(path: str | Path, **paths: Unpack[TemplatePaths]) -> list[ProfileError]:
    """Every problem of the scenario file at `path` with its templates; empty if valid."""
    return check_scenario_file(path, **paths)[1]


def load_scenario_file(path: str | Path, *, seed: int = 0, **paths: Unpack[TemplatePaths]) -> list[ConversationSpec]:
    """One ConversationSpec per scenario, prompts filled; raises InvalidProfile listing every problem."""
    specs, errors = check_scenario_file(path, seed=seed, **paths)
    if errors:
        raise InvalidProfile(errors)
    return specs


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column
