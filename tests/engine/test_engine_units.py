"""The statistical unit is the sample (issue 33): epochs averaged before the test, single-epoch runs unchanged,
small-n honesty, and decisions that do not depend on the seed."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.epoch_runs import epoch_pair, epoch_run
from fixtures.synthetic_runs import make_run

from rlgate.contract.models import GateConfig, HardGate, PrimaryGate, RegressionGate
from rlgate.engine import decide
from rlgate.engine.summary import decision_table
from rlgate.stats.bootstrap import bootstrap_paired_binary, exact_binary_interval, percentile_interval
from rlgate.stats.paired_tests import signed_rank_exact

METRIC = "t/acc"


def _decide(config: GateConfig, base: np.ndarray, cand: np.ndarray, seed: int = 0):  # type: ignore[no-untyped-def]
    return decide(config, epoch_run("t", "acc", base, "base"), epoch_run("t", "acc", cand, "cand"), seed=seed,
                  contract_name="x")


def test_single_epoch_runs_give_exactly_todays_result() -> None:
    base, cand = epoch_pair(200, 1, better=14, worse=4)
    config = GateConfig(bootstrap_resamples=2000, primary=PrimaryGate(metric=METRIC, min_delta=0.01),
                        hard=[HardGate(metric=METRIC, min=0.4)],
                        regression=[RegressionGate(metric=METRIC, max_drop=0.02, name="r")])
    clustered = _decide(config, base, cand, seed=5)
    plain = decide(config, make_run({"t": {"acc": base[:, 0]}}, source="base"),
                   make_run({"t": {"acc": cand[:, 0]}}, source="cand"), seed=5, contract_name="x")
    drop = {"inputs", "pairing"}  # the runs' sources / doc ids differ in name only
    assert clustered.model_dump(exclude=drop) == plain.model_dump(exclude=drop)
    assert all("units" not in g.details for g in clustered.gates)


def test_epochs_that_agree_are_one_binary_outcome_per_sample() -> None:
    base, cand = epoch_pair(40, 4, better=3)
    gate = _decide(GateConfig(primary=PrimaryGate(metric=METRIC, min_delta=0.0)), base, cand).gates[0]
    assert gate.n == 40 and gate.p_value == pytest.approx(0.125) and "McNemar over samples" in str(gate.test)
    assert gate.details["units"] == {"samples": 40, "records": 160, "epochs_per_sample": "4",
                                     "agreement_baseline": 1.0, "agreement_candidate": 1.0}


def test_epochs_that_disagree_take_the_exact_signed_rank_test_over_samples() -> None:
    rng = np.random.default_rng(3)
    skill = rng.random(30)
    base = (rng.random((30, 16)) < skill[:, None]).astype(float)
    cand = (rng.random((30, 16)) < np.clip(skill[:, None] + 0.05, 0, 1)).astype(float)
    gate = _decide(GateConfig(primary=PrimaryGate(metric=METRIC, min_delta=0.0)), base, cand).gates[0]
    diff = cand.mean(axis=1) - base.mean(axis=1)
    assert gate.n == 30 and gate.p_value == pytest.approx(signed_rank_exact(diff, "greater"))
    assert gate.delta == pytest.approx(diff.mean()) and "signed-rank over samples" in str(gate.test)
    assert 0 < gate.details["units"]["agreement_baseline"] < 1


def test_thirty_problems_by_sixteen_samples_prints_the_per_problem_mde_and_warns() -> None:
    rng = np.random.default_rng(0)
    skill = rng.random(30)  # AIME-style: problems differ, and each model has its own problems
    other = np.clip(skill + rng.normal(0, 0.25, 30), 0, 1)
    base = (rng.random((30, 16)) < skill[:, None]).astype(float)
    cand = (rng.random((30, 16)) < other[:, None]).astype(float)
    d = _decide(GateConfig(primary=PrimaryGate(metric=METRIC, min_delta=0.03)), base, cand)
    gate = d.gates[0]
    per_problem = cand.mean(axis=1) - base.mean(axis=1)
    expected = (1.6448536269514722 + 0.8416212335729143) * per_problem.std(ddof=1) / np.sqrt(30)
    assert gate.n == 30 and gate.mde == pytest.approx(expected)
    flat = (cand - base).ravel()  # what 480 independent pairs would have claimed
    assert gate.mde > 1.5 * (1.6448536269514722 + 0.8416212335729143) * flat.std(ddof=1) / np.sqrt(480)
    assert any("suite is too small" in w and gate.name in w for w in d.warnings)
    assert "30×16" in decision_table(d)


def test_a_pair_of_records_from_different_samples_is_an_error() -> None:
    base, cand = epoch_pair(10, 2, better=1)
    runs = [epoch_run("t", "acc", base, "base"), epoch_run("t", "acc", cand, "cand")]
    runs[1].tasks["t"].samples[0].extra["sample_id"] = 7
    gate = decide(GateConfig(primary=PrimaryGate(metric=METRIC)), *runs, seed=0, contract_name="x").gates[0]
    assert gate.verdict == "error" and "re-run both with the same sample ids" in gate.reason


def test_forty_seeds_at_the_margin_give_one_decision() -> None:
    n, better, worse = 400, 40, 12  # a lower-bound primary whose bound sits on min_delta
    base = np.zeros((n, 1))
    base[better:better + worse] = 1.0
    cand = np.zeros((n, 1))
    cand[:better] = 1.0
    lower, _ = exact_binary_interval(better, worse, n, 0.95)
    shown = [percentile_interval(bootstrap_paired_binary(better, worse, n, 2000, np.random.default_rng(s)), 0.95)[0]
             for s in range(40)]
    assert min(shown) < lower < max(shown)  # the seeded bootstrap alone would flip
    for margin, verdict in ((lower, "pass"), (lower + 1e-6, "fail")):
        config = GateConfig(bootstrap_resamples=2000,
                            primary=PrimaryGate(metric=METRIC, min_delta=margin, require="lower_bound"))
        decisions = {(_decide(config, base, cand, seed=s).gates[0].verdict) for s in range(40)}
        assert decisions == {verdict}


def test_non_inferiority_at_the_margin_is_seed_free() -> None:
    n, better, worse = 400, 12, 30
    lower, _ = exact_binary_interval(better, worse, n, 0.95)
    base = np.zeros((n, 1))
    base[better:better + worse] = 1.0
    cand = np.zeros((n, 1))
    cand[:better] = 1.0
    config = GateConfig(bootstrap_resamples=2000,
                        regression=[RegressionGate(metric=METRIC, max_drop=-lower, test="non_inferiority")])
    assert {_decide(config, base, cand, seed=s).decision for s in range(40)} == {"release"}


def test_exact_binary_interval_is_the_limit_of_the_count_bootstrap() -> None:
    for better, worse, n in ((3, 0, 40), (30, 10, 200), (20, 17, 168), (200, 150, 12000)):
        many = bootstrap_paired_binary(better, worse, n, 400_000, np.random.default_rng(1))
        assert exact_binary_interval(better, worse, n, 0.95) == pytest.approx(percentile_interval(many, 0.95))


def test_repeated_responses_of_one_record_stay_one_sample_with_the_count_beside_n() -> None:
    base, cand = epoch_pair(30, 1, better=2)
    runs = [make_run({"t": {"acc": base[:, 0]}}, source="base"), make_run({"t": {"acc": cand[:, 0]}}, source="cand")]
    for run in runs:  # lm-eval `repeats: 16`: one record per document holding its 16 responses
        for sample in run.tasks["t"].samples:
            sample.responses = ["r"] * 16
    d = decide(GateConfig(primary=PrimaryGate(metric=METRIC, min_delta=0.0)), *runs, seed=0, contract_name="x")
    assert d.gates[0].n == 30 and d.gates[0].details["units"] == {"samples": 30, "responses_per_sample": "16"}
    assert "30×16" in decision_table(d)


def test_sequential_replay_refuses_runs_with_several_epochs_per_sample() -> None:
    from rlgate._core.errors import InputError
    from rlgate.contract.protocol import Sequential
    from rlgate.engine.sequential import replay

    base, cand = epoch_pair(40, 4, better=3)
    runs = [epoch_run("t", "acc", base, "base"), epoch_run("t", "acc", cand, "cand")]
    config = GateConfig(primary=PrimaryGate(metric=METRIC))
    full = decide(config, *runs, seed=0, contract_name="x")
    with pytest.raises(InputError, match="several records \\(epochs\\) per sample"):
        replay(config, *runs, Sequential(looks=4), full, seed=0)
