"""What to run: the profile schema and loader, variables and expansion, playbooks, scenario files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.specs.chat_playbook import ChatTurns, playbook_from_chat, reply_regex, stated_values
    from parley.core.specs.expansion import resolve_any_items
    from parley.core.specs.file_world import FileWorld, world_problems_of
    from parley.core.specs.json_positions import load_positioned
    from parley.core.specs.label_files import (
        LABEL_COLUMNS,
        InvalidLabelFile,
        LabelFile,
        LabelFormat,
        LabelRow,
        blank_record,
        label_format,
        read_label_file,
        write_labels,
    )
    from parley.core.specs.places import FilePlaces
    from parley.core.specs.playbook import (
        PLAYBOOK_USER,
        ExpectBotRegexStep,
        ExpectToolStep,
        InjectBotResponseStep,
        InjectToolStep,
        JudgeStep,
        PlaybookAssertion,
        PlaybookCheckpoint,
        PlaybookStep,
        SimulateStep,
        UserStep,
        judge_steps,
        simulates,
        spec_steps,
        steps_problem,
    )
    from parley.core.specs.profile_loader import check_profile_text, load_profile, read_personality
    from parley.core.specs.profile_validation import did_you_mean
    from parley.core.specs.scenario_file import parse_scenarios
    from parley.core.specs.shipped import SHIPPED_DIR, copy_suite
    from parley.core.specs.sources import SpecSet, load_specs, load_specs_as, read_profile
    from parley.core.specs.text_patterns import (
        BACKTRACKING_MAX_CHARS,
        TextMatch,
        TextPattern,
        TooLongToMatch,
        compile_pattern,
    )
    from parley.core.specs.yaml_reading import read_yaml, read_yaml_documents

__all__ = [
    "FileWorld",
    "world_problems_of",
    "LABEL_COLUMNS",
    "InvalidLabelFile",
    "LabelFile",
    "LabelFormat",
    "LabelRow",
    "blank_record",
    "label_format",
    "read_label_file",
    "write_labels",
    "ChatTurns",
    "playbook_from_chat",
    "reply_regex",
    "stated_values",
    "check_profile_text",
    "load_profile",
    "BACKTRACKING_MAX_CHARS",
    "ExpectBotRegexStep",
    "ExpectToolStep",
    "FilePlaces",
    "InjectBotResponseStep",
    "InjectToolStep",
    "JudgeStep",
    "PLAYBOOK_USER",
    "PlaybookAssertion",
    "PlaybookCheckpoint",
    "PlaybookStep",
    "SHIPPED_DIR",
    "SimulateStep",
    "SpecSet",
    "TextMatch",
    "TextPattern",
    "TooLongToMatch",
    "UserStep",
    "compile_pattern",
    "copy_suite",
    "did_you_mean",
    "judge_steps",
    "load_positioned",
    "load_specs",
    "load_specs_as",
    "parse_scenarios",
    "read_personality",
    "read_profile",
    "read_yaml",
    "read_yaml_documents",
    "resolve_any_items",
    "simulates",
    "spec_steps",
    "steps_problem",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
