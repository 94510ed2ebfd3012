"""The schema's labels and calibrations: a database written before them gains both tables empty
when opened to write, and one opened read-only before that still answers (no label, no
calibration) instead of failing; two labellers' labels on one item are each kept."""

from __future__ import annotations

from click.testing import CliRunner

from parley.core.records import Label
from parley.core.store import all_labels, labels_of, list_calibrations, save_labels
from parley.core.store.schema import MIGRATIONS, _v6_labels_and_calibrations
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.test_store_fixtures import batch, conversation, spec

BEFORE_LABELS = MIGRATIONS[: MIGRATIONS.index(_v6_labels_and_calibrations)]


def label(conversation_id: str, labeller: str, value: str) -> Label:
    return Label(conversation_id=conversation_id, kind="criterion", item_id="names-order", item_text="", value=value, labeller=labeller)  # type: ignore[arg-type]


def test_a_database_from_before_labels_gains_the_tables_empty(tmp_path):
    path = tmp_path / "old.db"
    with Store.open(path, migrations=BEFORE_LABELS) as old:
        b = old.create_batch(batch())
        cid = old.save_conversation(b.id, spec(), conversation().model_copy(update={"tool_calls": []}))  # tool calls gained columns later
        assert not old.db["labels"].exists() and not old.db["calibrations"].exists()
    with Store.open(path, read_only=True) as read_only:  # not migrated: nothing labelled or measured yet
        assert all_labels(read_only) == [] and labels_of(read_only, cid) == [] and list_calibrations(read_only) == []
    listed = CliRunner().invoke(cli, ["judge", "calibrations", "--db", str(path)])
    assert listed.exit_code == 0 and "Traceback" not in listed.output, listed.output
    with Store.open(path) as store:
        assert store.schema_version() == len(MIGRATIONS)
        assert store.db["labels"].exists() and store.db["calibrations"].exists() and all_labels(store) == []
        save_labels(store, [label(cid, "alice", "met"), label(cid, "bob", "not_met")])
        save_labels(store, [label(cid, "alice", "not_applicable")])  # alice changes her mind: hers replaced, bob's kept
        assert {x.labeller: x.value for x in labels_of(store, cid)} == {"alice": "not_applicable", "bob": "not_met"}
        assert all(x.labelled_at is not None for x in labels_of(store, cid))
