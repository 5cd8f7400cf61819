"""Subtasks of a gated group that one run lacks fail the gate closed (rlgate.engine.subtasks)."""

from __future__ import annotations

from typing import Any

from fixtures.synthetic_runs import make_run

from rlgate.contract.models import GateConfig, HardGate, RegressionGate
from rlgate.engine import decide

GROUPS = {"g": ["g_a", "g_b"]}
A = [1.0, 0.0] * 30  # 60 documents
B = [1.0, 1.0, 0.0, 0.0] * 10  # 40 documents


def cfg(**kwargs: Any) -> GateConfig:
    kwargs.setdefault("bootstrap_resamples", 500)
    return GateConfig(**kwargs)


def regression(**kwargs: Any) -> GateConfig:
    return cfg(regression=[RegressionGate(metric="g/acc", max_drop=0.5)], **kwargs)


def test_a_candidate_without_a_subtask_of_the_group_never_releases() -> None:
    base = make_run({"g_a": {"acc": A}, "g_b": {"acc": B}}, groups=GROUPS)
    complete = make_run({"g_a": {"acc": A}, "g_b": {"acc": B}}, groups=GROUPS)
    assert decide(regression(), base, complete, seed=0, contract_name="x").decision == "release"
    cand = make_run({"g_a": {"acc": A}}, groups={"g": ["g_a"]})
    d = decide(regression(), base, cand, seed=0, contract_name="x")
    assert d.decision == "block" and d.gates[0].verdict == "nodata"
    assert "the candidate run lacks subtask(s) g_b of g (40 of 100 documents; 60.0% present < min_coverage 100%)" \
        in d.gates[0].reason


def test_min_coverage_tolerates_a_missing_subtask_and_names_it() -> None:
    base = make_run({"g_a": {"acc": A}, "g_b": {"acc": B}}, groups=GROUPS)
    cand = make_run({"g_a": {"acc": A}}, groups={"g": ["g_a"]})
    d = decide(regression(min_coverage=0.6), base, cand, seed=0, contract_name="x")
    gate = d.gates[0]
    assert gate.verdict == "pass" and gate.n == 60
    assert gate.details["missing_subtasks"] == {"candidate": ["g_b"]}
    assert "candidate lacks g_b: values over the subtasks present" in gate.reason


def test_a_subtask_its_own_group_lists_but_its_results_lack_fails_a_hard_gate() -> None:
    """The candidate's results list g_b under g but hold no g_b (and the baseline is not read by a hard gate)."""
    cand = make_run({"g_a": {"acc": [1.0] * 60}}, groups=GROUPS)
    d = decide(cfg(hard=[HardGate(metric="g/acc", min=0.5)]), None, cand, seed=0, contract_name="x")
    assert d.gates[0].verdict == "nodata" and "lacks subtask(s) g_b of g" in d.gates[0].reason


def test_a_baseline_without_a_subtask_fails_the_comparison_not_the_hard_gate() -> None:
    base = make_run({"g_a": {"acc": A}}, groups={"g": ["g_a"]})
    cand = make_run({"g_a": {"acc": A}, "g_b": {"acc": B}}, groups=GROUPS)
    config = cfg(hard=[HardGate(metric="g/acc", min=0.3)], regression=[RegressionGate(metric="g/acc", max_drop=0.5)])
    d = decide(config, base, cand, seed=0, contract_name="x")
    verdicts = {g.kind: g for g in d.gates}
    assert verdicts["hard"].verdict == "pass"
    assert verdicts["regression"].verdict == "nodata"
    assert "the baseline run lacks subtask(s) g_b of g" in verdicts["regression"].reason


def test_a_subtask_without_the_gated_metric_is_not_missing() -> None:
    """A group may mix metrics: a candidate without the f1-only subtask still has every acc document."""
    base = make_run({"g_a": {"acc": A}, "g_b": {"f1": [0.5] * 10}}, groups=GROUPS)
    cand = make_run({"g_a": {"acc": A}}, groups={"g": ["g_a"]})
    d = decide(regression(), base, cand, seed=0, contract_name="x")
    assert d.gates[0].verdict == "pass" and "missing_subtasks" not in d.gates[0].details
