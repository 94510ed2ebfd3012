"""What a world declares, once: its data, its tools, its policy and the rules the API leaves to the
bot, who the customer is, whose records are whose, the shape of ids, and which tools change state.

Everything else in parley reads these declarations: the world bot's prompt and tools, `python:`
bots' tools, the served HTTP API, final-state checks, unchanged-others and violations, claims
against actions, the judge's view, leak search and attacks, mutants at the tool boundary.

    WORLD = WorldDefinition(
        name="returns",
        description="A returns-and-exchanges desk",
        policy=POLICY_TEXT,
        tables=[Table("customers", owner="key", ...), Table("orders", owner="customer_id", ...)],
        tools=[find_customer, get_order, start_return, ...],
        identity=ConversationIdentity(customers="customers", authenticate=["find_customer"], credentials=["email"]),
        rules=[Rule("refund_to_original_method", "Refunds go to the original payment method", check=...)],
        actions={"start_return": "refund", "exchange_item": "change"},
    )

A world file (`world: {path: my_world.py}`) defines `WORLD`; a package may also register one under
the `parley.worlds` entry point group (parley.core.world.registry).
"""

from __future__ import annotations

import datetime
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from parley.core.records import RecordChange, ToolCallRecord
from parley.core.world.tables import Table
from parley.core.world.tool_declaration import WorldTool, declare_tool

if TYPE_CHECKING:
    from parley.core.world.database import WorldDB

__all__ = [
    "ACTIONS",
    "ChatCommand",
    "ChatView",
    "ConversationIdentity",
    "Rule",
    "WorldMutant",
    "RuleCall",
    "SessionIdentity",
    "WorldDefinition",
]

ACTIONS: tuple[str, ...] = ("cancel", "refund", "change", "send")
"""What a state-changing tool does, in the words bots use to claim it (parley's phrase table reads
claims of these actions in every language it covers)."""


@dataclass(frozen=True)
class SessionIdentity:
    """The customer is signed in by the session, and the bot is told who they are. `bound` (the
    default): every tool acts for that customer, and no argument or message can make it act for
    anyone else. Not bound: the world's API trusts the bot, as a staff console trusts an agent (its
    tools take any customer's ids); keeping to the signed-in customer's records is then the bot's
    job, and parley decides when it did not. `customers` names the table whose keys are customer
    ids; `default` the customer a file that names none runs as."""

    customers: str
    default: str | None = None
    bound: bool = True
    kind: Literal["session"] = "session"


@dataclass(frozen=True)
class ConversationIdentity:
    """The customer authenticates in the conversation: the bot finds them with one of the
    `authenticate` tools (by email, or name and zip), whose successful result holds their key;
    the tools take customer and record ids as arguments, and acting on another customer's records
    is a violation parley decides. `credentials` are the columns of the customer's row the
    simulated customer knows and may say (its email, its zip code); `default` as above."""

    customers: str
    authenticate: Sequence[str] = ()
    credentials: Sequence[str] = ()
    default: str | None = None
    kind: Literal["conversation"] = "conversation"


Identity = SessionIdentity | ConversationIdentity


@dataclass(frozen=True)
class RuleCall:
    """What a rule is shown of one tool call: the call, what it changed, and the database as it is
    after it (`db`); `before(table, key)` is a changed record's row before the call."""

    record: ToolCallRecord
    changes: Sequence[RecordChange]
    db: WorldDB
    customer_id: str | None
    """The conversation's customer (the one it runs as, whatever the bot was told)."""
    earlier: Sequence[ToolCallRecord]
    """The calls before this one in the conversation."""
    today: datetime.date
    """The world's today."""

    def before(self, table: str, key: str) -> dict[str, Any] | None:
        for change in self.changes:
            if change.table == table and change.key == key:
                return change.before
        return self.db.get(table, key)


@dataclass(frozen=True)
class Rule:
    """A rule of the policy the world's API does not enforce: `check` is shown every successful
    state-changing call (a `RuleCall`) and returns why it broke the rule, or None. parley records a
    violation for each broken rule, with the call that broke it."""

    name: str
    description: str
    check: Callable[[RuleCall], str | None]


@dataclass(frozen=True)
class WorldMutant:
    """A misbehaviour of a bot on this world that `parley mutate` can make (beside parley's own
    mutants): `rewrite(tool, arguments, db)` is shown each state-changing call the bot makes, with
    the world's database as it is, and returns the arguments the mutant calls it with instead (None:
    the call is left as it is). `changes` says what it changes and `kills` what would catch it (the
    checks and profile features), as parley's own mutants do."""

    name: str
    title: str
    changes: str
    kills: str
    rewrite: Callable[[str, dict[str, Any], WorldDB], dict[str, Any] | None]


@dataclass(frozen=True)
class ChatView:
    """What a slash command of the live chat shows of a world: a table, a text or a record."""

    kind: Literal["table", "text", "json"]
    title: str | None = None
    columns: Sequence[str] = ()
    rows: Sequence[Sequence[str]] = ()
    text: str | None = None
    data: Any = None


