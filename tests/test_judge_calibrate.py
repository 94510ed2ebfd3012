"""`parley judge`: people's labels imported (bad rows located) and exported, a scripted judge
calibrated on them with the exact figures a person works out by hand, two labellers' own kappa,
several judges side by side, a jury with a failing juror, and the calibration carried by every later verdict of that judge
(`--min-kappa`, `--require-calibrated` with `--strict`, `parley compare`)."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest

from parley.core.evaluation import CLAIMS_CRITERION
from parley.core.store import Store, all_labels
from tests.calibration_support import (
    JUDGE,
    JUDGED,
    NAMES_ORDER,
    POLITE,
    ScriptedJudge,
    conversation_keys,
    label_rows,
    make_labelled_suite,
    run_offline,
    store_labels,
    stored_labels,
)
from tests.lineage_support import PROFILES, parley


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """The shared model clients a test's commands opened are closed."""


@pytest.fixture
def labelled(tmp_path):
    """An offline batch of the four profiles, alice's labels on every conversation."""
    db = tmp_path / "p.db"
    suite = make_labelled_suite(tmp_path / "suite")
    batch = run_offline(suite, db)
    ids = conversation_keys(db, batch)
    store_labels(db, label_rows(ids))
    return db, batch, ids, suite


def env(server):
    return {"FAKE_BASE_URL": server.base_url}


def calibrate(db, server, *args):
    result = parley("judge", "calibrate", "--labels", "stored", *args, "--format", "json", "--db", db, env=env(server))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def item(calibration, item_id):
    return next(i for i in calibration["items"] if i["item_id"] == item_id)


def test_bad_rows_of_a_label_file_are_each_located_and_nothing_is_stored(tmp_path, labelled):
    db, _, ids, _ = labelled
    before = stored_labels(db)
    path = tmp_path / "bad.csv"
    first = ids["ORD-1003"]
    path.write_text(
        "conversation_id,kind,criterion_id,criterion,label,labeller,note\n"
        f"{first},,names-order,,met,carol,fine\n"
        f"{first},,names-order,,yes,carol,\n"
        f"{first},rubric,rubric-default,,met,carol,\n"
        f"{first},feeling,,x,met,carol,\n"
        f"no-such-conversation,,polite,,met,carol,\n"
        f"{first},,names-order,,not met,carol,again\n",
        encoding="utf-8",
    )
    result = parley("judge", "labels", "import", path, "--db", db)
    assert result.exit_code == 1
    assert f"{path}:3: label: expected met, not_met, not_applicable or 1-3, got 'yes'" in result.stderr
    assert f"{path}:4: label: a rubric's label is a score, 1, 2 or 3, not met" in result.stderr
    assert f"{path}:5: kind: expected criterion, rubric or check, got 'feeling'" in result.stderr
    assert f"{path}:7: the same labeller's label on the same item as line 2" in result.stderr
    assert stored_labels(db) == before

    path.write_text(f"conversation_id,criterion_id,label,labeller\nno-such-conversation,polite,met,carol\n{first},polite,met,carol\n")
    result = parley("judge", "labels", "import", path, "--db", db)
    assert result.exit_code == 1
    assert f"{path}:2: conversation_id: no stored conversation 'no-such-conversation'" in result.stderr
    assert stored_labels(db) == before


