"""Sequential replay with method group_sequential: error at the planned looks, power, the final analysis,
the contract's new fields, and the shared path (settling, stop rule, not-generated listing) with betting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures.synthetic_runs import correlated_pair, make_run
from pydantic import ValidationError

from rlgate.contract.models import GateConfig, HardGate, PrimaryGate, RegressionGate, Sequential
from rlgate.engine import decide
from rlgate.engine.models import SequentialReplay
from rlgate.engine.sequential import replay, sequential_lines
from rlgate.engine.sequential_methods import GroupSequential, Track
from rlgate.results.models import RunResult
from rlgate.stats.power import mde_paired
from rlgate.stats.sequential import to_unit

ALPHA = 0.05
GS = Sequential(looks=10, method="group_sequential")


def _pair(delta: float, seed: int = 0, n: int = 2000) -> tuple[RunResult, RunResult]:
    b, c = correlated_pair(np.random.default_rng(seed), n, 0.6, delta, discordance=0.3)
    return make_run({"t": {"acc": b.tolist()}}), make_run({"t": {"acc": c.tolist()}})


def _config() -> GateConfig:
    return GateConfig(alpha=ALPHA, bootstrap_resamples=200,
                      primary=PrimaryGate(metric="t/acc", min_delta=0.0, max_drop=0.02),
                      hard=[HardGate(metric="t/acc", min=0.3)],
                      regression=[RegressionGate(metric="t/acc", max_drop=0.02)])


def _paired(rng: np.random.Generator, up: float, down: float, n: int, reps: int) -> np.ndarray:
    u = rng.random((reps, n))
    return to_unit(np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0)), -1.0, 1.0)


def _released(x: np.ndarray, plan: Sequential, spending: str, margin: float) -> float:
    """Share of replays in which non-inferiority (change > -margin) is claimed at any planned look."""
    method, counts = GroupSequential(spending), plan.counts(x.shape[1])
    hits = [method.first(Track(row, counts, -1.0, 1.0, planned=counts[-1], planned_looks=len(counts), binary=True),
                         (1 - margin) / 2, ALPHA, "greater") for row in x]
    return float(np.mean([h is not None for h in hits]))


def test_contract_fields_default_to_betting_and_refuse_a_spending_without_group_sequential() -> None:
    assert Sequential().method == "betting" and Sequential().spending is None
    assert Sequential(method="group_sequential", spending="obrien_fleming").spending == "obrien_fleming"
    with pytest.raises(ValidationError, match="spending applies to method: group_sequential only"):
        Sequential(spending="pocock")
    with pytest.raises(ValidationError, match="method"):
        Sequential(method="sprt")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="spending"):
        Sequential(method="group_sequential", spending="linear")  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [100, 400, 2000])
@pytest.mark.parametrize("spending", ["pocock", "obrien_fleming"])
def test_false_release_stays_below_alpha_across_the_planned_looks(n: int, spending: str) -> None:
    """A true drop just past the margin: non-inferiority is claimed at some planned look (final analysis
    included) in at most alpha of replays, within Monte-Carlo error; rare discordance included."""
    rng = np.random.default_rng(n)
    plan, reps, margin = Sequential(looks=8, min_samples=50, method="group_sequential", spending=spending), 1500, 0.02
    for up, down in [(0.05, 0.0701), (0.0, 0.0201), (0.15, 0.1701)]:
        released = _released(_paired(rng, up, down, n, reps), plan, spending, margin)
        assert released <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps), (n, spending, up, down, released)


def test_power_at_the_fixed_sample_mde() -> None:
    """At the fixed-sample MDE (alpha, power 0.8) the planned looks cost some power: Pocock more than
    O'Brien-Fleming, which keeps its final look near the fixed-sample test. Twice the MDE: nearly always."""
    rng = np.random.default_rng(7)
    n, reps, disc, margin = 2000, 1500, 0.12, 0.02
    mde = mde_paired(n, ALPHA, 0.8, binary=True, discordant_rate=disc)
    at_mde = {}
    for spending in ("pocock", "obrien_fleming"):
        plan = Sequential(looks=10, method="group_sequential", spending=spending)
        change = -margin + mde
        at_mde[spending] = _released(_paired(rng, (disc + change) / 2, (disc - change) / 2, n, reps), plan, spending,
                                     margin)
        change = -margin + 2 * mde
        assert _released(_paired(rng, (disc + change) / 2, (disc - change) / 2, n, reps), plan, spending,
                         margin) > 0.97
    assert 0.6 <= at_mde["pocock"] < at_mde["obrien_fleming"] <= 0.85, at_mde


