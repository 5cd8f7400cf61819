"""Sequential gating over samples (issue 33): a sample's epochs are revealed together and averaged to one value
before any sequential test, so 4 epochs of 40 samples are 40 observations, never 160."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.epoch_runs import epoch_pair, epoch_run
from fixtures.synthetic_runs import make_run

from rlgate._core.errors import InputError
from rlgate.contract.models import GateConfig, HardGate, PrimaryGate, RegressionGate, Sequential
from rlgate.engine import decide
from rlgate.engine.sequential import order, replay, sequential_lines
from rlgate.engine.sequential_check import judge_generated
from rlgate.results.models import RunResult

METRIC = "t/acc"


def _runs(base: np.ndarray, cand: np.ndarray) -> tuple[RunResult, RunResult]:
    return epoch_run("t", "acc", base, "base"), epoch_run("t", "acc", cand, "cand")


def _replay(config: GateConfig, runs: tuple[RunResult, RunResult], plan: Sequential, seed: int = 0):  # type: ignore[no-untyped-def]
    full = decide(config, *runs, seed=seed, contract_name="x")
    return full, replay(config, *runs, plan, full, seed=seed)


def test_three_more_samples_of_forty_over_four_epochs_is_not_a_release() -> None:
    runs = _runs(*epoch_pair(40, 4, better=3))
    config = GateConfig(primary=PrimaryGate(metric=METRIC, min_delta=0.0))
    for seed in range(5):
        full, r = _replay(config, runs, Sequential(looks=4, min_samples=10), seed)
        assert full.decision == r.decision_at_stop == "research_only" and r.matches_full  # primary not shown
        assert r.documents_total == 40 and r.epochs_per_sample == "4"
        assert all(look.documents <= 40 for look in r.looks)
        [gate] = r.gates
        assert gate.verdict != "pass" and (gate.n or 0) <= 40  # observations are samples
    text = "\n".join(sequential_lines(r))
    assert "/40 samples (x4 epochs, averaged per sample)" in text


def test_records_counted_as_samples_would_have_released_the_same_data() -> None:
    """The control: the same 160 records, each its own sample, settle the primary as shown (what issue 33 feared)."""
    base, cand = epoch_pair(40, 4, better=3)
    flat = (make_run({"t": {"acc": base.ravel().tolist()}}, source="base"),
            make_run({"t": {"acc": cand.ravel().tolist()}}, source="cand"))
    config = GateConfig(primary=PrimaryGate(metric=METRIC, min_delta=0.0))
    _, r = _replay(config, flat, Sequential(looks=4, min_samples=10))
    assert r.decision_at_stop == "release" and r.documents_total == 160


def test_epochs_replay_exactly_as_their_per_sample_means() -> None:
    """Every sequential verdict, bound and settling look over 4-epoch runs is the replay of one record per sample
    holding the sample's mean: the sample is the unit, in the seeded order of samples."""
    rng = np.random.default_rng(4)
    skill = rng.random(300)
    base = (rng.random((300, 4)) < skill[:, None]).astype(float)
    cand = (rng.random((300, 4)) < np.clip(skill[:, None] - 0.15, 0, 1)).astype(float)
    config = GateConfig(bootstrap_resamples=200, primary=PrimaryGate(metric=METRIC, min_delta=0.0, max_drop=0.02),
                        hard=[HardGate(metric=METRIC, min=0.2)],
                        regression=[RegressionGate(metric=METRIC, max_drop=0.02, name="r")])
    means = (make_run({"t": {"acc": base.mean(axis=1).tolist()}}, source="base"),
             make_run({"t": {"acc": cand.mean(axis=1).tolist()}}, source="cand"))
    for plan in (Sequential(looks=10), Sequential(looks=6, method="group_sequential")):
        _, clustered = _replay(config, _runs(base, cand), plan, seed=3)
        _, averaged = _replay(config, means, plan, seed=3)
        assert clustered.stop_look == averaged.stop_look and clustered.documents_used == averaged.documents_used
        assert [g.model_dump() for g in clustered.gates] == [g.model_dump() for g in averaged.gates]
        assert clustered.decision_at_stop == "block" and clustered.stop_look < 10


def test_an_early_stop_leaves_out_whole_samples_in_the_seeded_order_of_samples() -> None:
    base, cand = epoch_pair(400, 3, better=0, worse=150, base_right=300)
    config = GateConfig(regression=[RegressionGate(metric=METRIC, max_drop=0.02)])
    full, r = _replay(config, _runs(base, cand), Sequential(looks=10), seed=2)
    assert full.decision == r.decision_at_stop == "block" and r.stopped_early and r.stop_look < 10
    [ng] = r.not_generated
    used = order("t", 400, 2)[:r.documents_used].tolist()
    assert ng.count == 400 - r.documents_used == 400 - len(used)
    unseen = {int(d.split("#")[0]) for d in ng.documents}
    assert len(ng.documents) == 3 * ng.count and unseen.isdisjoint(used)  # every epoch of each unseen sample
    assert f"({ng.count} samples, {3 * ng.count} records)" in ng.note


def test_samples_with_different_epoch_counts_are_each_one_observation() -> None:
    base, cand = epoch_pair(60, 4, better=0, worse=30, base_right=60)
    runs = list(_runs(base, cand))
    for run in runs:  # the first 10 samples ran 2 epochs only
        run.tasks["t"].samples = [s for s in run.tasks["t"].samples
                                  if not (int(s.extra["sample_id"]) < 10 and str(s.doc_id).endswith(("#3", "#4")))]
    _, r = _replay(GateConfig(hard=[HardGate(metric=METRIC, min=0.9)]), (runs[0], runs[1]), Sequential(looks=3))
    assert r.documents_total == 60 and r.epochs_per_sample == "2-4"


def test_a_pair_of_records_from_different_samples_is_refused() -> None:
    runs = _runs(*epoch_pair(10, 2, better=1))
    runs[1].tasks["t"].samples[0].extra["sample_id"] = 7
    config = GateConfig(primary=PrimaryGate(metric=METRIC))
    full = decide(config, *runs, seed=0, contract_name="x")
    with pytest.raises(InputError, match="re-run both with the same sample ids"):
        replay(config, *runs, Sequential(looks=2), full, seed=0)


def test_a_live_check_refuses_epochs_and_points_at_the_replay() -> None:
    runs = _runs(*epoch_pair(40, 4, better=3))
    with pytest.raises(InputError, match="several records \\(epochs\\) per sample") as error:
        judge_generated(GateConfig(primary=PrimaryGate(metric=METRIC)), *runs, Sequential(looks=4), seed=0,
                        totals={"t": 160}, look=1)
    assert "rlgate gate --sequential" in str(error.value.fix)


def test_single_epoch_runs_replay_as_before() -> None:
    """Records that each name their own sample (epochs=1) take the documents' path: the same replay."""
    base, cand = epoch_pair(500, 1, better=40, worse=5)
    config = GateConfig(bootstrap_resamples=200, primary=PrimaryGate(metric=METRIC, min_delta=0.0),
                        regression=[RegressionGate(metric=METRIC, max_drop=0.02)])
    plain = (make_run({"t": {"acc": base[:, 0].tolist()}}, source="base"),
             make_run({"t": {"acc": cand[:, 0].tolist()}}, source="cand"))
    _, tagged = _replay(config, _runs(base, cand), Sequential(looks=8), seed=1)
    _, untagged = _replay(config, plain, Sequential(looks=8), seed=1)
    assert tagged.epochs_per_sample is None
    assert tagged.model_dump(exclude={"not_generated"}) == untagged.model_dump(exclude={"not_generated"})
