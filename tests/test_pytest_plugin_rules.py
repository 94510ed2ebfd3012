"""Sensei rule files in the pytest plugin (`--parley-rules DIR`), run as a user runs it: a rule about
one conversation is a check of its item; the pair and batch rules are decided when the session
ends, shown in pytest's summary with their `yields`, stored with the batch, and a failed one fails
the session; a rules folder that is not there, or a rule file with problems, is a usage error."""

from __future__ import annotations

from pathlib import Path

from parley.core.store import Store, batch_rule_summaries
from tests.rules_support import TRACKING_PROFILE, rule_text, write_rules
from tests.test_pytest_plugin import pytest_run

# tracking#0 asks about ORD-1003 (shipped: the offline bot gives its tracking number), tracking#1
# about ORD-1001 (not shipped: it gives none).
ANSWERS = rule_text("len(chatbot_phrases) > 0", name="answers")
HAS_TRACKING = rule_text("'1Z' in tracking", name="has_tracking", yields='f"no tracking number for {order[0]}"')
EVERY_TRACKING = rule_text(
    "num_exist(\"'1Z' in tracking\") == 2", name="every_tracking", conversations="all", yields='"not every customer got a tracking number"'
)


def project(tmp_path: Path, rules: dict[str, str]) -> Path:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "tracking.yaml").write_text(TRACKING_PROFILE, encoding="utf-8")
    write_rules(tmp_path / "rules", rules)
    return tmp_path


def test_a_rule_about_one_conversation_fails_its_item_with_the_yields_text(tmp_path):
    cwd = project(tmp_path, {"answers.yaml": ANSWERS, "tracking.yaml": HAS_TRACKING})
    done = pytest_run("--parley", "suite/", "--parley-rules", "rules/", "--parley-db", "p.db", "-rA", cwd=cwd)
    out = done.stdout
    assert done.returncode == 1, out[-3000:] + done.stderr[-2000:]
    assert "PASSED suite/tracking.yaml::tracking#0[1]" in out, "a held rule is a check the author asked for: the Sensei profile passes"
    assert "FAILED suite/tracking.yaml::tracking#1[1]" in out
    assert "rule:tracking.yaml: has_tracking: no tracking number for ORD-1001" in out
    assert "Rules over pairs and the batch" not in out  # no pair or batch rule: nothing decided at the end


def test_a_failed_batch_rule_fails_the_session_and_shows_its_yields(tmp_path):
    cwd = project(tmp_path, {"answers.yaml": ANSWERS, "batch/every_tracking.yaml": EVERY_TRACKING})
    done = pytest_run("--parley", "suite/", "--parley-rules", "rules/", "--parley-db", "p.db", cwd=cwd)
    out = done.stdout
    assert "2 passed" in out, out[-3000:] + done.stderr[-2000:]
    assert done.returncode == 1, "a failed batch rule fails the session, as it fails `parley run --rules`"
    assert "parley: Rules over pairs and the batch: 1 rule, 1 failed" in out
    assert "  - batch/every_tracking.yaml (every_tracking), the batch: pass 0, fail 1, not applicable 0" in out
    assert "      the batch of 2: not every customer got a tracking number" in out
    assert "parley: the session fails: 1 pair or batch rule of --parley-rules failed, as they fail `parley run --rules`" in out
    with Store.open(cwd / "p.db", read_only=True) as store:
        [row] = store.list_batches()
        [stored] = batch_rule_summaries(store, row.id)
    assert row.batch.status == "completed" and row.batch.options.rules == str(cwd / "rules")
    assert (stored.rule_file, stored.counts) == ("batch/every_tracking.yaml", {"fail": 1})


def test_held_pair_and_batch_rules_leave_the_session_passing(tmp_path):
    # Sensei's `number` (its test's conversations) counts what the session ran, as the batch's export does
    counted = rule_text("number == 2", name="counted", yields='f"number is {number}"')
    differ = rule_text("conv[0].tracking != conv[1].tracking", name="differ", conversations=2)
    some = rule_text("exists(\"'1Z' in tracking\")", name="some", conversations="all")
    cwd = project(tmp_path, {"counted.yaml": counted, "pairs.yaml": differ, "some.yaml": some})
    done = pytest_run("--parley", "suite/", "--parley-rules", "rules/", "--parley-db", "p.db", cwd=cwd)
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert "parley: Rules over pairs and the batch: 2 rules, 0 failed" in done.stdout


def test_a_rules_folder_that_is_not_there_or_a_bad_rule_file_is_a_usage_error(tmp_path):
    cwd = project(tmp_path, {"bad.yaml": "name: bad\ndescription: reads a file\nconversations: 1\noracle: __import__('os')\n"})
    missing = pytest_run("--parley", "suite/", "--parley-rules", "nowhere", cwd=cwd)
    assert missing.returncode == 4 and "ERROR: --parley-rules nowhere: no such file or folder (from " in missing.stderr
    bad = pytest_run("--parley", "suite/", "--parley-rules", "rules", cwd=cwd)
    assert bad.returncode == 4
    assert "ERROR: --parley-rules rules: 1 problem in the input files; nothing was run:" in bad.stderr
    assert "rules/bad.yaml:4: bad.oracle: the name __import__ is not allowed in a rule" in bad.stderr
    assert not (cwd / "sessions").exists(), "nothing ran, nothing was stored"
