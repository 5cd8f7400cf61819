"""The decision's summary names every gate that did not pass (issue 33): all the deciding ones, the milder ones
after them, those the policy maps to release, each with the policy line that mapped it where a file set it."""

from __future__ import annotations

import numpy as np
from fixtures.synthetic_runs import make_run

from rlgate.contract.models import DecisionPolicy, DiagnosticGate, GateConfig, HardGate, PrimaryGate, RegressionGate
from rlgate.engine import decide


def _runs() -> tuple:  # type: ignore[type-arg]
    rng = np.random.default_rng(0)
    base = (rng.random(400) < 0.7).astype(float)
    cand = base.copy()
    cand[:120] = 0.0  # a collapse on every task
    tasks = ("a", "b", "c", "d", "e")
    return (make_run({t: {"acc": base.tolist()} for t in tasks}, source="base"),
            make_run({t: {"acc": cand.tolist()} for t in tasks}, source="cand"))


def test_five_failures_of_three_effects_are_all_named() -> None:
    config = GateConfig(
        bootstrap_resamples=200, primary=PrimaryGate(metric="a/acc", min_delta=0.0),  # primary_regression: block
        hard=[HardGate(metric="b/acc", min=0.9)],
        regression=[RegressionGate(metric=f"{t}/acc", max_drop=0.01) for t in ("c", "d", "e")],
        diagnostics=[DiagnosticGate(metric="a/acc", max_relative_increase=0.0, max_relative_decrease=0.01)],
        decision=DecisionPolicy(hard_fail="research_only", regression_fail="release"),
        decision_sources={"regression_fail": "gates/lenient.yaml:3 decision.regression_fail (via gates/team.yaml)"})
    d = decide(config, *_runs(), seed=0, contract_name="x")
    failed = [g for g in d.gates if g.verdict != "pass"]
    assert len(failed) == 6 and d.decision == "block"
    assert all(f"gate {g.name} {g.verdict}" in d.summary for g in failed)  # never "and 2 more"
    assert d.summary.startswith("block: primary gate a/acc fail [primary_regression]")
    assert "; also research_only: hard gate b/acc fail" in d.summary and "diagnostic gate" in d.summary
    assert "the decision policy maps these 3 to release: regression gate c/acc fail [regression_fail -> release: " \
           "gates/lenient.yaml:3 decision.regression_fail (via gates/team.yaml)]" in d.summary
    lines = {g.name: g.policy_line for g in d.gates}
    assert lines["c/acc"] == lines["e/acc"] == config.decision_sources["regression_fail"]
    assert lines["a/acc"] is None and lines["b/acc"] is None  # rlgate's default / no file line for hard_fail
    assert "policy_line" not in d.gates[0].model_dump_json()  # only where a file mapped it


def test_a_release_under_the_default_policy_reads_as_before() -> None:
    base, _ = _runs()
    config = GateConfig(bootstrap_resamples=200, regression=[RegressionGate(metric="a/acc", max_drop=0.05)])
    d = decide(config, base, base, seed=0, contract_name="x")
    assert d.summary == "release: all 1 gates passed" and d.gates[0].policy_line is None
