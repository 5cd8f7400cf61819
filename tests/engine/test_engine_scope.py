"""Scoped decisions: a verdict per capability; feature-scoped failures release the model with a flag."""

from __future__ import annotations

import numpy as np
from fixtures.synthetic_runs import correlated_pair, make_run

from rlgate.contract.models import Capability, GateConfig, HardGate, PrimaryGate, RegressionGate
from rlgate.engine import decide


def _runs() -> tuple:
    rng = np.random.default_rng(0)
    mb, mc = correlated_pair(rng, 2000, 0.6, 0.06, 0.3)   # math improves
    cb, cc = correlated_pair(rng, 2000, 0.6, -0.10, 0.3)  # charts drop by 10 points
    kb, kc = correlated_pair(rng, 2000, 0.6, 0.0, 0.02)   # knowledge unchanged
    base = make_run({"algebra": {"acc": mb}, "chart": {"acc": cb}, "mmlu": {"acc": kb}}, source="base")
    cand = make_run({"algebra": {"acc": mc}, "chart": {"acc": cc}, "mmlu": {"acc": kc}}, source="cand")
    return base, cand


def _config(chart_scope: str) -> GateConfig:
    return GateConfig(
        bootstrap_resamples=500, primary=PrimaryGate(metric="algebra/acc", min_delta=0.0),
        regression=[RegressionGate(metric="chart/acc", max_drop=0.02),
                    RegressionGate(metric="mmlu/acc", max_drop=0.02)],
        capabilities={"math": Capability(tasks=["algebra"]), "knowledge": Capability(tasks=["mmlu"]),
                      "charts": Capability(tasks=["chart"], scope=chart_scope)})  # type: ignore[arg-type]


def test_model_scope_behaves_as_today() -> None:
    base, cand = _runs()
    d = decide(_config("model"), base, cand, seed=0, contract_name="x")
    plain = decide(_config("model").model_copy(update={"capabilities": {}}), base, cand, seed=0, contract_name="x")
    assert d.decision == plain.decision == "block" and d.flags == [] and plain.capabilities == []
    charts = next(c for c in d.capabilities if c.name == "charts")
    assert charts.decision == "block" and charts.flag is None and charts.deciding_gates == ["chart/acc"]


def test_feature_scope_releases_with_block_flag() -> None:
    base, cand = _runs()
    d = decide(_config("feature"), base, cand, seed=0, contract_name="x")
    assert d.decision == "release" and d.flags == ["block_for_charts"] and d.deciding_gates == []
    by = {c.name: c for c in d.capabilities}
    assert by["charts"].decision == "block" and by["charts"].flag == "block_for_charts"
    assert by["math"].decision == "release" and by["knowledge"].decision == "release"
    assert "block_for_charts" in d.summary and d.summary.startswith("release")


def test_model_failure_still_decides_and_feature_flag_stays() -> None:
    base, cand = _runs()
    cfg = _config("feature").model_copy(update={"hard": [HardGate(metric="mmlu/acc", min=0.99)]})
    d = decide(cfg, base, cand, seed=0, contract_name="x")
    assert d.decision == "block" and d.flags == ["block_for_charts"] and "chart/acc" not in d.deciding_gates


def test_feature_nodata_blocks_the_feature_never_releases_it() -> None:
    base, cand = _runs()
    cfg = _config("feature").model_copy(update={"regression": [RegressionGate(metric="chart/missing",
                                                                               max_drop=0.02)]})
    d = decide(cfg, base, cand, seed=0, contract_name="x")
    charts = next(c for c in d.capabilities if c.name == "charts")
    assert charts.decision == "block" and d.flags == ["block_for_charts"]
    assert next(g for g in d.gates if g.name == "chart/missing").verdict == "nodata"
