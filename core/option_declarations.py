"""The options of a batch, each declared once: its name, what it takes, its default, its help,
the environment variables it is read from, and where it applies.

Every surface that takes a batch option is made from BATCH_OPTIONS:
- `parley run` and `parley submit` (parley.tui.cli.batch_options builds their click options,
  the notes a resume, a re-run and a replay print, and what a re-run may change);
- the pytest plugin's `--parley-*` options (parley.tui.pytest_plugin: declared at every pytest
  start, so this module imports nothing but the standard library);
- the batch service's request fields (parley.core.service.models.BatchRequest);
- the environment (parley.core.settings: the PARLEY_* variables and their aliases);
- the Python API's keywords (parley.core.library.running.RunOptions: written out so that type
  checkers see them, with their defaults and bounds from here).
tests/test_declared_options.py fails when a surface lacks an option its declaration names, or
takes it with another default.

Adding an option (say `max_tokens`, the judge's output cap):
1. add a `BatchOption` to BATCH_OPTIONS below: `name` (the keyword, and the field of
   parley.core.records.BatchOptions it fills, `field`, when that differs: `models.max_tokens`),
   `kind`, `default`, `help`, bounds, `env` and `setting` if it is read from the environment,
   and `surfaces`: where it applies;
2. add the field to BatchOptions (or RoleModels) in parley.core.records.batch, with this
   default (`option("max_tokens").default`);
3. if it is on the `api` surface, add the keyword to RunOptions (parley.core.library.running);
   with `env`, the field to parley.core.settings.Settings (`_from_declaration`);
4. use it where the engine needs it. The command line, the plugin and the service then take it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["BATCH_OPTIONS", "BatchOption", "Surface", "option", "options_on"]

Surface = Literal["run", "submit", "plugin", "service", "api"]
"""Where an option applies: `parley run`, `parley submit` (a batch sent to a service), the pytest
plugin (`--parley-NAME`), the batch service's requests, the Python API (`parley.api.run` and the
`parley` fixture)."""
Lineage = Literal["may_change", "kept"]
"""What a re-run or a replay does with the option given on its command line: takes it, or keeps
its parent's (and says so)."""

MAX_CONTEXT_TOKENS = 100_000_000
"""The largest context length a role may be given (well past any model's)."""


@dataclass(frozen=True)
class BatchOption:
    """One option of a batch (see the module doc)."""

    name: str
    """The keyword (`max_turns`), the click parameter and the request field."""
    kind: type
    """What one value is: int, float, str, bool or Path."""
    default: Any
    help: str
    surfaces: frozenset[Surface]
    field: str = ""
    """Where parley.core.records.BatchOptions keeps it (`models.bot_timeout_s`, `loading.agent_template`);
    default: `name`."""
    flag: str = ""
    """Its command-line flag; default: `--` and the name with dashes."""
    off_flag: str | None = None
    """For a bool: the flag that turns it off (`--no-cache`)."""
    short: str | None = None
    metavar: str | None = None
    optional: bool = False
    """None is a value: the option may be left unset."""
    path: Literal["file", "folder", "any"] = "any"
    """For a Path: what it must name."""
    exists: bool = False
    """For a Path: it must exist when given."""
    many: bool = False
    """Repeatable: the value is a list (a tuple on the command line)."""
    minimum: float | None = None
    maximum: float | None = None
    above_minimum: bool = False
    """The minimum itself is refused (a budget must be above 0)."""
    request_maximum: float | None = None
    """The batch service's own cap, when it is lower than `maximum` (for text: its length)."""
    request_minimum: float | None = None
    env: tuple[str, ...] = ()
    """The environment variables its default is read from, the first one winning."""
    setting: str | None = None
    """The field of parley.core.settings.Settings that reads `env`."""
    shown_default: str | None = None
    """What `--help` says of the default, when the value alone would not say it."""
    lineage: Lineage | None = None
    """A re-run or a replay: may change it, or keeps the parent's. None: not asked (resume too)."""
    taken_on_resume: bool = False
    """`--resume` takes it from the command line; other options are the batch's own (a note says so)."""
    role: str | None = None
    """For the roles' models (bot, user, judge): who the role is, in words."""
    per_bot: bool = False
    """A setting of the bot under test: `parley run` takes `--bot` several times (one batch per
    bot, side by side), and such an option once for every bot or once per bot, by position or
    as `NAME=VALUE` (parley.tui.cli.bot_lineup)."""

    @property
    def option_field(self) -> str:
        return self.field or self.name

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def plugin_flag(self) -> str:
        """The pytest plugin's option: `--parley-` and the flag's name."""
        return "--parley-" + self.cli_flag.removeprefix("--")

    @property
    def plugin_dest(self) -> str:
        return "parley_" + self.cli_flag.removeprefix("--").replace("-", "_")

    def on(self, surface: Surface) -> bool:
        return surface in self.surfaces


