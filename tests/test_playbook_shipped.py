"""Every shipped playbook passes against the offline bot, the reference implementation."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.core.bots.world_bot import WorldBot
from parley.core.engine.playbook_run import run_playbook
from parley.core.engine.spec_worlds import WorldTemplates
from parley.core.specs.playbook import load_playbook, playbook_spec
from parley.worlds.orders.offline_bot import OfflineOrderModel
from tests.conftest import PINNED_TODAY

PLAYBOOKS = sorted((Path(__file__).parent.parent / "profiles" / "playbooks").glob("*.yaml"))


def test_seven_playbooks_ship_three_tracking_and_four_cancellation():
    names = [load_playbook(p).name for p in PLAYBOOKS]
    assert len(names) == 7
    assert sum("track" in n for n in names) == 3
    assert sum("cancel" in n for n in names) == 4


@pytest.mark.parametrize("path", PLAYBOOKS, ids=lambda p: p.stem)
async def test_shipped_playbook_passes_offline(path):
    spec = playbook_spec(load_playbook(path), seed=0)
    world = WorldTemplates().new_copy(spec, PINNED_TODAY)
    try:
        conv = await run_playbook(spec, world=world, bot=WorldBot(OfflineOrderModel()))
    finally:
        world.close()
    assertions = conv.metadata["assertions"]
    assert assertions, "a playbook without assertions tests nothing"
    failed = [a for a in assertions if not a["passed"]]
    assert not failed, failed
    assert conv.stop_reason == "user_stop"
    for ref, fields in (spec.expect.records if spec.expect else {}).items():
        table, key = ref.split("/", 1)
        row = conv.final_state.final_row(table, key)
        assert row is not None and {f: row.get(f) for f in fields} == fields, (ref, row)


def test_shipped_playbooks_document_their_format():
    for path in PLAYBOOKS:
        head = path.read_text(encoding="utf-8").splitlines()[:14]
        for kind in ("user:", "inject_bot_response:", "inject_tool:", "expect_tool:", "expect_bot_regex:"):
            assert any(line.startswith("#") and kind in line for line in head), (path.name, kind)