def test_labels_exported_and_imported_again_come_back_the_same(tmp_path, labelled):
    db, _, ids, _ = labelled
    exported = parley("judge", "labels", "export", "-", "--db", db)
    assert exported.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert len(rows) == 12 and {r["labeller"] for r in rows} == {"alice"}
    names = next(r for r in rows if r["conversation_id"] == ids["ORD-9999"] and r["criterion_id"] == "names-order")
    assert (names["kind"], names["label"], names["note"]) == ("criterion", "not_met", "on ORD-9999")
    polite = next(r for r in rows if r["criterion"] == POLITE)
    assert polite["criterion_id"].startswith("c-")  # made from its text, as the import had it

    for suffix in ("csv", "jsonl"):
        copy = tmp_path / f"again-{suffix}.db"
        with Store.open(db) as store:
            store.db.execute("VACUUM INTO ?", [str(copy)])
        with Store.open(copy) as store:  # the same conversations, none of the labels
            store.db.execute("DELETE FROM labels")
            store.db.conn.commit()
        out = tmp_path / f"labels.{suffix}"
        assert parley("judge", "labels", "export", out, "--db", db).exit_code == 0
        imported = parley("judge", "labels", "import", out, "--db", copy)
        assert imported.exit_code == 0 and "imported 12 label(s) on 4 conversation(s)" in imported.stdout
        with Store.open(db) as one, Store.open(copy) as two:
            assert all_labels(one) == all_labels(two)


def test_a_blank_export_lists_every_item_to_label_elsewhere_and_rows_left_blank_are_skipped(tmp_path, labelled):
    db, batch, ids, _ = labelled
    path = tmp_path / "to-label.csv"
    exported = parley("judge", "labels", "export", path, "--blank", batch[:8], "--db", db)
    assert exported.exit_code == 0
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    mine = [r for r in rows if r["conversation_id"] == ids["ORD-1003"]]
    kinds = [(r["kind"], r["criterion_id"] or r["criterion"]) for r in mine]
    assert kinds[:4] == [("criterion", "names-order"), ("criterion", "polite"), ("criterion", "claims"), ("rubric", "rubric-default")]
    assert ("check", "track_order called") in kinds and all(r["label"] == "" for r in rows)
    assert f"wrote {len(rows)} row(s) to label to {path}" in exported.stderr
    mine[0].update(label="not_met", labeller="dora")
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    imported = parley("judge", "labels", "import", path, "--db", db)
    assert imported.exit_code == 0 and "imported 1 label(s) on 1 conversation(s)" in imported.stdout
    assert f"{len(rows) - 1} row(s) of {path} have no label yet: skipped" in imported.stderr
    with Store.open(db) as store:
        [dora] = [x for x in all_labels(store) if x.labeller == "dora"]
    assert (dora.conversation_id, dora.item_id, dora.value) == (ids["ORD-1003"], "names-order", "not_met")


def test_a_scripted_judge_gives_the_figures_worked_out_by_hand(labelled, server):
    db, _, ids, _ = labelled
    server.responder = ScriptedJudge()
    [calibration] = calibrate(db, server, "--judge", JUDGE)
    assert calibration["key"]["model"] == JUDGE and calibration["key"]["endpoint"] == server.base_url.rstrip("/")
    assert calibration["key"]["generation"]["temperature"] == 0.0 and calibration["key"]["prompt_version"].startswith("p-")
    assert calibration["conversations"] == 4
    assert {r.body["model"] for r in server.requests} == {"judge"}  # the judge alone: no bot, no customer
    assert len(server.requests) == 8  # a score and a criteria call per conversation

    names = item(calibration, "names-order")
    assert names["text"] == NAMES_ORDER and names["labels"] == 4 and names["judge_errors"] == 0
    assert names["agreement"] == pytest.approx(0.75) and names["kappa"] == pytest.approx(0.5)
    assert names["confusion"] == [[2, 0, 0], [1, 1, 0], [0, 0, 0]]
    low, high = names["interval"]
    assert -1.0 <= low <= 0.5 <= high <= 1.0
    [false_pass] = names["disagreements"]
    assert false_pass["false_pass"] and false_pass["conversation_id"] == ids["ORD-9999"]
    assert (false_pass["label"], false_pass["judged"], false_pass["labeller"]) == ("not_met", "met", "alice")
    assert false_pass["quote"] == "ORD-9999" and false_pass["reason"] == "Judged met on ORD-9999." and false_pass["note"] == "on ORD-9999"

    polite = next(i for i in calibration["items"] if i["text"] == POLITE)
    assert polite["one_class"] and polite["kappa"] is None and polite["interval"] is None and polite["labels"] == 4
    [false_fail] = polite["disagreements"]
    assert not false_fail["false_pass"] and (false_fail["label"], false_fail["judged"]) == ("met", "not_met")

    assert calibration["overall"]["labels"] == 8 and calibration["overall"]["kappa"] == pytest.approx(1 / 3)
    rubric = item(calibration, "rubric-default")
    assert rubric["weighted"] and rubric["kappa"] == pytest.approx(0.8) and rubric["agreement"] == pytest.approx(0.75)
    assert rubric["confusion"] == [[1, 0, 0], [0, 1, 1], [0, 0, 1]]
    [generous] = rubric["disagreements"]
    assert generous["false_pass"] and (generous["label"], generous["judged"]) == ("2", "3")

    listed = parley("judge", "calibrations", "--db", db)
    assert listed.exit_code == 0 and calibration["id"][:12] in listed.stdout and JUDGE in listed.stdout
    shown = parley("judge", "calibrations", calibration["id"][:8], "--db", db).stdout
    assert "FALSE PASS" in shown and 'quote "ORD-9999"' in shown and "0.50 [" in shown and "undefined (one label value)" in shown


