"""The world API: what a world declares (data, tools, policy, identity, ownership, rules), the private copy of its database per conversation, running its tools, comparing two states of a world, and finding a world by name or path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.world.attack_targets import AttackTarget, attack_target, customers_of, target_table
    from parley.core.world.checking import world_problems
    from parley.core.world.comparison import FieldDifference, RecordDifference, StateComparison, compare_states, compare_values
    from parley.core.world.database import WorldClock, WorldCopy, WorldDB, WorldTemplate
    from parley.core.world.declaration import (
        ACTIONS,
        ChatCommand,
        ChatView,
        ConversationIdentity,
        Rule,
        RuleCall,
        SessionIdentity,
        WorldDefinition,
        WorldMutant,
    )
    from parley.core.world.executor import IDENTITY_ARGUMENTS, WorldTools, result_text
    from parley.core.world.facts import world_facts
    from parley.core.world.hooks import change_note, customer_knows_credentials, goal_tools, leaderboard, misspellings, state_note
    from parley.core.world.id_reading import RecordKey, key_of, keys_of, record_ids, same_record
    from parley.core.world.leak_index import HeldValue, LeakIndex, leak_index
    from parley.core.world.overrides import merge_overrides, override_problems
    from parley.core.world.registry import BUILT_IN, DEFAULT_WORLD, WorldError, known_bots, known_worlds, load_world
    from parley.core.world.serving import ServedWorldTools, WorldServer
    from parley.core.world.spec_world import conversation_world, world_of
    from parley.core.world.tables import COLUMN_TYPES, ColumnType, Table, TableError
    from parley.core.world.tool_declaration import RefusalKind, Refused, ToolContext, WorldTool, declare_tool, tool

__all__ = [
    "WorldMutant",
    "ServedWorldTools",
    "WorldServer",
    "AttackTarget",
    "attack_target",
    "customers_of",
    "target_table",
    "HeldValue",
    "LeakIndex",
    "leak_index",
    "ACTIONS",
    "ChatCommand",
    "ChatView",
    "BUILT_IN",
    "COLUMN_TYPES",
    "ColumnType",
    "ConversationIdentity",
    "DEFAULT_WORLD",
    "FieldDifference",
    "IDENTITY_ARGUMENTS",
    "Refused",
    "RecordDifference",
    "RefusalKind",
    "Rule",
    "RuleCall",
    "SessionIdentity",
    "StateComparison",
    "Table",
    "TableError",
    "ToolContext",
    "WorldClock",
    "WorldCopy",
    "WorldDB",
    "WorldDefinition",
    "WorldError",
    "WorldTemplate",
    "WorldTool",
    "WorldTools",
    "change_note",
    "compare_states",
    "conversation_world",
    "compare_values",
    "customer_knows_credentials",
    "declare_tool",
    "goal_tools",
    "known_bots",
    "leaderboard",
    "known_worlds",
    "load_world",
    "merge_overrides",
    "misspellings",
    "override_problems",
    "RecordKey",
    "key_of",
    "keys_of",
    "record_ids",
    "result_text",
    "same_record",
    "state_note",
    "tool",
    "world_facts",
    "world_of",
    "world_problems",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
