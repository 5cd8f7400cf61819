"""Root-cause accuracy of the training monitor over the labelled failure set.

The cases (tests/fixtures/diagnosis_cases.py) rebuild failure shapes from published descriptions
(AutoRLBench's examples, verl/TRL/OpenRLHF troubleshooting, the entropy-collapse, over-optimisation
and training-inference-mismatch literature), each labelled with the fault domain its source names.
Prints one row per case (expected, got, the winning rule, the runner-up) and the accuracy. For
comparison: AutoRLBench reports its best frontier model finding the root cause in about 40 % of its
cases. The cases are synthetic reconstructions written alongside the rules, so this measures whether
the published shapes are recognised, not accuracy on unseen real runs. Prints; asserts nothing.
Run: python bench/bench_diagnosis.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fixtures.diagnosis_cases import CASES, diagnose_case


def main() -> int:
    rows = []
    start = time.perf_counter()
    for case in CASES:
        diagnosis = diagnose_case(case)
        got = diagnosis.domain if diagnosis else None
        rule = diagnosis.rule if diagnosis else "-"
        runner_up = (f"{diagnosis.candidates[1].domain} ({diagnosis.candidates[1].score})"
                     if diagnosis and len(diagnosis.candidates) > 1 else "-")
        rows.append((case.name, str(case.expected or "none"), str(got or "none"), rule, runner_up,
                     got == case.expected))
    elapsed = time.perf_counter() - start
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    header = ("case", "expected", "got", "winning rule", "runner-up")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + "  ok")
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row[:5], widths, strict=True)) + ("  yes" if row[5] else "  MISS"))
    right = sum(r[5] for r in rows)
    print(f"\nroot-cause accuracy: {right}/{len(rows)} = {right / len(rows):.0%} "
          f"(AutoRLBench's best frontier model: about 40 %); {elapsed * 1000:.0f} ms for all cases")
    misses = [r[0] for r in rows if not r[5]]
    if misses:
        print("misses: " + ", ".join(misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