def test_two_labellers_give_their_own_kappa_the_ceiling(labelled, server):
    db, _, ids, _ = labelled
    bob = {key: (names, "met", score) for key, (names, _, score) in
           {"ORD-1003": ("met", "", "3"), "my orders": ("not_met", "", "2"), "ORD-9999": ("not_met", "", "1"),
            "ORD-1006": ("not_met", "", "2")}.items()}  # fmt: skip
    store_labels(db, label_rows(ids, "bob", bob))
    server.responder = ScriptedJudge()
    [calibration] = calibrate(db, server, "--judge", JUDGE)
    names = item(calibration, "names-order")
    # alice: met met not_met not_met; bob: met not_met not_met not_met -> observed 3/4, expected 1/2
    assert names["labellers_kappa"] == pytest.approx(0.5) and names["labellers_items"] == 4
    assert names["labels"] == 8  # each labeller's label is compared with the judge
    assert {d["labeller"] for d in names["disagreements"]} == {"alice", "bob"}
    rubric = item(calibration, "rubric-default")
    assert rubric["labellers_kappa"] == pytest.approx(1.0)


def test_several_judges_are_measured_on_the_same_labels_side_by_side(labelled, server):
    db, _, _, _ = labelled
    other = "openai-api/fake/other"  # agrees with alice on names-order everywhere (ORD-9999 not met too)
    server.responder = ScriptedJudge(overrides={"other": {**JUDGED, "ORD-9999": ("not met", "not met", 1)}})
    result = parley("judge", "calibrate", "--labels", "stored", "--judge", JUDGE, "--judge", other, "--db", db, env=env(server))
    assert result.exit_code == 0, result.output
    compared = result.stdout.split("Judges compared (kappa per item):\n")[1].splitlines()
    assert compared[0].split() == ["Item", JUDGE, other]
    names = next(line for line in compared if "(names-order)" in line)
    assert names.split("(names-order)")[1].split() == ["0.50", "[0.00,", "1.00]", "1.00", "[1.00,", "1.00]"]  # kappa, interval
    listed = parley("judge", "calibrations", "--db", db).stdout
    assert JUDGE in listed and other in listed  # each stored under its own key


def test_a_jury_leaves_a_failing_juror_out_of_the_vote_and_counts_it(labelled, server):
    db, _, _, _ = labelled
    jurors = ["openai-api/fake/a", "openai-api/fake/b", "openai-api/fake/c"]
    server.responder = ScriptedJudge(failing={"c"})
    [jury] = calibrate(db, server, "--jury", ",".join(jurors))
    assert jury["key"]["model"] == "jury:" + ",".join(jurors)
    assert jury["juror_errors"] == {"openai-api/fake/c": 16}  # 4 scores and 4 x 3 criteria, none a vote
    assert item(jury, "names-order")["kappa"] == pytest.approx(0.5) and item(jury, "rubric-default")["kappa"] == pytest.approx(0.8)

    split = ScriptedJudge(failing={"c"})
    split.overrides["b"] = {**split.decisions, "ORD-9999": ("not met", "not met", 1)}
    server.responder = split
    [jury] = calibrate(db, server, "--jury", ",".join(jurors))
    names = item(jury, "names-order")
    assert names["judge_errors"] == 1 and names["labels"] == 3  # a 1-1 split decides nothing
    assert names["disagreements"] == []


