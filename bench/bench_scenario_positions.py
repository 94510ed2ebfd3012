"""How long a large scenario file takes to read and locate, through the fast JSON reader parley
uses and through the YAML reader it used before. Prints medians of 5 runs.

    .venv/bin/python bench/bench_scenario_positions.py [SCENARIOS]
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from parley.core.specs import load_positioned, parse_scenarios, read_yaml


def median_s(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    text = json.dumps({"scenarios": [{"name": f"s{i}", "variables": {}} for i in range(n)]}, indent=2)
    fast = median_s(lambda: load_positioned(text))
    slow = median_s(lambda: read_yaml(text, "bench.json"), runs=1 if n > 2000 else 3)
    whole = median_s(lambda: parse_scenarios(text, source="bench.json"))
    print(f"{n} scenarios, {len(text) / 1024:.0f} KiB")
    print(f"  positions, fast JSON reader : {fast * 1000:8.1f} ms")
    print(f"  positions, YAML reader      : {slow * 1000:8.1f} ms  ({slow / fast:.0f}x)")
    print(f"  parse_scenarios (every error located): {whole * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
