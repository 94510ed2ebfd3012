"""parley's Python API: test a customer-service bot from your own code and test runner.

Build conversations in code (or load profiles, playbooks and scenario files), run them against a
bot (a model, a deployed bot, or a Python callable of your own) as one stored batch, and read
the results as the records parley keeps: each conversation with its verdict, every check with
its reason and evidence, and the batch's summary with its intervals. Every run is an ordinary
batch (source `python`): `parley batches list` lists it, the app browses it, `parley compare`
compares it.

    from parley.api import conversation, run_sync

    def my_bot(messages, tools):
        ...
        return "I have cancelled ORD-1004."

    result = run_sync(conversation("cancel", goals=["cancel order ORD-1004"], orders={"ORD-1004": "cancelled"}), bot=my_bot)
    assert result.passed, result.explain()

Installed as `parley.api`; every name below comes from a public face of parley's engine
(parley.core's packages), and the package ships `py.typed`, so mypy checks your use of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.bots import AsyncTools, PythonBotError, Tools
    from parley.core.errors import ConfigError, ParleyError, ProfileError
    from parley.core.evaluation import (
        BatchSummary,
        CheckAnswer,
        CheckedConversation,
        Customer,
        FinalState,
        Interval,
        Message,
        RowChange,
        ToolUse,
        failed,
        not_applicable,
        passed,
    )
    from parley.core.library import (
        BatchSession,
        BotArg,
        ConversationResult,
        RunResult,
        SpecsInvalid,
        checkpoint,
        conversation,
        expect_reply,
        expect_tool,
        inject_reply,
        inject_tool,
        load_specs,
        run,
        run_sync,
        say,
        simulate,
    )
    from parley.core.records import (
        ChatMessage,
        CheckResult,
        Conversation,
        ConversationSpec,
        Expectations,
        JudgeSpec,
        PythonCheck,
        RecordChange,
        ToolCallRecord,
        Verdict,
        WorldDiff,
    )
    from parley.core.world import (
        ConversationIdentity,
        Refused,
        Rule,
        RuleCall,
        SessionIdentity,
        Table,
        ToolContext,
        WorldDB,
        WorldDefinition,
        WorldMutant,
        WorldTool,
        load_world,
        tool,
    )

__all__ = [
    "CheckAnswer",
    "CheckedConversation",
    "Customer",
    "FinalState",
    "Message",
    "RowChange",
    "ToolUse",
    "failed",
    "not_applicable",
    "passed",
    "AsyncTools",
    "BatchSession",
    "BatchSummary",
    "BotArg",
    "ChatMessage",
    "CheckResult",
    "ConfigError",
    "Conversation",
    "ConversationIdentity",
    "ConversationResult",
    "ConversationSpec",
    "Expectations",
    "Interval",
    "JudgeSpec",
    "ParleyError",
    "ProfileError",
    "PythonCheck",
    "PythonBotError",
    "Refused",
    "Rule",
    "RuleCall",
    "RunResult",
    "SessionIdentity",
    "SpecsInvalid",
    "Table",
    "ToolCallRecord",
    "ToolContext",
    "Tools",
    "Verdict",
    "WorldDiff",
    "RecordChange",
    "WorldDB",
    "WorldDefinition",
    "WorldMutant",
    "WorldTool",
    "checkpoint",
    "conversation",
    "expect_reply",
    "expect_tool",
    "inject_reply",
    "inject_tool",
    "load_specs",
    "load_world",
    "run",
    "run_sync",
    "say",
    "simulate",
    "tool",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
