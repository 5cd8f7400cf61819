"""Speed of the gate engine, each figure beside a naive per-resample Python loop. Prints; asserts nothing.

1. `decide()` on 20 metrics x 100,000 paired samples x 10,000 bootstrap resamples (target < 2 s
   on one core), beside the same bootstraps done as a Python loop over resamples (index
   resampling with numpy inside the loop; timed on a slice and extrapolated).
2. `rlgate gate` end to end (a fresh process: contract, two lm-eval folders, decision, files) on a
   12,032-document MMLU-Pro pair (target < 3 s): the real Llama-3.1-8B outputs when
   ../shared/data is present, else a synthetic 12,000-document pair; beside the naive loop for its
   bootstrap.

Run: OMP_NUM_THREADS=1 python bench/bench_engine.py   (one core, as the targets are stated)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from rlgate.contract.models import GateConfig, PrimaryGate, RegressionGate  # noqa: E402
from rlgate.engine import decide  # noqa: E402
from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskProtocol, TaskResult  # noqa: E402
from rlgate.stats.bootstrap import bootstrap_paired_binary  # noqa: E402

N_METRICS, N_PAIRS, RESAMPLES = 20, 100_000, 10_000
NAIVE_SLICE = 40  # resamples actually timed for the naive loop, per metric


def synthetic_runs(rng: np.random.Generator) -> tuple[RunResult, RunResult, list[str]]:
    """One task, 20 binary metrics with different accuracies and true deltas, 100,000 paired documents."""
    names = [f"m{i:02d}" for i in range(N_METRICS)]
    base_vals = {m: (rng.random(N_PAIRS) < 0.3 + 0.02 * i).astype(float) for i, m in enumerate(names)}
    flips = {m: rng.random(N_PAIRS) < 0.15 for m in names}
    cand_vals = {m: np.where(flips[m], rng.random(N_PAIRS) < 0.55, base_vals[m] == 1).astype(float) for m in names}

    def run(values: dict[str, np.ndarray], label: str) -> RunResult:
        columns = {m: v.tolist() for m, v in values.items()}
        samples = [SampleRecord.model_construct(doc_id=i, doc_hash=f"h{i}", prompt="p", target="t", responses=["r"],
                                                filtered={"none": "a"},
                                                scores={"none": {m: columns[m][i] for m in names}},
                                                doc=None, response_tokens=None, truncated=None, extra={})
                   for i in range(N_PAIRS)]
        task = TaskResult(task="synth", metrics={"none": {m: float(v.mean()) for m, v in values.items()}},
                          n_samples=N_PAIRS, samples=samples, protocol=TaskProtocol(version="1", filters=["none"]))
        return RunResult(provenance=RunProvenance(source=label), tasks={"synth": task})

    return run(base_vals, "baseline"), run(cand_vals, "candidate"), names


def naive_bootstrap_seconds(diffs: list[np.ndarray], resamples: int) -> float:
    """Seconds for `resamples` index resamples per metric as a Python loop (timed on a slice)."""
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for diff in diffs:
        n = diff.size
        out = np.empty(NAIVE_SLICE)
        for b in range(NAIVE_SLICE):
            out[b] = diff[rng.integers(0, n, n)].mean()
    return (time.perf_counter() - start) * resamples / NAIVE_SLICE


def bench_decide() -> None:
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    base, cand, names = synthetic_runs(rng)
    built = time.perf_counter() - start
    config = GateConfig(bootstrap_resamples=RESAMPLES, primary=PrimaryGate(metric=f"synth/{names[0]}"),
                        regression=[RegressionGate(metric=f"synth/{m}", max_drop=0.01) for m in names[1:]])
    decide(config, base, cand, seed=0, contract_name="warm-up")  # first call pays scipy.special's import
    times = []
    for seed in range(3):
        start = time.perf_counter()
        decision = decide(config, base, cand, seed=seed, contract_name="bench")
        times.append(time.perf_counter() - start)
    fast = statistics.median(times)
    diffs = [np.array([s.scores["none"][m] for s in cand.tasks["synth"].samples])
             - np.array([s.scores["none"][m] for s in base.tasks["synth"].samples]) for m in names]
    naive = naive_bootstrap_seconds(diffs, RESAMPLES)
    print(f"1. decide(): {N_METRICS} metrics x {N_PAIRS:,} paired samples x {RESAMPLES:,} resamples")
    print(f"   rlgate decide()           {fast:8.2f} s   (target < 2 s; {len(decision.gates)} gates, "
          f"decision {decision.decision}; building the runs took {built:.1f} s, not counted)")
    print(f"   naive per-resample loop   {naive:8.1f} s   (bootstrap alone, extrapolated from {NAIVE_SLICE} "
          f"resamples per metric)")
    print(f"   ratio                     {naive / fast:8.0f}x")


def _folders(tmp: Path) -> tuple[Path, Path, Path, str]:
    """(baseline folder, candidate folder, contract, label): real Llama outputs when available."""
    from fixtures.lmeval_builders import build_mmlu_pro_llama_folder, build_synthetic_folder

    shared = Path(os.environ.get("RLGATE_SHARED_DATA", REPO.parent / "shared" / "data"))
    if (shared / "outputs" / "mmlu_pro" / "predictions.csv").exists():
        base = build_mmlu_pro_llama_folder(shared, "base", tmp / "base")
        cand = build_mmlu_pro_llama_folder(shared, "instruct", tmp / "cand")
        return base, cand, REPO / "tests" / "fixtures" / "contracts" / "llama_mmlu_pro.yaml", \
            "real Llama-3.1-8B base vs Instruct, 12,032 MMLU-Pro documents"
    rng = np.random.default_rng(2)
    correct_b = (rng.random(12_000) < 0.36).tolist()
    correct_c = [c or bool(rng.random() < 0.12) for c in correct_b]
    base = build_synthetic_folder(tmp / "base", "org/base", {"gsm8k": correct_b})
    cand = build_synthetic_folder(tmp / "cand", "org/cand", {"gsm8k": correct_c})
    contracts = REPO / "tests" / "fixtures" / "contracts"
    contract = tmp / "contract.yaml"
    text = (contracts / "abel_gsm8k.yaml").read_text()
    contract.write_text(text.replace("gsm8k_suite.yaml", str(contracts / "gsm8k_suite.yaml")))
    return base, cand, contract, "synthetic 12,000-document pair (shared data not found)"


def bench_gate_cli() -> None:
    try:
        import lm_eval  # noqa: F401  (only to build the fixture folders)
    except ImportError:
        print("2. rlgate gate: skipped (building the lm-eval folders needs lm_eval installed)")
        return
    from rlgate.harness.lmeval.folder import read_lmeval_folder

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        base, cand, contract, label = _folders(tmp)
        command = [sys.executable, "-m", "rlgate.cli.app", "gate", str(contract), "--candidate", str(cand),
                   "--baseline", str(base), "--out", str(tmp / "out")]
        times = []
        for _ in range(3):
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            times.append(time.perf_counter() - start)
        python = statistics.median(
            [_timed([sys.executable, "-c", "pass"]) for _ in range(3)])
        run_b, run_c = read_lmeval_folder(base), read_lmeval_folder(cand)
    metric = "custom-extract" if "mmlu_pro" in run_b.groups else "flexible-extract"
    diff = (np.array([s.scores[metric]["exact_match"] for t in run_c.tasks.values() for s in t.samples])
            - np.array([s.scores[metric]["exact_match"] for t in run_b.tasks.values() for s in t.samples]))
    better, worse = int((diff > 0).sum()), int((diff < 0).sum())
    start = time.perf_counter()
    bootstrap_paired_binary(better, worse, diff.size, 10_000, np.random.default_rng(0))
    ours = time.perf_counter() - start
    naive = naive_bootstrap_seconds([diff], 10_000)
    fast = statistics.median(times)
    decision = done.stdout.strip().splitlines()[-2] if done.stdout else done.stderr
    print(f"2. rlgate gate end to end: {label}")
    print(f"   rlgate gate (new process) {fast:8.2f} s   (target < 3 s; python -c pass {python:.2f} s; "
          f"exit {done.returncode}: {decision})")
    print(f"   its bootstrap (10,000)    {ours * 1000:8.2f} ms  vs naive per-resample loop {naive:.2f} s: "
          f"{naive / ours:,.0f}x")


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    bench_decide()
    bench_gate_cli()
