"""A primary gate that fails because its metric got significantly worse: primary_regression, not primary_fail."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fixtures.synthetic_runs import make_run

from rlgate.contract.models import DecisionPolicy, GateConfig, PrimaryGate
from rlgate.engine import decide
from rlgate.engine.models import Decision, GateVerdict
from rlgate.engine.summary import decision_markdown, decision_table
from rlgate.stats.paired_tests import mcnemar_exact


def counts(n: int, better: int, worse: int, both: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact paired 0/1 outcomes: `better` only-candidate-right, `worse` only-baseline-right, `both` both right."""
    rest = n - better - worse - both
    base = np.array([0.0] * better + [1.0] * worse + [1.0] * both + [0.0] * rest)
    cand = np.array([1.0] * better + [0.0] * worse + [1.0] * both + [0.0] * rest)
    return base, cand


def gate_on(base: np.ndarray, cand: np.ndarray, metric: str = "acc", **settings: Any) -> tuple[Decision, GateVerdict]:
    policy = settings.pop("decision", DecisionPolicy())
    config = GateConfig(primary=PrimaryGate(metric=f"t/{metric}", **settings), decision=policy,
                        bootstrap_resamples=2000)
    decision = decide(config, make_run({"t": {metric: base}}, source="base"),
                      make_run({"t": {metric: cand}}, source="cand"), seed=0, contract_name="x")
    return decision, decision.gates[0]


# 2 documents better, 10 worse of 100: -8 points, exact one-sided McNemar p = 79/4096 < 0.05
DROP = counts(100, 2, 10, 50)
# 3 better, 9 worse: -6 points, p = 299/4096 > 0.05 (a miss, not a shown drop)
NOISE = counts(100, 3, 9, 50)


def test_significant_drop_is_a_primary_regression_that_blocks() -> None:
    decision, gate = gate_on(*DROP, min_delta=0.01)
    assert gate.verdict == "fail" and gate.outcome == "primary_regression" and gate.effect == "block"
    assert decision.decision == "block" and decision.deciding_gates == [gate.name]
    # the p shown is the one that decided: the drop's exact one-sided McNemar p, the improvement's kept beside it
    assert gate.p_value == pytest.approx(mcnemar_exact(2, 10, "less")) == pytest.approx(79 / 4096)
    assert gate.details["p_improvement"] == pytest.approx(mcnemar_exact(2, 10, "greater"))
    assert gate.threshold == {"min_delta": 0.01, "max_drop": 0.0}
    assert "significant regression" in gate.reason and "drop 8.00 pts > max_drop 0.00 pts" in gate.reason
    assert "[primary_regression]" in decision.summary
    assert "FAIL (primary_regression -> block)" in decision_table(decision)
    assert "primary_regression -> block" in decision_markdown(decision)


def test_a_miss_or_an_insignificant_drop_stays_primary_fail() -> None:
    decision, gate = gate_on(*NOISE, min_delta=0.01)
    assert gate.delta == pytest.approx(-0.06) and gate.outcome == "primary_fail"
    assert decision.decision == "research_only" and "significant regression" not in gate.reason
    assert "[primary" not in decision.summary and "primary_regression" not in decision_table(decision)
    b, c = counts(100, 5, 4, 50)  # +1 point: improvement too small, no drop at all
    decision, gate = gate_on(b, c, min_delta=0.05)
    assert gate.outcome == "primary_fail" and decision.decision == "research_only"


def test_max_drop_is_the_tolerated_margin() -> None:
    _, tolerated = gate_on(*DROP, min_delta=0.01, max_drop=0.1)  # a drop of 8 points within a 10-point margin
    assert tolerated.outcome == "primary_fail" and tolerated.effect == "research_only"
    _, beyond = gate_on(*DROP, min_delta=0.01, max_drop=0.05)
    assert beyond.outcome == "primary_regression" and "drop 8.00 pts > max_drop 5.00 pts" in beyond.reason


def test_policy_maps_primary_regression_like_any_outcome() -> None:
    decision, gate = gate_on(*DROP, decision=DecisionPolicy(primary_regression="research_only"))
    assert gate.outcome == "primary_regression" and decision.decision == "research_only"
    assert DecisionPolicy().primary_regression == "block" and DecisionPolicy().primary_fail == "research_only"


def test_direction_and_lower_bound_mode() -> None:
    base, cand = DROP
    # an error rate going UP significantly is the drop for a lower-is-better metric
    _, err = gate_on(1 - base, 1 - cand, metric="error_rate", higher_is_better=False)
    assert err.outcome == "primary_regression" and err.higher_is_better is False
    _, down = gate_on(1 - cand, 1 - base, metric="error_rate", higher_is_better=False)  # error down: a pass
    assert down.verdict == "pass"
    _, lb = gate_on(*DROP, require="lower_bound", min_delta=0.0)
    assert lb.outcome == "primary_regression"
    _, passed = gate_on(cand, base, min_delta=0.01)  # the mirror image: +8 points, significant
    assert passed.verdict == "pass" and passed.outcome == "pass"
