"""Sequential replay: seeded order, early settling, never-generated documents listed, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.synthetic_runs import correlated_pair, make_run
from pydantic import ValidationError

from rlgate.contract.models import DiagnosticGate, GateConfig, HardGate, PrimaryGate, RegressionGate, Sequential
from rlgate.engine import decide
from rlgate.engine.sequential import order, replay, sequential_lines
from rlgate.results.models import CorruptScore, RunResult

N = 2000


def _pair(delta: float, seed: int = 0, n: int = N) -> tuple[RunResult, RunResult]:
    b, c = correlated_pair(np.random.default_rng(seed), n, 0.6, delta, discordance=0.3)
    return make_run({"t": {"acc": b.tolist()}}), make_run({"t": {"acc": c.tolist()}})


def _config() -> GateConfig:
    return GateConfig(alpha=0.05, bootstrap_resamples=200,
                      primary=PrimaryGate(metric="t/acc", min_delta=0.0, max_drop=0.02),
                      hard=[HardGate(metric="t/acc", min=0.3)],
                      regression=[RegressionGate(metric="t/acc", max_drop=0.02)])


def test_schedule_validation_and_counts() -> None:
    with pytest.raises(ValidationError, match="either looks or chunk"):
        Sequential(looks=5, chunk=100)
    assert Sequential(looks=4, min_samples=50).counts(400) == [100, 200, 300, 400]
    assert Sequential(chunk=150, max_fraction=0.5).counts(1000) == [150, 300, 450, 500]
    assert Sequential(looks=4).counts(30) == [30, 30, 30, 30]  # min_samples above the task: one look's worth


def test_order_is_seeded_and_per_task() -> None:
    assert (order("t", 50, 3) == order("t", 50, 3)).all()
    assert not (order("t", 50, 3) == order("t", 50, 4)).all()
    assert not (order("t", 50, 3) == order("u", 50, 3)).all()
    assert sorted(order("t", 50, 3).tolist()) == list(range(50))


def test_a_collapse_blocks_at_an_early_look_and_lists_what_was_never_generated() -> None:
    base, cand = _pair(-0.25)
    config = _config()
    full = decide(config, base, cand, seed=0, contract_name="c")
    r = replay(config, base, cand, Sequential(looks=10), full, seed=1)
    assert full.decision == "block" and r.decision_at_stop == "block" and r.matches_full
    assert r.stop_look <= 2 and r.stopped_early and r.stop_reason == "a blocking gate failed decisively"
    assert r.documents_used + sum(ng.count for ng in r.not_generated) == r.documents_total == N
    ng = r.not_generated[0]
    assert ng.note == f"not generated: settled at look {r.stop_look}" and len(ng.documents) == ng.count
    used = set(order("t", N, 1)[:r.documents_used].tolist())
    assert not used & {int(d) for d in ng.documents}  # doc ids equal indices in make_run
    regression = next(g for g in r.gates if g.kind == "regression")
    assert regression.verdict == "fail" and regression.upper is not None and regression.upper < -0.02
    text = "\n".join(sequential_lines(r))
    assert f"reached at look {r.stop_look} of 10" in text and "not generated: settled at look" in text


def test_a_clear_gain_releases_before_the_end() -> None:
    base, cand = _pair(0.15)
    config = _config()
    full = decide(config, base, cand, seed=0, contract_name="c")
    r = replay(config, base, cand, Sequential(looks=10), full, seed=0)
    assert full.decision == r.decision_at_stop == "release" and r.stop_reason == "every gate settled"
    assert r.fraction_used <= 0.5
    assert all(g.verdict == "pass" and g.settled_look is not None and g.settled_look <= r.stop_look
               for g in r.gates)


def test_diagnostics_never_hold_up_stopping_but_still_count_at_the_stop() -> None:
    base, cand = _pair(0.15)
    relative = DiagnosticGate(metric="t/acc", max_relative_increase=0.05)  # fails: the gain is far above 5 %
    config = _config().model_copy(update={"diagnostics": [relative]})
    full = decide(config, base, cand, seed=0, contract_name="c")
    r = replay(config, base, cand, Sequential(looks=10), full, seed=0)
    assert full.decision == "research_only"  # diagnostic_fail
    assert r.stop_look < 10 and r.decision_at_stop == "research_only" and r.matches_full
    diagnostic = next(g for g in r.gates if g.kind == "diagnostic")
    assert diagnostic.verdict == "fail" and "never holds up stopping" in diagnostic.reason


def test_the_primary_follows_its_rule_significant_gain_and_estimate_above_min_delta() -> None:
    base, cand = _pair(0.06)
    config = GateConfig(alpha=0.05, bootstrap_resamples=200, primary=PrimaryGate(metric="t/acc", min_delta=0.02))
    full = decide(config, base, cand, seed=0, contract_name="c")
    default = replay(config, base, cand, Sequential(looks=10), full, seed=0)
    strict = config.model_copy(update={"primary": PrimaryGate(metric="t/acc", min_delta=0.02, require="lower_bound")})
    bound = replay(strict, base, cand, Sequential(looks=10), decide(strict, base, cand, seed=0, contract_name="c"),
                   seed=0)
    assert full.decision == default.decision_at_stop == "release"
    (gate,) = default.gates
    assert gate.verdict == "pass" and "estimate >= min_delta" in gate.reason and gate.lower is not None
    assert gate.lower > 0  # an improvement shown, anytime-valid
    assert default.stop_look <= bound.stop_look  # the lower-bound rule asks more of the same data


def test_an_unsettled_suite_runs_to_the_end_and_keeps_the_full_decision() -> None:
    base, cand = _pair(-0.02)  # on the margin: no look settles it
    config = _config()
    full = decide(config, base, cand, seed=0, contract_name="c")
    r = replay(config, base, cand, Sequential(looks=5), full, seed=0)
    assert r.stop_look == 5 and not r.stopped_early and r.fraction_used == 1.0
    assert r.decision_at_stop == full.decision and r.matches_full and not r.not_generated


def test_max_fraction_decides_on_the_generated_documents_with_the_fixed_tests() -> None:
    base, cand = _pair(-0.02)
    config = _config()
    full = decide(config, base, cand, seed=0, contract_name="c")
    r = replay(config, base, cand, Sequential(looks=5, max_fraction=0.4), full, seed=0)
    assert r.documents_used == 800 and "max_fraction 0.4 reached" in r.stop_reason
    assert r.not_generated[0].count == 1200 and r.decision_at_stop != "release"


def test_the_engine_procedure_rarely_releases_a_drop_beyond_the_margin() -> None:
    """Anytime looks plus the final fixed look (the whole procedure) under a true drop of 4 points,
    margin 2: false release stays within alpha plus Monte-Carlo error."""
    config = GateConfig(alpha=0.05, bootstrap_resamples=200, regression=[RegressionGate(metric="t/acc", max_drop=0.02)])
    reps, released = 60, 0
    for rep in range(reps):
        base, cand = _pair(-0.04, seed=100 + rep, n=400)
        full = decide(config, base, cand, seed=rep, contract_name="c")
        released += replay(config, base, cand, Sequential(looks=8), full, seed=rep).decision_at_stop == "release"
    assert released / reps <= 0.05 + 3 * (0.05 * 0.95 / reps) ** 0.5


def test_an_early_stop_never_hides_gates_without_usable_data() -> None:
    """Corrupt scores make the fixed-sample gates error; the replay's tracker sees only the finite scores and
    settles early, but what a sequential check would have decided at the stop still blocks (as the live check,
    which keeps those verdicts, does)."""
    base, cand = _pair(0.15)
    for sample in cand.tasks["t"].samples[:10]:
        del sample.scores["none"]["acc"]
    cand.tasks["t"].corrupt = [CorruptScore(doc_id=i, metric="acc", problem="non_finite", value="NaN")
                               for i in range(10)]
    config = _config()
    full = decide(config, base, cand, seed=0, contract_name="c")
    assert full.decision == "block" and {g.verdict for g in full.gates} == {"error"}
    r = replay(config, base, cand, Sequential(looks=10), full, seed=0)
    assert r.stop_look < 10 and r.decision_at_stop == "block" and r.matches_full
