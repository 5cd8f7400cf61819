"""`per_subtask: true`: the pooled gate plus one verdict per leaf of the group, all in one Holm family."""

from __future__ import annotations

import pytest
from fixtures.synthetic_runs import make_run

from rlgate.contract.models import GateConfig, HardGate, RegressionGate
from rlgate.engine.decision import decide
from rlgate.engine.subtask_gates import with_subtask_gates

GROUPS = {"rm": ["rm_chat", "rm_safety"]}


def _runs(safety_drop: int) -> tuple:
    base = make_run({"rm_chat": {"accuracy": [1.0] * 40}, "rm_safety": {"accuracy": [1.0] * 40}}, groups=GROUPS,
                    source="base")
    cand = make_run({"rm_chat": {"accuracy": [1.0] * 40},
                     "rm_safety": {"accuracy": [0.0] * safety_drop + [1.0] * (40 - safety_drop)}},
                    groups=GROUPS, source="cand")
    return base, cand


def test_each_category_gets_a_verdict_and_the_pooled_one_stays() -> None:
    base, cand = _runs(safety_drop=12)
    config = GateConfig(regression=[RegressionGate(metric="rm/accuracy", max_drop=0.05, test="significance",
                                                   per_subtask=True)])
    decision = decide(config, base, cand, seed=0, contract_name="c")
    verdicts = {g.name: (g.verdict, g.n) for g in decision.gates}
    assert verdicts == {"rm/accuracy": ("fail", 80), "rm/accuracy [rm_chat]": ("pass", 40),
                        "rm/accuracy [rm_safety]": ("fail", 40)}
    assert decision.decision == "block"
    safety = decision.gates[2]  # one Holm family over the three regression gates: the smallest p times 3
    assert safety.p_value is not None and safety.p_adjusted == pytest.approx(3 * safety.p_value)


def test_without_per_subtask_the_config_is_untouched() -> None:
    base, cand = _runs(safety_drop=0)
    config = GateConfig(regression=[RegressionGate(metric="rm/accuracy", max_drop=0.05)],
                        hard=[HardGate(metric="rm/accuracy", min=0.5)])
    assert with_subtask_gates(config, base, cand) is config


def test_hard_gate_per_subtask_reads_each_leaf() -> None:
    base, cand = _runs(safety_drop=30)
    config = GateConfig(hard=[HardGate(metric="rm/accuracy", min=0.5, per_subtask=True)])
    decision = decide(config, base, cand, seed=0, contract_name="c")
    assert {g.name: g.verdict for g in decision.gates} == {
        "rm/accuracy": "pass", "rm/accuracy [rm_chat]": "pass", "rm/accuracy [rm_safety]": "fail"}
