"""Contamination check at scale: stream 1,000,000 training lines through a 13-gram eval index.

Target: 1,000,000 lines in under 60 s with bounded memory. The training file is GSM8K train
(`../shared/data/gsm8k/train.jsonl.gz`) repeated with every number perturbed, so no two lines are
equal, plus 100 GSM8K test questions planted at random places; without the shared data the lines
are synthetic word problems. The eval set is the GSM8K test split (or synthetic questions).

Each size runs in its own process so its peak RSS is its own: a 10x larger training file must not
need 10x the memory. Prints wall time, CPU time, lines/s, peak RSS and the planted documents found
at each size, side by side with their ratios; asserts nothing.
Run: python bench/bench_contamination.py [--lines 1000000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
PLANTED = 100
_NUMBER = re.compile(r"\d+")
_WORDS = [
    "apples", "eggs", "books", "marbles", "coins", "tickets", "pencils", "stamps", "cookies", "shells",
    "cars", "dogs", "birds", "trees", "boxes", "bags", "miles", "hours", "dollars", "pages",
    "friends", "students", "farmers", "bakers", "sisters",
]


def _eval_docs() -> list[str]:
    test = SHARED / "gsm8k" / "test.jsonl"
    if test.exists():
        return [json.loads(line)["question"] for line in test.open(encoding="utf-8")]
    rng = random.Random(7)
    return [" ".join(rng.choice(_WORDS) + str(rng.randrange(1000)) for _ in range(40)) for _ in range(1319)]


def _train_templates() -> list[dict[str, str]]:
    train = SHARED / "gsm8k" / "train.jsonl.gz"
    if train.exists():
        with gzip.open(train, "rt", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]
    rng = random.Random(3)
    return [{"question": " ".join(f"{rng.choice(_WORDS)} {rng.randrange(99)}" for _ in range(30)),
             "answer": " ".join(f"{rng.choice(_WORDS)} {rng.randrange(99)}" for _ in range(40))} for _ in range(7473)]


def write_training_file(path: Path, lines: int, seed: int = 0) -> list[int]:
    """Write `lines` JSONL rows (perturbed templates + planted eval questions); return the planted doc ids."""
    rng = random.Random(seed)
    templates = _train_templates()
    evals = _eval_docs()
    planted_at = dict(zip(sorted(rng.sample(range(lines), PLANTED)), rng.sample(range(len(evals)), PLANTED),
                          strict=True))
    with path.open("w", encoding="utf-8") as handle:
        for i in range(lines):
            if i in planted_at:
                row = {"question": "Here is a problem. " + evals[planted_at[i]], "answer": "see above"}
            else:
                base = templates[i % len(templates)]
                offset = i // len(templates)
                def bump(m: re.Match[str], offset: int = offset) -> str:
                    return str(int(m.group(0)) + 7 * offset + 1)

                row = {"question": _NUMBER.sub(bump, base["question"]), "answer": _NUMBER.sub(bump, base["answer"])}
            handle.write(json.dumps(row) + "\n")
    return sorted(planted_at.values())


def measure(path: Path) -> None:
    """Child process: index the eval docs, scan `path`, print one JSON line of measurements."""
    from rlgate.contamination.index import check_contamination
    from rlgate.contamination.sources import EvalDoc

    docs = [EvalDoc("gsm8k", i, text) for i, text in enumerate(_eval_docs())]
    wall, cpu = time.perf_counter(), time.process_time()
    report = check_contamination(docs, [path])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    found = sorted(d.doc_id for d in report.tasks[0].documents if d.overlap >= 0.99)
    print(json.dumps({"lines": report.train_files[0].lines, "wall": wall, "cpu": cpu,
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "ngrams": report.train_ngrams, "found": found, "contaminated": report.tasks[0].n_contaminated}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
        return
    sizes = [args.lines // 10, args.lines]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            path = Path(tmp) / f"train_{size}.jsonl"
            started = time.perf_counter()
            planted = write_training_file(path, size)
            made = time.perf_counter() - started
            out = subprocess.run([sys.executable, __file__, "--measure", str(path)], check=True,
                                 capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            result["planted_found"] = len(set(result["found"]) & set(planted))
            result["mib"] = path.stat().st_size / 2**20
            print(f"generated {size:,} lines ({result['mib']:.0f} MiB) in {made:.1f} s", file=sys.stderr)
            results.append(result)
            path.unlink()
    print(f"{'lines':>10} {'file MiB':>9} {'wall s':>8} {'cpu s':>8} {'lines/s':>10} {'13-grams':>12} "
          f"{'peak RSS MiB':>13} {'planted found':>14}")
    for r in results:
        print(f"{r['lines']:>10,} {r['mib']:>9.0f} {r['wall']:>8.1f} {r['cpu']:>8.1f} {r['lines'] / r['wall']:>10,.0f} "
              f"{r['ngrams']:>12,} {r['rss_mib']:>13.0f} {r['planted_found']:>10}/{PLANTED}")
    small, big = results
    print(f"ratio {big['lines'] / small['lines']:.0f}x lines: {big['wall'] / small['wall']:.1f}x time, "
          f"{big['rss_mib'] / small['rss_mib']:.2f}x peak RSS")
    print(f"1,000,000-line target: {big['wall'] * 1_000_000 / big['lines']:.1f} s wall (target < 60 s)")


if __name__ == "__main__":
    main()
