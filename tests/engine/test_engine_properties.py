"""Property tests of the engine (hypothesis): invariants that must hold for any data."""

from __future__ import annotations

from typing import Any

import numpy as np
from fixtures.synthetic_runs import make_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlgate.contract.models import DiagnosticGate, GateConfig, HardGate, PrimaryGate, RegressionGate
from rlgate.engine import decide
from rlgate.engine.models import DECISION_ORDER

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def paired_data(draw: Any) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    n = draw(st.integers(3, 40))
    acc = st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)
    score = st.lists(st.floats(0, 1000, allow_nan=False, allow_infinity=False), min_size=n, max_size=n)
    return ({"acc": draw(acc), "score": draw(score)}, {"acc": draw(acc), "score": draw(score)})


@st.composite
def gate_configs(draw: Any) -> GateConfig:
    metric = st.sampled_from(["t/acc", "t/score"])
    regression = draw(st.lists(st.builds(RegressionGate, metric=metric, max_drop=st.floats(0, 0.5),
                                         test=st.sampled_from(["significance", "non_inferiority"])),
                               max_size=2, unique_by=lambda g: g.metric))
    primary = draw(st.none() | st.builds(PrimaryGate, metric=metric, min_delta=st.floats(0, 0.3),
                                         require=st.sampled_from(["significance", "lower_bound"])))
    diagnostics = draw(st.lists(st.builds(DiagnosticGate, metric=metric,
                                          max_relative_increase=st.floats(0, 2)), max_size=1))
    return GateConfig(alpha=draw(st.sampled_from([0.01, 0.05, 0.1])), bootstrap_resamples=200, primary=primary,
                      regression=regression, diagnostics=diagnostics)


@SETTINGS
@given(data=paired_data(), config=gate_configs(), seed=st.integers(0, 2**31))
def test_identical_runs_never_block_on_regression(data: Any, config: GateConfig, seed: int) -> None:
    values, _ = data
    decision = decide(config, make_run({"t": values}), make_run({"t": values}), seed=seed, contract_name="p")
    regression = [g for g in decision.gates if g.kind == "regression"]
    assert all(g.verdict == "pass" and g.delta == 0.0 for g in regression), [g.reason for g in regression]
    if not config.primary and not config.diagnostics:  # no gates at all shows nothing: never a release
        assert decision.decision == ("release" if config.regression else "research_only")


@SETTINGS
@given(data=paired_data(), config=gate_configs(), seed=st.integers(0, 2**31))
def test_swapping_runs_flips_every_delta(data: Any, config: GateConfig, seed: int) -> None:
    a, b = data
    forward = decide(config, make_run({"t": a}), make_run({"t": b}), seed=seed, contract_name="p")
    backward = decide(config, make_run({"t": b}), make_run({"t": a}), seed=seed, contract_name="p")
    for f, r in zip(forward.gates, backward.gates, strict=True):
        assert f.name == r.name
        if f.delta is not None:
            assert r.delta == -f.delta
            assert (f.baseline, f.candidate) == (r.candidate, r.baseline)
            assert f.details["p_two_sided"] == np.float64(r.details["p_two_sided"])


@SETTINGS
@given(data=paired_data(), config=gate_configs(), seed=st.integers(0, 2**31), which=st.sampled_from(["acc", "score"]))
def test_adding_a_hard_failure_never_improves_the_decision(data: Any, config: GateConfig, seed: int,
                                                           which: str) -> None:
    base, cand = make_run({"t": data[0]}), make_run({"t": data[1]})
    before = decide(config, base, cand, seed=seed, contract_name="p")
    value = float(np.mean(data[1][which]))
    failing = HardGate(metric=f"t/{which}", max=value - 1.0)  # the candidate's value is above it: fails
    after = decide(config.model_copy(update={"hard": [*config.hard, failing]}), base, cand, seed=seed,
                   contract_name="p")
    assert after.gates[-1 - len(config.regression) - len(config.diagnostics)].verdict == "fail"
    assert DECISION_ORDER.index(after.decision) <= DECISION_ORDER.index(before.decision)
    assert after.decision == "block"
