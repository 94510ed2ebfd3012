"""How long does reading profiles take? (The one profile schema must cost what the walker did.)

Run: .venv/bin/python bench/bench_profile_loading.py [--runs 7] [--rounds 20]

Any checkout's interpreter can run this file (its own parley is what is measured), so two
checkouts compare with the same script. Prints the median and every run of:
- import: a fresh process importing the profile loader (the records and their schemas built);
- valid: reading every shipped profile (`profiles/*.yaml`) `--rounds` times, per profile;
- invalid: checking a profile with a problem in each section (every problem located), per check.
Readings are timed in CPU time (`time.process_time`): on a machine other work keeps busy, wall
time measures the neighbours as much as parley.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from parley.core.specs import SHIPPED_DIR

PROFILES = Path(SHIPPED_DIR)

IMPORT_CHILD = r"""
import time
t0 = time.perf_counter()
import parley.core.specs.profile_loader
print(f"IMPORTED {time.perf_counter() - t0:.6f}")
"""

BROKEN = """\
test_name: broken
llm:
  temperature: 3
  format: {type: spech}
world:
  customer_id: C-100
  today: "2026-13-01"
user:
  language: English
  role: a customer
  context: [personality: personalities/nowhere.yml, calm]
  goals:
    - track {{order}}
    - order:
        function: forward(nothing)
        type: strin
        data: [ORD-1001]
chatbot:
  is_starter: maybe
  output:
    - total: {type: money, description: ""}
conversation:
  number: -1
  goal_style: {steps: zero}
  interaction_style: [long phrase]
expect:
  orders: {ORD-1001: lost}
  tools_called: [cancel_ordr]
  criteria: ["the bot answers", "The bot  answers"]
"""


def import_run() -> float:
    out = subprocess.run([sys.executable, "-c", IMPORT_CHILD], capture_output=True, text=True, check=True).stdout
    return float(out.split()[1])


def valid_run(paths: list[Path], rounds: int) -> float:
    from parley.core.specs import load_profile

    start = time.process_time()
    for _ in range(rounds):
        for path in paths:
            load_profile(path)
    return (time.process_time() - start) / (rounds * len(paths))


def invalid_run(rounds: int) -> tuple[float, int]:
    from parley.core.specs import check_profile_text

    start = time.process_time()
    problems = 0
    for _ in range(rounds):
        profile, errors = check_profile_text(BROKEN, source="broken.yaml", base_dir=PROFILES)
        assert profile is None
        problems = len(errors)
    return (time.process_time() - start) / rounds, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    paths = sorted(PROFILES.glob("*.yaml"))
    if not paths:
        raise SystemExit(f"no shipped profiles under {PROFILES}")
    valid_run(paths, 1)  # the first reading builds what later ones reuse
    imports = [import_run() for _ in range(args.runs)]
    valids = [valid_run(paths, args.rounds) for _ in range(args.runs)]
    invalids = [invalid_run(args.rounds) for _ in range(args.runs)]
    print(f"profiles of {PROFILES}")
    print(f"import of the profile loader: median {statistics.median(imports) * 1000:.1f} ms  runs {[round(t * 1000, 1) for t in imports]}")
    print(
        f"valid profile ({len(paths)} shipped): median {statistics.median(valids) * 1000:.2f} ms CPU per profile  "
        f"runs {[round(t * 1000, 2) for t in valids]}"
    )
    print(
        f"invalid profile ({invalids[0][1]} problems): median {statistics.median(t for t, _ in invalids) * 1000:.2f} ms CPU per check  "
        f"runs {[round(t * 1000, 2) for t, _ in invalids]}"
    )


if __name__ == "__main__":
    main()
