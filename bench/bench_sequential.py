"""Sequential (anytime-valid) gating on real paired data: share of the suite needed, and whether the
decision is the full-suite one. Prints; asserts nothing.

Pairs: Abel-13B vs Abel-7B on GSM8K (1,319 documents) in both orders (a release and a block), and
Llama-3.1-8B Instruct vs base on MMLU-Pro (12,032 documents, 14 subtasks). For each, the contract's
gates (tests/fixtures/contracts) under protocol.sequential defaults (10 looks, min_samples 50) over
SEEDS seeded replays; each also without its relative length diagnostic (an unbounded metric the
confidence sequence cannot bound, so it keeps the suite running to the end).
Target (issue 14): <= 50 % of the samples and the same decision in >= 95 % of replays.

Run: python bench/bench_sequential.py [--seeds 20]   (needs ../shared/data and the lmeval extra)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from rlgate.contract.loader import load_contract  # noqa: E402
from rlgate.contract.models import Sequential  # noqa: E402
from rlgate.engine import decide  # noqa: E402
from rlgate.engine.sequential import replay  # noqa: E402

CONTRACTS = REPO / "tests" / "fixtures" / "contracts"
SHARED = REPO.parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--looks", type=int, default=10)
    args = parser.parse_args()
    from fixtures.lmeval_builders import cached_folder

    from rlgate.harness.lmeval.folder import read_lmeval_folder

    shared = SHARED if SHARED.exists() else Path("/work/shared/data")
    plan = Sequential(looks=args.looks)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        abel = {m: read_lmeval_folder(cached_folder(root, "gsm8k_abel", shared, m)) for m in ("7b", "13b")}
        llama = {m: read_lmeval_folder(cached_folder(root, "mmlu_pro_llama", shared, m)) for m in ("base", "instruct")}
        cases = [("GSM8K Abel 13B over 7B", "abel_gsm8k.yaml", abel["7b"], abel["13b"]),
                 ("GSM8K Abel 7B over 13B", "abel_gsm8k.yaml", abel["13b"], abel["7b"]),
                 ("MMLU-Pro Llama-3.1-8B Instruct over base", "llama_mmlu_pro.yaml", llama["base"], llama["instruct"])]
        print(f"{'pair':<42} {'full':<13} {'fraction used (mean, max)':<27} {'same decision':<14} "
              f"{'looks (median)':<15} time/replay")
        for (label, contract_file, base, cand), bounded in [(case, b) for case in cases for b in (False, True)]:
            contract = load_contract(CONTRACTS / contract_file)
            gates = contract.gates
            if bounded:  # relative diagnostics on unbounded metrics (response length) never settle early
                if not gates.diagnostics:
                    continue
                gates = gates.model_copy(update={"diagnostics": []})
                label = "  same, without the length diagnostic"
            fractions, same, stops = [], 0, []
            start = time.perf_counter()
            full = decide(gates, base, cand, seed=0, contract_name=contract.name)
            for seed in range(args.seeds):
                r = replay(gates, base, cand, plan, full, seed=seed, contract_name=contract.name)
                fractions.append(r.fraction_used)
                same += r.matches_full
                stops.append(r.stop_look)
            per = (time.perf_counter() - start) / args.seeds
            print(f"{label:<42} {full.decision:<13} {statistics.mean(fractions):>6.1%}, {max(fractions):>6.1%}"
                  f"{'':<13} {same}/{args.seeds:<11} {statistics.median(stops):<15} {per:.2f} s")
        print(f"(target: <= 50% of the samples, the same decision in >= 95% of replays; {args.looks} looks, "
              f"min_samples {plan.min_samples}, seeds 0..{args.seeds - 1})")


if __name__ == "__main__":
    main()