def test_every_later_verdict_of_the_judge_carries_its_calibration(labelled, server):
    db, batch, ids, _ = labelled
    server.responder = ScriptedJudge()
    calibrate(db, server, "--judge", JUDGE)
    result = parley("rescore", batch, "--judge", JUDGE, "--min-kappa", "0.4", "--db", db, env=env(server))
    assert "Judge calibration: score: κw 0.80; " in result.stdout
    assert f"{NAMES_ORDER}: κ 0.50" in result.stdout and f"{POLITE}: κ undefined" in result.stdout
    assert "uncalibrated" in result.stdout  # the built-in criterion: nobody labelled it
    with Store.open(db) as store:
        rescored = store.resolve_batch_ref("latest")
    report = parley("report", rescored, "--db", db).stdout
    assert f"| {NAMES_ORDER} | 3 | 1 | 0 | 0 | 0 | κ 0.50 |" in report
    assert f"| {POLITE} | 3 | 1 | 0 | 0 | 0 | κ undefined |" in report
    assert "The judge's calibration on the rubric it scored: κw 0.80." in report
    exported = json.loads(parley("report", rescored, "--format", "json", "--db", db).stdout)
    one = exported["results"][0]
    marks = {c["criterion"]: (c["criterion_id"], c["calibration"]) for c in one["criteria"]}
    assert marks[NAMES_ORDER] == ("names-order", "κ 0.50") and marks[POLITE] == ("polite", "κ undefined")
    assert marks[CLAIMS_CRITERION] == ("claims", "uncalibrated")
    assert one["judge_calibration"] == "κw 0.80"
    table = list(csv.DictReader(io.StringIO(parley("report", rescored, "--format", "csv", "--db", db).stdout)))
    assert table[0][f"judge calibration: {NAMES_ORDER}"] == "κ 0.50" and table[0]["judge calibration: score"] == "κw 0.80"
    html = parley("report", rescored, "--format", "html", "--db", db).stdout
    assert "<td>κ 0.50</td>" in html and "<td>κ undefined</td>" in html and "<td>uncalibrated</td>" in html
    junit = parley("report", rescored, "--format", "junit", "--db", db).stdout
    assert f"{NAMES_ORDER} [κ 0.50] (not met" in junit and "score: 2 [κw 0.80]" in junit  # ORD-1006's failure
    shown = parley("sessions", "show", ids["ORD-1006"], "--db", db).stdout  # the original, judged offline: nothing marked
    assert "κ" not in shown and "uncalibrated" not in shown
    with Store.open(db) as store:
        again = next(s.conversation.id for s in store.iter_conversations(rescored) if "ORD-1006" in s.conversation.messages[0].content)
    shown = parley("sessions", "show", again, "--db", db).stdout
    assert f"{NAMES_ORDER} [κ 0.50]" in shown and "score 2 [κw 0.80]" in shown and "[uncalibrated]" in shown

    stricter = parley("rescore", batch, "--judge", JUDGE, "--db", db, env=env(server))  # --min-kappa 0.6, the default
    assert f"{NAMES_ORDER}: below threshold (κ 0.50 < 0.6)" in stricter.stdout
    assert "score: κw 0.80" in stricter.stdout

    other = parley("rescore", batch, "--judge", "openai-api/fake/other", "--db", db, env=env(server))
    assert f"{NAMES_ORDER}: uncalibrated" in other.stdout
    compared = parley("compare", "latest~1", "latest", "--db", db)
    assert "The two batches were judged by differently calibrated judges" in compared.stdout
    assert f"{NAMES_ORDER}: below threshold (κ 0.50 < 0.6) vs uncalibrated" in compared.stdout
    assert "judged by differently calibrated judges" in compared.stderr