@dataclass(frozen=True)
class ChatCommand:
    """A slash command a world adds to the live chat (`/orders` in the order world): `show` is given
    the conversation's database, its customer and the argument, and returns what to show;
    `Refused` says why it cannot (an unknown record)."""

    name: str
    usage: str
    summary: str
    show: Callable[[WorldDB, datetime.date, str, str | None], ChatView]
    argument: str | None = None
    """What the required argument is ("an order id"), or None when it takes none or an optional one."""
    example: str | None = None


OpenCopyHook = Callable[["WorldDB", datetime.date, Callable[[], datetime.datetime]], Mapping[str, Any]]
BuildHook = Callable[[sqlite3.Connection, datetime.date, dict[str, Sequence[Mapping[str, Any]]]], None]


@dataclass
class WorldDefinition:
    """One world (see the module doc). `tools` may be `@tool`-declared or plain typed functions."""

    name: str
    tables: Sequence[Table]
    tools: Sequence[WorldTool | Callable[..., Any]]
    identity: Identity
    """Who the customer is: signed in by the session, or authenticated in the conversation."""
    policy: str = ""
    description: str = ""
    rules: Sequence[Rule] = ()
    actions: Mapping[str, str] = field(default_factory=dict)
    """State-changing tool -> the action a bot claims when it calls it (one of ACTIONS)."""
    today: datetime.date | None = None
    """The world's own `today`, when its data is dated (None: the run's)."""
    build: BuildHook | None = None
    """Builds the tables itself instead of from the declared tables' rows (their declarations then
    only describe them)."""
    open_copy: OpenCopyHook | None = None
    """Objects a tool needs per conversation (a store of the world's own), put in ctx.extras."""
    source: str = ""
    """Where the world was declared (a file's path), for messages."""
    chat_commands: Sequence[ChatCommand] = ()
    """Slash commands the live chat gains on this world (beside /tables, /table and /record, which
    every world has)."""
    mutants: Sequence[WorldMutant] = ()
    """Misbehaviours of a bot on this world that `parley mutate` makes beside parley's own."""
    hooks: dict[str, Any] = field(default_factory=dict)
    """What a world offers the engine beyond its declarations, by name (the order world's offline
    bot, its spelling `expect.orders`); the engine asks for a hook by name and says so, or answers
    generically, when a world has none. The hooks the evaluation and the simulated customers read
    (each through a function of parley.core.world.hooks or id_reading):
    - `find_ids(text) -> [(table, key)]`: the records a text names, read as the world's people
      write them ("ord 1003", "#1003"), beside each table's `id_pattern`;
    - `goal_tools: {intent: (tool, ...)}`: which tools answer which kind of the simulated
      customer's goal (`track`, `status`, `list`, `policy`, `cancel`, `keep`); a kind the world
      names is read from goals and acted out by the offline customer, the others are free text;
    - `misspellings: {keyword: (misspelling, ...)}`: the typos of the words its offline bot keys on
      that the bot still reads; the offline customer's `make spelling mistakes` uses only these;
    - `change_note(change, diff, tool_calls) -> str`: the world's own words about a change nobody
      expected, appended to the reason (the order world: the order's age against its window)."""
    base_dir: Path | None = None

    def __post_init__(self) -> None:
        self.tools = [declare_tool(t) if not isinstance(t, WorldTool) else t for t in self.tools]
        if self.base_dir is not None:
            self.tables = [t if t.base_dir is not None else _with_base(t, self.base_dir) for t in self.tables]

    @property
    def declared_tools(self) -> list[WorldTool]:
        return [t for t in self.tools if isinstance(t, WorldTool)]

    def tool(self, name: str) -> WorldTool | None:
        for t in self.declared_tools:
            if t.name == name:
                return t
        return None

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.declared_tools]

    @property
    def state_changing(self) -> list[WorldTool]:
        return [t for t in self.declared_tools if t.changes_state]

    def table(self, name: str) -> Table | None:
        for t in self.tables:
            if t.name == name:
                return t
        return None

    @property
    def table_names(self) -> list[str]:
        return [t.name for t in self.tables]

    @property
    def customers_table(self) -> Table | None:
        return self.table(self.identity.customers)

    @property
    def session_bound(self) -> bool:
        """True when the world's API itself keeps every tool to the session's customer."""
        return isinstance(self.identity, SessionIdentity) and self.identity.bound

    @property
    def session_signed_in(self) -> bool:
        """True when the session tells the bot who the customer is (bound or not)."""
        return isinstance(self.identity, SessionIdentity)

    def action_of(self, tool_name: str) -> str | None:
        return self.actions.get(tool_name)

    def tables_with_ids(self) -> list[Table]:
        return [t for t in self.tables if t.id_pattern]


def _with_base(table: Table, base: Path) -> Table:
    from dataclasses import replace

    return replace(table, base_dir=base)
