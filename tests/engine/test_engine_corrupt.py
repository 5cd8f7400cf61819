"""The engine on corrupt scores: every gate that reads one is `error` unless allow_corrupt tolerates it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from fixtures.synthetic_runs import correlated_pair, make_run

from rlgate.contract.models import DiagnosticGate, GateConfig, HardGate, PrimaryGate, RegressionGate
from rlgate.engine import decide
from rlgate.results.models import CorruptScore, RunProvenance, RunResult, TaskResult


def cfg(**kwargs: Any) -> GateConfig:
    kwargs.setdefault("bootstrap_resamples", 2000)
    return GateConfig(**kwargs)


def improving_pair(n: int = 600) -> tuple[list[float], list[float]]:
    b, c = correlated_pair(np.random.default_rng(0), n, 0.5, 0.15, 0.3)
    return list(b), list(c)


def test_stray_nan_and_inf_in_samples_fail_closed() -> None:
    """A RunResult built without a reader's quarantine: the engine finds NaN / inf itself."""
    b, c = improving_pair()
    c[3], c[10] = math.nan, math.inf
    base, cand = make_run({"t": {"acc": b}}), make_run({"t": {"acc": c}})
    config = cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.02), hard=[HardGate(metric="t/acc", min=0.1)])
    decision = decide(config, base, cand, seed=0, contract_name="x")
    assert decision.decision == "block"
    assert [g.verdict for g in decision.gates] == ["error", "error"]
    assert decision.gates[0].reason.startswith("error: 2 corrupt documents in t/acc/none (candidate 2; non-finite")
    assert "candidate t doc 3 (NaN), candidate t doc 10 (Infinity)" in decision.gates[0].reason
    assert [(c.run, c.doc_id, c.value) for c in decision.corrupt] == [("candidate", 3, "NaN"),
                                                                      ("candidate", 10, "Infinity")]
    assert decision.pairing[0].corrupt_candidate == 2 and decision.pairing[0].paired == 600


def test_tolerated_corrupt_documents_are_excluded_and_counted() -> None:
    b, c = improving_pair()
    c[3], c[10] = math.nan, math.inf
    base, cand = make_run({"t": {"acc": b}}), make_run({"t": {"acc": c}})
    config = cfg(allow_corrupt=2, primary=PrimaryGate(metric="t/acc", min_delta=0.02),
                 hard=[HardGate(metric="t/acc", min=0.1, allow_corrupt=1)])
    decision = decide(config, base, cand, seed=0, contract_name="x")
    primary, hard = decision.gates
    assert primary.verdict == "pass" and primary.n == 598 and primary.delta is not None
    assert math.isfinite(primary.delta) and primary.ci is not None and all(map(math.isfinite, primary.ci))
    assert primary.details["corrupt_excluded"] == 2
    assert "2 corrupt documents excluded (allow_corrupt 2)" in primary.reason
    assert hard.verdict == "error" and "allow_corrupt 1" in hard.reason  # the gate's own limit wins
    assert any("excluded under allow_corrupt 2" in w for w in decision.warnings)


def test_listed_corrupt_scores_and_which_runs_a_gate_reads() -> None:
    """Reader-style: the score left the sample and is listed; hard gates read only the candidate."""
    b, c = improving_pair()
    base, cand = make_run({"t": {"acc": b}}), make_run({"t": {"acc": c}})
    sample = base.tasks["t"].samples[7]
    del sample.scores["none"]["acc"]
    base.tasks["t"].corrupt.append(CorruptScore(doc_id=7, metric="acc", filter="none", problem="wrong_type",
                                                value='"yes"', where="samples_t.jsonl:8"))
    config = cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.05)], hard=[HardGate(metric="t/acc", min=0.1)],
                 diagnostics=[DiagnosticGate(metric="t/acc", max_relative_decrease=0.5),
                              DiagnosticGate(metric="t/acc", name="abs", min=0.1)])
    decision = decide(config, base, cand, seed=0, contract_name="x")
    verdicts = {g.name: g.verdict for g in decision.gates}
    assert verdicts == {"t/acc": "pass", "t/acc (regression)": "error", "t/acc (diagnostic)": "error", "abs": "pass"}
    reason = next(g.reason for g in decision.gates if g.kind == "regression")
    assert "1 corrupt document in t/acc/none (baseline 1; wrong-type score" in reason and "doc 7 (\"yes\")" in reason
    assert decision.corrupt[0].where == "samples_t.jsonl:8" and decision.pairing[0].corrupt_baseline == 1


def test_non_finite_reported_aggregate_is_an_error() -> None:
    task = TaskResult(task="t", metrics={"none": {"acc": math.nan}}, stderr={"none": {"acc": 0.01}}, n_samples=100)
    run = RunResult(provenance=RunProvenance(source="x"), tasks={"t": task})
    decision = decide(cfg(hard=[HardGate(metric="t/acc", min=0.1)], allow_unpaired=True), None, run, seed=0,
                      contract_name="x")
    assert decision.gates[0].verdict == "error" and "non-finite acc/none" in decision.gates[0].reason


@pytest.mark.parametrize("limit", [None, 0])
def test_no_corrupt_no_change(limit: int | None) -> None:
    b, c = improving_pair()
    config = cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.02, allow_corrupt=limit))
    decision = decide(config, make_run({"t": {"acc": b}}), make_run({"t": {"acc": c}}), seed=0, contract_name="x")
    assert decision.decision == "release" and decision.corrupt == [] and "corrupt" not in decision.gates[0].reason