def test_require_calibrated_with_strict_fails_a_conversation_only_an_uncalibrated_criterion_passed(tmp_path, server):
    suite = tmp_path / "suite"
    text = (PROFILES / "track_shipped_order.yaml").read_text(encoding="utf-8")
    head = text[: text.index("\nexpect:") + 1]
    shutil.copytree(PROFILES / "personalities", suite / "personalities")
    (suite / "only_words.yaml").write_text(head + f"expect:\n  criteria:\n    - {{id: names-order, text: {NAMES_ORDER}}}\n")
    db = tmp_path / "w.db"
    offline = parley("run", suite, "--db", db)
    assert offline.exit_code == 0 and "1 unverified" in offline.stdout  # offline, nobody decided the criterion
    server.responder = ScriptedJudge()
    counted = parley("rescore", "latest~0", "--judge", JUDGE, "--strict", "--db", db, env=env(server))
    assert counted.exit_code == 0, counted.output  # the uncalibrated judge's "met" passes it, as before
    assert "1 passed" in counted.stdout
    trusted_only = parley("rescore", "latest~1", "--judge", JUDGE, "--require-calibrated", "--db", db, env=env(server))
    assert trusted_only.exit_code == 0 and "0 passed" in trusted_only.stdout and "1 unverified" in trusted_only.stdout
    assert "--require-calibrated: only verdicts of a judge calibrated at κ 0.6 or more count towards a pass" in trusted_only.stdout
    strict = parley("rescore", "latest~2", "--judge", JUDGE, "--require-calibrated", "--strict", "--db", db, env=env(server))
    assert strict.exit_code == 1 and "1 unverified" in strict.stdout
    with Store.open(db) as store:
        batch = store.get_batch("latest")
        [stored] = list(store.iter_conversations(batch.id))
    assert batch.options.require_calibrated and batch.options.min_kappa == 0.6
    criterion = next(c for c in stored.verdict.checks if c.kind == "criterion" and not c.by_default)
    assert criterion.outcome == "pass" and criterion.untrusted and criterion.details["calibration"]["text"] == "uncalibrated"


def test_a_jury_judges_a_run_too(tmp_path, server):
    suite = make_labelled_suite(tmp_path / "suite")
    server.responder = ScriptedJudge(failing={"c"})
    db = tmp_path / "j.db"
    jury = "openai-api/fake/a,openai-api/fake/c,openai-api/fake/b"
    result = parley("run", suite, "--jury", jury, "--db", db, env=env(server))
    assert result.exit_code == 1, result.output  # ORD-1006: names-order not met
    with Store.open(db) as store:
        stored = list(store.iter_conversations(store.resolve_batch_ref("latest")))
    verdict = stored[0].verdict
    assert verdict.judge.judge == "jury:" + jury and verdict.judge.jurors["openai-api/fake/c"].startswith("error: ")
    names = next(c for c in verdict.checks if c.details.get("criterion_id") == "names-order")
    assert names.details["jurors"]["openai-api/fake/a"] in ("met", "not met") and names.details["jurors"]["openai-api/fake/c"].startswith(
        "error"
    )
    both = parley("run", suite, "--jury", jury, "--judge", JUDGE, "--db", db)
    assert both.exit_code == 2 and "not both" in both.output
    again = parley("rescore", "latest", "--jury", "openai-api/fake/a,openai-api/fake/b", "--db", db, env=env(server))
    assert again.exit_code == 1, again.output
    with Store.open(db) as store:
        rescored = store.get_batch("latest")
        [first, *_] = list(store.iter_conversations(rescored.id))
    assert rescored.options.models.judge == "jury:openai-api/fake/a,openai-api/fake/b"
    assert first.verdict.judge.jurors == {"openai-api/fake/a": str(first.verdict.score), "openai-api/fake/b": str(first.verdict.score)}
