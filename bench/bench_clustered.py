"""Epochs are not independent evidence: false-release and false-alarm rates of a regression gate on clustered data.

Designs: SAMPLES samples, 1, 4 or 16 epochs each, intra-sample correlation rho 0, 0.5 or 1 (the ICC of a
sample's epochs: 0 = every epoch an independent coin with the suite's rate, 1 = a sample is solved in every
epoch or in none). Each sample's success probability is Beta-distributed with mean MU and ICC rho (a + b =
1/rho - 1; rho 1 is Bernoulli, rho 0 the constant MU); the candidate's is the quantile of the same uniform
under mean MU - drop (the same samples get harder), so pairs are as correlated as the design allows. Each
replay draws fresh epoch outcomes and runs the full engine (rlgate.engine.decide) with one three-way
regression gate, max_drop MAX_DROP, at alpha ALPHA:

- drop just past max_drop (MAX_DROP + PAST): a release is a false release; it must be <= alpha within
  Monte-Carlo error in every cell (the Wilson 95 % interval's lower end <= alpha);
- no change: a block (regression_fail) is a false alarm.

`--records` adds the same rates with every epoch counted as its own sample (what rlgate did before issue
33): there the false-release rate grows with epochs and correlation. Prints; asserts nothing; not part of
the test suite.

Run: python bench/bench_clustered.py [--replays 200] [--samples 200] [--records]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fixtures.epoch_runs import epoch_run  # noqa: E402

from rlgate.contract.models import GateConfig, RegressionGate  # noqa: E402
from rlgate.engine import decide  # noqa: E402
from rlgate.results.models import RunResult  # noqa: E402
from rlgate.stats.intervals import wilson_interval  # noqa: E402

MU, MAX_DROP, PAST, ALPHA = 0.6, 0.05, 0.005, 0.05
EPOCHS = (1, 4, 16)
RHOS = (0.0, 0.5, 1.0)
CONFIG = GateConfig(alpha=ALPHA, bootstrap_resamples=1000,  # the shown CI only: the gate decides analytically
                    regression=[RegressionGate(metric="t/acc", max_drop=MAX_DROP)])


def _probabilities(u: np.ndarray, mean: float, rho: float) -> np.ndarray:
    """Per-sample success probabilities with this mean and ICC, as quantiles of the uniforms `u`."""
    if rho <= 0:
        return np.full(u.shape, mean)
    if rho >= 1:
        return (u > 1 - mean).astype(float)
    from scipy.stats import beta

    total = 1 / rho - 1
    return np.asarray(beta.ppf(u, mean * total, (1 - mean) * total), float)


def _fill(run: RunResult, values: np.ndarray) -> None:
    for record, value in zip(run.tasks["t"].samples, values.ravel(), strict=True):
        record.scores["none"]["acc"] = float(value)


def _runs(samples: int, epochs: int, by_record: bool) -> tuple[RunResult, RunResult]:
    zeros = np.zeros((samples * epochs, 1) if by_record else (samples, epochs))
    return epoch_run("t", "acc", zeros, "base"), epoch_run("t", "acc", zeros, "cand")


def _rates(samples: int, epochs: int, rho: float, drop: float, replays: int, by_record: bool,
           seed: int) -> dict[str, int]:
    """How many replays released and how many blocked."""
    base_run, cand_run = _runs(samples, epochs, by_record)
    rng = np.random.default_rng(seed)
    out = {"release": 0, "block": 0, "research_only": 0}
    for rep in range(replays):
        u = rng.random(samples)
        p, q = _probabilities(u, MU, rho), _probabilities(u, MU - drop, rho)
        base = (rng.random((samples, epochs)) < p[:, None]).astype(float)
        cand = (rng.random((samples, epochs)) < q[:, None]).astype(float)
        _fill(base_run, base)
        _fill(cand_run, cand)
        decision = decide(CONFIG, base_run, cand_run, seed=rep, contract_name="bench")
        out[decision.decision] += 1
    return out


def _rate(count: int, replays: int) -> str:
    lo, hi = wilson_interval(count, replays, 0.95)
    return f"{count / replays:6.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=200)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--records", action="store_true", help="also count every epoch as a sample (pre-issue 33)")
    args = parser.parse_args()
    modes = [False, True] if args.records else [False]
    print(f"{args.samples} samples, mean {MU}, max_drop {MAX_DROP}, alpha {ALPHA}, {args.replays} replays per cell; "
          "rates with Wilson 95 % intervals")
    print(f"{'unit':<7} {'epochs':>6} {'rho':>4}  {'false release (drop ' + format(MAX_DROP + PAST, '.3f') + ')':<28}"
          f"{'false alarm (no change)':<26}{'release at no change':<24} ok")
    started = time.perf_counter()
    worst = True
    for by_record in modes:
        for epochs in EPOCHS:
            for rho in RHOS:
                seed = 1000 * epochs + int(10 * rho)
                past = _rates(args.samples, epochs, rho, MAX_DROP + PAST, args.replays, by_record, seed)
                same = _rates(args.samples, epochs, rho, 0.0, args.replays, by_record, seed + 1)
                lo, _ = wilson_interval(past["release"], args.replays, 0.95)
                ok = lo <= ALPHA
                worst &= ok or by_record
                print(f"{'record' if by_record else 'sample':<7} {epochs:>6} {rho:>4.1f}  "
                      f"{_rate(past['release'], args.replays):<28}{_rate(same['block'], args.replays):<26}"
                      f"{_rate(same['release'], args.replays):<24} {'yes' if ok else 'NO'}")
    print(f"({time.perf_counter() - started:.0f} s) false release <= alpha within Monte-Carlo error in every "
          f"by-sample cell: {'yes' if worst else 'NO'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
