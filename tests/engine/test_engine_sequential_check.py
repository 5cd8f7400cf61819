"""The live sequential check's final decision (rlgate.engine.sequential_check): settled gates never hide broken data."""

from __future__ import annotations

from fixtures.synthetic_runs import make_run

from rlgate.contract.models import GateConfig, HardGate, PrimaryGate, RegressionGate, Sequential
from rlgate.engine import decide
from rlgate.engine.sequential_check import judge_generated, with_sequential
from rlgate.results.models import CorruptScore

N = 600


def test_a_settled_gate_never_overrides_corrupt_scores() -> None:
    """10 quarantined NaN scores: the fixed-sample gates are error; the sequential pass must not release them."""
    base = make_run({"t": {"acc": [1.0, 0.0] * (N // 2)}})
    cand = make_run({"t": {"acc": [1.0] * N}})
    for sample in cand.tasks["t"].samples[:10]:
        del sample.scores["none"]["acc"]
    cand.tasks["t"].corrupt = [CorruptScore(doc_id=i, metric="acc", problem="non_finite", value="NaN")
                               for i in range(10)]
    config = GateConfig(bootstrap_resamples=200, primary=PrimaryGate(metric="t/acc", min_delta=0.0),
                        hard=[HardGate(metric="t/acc", min=0.5)],
                        regression=[RegressionGate(metric="t/acc", max_drop=0.05)])
    status, stop = judge_generated(config, base, cand, Sequential(looks=4), seed=0, totals={"t": N}, look=4)
    assert stop and {g.verdict for g in status.gates} == {"pass"}  # the tracker saw only the finite scores
    fixed = decide(config, base, cand, seed=0, contract_name="x")
    assert [g.verdict for g in fixed.gates] == ["error"] * 3
    final = with_sequential(fixed, status, config)
    assert final.decision == "block" and [g.verdict for g in final.gates] == ["error"] * 3
    assert all("10 corrupt documents" in g.reason for g in final.gates)
