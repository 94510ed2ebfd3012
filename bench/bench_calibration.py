"""How long does measuring a judge take once its verdicts are in, for 50 to 1,000 labelled
conversations (each with a criterion and a score labelled)?

Run: .venv/bin/python bench/bench_calibration.py [--conversations 50 200 1000] [--repeat 3]

`parley judge calibrate` spends its time in two places: the judge's calls (a model's, as slow as
the model: not measured here) and the figures (parley.core.evaluation.calibration.measure_judge:
agreement, Cohen's kappa and a percentile bootstrap of 2,000 resamples per item, in pure
Python, in a thread beside the event loop). This times the figures alone, on N conversations
with a person's label on one criterion and on the rubric and a judge's decision on both drawn
with a fixed seed (it agrees with the person about 4 times in 5), and prints the median of
--repeat runs with the kappas it found: the bootstrap grows linearly with the number of labels,
and stays small beside the judge's own calls (two per conversation).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parley.core.evaluation import measure_judge  # noqa: E402
from tests.test_judge_calibration_figures import KEY, label, spec, verdict  # noqa: E402

DECISIONS = {"met": "met", "not_met": "not met"}


def labelled(n: int, seed: int = 7) -> tuple[list, dict]:
    """`n` conversations: the person's labels and the judge's verdicts (see the module doc)."""
    rng = random.Random(seed)
    labels, judged = [], {}
    the_spec = spec()
    for i in range(n):
        cid = f"c{i}"
        person = rng.choice(["met", "not_met"])
        judge = person if rng.random() < 0.8 else ("not_met" if person == "met" else "met")
        score = rng.choice([1, 2, 3])
        judged_score = score if rng.random() < 0.8 else rng.choice([1, 2, 3])
        labels += [label(cid, person), label(cid, str(score), kind="rubric", item="rubric-default")]
        judged[cid] = (the_spec, verdict(cid, DECISIONS[judge], judged_score))
    return labels, judged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for n in args.conversations:
        labels, judged = labelled(n)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            calibration = measure_judge(labels, judged, KEY)
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        figures = ", ".join(
            f"{i.item_id} κ {i.kappa:.2f} [{i.interval[0]:.2f}, {i.interval[1]:.2f}]"
            for i in calibration.items
            if i.kappa is not None and i.interval
        )
        print(f"{n:>6} conversations: {median:6.2f} s (median of {args.repeat}); {figures}")


if __name__ == "__main__":
    main()