def _surfaces(*names: Surface) -> frozenset[Surface]:
    return frozenset(names)


_EVERYWHERE = _surfaces("run", "submit", "plugin", "service", "api")
_ROLE_HELP = {
    "bot": (
        "The bot under test: a MODEL runs parley's built-in order bot (tools, order database); "
        "with --bot-prompt, a prompt bot; a Python callable called in-process: python:PACKAGE.MODULE:NAME "
        "(imported once, before anything runs); a bot a world ships for its suites (tau2:gold, tau2:null); "
        "or a connector to a deployed chatbot: rasa:URL (a Rasa REST "
        "webhook), taskyto:URL (a Taskyto server), http:FILE.yaml (any HTTP API described in YAML)."
    ),
    "user": "Model of the simulated customer; `profile` uses each profile's own llm: model.",
    "judge": "Model of the judge (offline: scores from the checks alone).",
}
_ROLES = {"bot": "the bot under test", "user": "the simulated customer", "judge": "the judge"}


def _role(name: str) -> BatchOption:
    return BatchOption(
        name,
        str,
        "offline",
        _ROLE_HELP[name],
        _EVERYWHERE,
        field=f"models.{name}",
        metavar="MODEL|CONNECTOR" if name == "bot" else "MODEL",
        lineage="may_change",
        role=_ROLES[name],
        per_bot=name == "bot",
    )


def _context(name: str) -> BatchOption:
    judge = " A conversation that does not fit even condensed is a judge error, never a score." if name == "judge" else ""
    return BatchOption(
        f"{name}_context",
        int,
        None,
        f"Context length of the model of {_ROLES[name]}, in tokens: the prompts parley builds for it are condensed to fit.{judge}",
        _surfaces("run"),
        field=f"models.{name}_context",
        metavar="TOKENS",
        optional=True,
        minimum=1,
        maximum=MAX_CONTEXT_TOKENS,
        env=(f"PARLEY_{name.upper()}_CONTEXT",),
        setting=f"{name}_context",
        shown_default=f"reported by the endpoint, else 4096; env PARLEY_{name.upper()}_CONTEXT",
        lineage="may_change",
        per_bot=name == "bot",
    )


def _template(role: str) -> BatchOption:
    return BatchOption(
        f"{role}_template",
        Path,
        None,
        f"Scenario files: use FILE as the {role} prompt template (instead of a prompts/ folder's or the shipped one).",
        _surfaces("run"),
        field=f"loading.{role}_template",
        metavar="FILE",
        path="file",
        optional=True,
    )


