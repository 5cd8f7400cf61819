"""Start-up cost of the CLI: `rlgate --help` beside `python -c pass` (target: under 0.5 s).

Prints the median of several runs of each and their ratio; asserts nothing.
Run: python bench/bench_cli.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 7


def median_seconds(command: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    python = median_seconds([sys.executable, "-c", "pass"])
    help_ = median_seconds([sys.executable, "-m", "rlgate.cli.app", "--help"])
    validate = median_seconds([sys.executable, "-m", "rlgate.cli.app", "validate", "contracts/math_rlvr.yaml"])
    print(f"python -c pass            {python * 1000:7.1f} ms")
    print(f"rlgate --help             {help_ * 1000:7.1f} ms  ({help_ / python:.1f}x python; target < 500 ms)")
    print(f"rlgate validate math_rlvr {validate * 1000:7.1f} ms  ({validate / python:.1f}x python)")


if __name__ == "__main__":
    main()