def test_a_collapse_blocks_early_through_the_shared_path_and_lists_what_was_never_generated() -> None:
    base, cand = _pair(-0.25)
    config = _config()
    full = decide(config, base, cand, seed=0, contract_name="c")
    r = replay(config, base, cand, GS, full, seed=1)
    assert r.procedure == "group_sequential" and r.spending == "pocock"  # the default spending
    assert "Lan & DeMets" in r.method and "planned looks only" in r.method
    assert full.decision == r.decision_at_stop == "block" and r.stop_look <= 2
    assert r.stop_reason == "a blocking gate failed decisively"
    assert r.documents_used + sum(ng.count for ng in r.not_generated) == r.documents_total
    assert r.not_generated[0].note == f"not generated: settled at look {r.stop_look}"
    regression = next(g for g in r.gates if g.kind == "regression")
    assert regression.verdict == "fail" and regression.critical_z is not None and regression.critical_z > 1.645
    assert regression.upper is not None and regression.upper < -0.02
    assert "group-sequential, pocock spending, valid at the planned looks" in "\n".join(sequential_lines(r))


def test_a_clear_gain_releases_early_with_both_spending_functions() -> None:
    base, cand = _pair(0.15)
    config = _config()
    full = decide(config, base, cand, seed=0, contract_name="c")
    for spending in ("pocock", "obrien_fleming"):
        r = replay(config, base, cand, GS.model_copy(update={"spending": spending}), full, seed=0)
        assert r.decision_at_stop == full.decision == "release" and r.stop_reason == "every gate settled"
        assert r.fraction_used <= 0.5 and r.spending == spending
        assert all(g.verdict == "pass" and g.lower is not None for g in r.gates)


def test_betting_stays_the_default_and_unchanged() -> None:
    base, cand = _pair(0.15)
    config = _config()
    full = decide(config, base, cand, seed=0, contract_name="c")
    plain = replay(config, base, cand, Sequential(looks=10), full, seed=0)
    named = replay(config, base, cand, Sequential(looks=10, method="betting"), full, seed=0)
    assert plain == named and plain.procedure == "betting" and "Waudby-Smith" in plain.method
    assert all(g.critical_z is None for g in plain.gates)


@pytest.mark.parametrize(("delta", "stop", "decision", "gates"), [
    (0.15, 1, "release", [("pass", 1, 0.086, 0.272), ("pass", 1, 0.743, 0.874), ("pass", 1, 0.086, 0.272)]),
    (0.02, 10, "release", [("open", None, -0.012, 0.054), ("pass", 1, 0.601, 0.651), ("pass", 3, -0.012, 0.054)]),
    (-0.05, 10, "block", [("open", None, -0.078, -0.01), ("pass", 1, 0.54, 0.586), ("open", None, -0.078, -0.01)]),
])
def test_betting_replays_as_before_group_sequential_was_added(delta: float, stop: int, decision: str,
                                                             gates: list[tuple[str, int | None, float, float]]) -> None:
    """Pinned from the betting-only engine (commit 097e676): stop look, decision, and per gate (primary, hard,
    regression) the verdict, settled look and bounds at the stop."""
    base, cand = _pair(delta)
    config = _config()
    r = replay(config, base, cand, Sequential(looks=10), decide(config, base, cand, seed=0, contract_name="c"), seed=0)
    assert (r.stop_look, r.decision_at_stop) == (stop, decision)
    got = [(g.verdict, g.settled_look, round(g.lower or 0.0, 3), round(g.upper or 0.0, 3)) for g in r.gates]
    assert got == [(v, k, pytest.approx(lo, abs=1e-3), pytest.approx(hi, abs=1e-3)) for v, k, lo, hi in gates]


def _final(delta: float, config: GateConfig) -> SequentialReplay:
    base, cand = _pair(delta, n=600)
    full = decide(config, base, cand, seed=0, contract_name="c")
    return replay(config, base, cand, Sequential(looks=4, method="group_sequential"), full, seed=0)


def test_the_last_planned_look_is_the_final_analysis() -> None:
    """A change on the regression margin: no interim look settles it; the final analysis calls the three-way
    regression inconclusive at the final boundary instead of re-testing at the fixed-sample level."""
    config = GateConfig(alpha=ALPHA, bootstrap_resamples=200,
                        regression=[RegressionGate(metric="t/acc", max_drop=0.02)])
    r = _final(-0.02, config)
    assert r.stop_look == 4 and not r.stopped_early
    (gate,) = r.gates
    assert gate.verdict == "inconclusive" and gate.outcome == "regression_inconclusive" and gate.settled_look == 4
    assert "final planned look" in gate.reason and "final group-sequential analysis" in r.stop_reason
    assert r.decision_at_stop == "research_only"
    primary = GateConfig(alpha=ALPHA, bootstrap_resamples=200, primary=PrimaryGate(metric="t/acc", min_delta=0.0))
    r = _final(0.0, primary)
    (gate,) = r.gates
    assert gate.verdict == "fail" and gate.outcome == "primary_fail" and "not shown by the final" in gate.reason
    assert r.decision_at_stop == "research_only"


