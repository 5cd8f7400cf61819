"""Documents whose sample lacks the gated metric fail the gate closed (rlgate.engine.missing)."""

from __future__ import annotations

import math
from typing import Any

from fixtures.synthetic_runs import make_run

from rlgate.contract.models import DiagnosticGate, GateConfig, HardGate, PrimaryGate, RegressionGate
from rlgate.engine import decide
from rlgate.results.models import CorruptScore, RunResult

BASE = [1.0, 0.0] * 50
CAND = [1.0] * 100  # clearly better and well within every bound


def cfg(**kwargs: Any) -> GateConfig:
    kwargs.setdefault("bootstrap_resamples", 500)
    return GateConfig(**kwargs)


def every_gate(**kwargs: Any) -> GateConfig:
    return cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.0), hard=[HardGate(metric="t/acc", min=0.5)],
               regression=[RegressionGate(metric="t/acc", max_drop=0.05)],
               diagnostics=[DiagnosticGate(metric="t/acc", min=0.5)], **kwargs)


def without_value(run: RunResult, docs: range, metric: str = "acc") -> RunResult:
    """The run with `metric` not written on the given documents (a samples line that lists it but lacks it)."""
    out = run.model_copy(deep=True)
    for sample in out.tasks["t"].samples:
        if sample.doc_id in docs:
            del sample.scores["none"][metric]
    return out


def test_candidate_samples_lacking_the_metric_never_release() -> None:
    base, cand = make_run({"t": {"acc": BASE}}), make_run({"t": {"acc": CAND}})
    assert decide(every_gate(), base, cand, seed=0, contract_name="x").decision == "release"
    d = decide(every_gate(), base, without_value(cand, range(60)), seed=0, contract_name="x")
    assert d.decision == "block"
    assert [g.verdict for g in d.gates] == ["nodata"] * 4
    assert "the candidate run has no acc/none value for 60 of 100 documents of t" in d.gates[1].reason
    assert "t:0, t:1, t:2" in d.gates[1].reason


def test_baseline_samples_lacking_the_metric_fail_the_comparisons_only() -> None:
    base, cand = make_run({"t": {"acc": BASE}}), make_run({"t": {"acc": CAND}})
    d = decide(every_gate(), without_value(base, range(1)), cand, seed=0, contract_name="x")
    assert d.decision == "block"
    verdicts = {g.kind: g.verdict for g in d.gates}
    assert verdicts == {"primary": "nodata", "hard": "pass", "regression": "nodata", "diagnostic": "pass"}
    assert "the baseline run has no acc/none value for 1 of 100 documents" in d.gates[0].reason


def test_min_coverage_tolerates_gaps_and_shows_them() -> None:
    base, cand = make_run({"t": {"acc": BASE}}), make_run({"t": {"acc": CAND}})
    d = decide(cfg(hard=[HardGate(metric="t/acc", min=0.5)], min_coverage=0.9), base,
               without_value(cand, range(5)), seed=0, contract_name="x")
    gate = d.gates[0]
    assert gate.verdict == "pass" and gate.n == 95
    assert gate.details["missing_values"] == {"candidate": "5/100"}
    assert "candidate 5 of 100 documents without a value" in gate.reason


def test_corrupt_scores_are_not_counted_as_missing() -> None:
    """A quarantined (corrupt) score is allow_corrupt's to tolerate, not a missing value."""
    base, cand = make_run({"t": {"acc": BASE}}), without_value(make_run({"t": {"acc": CAND}}), range(2))
    cand.tasks["t"].corrupt = [CorruptScore(doc_id=i, metric="acc", problem="non_finite", value="NaN")
                               for i in range(2)]
    d = decide(cfg(hard=[HardGate(metric="t/acc", min=0.5)], allow_corrupt=2), base, cand, seed=0, contract_name="x")
    assert d.gates[0].verdict == "pass" and "missing_values" not in d.gates[0].details


def test_group_leaf_without_the_metric_is_not_missing() -> None:
    """lm-eval averages a group over the leaves that report the metric; a leaf of another metric is no gap."""
    groups = {"g": ["a", "b"]}
    base = make_run({"a": {"acc": BASE}, "b": {"f1": [0.5] * 10}}, groups=groups)
    cand = make_run({"a": {"acc": CAND}, "b": {"f1": [0.5] * 10}}, groups=groups)
    d = decide(cfg(regression=[RegressionGate(metric="g/acc", max_drop=0.05)]), base, cand, seed=0,
               contract_name="x")
    assert d.gates[0].verdict == "pass" and d.gates[0].n == 100


def test_conditional_metrics_are_exempt() -> None:
    """steps_to_success exists only for successes: failures lacking it are not missing data."""
    steps = [3.0, math.nan] * 50
    base, cand = make_run({"t": {"steps_to_success": steps}}), make_run({"t": {"steps_to_success": steps}})
    for run in (base, cand):
        for sample in run.tasks["t"].samples:
            if math.isnan(float(sample.scores["none"]["steps_to_success"])):  # type: ignore[arg-type]
                del sample.scores["none"]["steps_to_success"]
        run.tasks["t"].metrics["none"]["steps_to_success"] = 3.0
    d = decide(cfg(hard=[HardGate(metric="t/steps_to_success", max=5)]), base, cand, seed=0, contract_name="x")
    assert d.gates[0].verdict == "pass" and d.gates[0].n == 50


def test_fewer_samples_than_the_harness_counted_is_short_coverage() -> None:
    """n_samples 100 but 40 samples (a cut samples file, no run manifest): nodata, unless min_coverage allows it."""
    base, cand = make_run({"t": {"acc": BASE}}), make_run({"t": {"acc": CAND}})
    cand.tasks["t"].samples = cand.tasks["t"].samples[:40]
    d = decide(every_gate(), base, cand, seed=0, contract_name="x")
    assert d.decision == "block" and [g.verdict for g in d.gates] == ["nodata"] * 4
    reason = d.gates[1].reason
    assert "the candidate run answered 40 of 100 documents of t (coverage 40.0% < min_coverage 100%)" in reason
    assert "missing e.g. t:40, t:41, t:42" in d.gates[1].reason
    low = decide(cfg(hard=[HardGate(metric="t/acc", min=0.5)], min_coverage=0.4), base, cand, seed=0, contract_name="x")
    assert low.gates[0].verdict == "pass" and low.gates[0].details["coverage"] == {"candidate": "40/100"}