BATCH_OPTIONS: tuple[BatchOption, ...] = (
    *(_role(name) for name in ("bot", "user", "judge")),
    *(_context(name) for name in ("bot", "user", "judge")),
    BatchOption(
        "bot_prompt",
        Path,
        None,
        "With --bot MODEL: a prompt bot, the model with FILE as its system prompt and no tools "
        "(e.g. profiles/scenarios/templates/agent.txt). {NAME} placeholders are filled from each "
        "spec's variables, plus session_id, CURRENT_DATE and CUSTOMER_ID.",
        _surfaces("run"),
        field="models.bot_prompt",
        metavar="FILE",
        path="file",
        optional=True,
        lineage="may_change",
        per_bot=True,
    ),
    BatchOption(
        "bot_timeout_s",
        float,
        30.0,
        "A connector's limit per HTTP call, connect to last byte, and a Python bot's per call; a call past it ends "
        "the conversation as bot_error (an http: file's own `timeout` wins).",
        _surfaces("run", "plugin", "api"),
        field="models.bot_timeout_s",
        flag="--bot-timeout",
        metavar="SECONDS",
        minimum=0.1,
        lineage="may_change",
        per_bot=True,
    ),
    BatchOption(
        "bot_max_reply_bytes",
        int,
        1024 * 1024,
        "A connector's cap on each reply: a larger one ends the conversation as bot_error (read no further than the cap).",
        _surfaces("run"),
        field="models.bot_max_reply_bytes",
        metavar="BYTES",
        minimum=1,
        shown_default="1048576 (1 MiB)",
        lineage="may_change",
        per_bot=True,
    ),
    BatchOption(
        "concurrency",
        int,
        4,
        "Most conversations in flight at once. Lowered automatically on rate limits (429s), raised back as calls succeed.",
        _EVERYWHERE,
        short="-c",
        minimum=1,
        maximum=10_000,
        request_maximum=256,
        env=("PARLEY_CONCURRENCY", "CONCURRENCY"),
        setting="concurrency",
        lineage="may_change",
        taken_on_resume=True,
    ),
    BatchOption(
        "max_turns",
        int,
        30,
        "Bot answers per conversation before it stops with max_turns.",
        _EVERYWHERE,
        minimum=1,
        maximum=1000,
        env=("PARLEY_MAX_TURNS", "MAX_TURNS"),
        setting="max_turns",
        lineage="kept",
    ),
    BatchOption(
        "timeout_s",
        float,
        90.0,
        "Wall-clock limit of each conversation, a hung model call included (recorded as timeout). The judge gets the same limit of its own.",
        _EVERYWHERE,
        flag="--timeout",
        metavar="SECONDS",
        minimum=0.1,
        request_maximum=3600.0,
        env=("PARLEY_TIMEOUT_SEC", "TIMEOUT_SEC"),
        setting="timeout_sec",
        lineage="kept",
    ),
    BatchOption(
        "trials",
        int,
        1,
        "Run each conversation k times with distinct seeds; the report shows pass^k beside pass^1.",
        _EVERYWHERE,
        short="-k",
        minimum=1,
        maximum=1000,
        request_maximum=100,
        lineage="kept",
    ),
    BatchOption(
        "seed",
        int,
        0,
        "Batch seed: the same seed and files give the same conversations (offline: byte for byte).",
        _surfaces("run", "submit", "plugin", "service"),
        request_minimum=0,
        request_maximum=2**63 - 1,
        lineage="kept",
    ),
    BatchOption(
        "cache",
        bool,
        False,
        "Record LLM replies in the database and replay identical requests: a re-run costs nothing and repeats exactly. "
        "Offline models are never cached.",
        _surfaces("run", "submit", "service", "api"),
        off_flag="--no-cache",
        lineage="may_change",
    ),
    BatchOption(
        "prompt_version",
        str,
        None,
        "A label for the bot prompt under test (kept in the exports).",
        _surfaces("run", "submit", "service"),
        metavar="LABEL",
        optional=True,
        request_maximum=200,
        lineage="may_change",
        per_bot=True,
    ),
    BatchOption(
        "rules",
        Path,
        None,
        "Sensei rule files (a file, or a folder searched for .yaml/.yml): each `conversations: 1` rule is a check "
        "of each conversation (`rule:FILE`), decided as it ends; pair (2) and batch (all) rules are decided once every "
        "conversation is in, and a failed one fails the exit code. Rules that need a model ask --judge's; offline they are not run.",
        _surfaces("run", "plugin", "api"),
        metavar="DIR",
        optional=True,
        exists=True,
        lineage="may_change",
    ),
    BatchOption(
        "budget_usd",
        float,
        None,
        "Launch no new conversation once the measured cost reaches USD; the batch ends stopped_budget with what "
        "finished stored. Needs every model of the batch priced.",
        _surfaces("run"),
        flag="--budget",
        metavar="USD",
        optional=True,
        minimum=0,
        above_minimum=True,
        lineage="may_change",
        taken_on_resume=True,
    ),
    BatchOption(
        "gen",
        str,
        (),
        "A generation setting of a role, sent with each of its requests (repeatable): ROLE is bot, user or judge; "
        "KEY is temperature, top_p, max_tokens, seed or stop (up to four stops), e.g. --gen bot.temperature=0.2. "
        "Unset, a role keeps its default: the bot the server's, the customer its profile's llm: block, the judge "
        "temperature 0 and a bounded answer.",
        _surfaces("run", "submit", "service", "api"),
        field="models.generation",
        metavar="ROLE.KEY=VALUE",
        many=True,
        lineage="may_change",
    ),
    BatchOption(
        "price",
        str,
        (),
        "The price of a model the price table does not know, or in place of its own (repeatable): USD per "
        "million input and output tokens, MODEL=INPUT/OUTPUT, or MODEL=0 for a free one (a local server), so "
        "the cost and --budget are measured.",
        _surfaces("run", "submit", "service", "api"),
        field="prices",
        metavar="MODEL=IN/OUT",
        many=True,
        lineage="may_change",
    ),
    BatchOption(
        "limit",
        str,
        (),
        "A limit every conversation is checked against, as if its expect: block had it (repeatable; a spec's own "
        "limits: keys win): reply_seconds (each bot reply), p95_reply_seconds (95% of them), cost_usd and tokens (the "
        "bot's, per conversation), turns_to_pass (every check asked for held by that bot turn), e.g. --limit reply_seconds=8. "
        "Each is a check with the measured figure as its evidence; the latency ones are timing-dependent, and not decided "
        "for the offline bot.",
        _surfaces("run", "submit", "service", "api"),
        field="limits",
        metavar="KEY=VALUE",
        many=True,
        lineage="may_change",
    ),
    BatchOption(
        "personality_dirs",
        Path,
        (),
        "A folder to look for files a profile names (personality:, list functions) when they are not "
        "in the working directory or beside the profile (repeatable). parley's shipped personalities come last.",
        _surfaces("run"),
        field="loading.personality_dirs",
        flag="--personalities",
        metavar="DIR",
        many=True,
        path="folder",
        exists=True,
    ),
    *(_template(role) for role in ("agent", "client", "evaluator")),
    BatchOption(
        "min_kappa",
        float,
        0.6,
        "The judge's calibration (`parley judge calibrate`) a verdict must reach: a criterion or rubric whose "
        'measured kappa is below it is marked "below threshold" in every report.',
        _surfaces("run"),
        metavar="KAPPA",
        minimum=-1.0,
        maximum=1.0,
        env=("PARLEY_MIN_KAPPA",),
        setting="min_kappa",
        lineage="may_change",
    ),
    BatchOption(
        "require_calibrated",
        bool,
        False,
        "Only judge verdicts of a judge calibrated at or above --min-kappa on that criterion or rubric count towards "
        "a pass: the others may fail a conversation, never pass it (unverified unless another check decided it).",
        _surfaces("run"),
        lineage="may_change",
    ),
)
"""Every batch option, in the order `--help` lists them."""

_BY_NAME = {o.name: o for o in BATCH_OPTIONS}


def option(name: str) -> BatchOption:
    """The declaration of option `name` (KeyError for none)."""
    return _BY_NAME[name]


def options_on(surface: Surface) -> tuple[BatchOption, ...]:
    """The options that apply on `surface`, in declaration order."""
    return tuple(o for o in BATCH_OPTIONS if o.on(surface))