def test_the_whole_procedure_keeps_false_release_below_alpha() -> None:
    """Interim looks and the final analysis together (replay end to end) under a drop just past the margin."""
    config = GateConfig(alpha=ALPHA, bootstrap_resamples=200,
                        regression=[RegressionGate(metric="t/acc", max_drop=0.02)])
    reps, released = 400, 0  # ~0.01 s each; the bound below (~0.083) fails a doubled alpha (0.10)
    for rep in range(reps):
        base, cand = _pair(-0.025, seed=200 + rep, n=400)
        full = decide(config, base, cand, seed=rep, contract_name="c")
        released += replay(config, base, cand, Sequential(looks=8, method="group_sequential"), full,
                           seed=rep).decision_at_stop == "release"
    assert released / reps <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_a_short_task_reaches_its_final_analysis_before_the_suite_last_look() -> None:
    """With chunk and tasks of different sizes, a short task's gate is settled at the first look holding all its
    documents, and generation stops there instead of running the long task to the suite's last look."""
    rng = np.random.default_rng(5)
    long_b, long_c = correlated_pair(rng, 2000, 0.6, 0.0, discordance=0.3)
    short_b, short_c = correlated_pair(rng, 300, 0.6, -0.02, discordance=0.3)
    base = make_run({"a": {"acc": long_b.tolist()}, "b": {"acc": short_b.tolist()}})
    cand = make_run({"a": {"acc": long_c.tolist()}, "b": {"acc": short_c.tolist()}})
    config = GateConfig(alpha=ALPHA, bootstrap_resamples=200,
                        regression=[RegressionGate(metric="b/acc", max_drop=0.02)])
    plan = Sequential(chunk=100, min_samples=100, method="group_sequential")
    r = replay(config, base, cand, plan, decide(config, base, cand, seed=0, contract_name="c"), seed=0)
    (gate,) = r.gates
    assert r.looks_planned == 20 and gate.settled_look is not None and gate.settled_look <= 3
    assert r.stop_look == gate.settled_look and r.documents_used == 2 * 100 * r.stop_look


def test_group_sequential_refuses_more_looks_than_it_can_integrate() -> None:
    from rlgate._core.errors import InputError
    from rlgate.contract.protocol import GROUP_SEQUENTIAL_MAX_LOOKS

    assert len(Sequential(method="group_sequential", looks=GROUP_SEQUENTIAL_MAX_LOOKS).counts(10_000)) == 50
    with pytest.raises(ValidationError, match="at most 50 planned looks"):
        Sequential(method="group_sequential", looks=GROUP_SEQUENTIAL_MAX_LOOKS + 1)
    assert len(Sequential(looks=500).counts(10_000)) == 500  # betting takes any number
    chunked = Sequential(method="group_sequential", chunk=10)
    assert len(chunked.counts(500)) == 50
    with pytest.raises(InputError, match="makes 51 looks") as caught:
        chunked.counts(510)
    assert caught.value.field == "protocol.sequential.chunk"
    assert "raise chunk to at least 11" in (caught.value.fix or "")


def test_a_live_check_states_the_same_final_analysis_as_the_replay() -> None:
    """`rlgate check` stopping at the last planned look names who decides as the replay does: the final
    group-sequential analysis for the gates it tracks (it said the fixed-sample tests decide)."""
    from rlgate.engine.sequential_check import judge_generated

    config = GateConfig(alpha=ALPHA, bootstrap_resamples=200,
                        regression=[RegressionGate(metric="t/acc", max_drop=0.02)])
    base, cand = _pair(-0.02)
    plan = Sequential(looks=4, method="group_sequential")
    replayed = replay(config, base, cand, plan, decide(config, base, cand, seed=0, contract_name="x"), seed=0)
    live, stop = judge_generated(config, base, cand, plan, seed=0, totals={"t": 2000}, look=4)
    assert stop and live.stop_look == replayed.stop_look == 4
    assert live.stop_reason == replayed.stop_reason
    assert "final group-sequential analysis decides each tracked gate" in live.stop_reason
    assert live.gates[0].verdict == replayed.gates[0].verdict == "inconclusive"
