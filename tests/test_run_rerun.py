"""`parley run --rerun WHAT BATCH`: a new batch of exactly the parent's conversations WHAT
picks, with the seeds they had, linked to the parent; then `parley compare` shows what got
fixed."""

from __future__ import annotations

import pytest

from parley.core.store.store import Store
from tests.lineage_support import FAILING_CHECK, FAILING_NAME, fix_failing_profile, make_suite, parley


@pytest.fixture
def suite(tmp_path):
    return make_suite(tmp_path / "suite")


@pytest.fixture
def parent(tmp_path, suite):
    """A stored batch of the suite with 2 trials: 6 passed, 2 failed (the failing spec twice)."""
    db = tmp_path / "p.db"
    result = parley("run", suite, "--trials", "2", "--seed", "11", "--db", db)
    assert result.exit_code == 1, result.output
    with Store.open(db) as store:
        return db, store.resolve_batch_ref("latest")


def _conversations(db, batch_id):
    with Store.open(db) as store:
        return {(c.spec.spec_id, c.trial): c for c in store.iter_conversations(batch_id)}


def test_a_rerun_of_the_failures_runs_exactly_them_with_their_seeds(parent):
    db, parent_id = parent
    result = parley("run", "--rerun", "failed", parent_id[:8], "--db", db)
    assert result.exit_code == 1, result.output  # they still fail: nothing was changed
    assert f"started (re-run of {parent_id}): 2 conversations" in result.stdout
    with Store.open(db) as store:
        child = store.get_batch("latest")
        assert child.parent_id == parent_id and child.options.rerun == ["failed"] and child.planned == 2
        assert child.options.seed == 11 and child.options.trials == 2
    ran = _conversations(db, child.id)
    before = _conversations(db, parent_id)
    assert sorted(ran) == [(f"{FAILING_NAME}#0", 1), (f"{FAILING_NAME}#0", 2)]
    for key, stored in ran.items():
        assert stored.spec.seed == before[key].spec.seed  # the very seed each trial had
        assert stored.conversation.messages[0].content == before[key].conversation.messages[0].content
        assert [c.name for c in stored.verdict.failed_checks] == [FAILING_CHECK]

    shown = parley("batches", "show", "latest", "--db", db)
    assert f"Made from: re-run of {parent_id} (failed conversations, same seeds)" in shown.stdout
    listed = parley("batches", "list", "--db", db).stdout.splitlines()
    assert listed[1].startswith(child.id[:12]) and f"re-run {parent_id[:8]}" in listed[1]
    parent_shown = parley("batches", "show", parent_id, "--db", db)
    assert f"Made into: batch {child.id} (completed), re-run (failed)" in parent_shown.stdout


def test_after_the_fix_compare_shows_the_failures_fixed(parent, suite):
    db, parent_id = parent
    fix_failing_profile(suite)
    rerun = parley("run", "--rerun", "failed", "latest", "--db", db)
    assert rerun.exit_code == 0, rerun.output
    compared = parley("compare", parent_id, "latest", "--fail-on-regression", "--db", db)
    assert compared.exit_code == 0, compared.output
    out = compared.stdout
    assert "**Changed, within noise**: 0 regressions, 2 fixes" in out
    assert f"| {FAILING_NAME}#0 | 1 | failed | {FAILING_CHECK} |" in out and f"| {FAILING_NAME}#0 | 2 | failed |" in out
    assert "3 spec(s) the re-run did not include (6 conversations)" in out
    assert "## Missing specs" not in out
    assert "Pass rate | 0.0% (0 of 2)" in out and "100.0% (2 of 2)" in out


def test_models_may_change_the_rest_stays_the_parents(parent):
    db, parent_id = parent
    result = parley("run", "--rerun", "failed", "latest", "--trials", "5", "--seed", "3", "--judge", "offline", "--db", db)
    assert "note: a re-run keeps its parent's --trials, --seed; ignoring them" in result.stderr
    with Store.open(db) as store:
        child = store.get_batch("latest")
    assert (child.options.trials, child.options.seed, child.planned) == (2, 11, 2)


def test_several_selections_and_nothing_to_rerun(parent):
    db, parent_id = parent
    nothing = parley("run", "--rerun", "errors,unverified,user-faults", parent_id, "--db", db)
    assert nothing.exit_code == 0
    assert nothing.stdout.startswith(f"nothing to re-run: batch {parent_id} has no conversation that is ")
    with Store.open(db) as store:
        assert store.count_batches() == 1  # nothing stored
    both = parley("run", "--rerun", "failed,errors", parent_id, "--db", db)
    assert "2 conversations" in both.stdout


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--rerun", "broken", "latest"], 2, "'broken' is not one of failed, errors, unverified, user-faults"),
        (["--rerun", "failed"], 2, "requires 2 arguments"),
        (["--rerun", "failed", "latest", "SUITE"], 2, "not both PATH and --rerun"),
        (["--rerun", "failed", "latest", "--single", "0"], 2, "--single runs a new batch"),
        (["--rerun", "failed", "feedface00"], 1, "error: no batch 'feedface00'"),
        (["--replay", "latest", "--resume", "latest"], 2, "not both --resume and --replay"),
    ],
)
def test_rerun_mistakes_are_one_line_and_their_exit_code(parent, suite, args, code, message):
    db, _ = parent
    args = [str(suite) if a == "SUITE" else a for a in args]
    result = parley("run", "--db", db, *args)
    assert result.exit_code == code, result.output
    assert message in result.output


def test_a_rerun_whose_sources_are_gone_says_where_to_run_it(parent, suite):
    db, parent_id = parent
    (suite / f"{FAILING_NAME}.yaml").unlink()
    gone = parley("run", "--rerun", "failed", "latest", "--db", db)
    assert gone.exit_code == 1
    assert f"cannot re-run batch {parent_id}: its sources no longer make {FAILING_NAME}#0" in gone.stderr


def test_no_surface_lists_the_specs_a_rerun_left_out_as_missing(parent, suite):
    from parley.core.reports.compare import compare_batches, verdict_line
    from parley.tui.app.screens.compare_batches import summary_text

    db, parent_id = parent
    fix_failing_profile(suite)
    assert parley("run", "--rerun", "failed", "latest", "--db", db).exit_code == 0
    compared = parley("compare", parent_id, "latest", "--db", db)
    assert "missing" not in compared.stderr  # the verdict's line (CI logs)
    with Store.open(db) as store:
        comparison = compare_batches(store, parent_id, "latest")
    assert len(comparison.missing_specs) == 3 and comparison.missing_news == []
    assert "missing" not in verdict_line(comparison) and "missing" not in summary_text(comparison)  # the app's compare screen
