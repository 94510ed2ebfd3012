"""How well does the claims detector tell "I did it" from everything else, and does it ever
accuse the offline bot?

Run: .venv/bin/python bench/bench_claims.py [--trials 3]

1. The labelled set (tests/data/claims_labelled.yaml): precision and recall of finding a claim
   (backed or unbacked vs no claim), and of finding an unbacked claim (what fails the check),
   over the whole set, over its held-out part (written after the phrase table was frozen), and
   per language.
2. The shipped suite, offline: `parley run profiles/ --trials K` in a child process on a fresh
   database, then every stored conversation's bot messages held against its actions. Prints
   the claims found and how many the detector calls unbacked. The offline bot never claims
   without acting, so the goal is 0.
3. The detector's cost: microseconds per bot message (median of 5 passes over the suite's
   messages), next to the wall time per conversation of the run above (its start-up included).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from parley.core.evaluation import find_claims, hold_claims  # noqa: E402
from parley.core.store import Store  # noqa: E402
from tests.claims_labelled import Labelled, detector_label, load_labelled  # noqa: E402


def _ratio(hits: int, total: int) -> str:
    return f"{hits / total:.3f} ({hits}/{total})" if total else "n/a (0/0)"


def precision_recall(items: list[Labelled], positive: set[str]) -> tuple[str, str]:
    said = [(item.label in positive, detector_label(item) in positive) for item in items]
    true_pos = sum(1 for truth, found in said if truth and found)
    return _ratio(true_pos, sum(1 for _, found in said if found)), _ratio(true_pos, sum(1 for truth, _ in said if truth))


def labelled_figures() -> None:
    items = load_labelled()
    held_out = [i for i in items if i.held_out]
    claims = sum(1 for i in items if i.label != "no_claim")
    print(f"Labelled set: {len(items)} bot messages, {claims} claims and {len(items) - claims} not ({len(held_out)} held out)")
    for name, part in (("all", items), ("held out", held_out)):
        for what, positive in (("a claim", {"backed", "unbacked"}), ("an unbacked claim", {"unbacked"})):
            precision, recall = precision_recall(part, positive)
            print(f"  {name:<9} finding {what:<18} precision {precision:<16} recall {recall}")
    print("Per language (finding a claim; finding an unbacked claim):")
    for language in dict.fromkeys(i.language for i in items):
        part = [i for i in items if i.language == language]
        found = precision_recall(part, {"backed", "unbacked"})
        unbacked = precision_recall(part, {"unbacked"})
        print(
            f"  {language}: {len(part):>3} messages  claim: precision {found[0]:<16} recall {found[1]:<16}"
            f"unbacked: precision {unbacked[0]:<16} recall {unbacked[1]}"
        )
    wrong = [i for i in items if detector_label(i) != i.label]
    for item in wrong:
        print(f"  known miss, line {item.line} ({item.language}): {item.label} taken for {detector_label(item)}: {item.text!r}")


def suite_figures(trials: int) -> tuple[list[str], int, float]:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "claims.db"
        started = time.perf_counter()
        command = [str(ROOT / ".venv" / "bin" / "parley"), "run", str(ROOT / "profiles"), "--trials", str(trials), "--db", str(db)]
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise SystemExit(f"parley run exited {done.returncode}:\n{done.stderr}")
        texts: list[str] = []
        conversations = claims = unbacked = 0
        with Store.open(db) as store:
            for stored in store.iter_conversations(store.latest_batch_id() or ""):
                conversations += 1
                held, _ = hold_claims(stored.conversation)
                claims += len(held)
                for h in held:
                    if not h.backed:
                        unbacked += 1
                        print(f"  FALSE CLAIM in {stored.conversation.id}: {h.claim.quote!r}: {h.why}")
                texts += stored.conversation.bot_texts
    print(
        f"Shipped suite offline (parley run profiles/ --trials {trials}, {elapsed:.1f} s): {conversations} conversations, "
        f"{len(texts)} bot messages, {claims} claims found, {unbacked} reported unbacked (goal: 0)"
    )
    return texts, conversations, elapsed


def cost(texts: list[str], conversations: int, run_s: float) -> None:
    if not texts:
        return
    passes = []
    for _ in range(5):
        started = time.perf_counter()
        for text in texts:
            find_claims(text)
        passes.append((time.perf_counter() - started) / len(texts) * 1e6)
    per_message = statistics.median(passes)
    per_conversation_ms = per_message * len(texts) / conversations / 1000
    run_ms = run_s / conversations * 1000
    load = os.getloadavg()[0]
    print(
        f"Detector cost: median {per_message:.1f} µs per bot message ({len(texts)} messages, 5 passes); "
        f"{per_conversation_ms:.2f} ms per conversation, {per_conversation_ms / run_ms:.1%} of the offline run's wall "
        f"time, {run_ms:.0f} ms per conversation with start-up (load average {load:.1f} on {os.cpu_count()} cores)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="trials of each shipped spec (default 3)")
    args = parser.parse_args()
    labelled_figures()
    texts, conversations, elapsed = suite_figures(args.trials)
    cost(texts, conversations, elapsed)


if __name__ == "__main__":
    main()
