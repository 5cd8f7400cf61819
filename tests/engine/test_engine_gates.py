"""Gate semantics, decision policy and evidence on small synthetic runs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from fixtures.synthetic_runs import correlated_pair, make_run, make_task

from rlgate.contract.models import (
    DecisionPolicy,
    DiagnosticGate,
    GateConfig,
    HardGate,
    PrimaryGate,
    RegressionGate,
)
from rlgate.engine import decide
from rlgate.engine.models import GateVerdict
from rlgate.results.models import RunProvenance, RunResult, TaskResult
from rlgate.stats.multiple import holm


def cfg(**kwargs: Any) -> GateConfig:
    kwargs.setdefault("bootstrap_resamples", 2000)
    return GateConfig(**kwargs)


def pair(n: int = 1000, p: float = 0.6, delta: float = 0.0, seed: int = 0, disc: float = 0.3) -> tuple[Any, Any]:
    return correlated_pair(np.random.default_rng(seed), n, p, delta, disc)


def counts(n: int, better: int, worse: int, both: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact paired 0/1 outcomes: `better` only-candidate-right, `worse` only-baseline-right, `both` both right."""
    base = np.array([0.0] * better + [1.0] * worse + [1.0] * both + [0.0] * (n - better - worse - both))
    cand = np.array([1.0] * better + [0.0] * worse + [1.0] * both + [0.0] * (n - better - worse - both))
    return base, cand


def runs(base: dict[str, Any], cand: dict[str, Any]) -> tuple[Any, Any]:
    return make_run({"t": base}, source="base"), make_run({"t": cand}, source="cand")


def one(decision: Any, name: str | None = None) -> GateVerdict:
    return decision.gates[0] if name is None else next(g for g in decision.gates if g.name == name)


def test_hard_gate_bounds_on_candidate_value() -> None:
    b, c = runs({"err": [0.0] * 90 + [1.0] * 10}, {"err": [0.0] * 94 + [1.0] * 6})
    ok = decide(cfg(hard=[HardGate(metric="t/err", max=0.08)]), b, c, seed=0, contract_name="x")
    assert ok.decision == "release" and one(ok).candidate == pytest.approx(0.06) and one(ok).ci is not None
    bad = decide(cfg(hard=[HardGate(metric="t/err", max=0.05)]), b, c, seed=0, contract_name="x")
    assert bad.decision == "block" and one(bad).verdict == "fail" and "> max 5.00%" in one(bad).reason
    low = decide(cfg(hard=[HardGate(metric="t/err", min=0.1)]), b, c, seed=0, contract_name="x")
    assert one(low).verdict == "fail"


def test_primary_needs_size_and_significance() -> None:
    b, c = pair(2000, delta=0.05)
    base, cand = runs({"acc": b}, {"acc": c})
    passed = decide(cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.02)), base, cand, seed=1, contract_name="x")
    assert passed.decision == "release" and one(passed).p_value < 0.05  # type: ignore[operator]
    too_small = decide(cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.2)), base, cand, seed=1, contract_name="x")
    assert too_small.decision == "research_only" and "< min_delta" in one(too_small).reason
    b, c = counts(60, 6, 3, 30)  # +5 points, but 6 of 9 discordant pairs: exact one-sided p = 130/512
    base, cand = runs({"acc": b}, {"acc": c})
    weak = decide(cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.0)), base, cand, seed=1, contract_name="x")
    assert one(weak).delta == pytest.approx(0.05) and one(weak).p_value == pytest.approx(130 / 512)
    assert one(weak).verdict == "fail" and weak.decision == "research_only" and "alpha 0.05" in one(weak).reason


def test_primary_lower_bound_requirement() -> None:
    b, c = counts(1000, 130, 90, 500)  # +4 points over 1000 pairs, 22 % discordant
    base, cand = runs({"acc": b}, {"acc": c})
    sig = decide(cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.03)), base, cand, seed=0, contract_name="x")
    lb = decide(cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.03, require="lower_bound")), base, cand, seed=0,
                contract_name="x")
    gate = one(lb)
    assert gate.ci is not None and gate.verdict == ("pass" if gate.ci[0] >= 0.03 else "fail")
    assert sig.gates[0].verdict == "pass" and gate.verdict == "fail"  # point estimate passes, lower bound does not


def test_direction_lower_is_better() -> None:
    # answer_parse_failure_rate goes down = improvement; also via an explicit override
    b, c = runs({"answer_parse_failure_rate": [1.0] * 300 + [0.0] * 700},
                {"answer_parse_failure_rate": [1.0] * 100 + [0.0] * 900})
    d = decide(cfg(primary=PrimaryGate(metric="t/answer_parse_failure_rate", min_delta=0.1)), b, c, seed=0,
               contract_name="x")
    assert one(d).verdict == "pass" and one(d).higher_is_better is False and one(d).delta == pytest.approx(-0.2)
    b2, c2 = runs({"loss": list(np.linspace(2, 3, 500))}, {"loss": list(np.linspace(2, 3, 500) - 0.3)})
    d2 = decide(cfg(regression=[RegressionGate(metric="t/loss", max_drop=0.0, higher_is_better=False)]), b2, c2,
                seed=0, contract_name="x")
    assert one(d2).verdict == "pass"
    d3 = decide(cfg(regression=[RegressionGate(metric="t/loss", max_drop=0.0)]), b2, c2, seed=0, contract_name="x")
    assert one(d3).verdict == "fail"  # unknown metric: higher is better, so -0.3 is a drop


def test_regression_significance_and_non_inferiority() -> None:
    b, c = pair(4000, delta=-0.04, seed=2)  # observed drop 4.9 points over 4000 pairs
    base, cand = runs({"acc": b}, {"acc": c})
    for test in ("three_way", "significance"):
        d = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01, test=test)]), base, cand, seed=0,
                   contract_name="x")
        assert d.decision == "block" and one(d).p_adjusted < 0.05 and one(d).verdict == "fail"  # type: ignore[operator]
    # significance alone releases a drop within the margin, though its lower bound (-6.4) is below -6
    within = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.06, test="significance")]), base, cand,
                    seed=0, contract_name="x")
    assert within.decision == "release" and "<= max_drop" in one(within).reason
    # the default three-way test does not: neither shown, so inconclusive, leaning non-inferior
    three = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.06)]), base, cand, seed=0,
                   contract_name="x")
    gate = one(three)
    assert three.decision == "research_only" and gate.verdict == "inconclusive"
    assert gate.outcome == "regression_inconclusive" and gate.details["leaning"] == "non_inferior"
    assert -0.06 > gate.details["lower_bound_holm"] > -0.07 and gate.details["more_samples"] > 1000
    assert "more paired samples would settle it" in gate.reason
    wide = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.08)]), base, cand, seed=0,
                  contract_name="x")
    assert wide.decision == "release" and one(wide).reason.startswith("pass: non-inferior")
    # identical small runs: no drop at all, but the interval is too wide to show non-inferiority at 1 point
    b, c = pair(80, delta=0.0, seed=4)
    same = runs({"acc": b}, {"acc": b})
    sig = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01, test="significance")]), *same, seed=0,
                 contract_name="x")
    assert sig.decision == "release"
    small = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01)]), *same, seed=0, contract_name="x")
    assert one(small).verdict == "inconclusive" and small.decision == "research_only"
    base, cand = runs({"acc": b}, {"acc": c})
    ni = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01, test="non_inferiority")]), base, cand,
                seed=0, contract_name="x")
    assert one(ni).ci is not None and one(ni).ci[0] < -0.01 and ni.decision == "block"  # type: ignore[index]


def test_holm_across_the_regression_family() -> None:
    b1, c1 = pair(1500, delta=-0.05, seed=10)
    b2, c2 = pair(1500, delta=-0.02, seed=11)
    base = make_run({"a": {"acc": b1}, "b": {"acc": b2}})
    cand = make_run({"a": {"acc": c1}, "b": {"acc": c2}})
    gates = [RegressionGate(metric="a/acc", max_drop=0.0), RegressionGate(metric="b/acc", max_drop=0.0)]
    d = decide(cfg(regression=gates), base, cand, seed=0, contract_name="x")
    raw = [g.p_value for g in d.gates]
    assert [g.p_adjusted for g in d.gates] == pytest.approx(holm(raw))  # type: ignore[arg-type]


def test_diagnostics_relative_and_absolute() -> None:
    b, c = runs({"response_length_mean": [100.0] * 50 + [200.0] * 50},
                {"response_length_mean": [150.0] * 50 + [260.0] * 50})
    up = decide(cfg(diagnostics=[DiagnosticGate(metric="t/response_length_mean", max_relative_increase=0.3)]), b, c,
                seed=0, contract_name="x")
    assert up.decision == "research_only" and one(up).details["relative_change"] == pytest.approx(55 / 150)
    ok = decide(cfg(diagnostics=[DiagnosticGate(metric="t/response_length_mean", max_relative_decrease=0.1,
                                                max=300)]), b, c, seed=0, contract_name="x")
    # the diagnostic passes, but a contract of diagnostics alone never releases (issue 33)
    assert one(ok).verdict == "pass" and ok.decision == "research_only"
    assert "no primary, hard or regression" in ok.summary
    ab = decide(cfg(diagnostics=[DiagnosticGate(metric="t/response_length_mean", max=200)]), b, c, seed=0,
                contract_name="x")
    assert one(ab).verdict == "fail" and one(ab).mde is not None
    zero = runs({"x": [0.0] * 10}, {"x": [0.0] * 9 + [1.0]})
    z = decide(cfg(diagnostics=[DiagnosticGate(metric="t/x", max_relative_increase=5.0)]), *zero, seed=0,
               contract_name="x")
    assert one(z).verdict == "fail"  # any increase from 0 is an infinite relative increase


def test_missing_baseline_and_metric_are_nodata() -> None:
    _, cand = runs({"acc": [1.0, 0.0]}, {"acc": [1.0, 1.0], "err": [0.0, 0.0]})
    config = cfg(primary=PrimaryGate(metric="t/acc"), hard=[HardGate(metric="t/err", max=0.1)],
                 regression=[RegressionGate(metric="t/acc", max_drop=0.01)],
                 diagnostics=[DiagnosticGate(metric="t/err", max_relative_increase=0.1)])
    d = decide(config, None, cand, seed=0, contract_name="x")
    assert d.decision == "block"
    assert [g.verdict for g in d.gates] == ["nodata", "pass", "nodata", "nodata"]
    assert "no baseline results" in d.gates[0].reason and any("no baseline" in w for w in d.warnings)
    missing = decide(cfg(hard=[HardGate(metric="t/nope", max=1.0), HardGate(metric="zz/acc", max=1.0)]),
                     None, cand, seed=0, contract_name="x")
    assert [g.verdict for g in missing.gates] == ["nodata", "nodata"] and missing.decision == "block"
    assert "does not report nope/none" in missing.gates[0].reason and "no task 'zz'" in missing.gates[1].reason
    typo = decide(cfg(hard=[HardGate(metric="t/ac", max=1.0)]), None, cand, seed=0, contract_name="x")
    assert "does not report ac/none for t (did you mean t/acc/none? it reports t/acc/none, t/err/none)" \
        in typo.gates[0].reason, typo.gates[0].reason


def test_error_in_one_gate_does_not_stop_others() -> None:
    base = make_run({"t": {"acc": [1.0, 0.0, 1.0]}})
    cand = make_run({"t": {"acc": [1.0, 1.0, 1.0]}})
    for sample in cand.tasks["t"].samples:  # per-response data that cannot support maj@3
        sample.extra["per_response"] = {"none": {"answers": ["a", "b"], "correct": [1.0, 0.0, 1.0]}}
    d = decide(cfg(hard=[HardGate(metric="t/maj@3", min=0.5), HardGate(metric="t/acc", min=0.5)]), base, cand,
               seed=0, contract_name="x")
    assert [g.verdict for g in d.gates] == ["error", "pass"] and d.decision == "block"
    assert d.gates[0].reason.startswith("error: ValueError")


def test_a_nan_per_response_verdict_is_a_named_error() -> None:
    """pass@k over epoch verdicts that hold a NaN (a corrupt scorer verdict): the gate errs and says why."""
    base = make_run({"t": {"acc": [1.0, 0.0, 1.0]}})
    cand = make_run({"t": {"acc": [1.0, 1.0, 1.0]}})
    for sample in cand.tasks["t"].samples:
        sample.extra["per_response"] = {"none": {"answers": ["a", "b"], "correct": [1.0, math.nan]}}
    d = decide(cfg(hard=[HardGate(metric="t/pass@2", min=0.5)]), base, cand, seed=0, contract_name="x")
    assert d.decision == "block" and d.gates[0].verdict == "error"
    assert "document 0 has a non-finite per-response verdict under 'none'" in d.gates[0].reason


def test_policy_is_data_and_extra_gates_join_the_decision() -> None:
    b, c = pair(3000, delta=-0.05, seed=1)
    base, cand = runs({"acc": b}, {"acc": c})
    soft = cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01)],
               decision=DecisionPolicy(regression_fail="research_only"))
    assert decide(soft, base, cand, seed=0, contract_name="x").decision == "research_only"
    same = runs({"acc": b}, {"acc": b})
    monitor = GateVerdict(name="reward hacking", kind="monitor", metric="monitor/reward_vs_heldout", verdict="fail",
                          outcome="monitor_critical", effect="release", reason="reward up, held-out down")
    warn = monitor.model_copy(update={"name": "entropy", "outcome": "monitor_warning"})
    config = cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01)])
    d = decide(config, *same, seed=0, contract_name="x", extra_gates=[monitor, warn])
    assert d.decision == "block" and d.deciding_gates == ["reward hacking"]
    assert [g.effect for g in d.gates] == ["release", "block", "research_only"]
    d2 = decide(config, *same, seed=0, contract_name="x", extra_gates=[warn])
    assert d2.decision == "research_only"


def test_pairing_reports_every_unpaired_document() -> None:
    base = make_run({"t": {"acc": [1.0] * 10}})
    cand = make_run({"t": {"acc": [1.0] * 10}})
    cand.tasks["t"].samples = cand.tasks["t"].samples[:7]  # 3 missing in the candidate
    cand.tasks["t"].samples[0] = cand.tasks["t"].samples[0].model_copy(update={"doc_hash": "changed"})
    extra = make_task("t", {"acc": [1.0]}, doc_ids=[42]).samples[0]
    cand.tasks["t"].samples.append(extra)
    cand.tasks["t"].n_samples = 8  # a run of these 8 documents (fewer samples than n_samples is a cut file)
    d = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01)]), base, cand, seed=0, contract_name="x")
    report = d.pairing[0]
    assert (report.paired, report.only_baseline, report.only_candidate, report.document_mismatch) == (6, 3, 1, 1)
    assert any("3 baseline-only" in w for w in d.warnings) and report.examples
    # 11 documents between the two runs; the candidate answered 7 of them unchanged, the baseline 9: nodata
    assert one(d).verdict == "nodata" and "answered 9 of the 11 documents" in one(d).reason
    assert "changed: doc_hash" in one(d).reason
    low = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01)], min_coverage=0.5), base, cand,
                 seed=0, contract_name="x")
    assert one(low).n == 6 and one(low).n_unpaired == 5
    assert one(low).details["coverage"] == {"baseline": "9/11", "candidate": "7/11"}


def test_reordered_documents_pair_by_hash() -> None:
    base = make_run({"t": {"acc": [1.0, 0.0, 1.0, 0.0]}})
    cand = make_run({"t": {"acc": [1.0, 0.0, 1.0, 0.0]}})
    for new_id, sample in zip([3, 2, 1, 0], cand.tasks["t"].samples, strict=True):
        sample.doc_id = new_id  # same documents (hash), new positions
    d = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.0)]), base, cand, seed=0, contract_name="x")
    assert d.pairing[0].paired == 4 and one(d).delta == 0.0


def test_equal_length_runs_pair_by_position_only_when_every_hash_and_id_agrees() -> None:
    from rlgate.engine.pairing import pair_task

    base = make_run({"t": {"acc": [1.0, 0.0, 1.0, 0.0]}}).tasks["t"]
    same = pair_task("t", base, make_run({"t": {"acc": [0.0, 0.0, 1.0, 1.0]}}).tasks["t"])
    assert same.report.paired == 4 and same.candidate_index.tolist() == [0, 1, 2, 3]
    changed = make_run({"t": {"acc": [1.0, 0.0, 1.0, 0.0]}}).tasks["t"]
    changed.samples[2] = changed.samples[2].model_copy(update={"doc_hash": "another question"})
    found = pair_task("t", base, changed)
    assert (found.report.paired, found.report.document_mismatch) == (3, 1)
    assert found.baseline_index.tolist() == found.candidate_index.tolist() == [0, 1, 3]
    renumbered = make_run({"t": {"acc": [1.0, 0.0, 1.0, 0.0]}}).tasks["t"]
    renumbered.samples[0], renumbered.samples[1] = renumbered.samples[1], renumbered.samples[0]
    swapped = pair_task("t", base, renumbered)  # same documents, another order: paired by (hash, id)
    assert swapped.report.paired == 4 and swapped.candidate_index.tolist() == [1, 0, 2, 3]


def test_protocol_differences_refused_unless_allowed() -> None:
    from rlgate._core.errors import InputError

    base = make_run({"t": {"acc": [1.0, 0.0]}})
    cand = make_run({"t": {"acc": [1.0, 1.0]}})
    cand.tasks["t"].protocol.num_fewshot = 5
    cand.tasks["t"].protocol.generation_kwargs = {"temperature": 0.7}
    cand.tasks["t"].samples[1].prompt = "a different prompt"
    config = cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.0)])
    with pytest.raises(InputError) as info:
        decide(config, base, cand, seed=0, contract_name="x")
    text = str(info.value)
    assert "num_fewshot 0 (baseline) vs 5 (candidate)" in text
    assert "generation_kwargs.temperature unset (baseline) vs 0.7 (candidate)" in text
    assert "prompts differ on 1 of 2 paired documents" in text and "allow_protocol_mismatch" in text
    d = decide(config, base, cand, seed=0, contract_name="x", allow_protocol_mismatch=True)
    assert len(d.protocol_differences) == 3 and any("protocol difference" in w for w in d.warnings)


def test_unpaired_fallback_without_samples() -> None:
    base, cand = runs({"acc": [1.0] * 600 + [0.0] * 400}, {"acc": [1.0] * 700 + [0.0] * 300})
    for run in (base, cand):
        task = run.tasks["t"]
        task.stderr = {"none": {"acc": float(np.std([s.scores["none"]["acc"] for s in task.samples], ddof=1)
                                             / np.sqrt(1000))}}
        task.samples = []
    d = decide(cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.05)), base, cand, seed=0, contract_name="x")
    assert one(d).verdict == "nodata" and d.decision == "block"  # no unpaired fallback unless the contract opts in
    assert "re-run lm_eval with --log_samples" in one(d).reason or "per-sample" in one(d).reason
    d = decide(cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.05), allow_unpaired=True), base, cand, seed=0,
               contract_name="x")
    gate = one(d)
    assert gate.verdict == "pass" and gate.test is not None and gate.test.startswith("unpaired")
    assert gate.delta == pytest.approx(0.1) and any("unpaired z-test" in w for w in d.warnings)
    assert d.decision == "research_only" and gate.effect == "research_only"


def test_group_and_per_instruction_metrics() -> None:
    base = make_run({"g_a": {"acc": [1.0, 0.0]}, "g_b": {"acc": [0.0, 0.0, 0.0, 1.0]}}, groups={"g": ["g_a", "g_b"]})
    cand = make_run({"g_a": {"acc": [1.0, 1.0]}, "g_b": {"acc": [0.0, 0.0, 1.0, 1.0]}}, groups={"g": ["g_a", "g_b"]})
    d = decide(cfg(hard=[HardGate(metric="g/acc", min=0.0)], regression=[RegressionGate(metric="g/acc", max_drop=0)]),
               base, cand, seed=0, contract_name="x")
    assert d.gates[0].candidate == pytest.approx(4 / 6)  # size-weighted, like lm-eval's group score
    assert d.gates[1].baseline == pytest.approx(2 / 6) and d.gates[1].n == 6
    inst_b = make_run({"t": {"inst": [0.0]}})
    inst_c = make_run({"t": {"inst": [0.0]}})
    inst_b.tasks["t"].samples[0].scores["none"]["inst"] = [1.0, 0.0, 0.0]
    inst_c.tasks["t"].samples[0].scores["none"]["inst"] = [1.0, 1.0, 0.0]
    extra_b = make_task("t", {"inst": [0.0]}, doc_ids=[1]).samples[0]
    extra_c = make_task("t", {"inst": [0.0]}, doc_ids=[1]).samples[0]
    extra_b.scores["none"]["inst"] = [1.0]
    extra_c.scores["none"]["inst"] = [1.0]
    inst_b.tasks["t"].samples.append(extra_b)
    inst_c.tasks["t"].samples.append(extra_c)
    di = decide(cfg(regression=[RegressionGate(metric="t/inst", max_drop=0.5)]), inst_b, inst_c, seed=0,
                contract_name="x")
    # micro average over instructions, as lm-eval aggregates inst_level_*: 2/4 -> 3/4
    assert one(di).baseline == pytest.approx(0.5) and one(di).candidate == pytest.approx(0.75)


def test_every_verdict_carries_numbers_and_a_reason() -> None:
    b, c = pair(500, delta=0.02, seed=9)
    base, cand = runs({"acc": b, "err": np.zeros(500)}, {"acc": c, "err": np.zeros(500)})
    config = cfg(primary=PrimaryGate(metric="t/acc", min_delta=0.05), hard=[HardGate(metric="t/err", max=0.1)],
                 regression=[RegressionGate(metric="t/acc", max_drop=0.01, name="acc kept")],
                 diagnostics=[DiagnosticGate(metric="t/acc", max_relative_decrease=0.5)])
    d = decide(config, base, cand, seed=0, contract_name="x")
    for gate in d.gates:
        assert gate.reason and gate.n and gate.mde is not None and gate.test and gate.outcome
    assert any("minimum detectable effect" in w for w in d.warnings)  # 500 pairs cannot show 5 points reliably
    assert d.gates[0].details.get("underpowered") is True


def test_one_run_without_samples_uses_the_unpaired_test() -> None:
    base, cand = runs({"acc": [1.0] * 600 + [0.0] * 400}, {"acc": [1.0] * 700 + [0.0] * 300})
    task = cand.tasks["t"]
    task.stderr = {"none": {"acc": float(np.sqrt(0.7 * 0.3 / 1000))}}
    task.samples = []
    d = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01)]), base, cand, seed=0, contract_name="x")
    assert one(d).verdict == "nodata" and "candidate run" in one(d).reason  # the candidate logged no samples
    d = decide(cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01)], allow_unpaired=True), base, cand,
               seed=0, contract_name="x")
    assert one(d).verdict == "pass" and one(d).test.startswith("unpaired")  # type: ignore[union-attr]
    assert one(d).delta == pytest.approx(0.1) and d.pairing == [] and d.decision == "research_only"


def test_subtask_missing_from_one_run_is_reported() -> None:
    """With min_coverage tolerating it, a subtask one run lacks is gated on the rest and reported as unpaired
    (without it the gate is nodata: tests/engine/test_engine_subtasks.py)."""
    groups = {"g": ["g_a", "g_b"]}
    base = make_run({"g_a": {"acc": [1.0, 0.0, 1.0]}, "g_b": {"acc": [1.0, 1.0]}}, groups=groups)
    cand = make_run({"g_a": {"acc": [1.0, 1.0, 1.0]}}, groups={"g": ["g_a"]})
    d = decide(cfg(regression=[RegressionGate(metric="g/acc", max_drop=0.5)], min_coverage=0.5), base, cand,
               seed=0, contract_name="x")
    missing = next(p for p in d.pairing if p.task == "g_b")
    assert missing.paired == 0 and missing.only_baseline == 2 and "only in the baseline" in missing.examples[0]
    assert one(d).n == 3 and one(d).n_unpaired == 2
    assert any(w.startswith("g_b: 0 documents paired; 2 baseline-only") for w in d.warnings)


def test_a_group_gate_takes_the_contract_direction_and_names_the_leaf_file_that_disagrees() -> None:
    """err_rate is lower-is-better (leaf b; leaf a, first in the group, has another metric). The direction comes
    from the contract (or the harness), never from the results files' own flags (issue 32): set in the gate,
    tripling the error rate is a regression of the group; the files' flags only agree or are warned about."""
    groups = {"g": ["a", "b"]}
    base = make_run({"a": {"f1": [0.5] * 300}, "b": {"err_rate": [1.0] * 30 + [0.0] * 270}}, groups=groups)
    cand = make_run({"a": {"f1": [0.5] * 300}, "b": {"err_rate": [1.0] * 90 + [0.0] * 210}}, groups=groups)
    for run in (base, cand):
        run.tasks["b"].higher_is_better = {"err_rate": False}
    gate = RegressionGate(metric="g/err_rate", max_drop=0.02, higher_is_better=False)
    d = decide(cfg(regression=[gate]), base, cand, seed=0, contract_name="x")
    assert one(d).higher_is_better is False
    assert d.decision == "block" and one(d).verdict == "fail" and "drop 20.00 pts > max_drop" in one(d).reason
    assert not any("is ignored" in w for w in d.warnings)  # the files agree with the contract
    unset = decide(cfg(regression=[RegressionGate(metric="g/err_rate", max_drop=0.02)]), base, cand, seed=0,
                   contract_name="x")
    assert one(unset).higher_is_better is True  # not the file's flag
    assert sum("results file says err_rate is lower is better for b; the harness says higher is better" in w
               for w in unset.warnings) == 2


@pytest.mark.parametrize("stderr", [math.nan, math.inf])
def test_non_finite_reported_stderr_is_an_error_not_a_pass(stderr: float) -> None:
    """Aggregate-only runs compared on their stderrs: a NaN / inf stderr (a corrupt results file) made the
    significance test's p NaN or 0.5, so a 30-point drop passed."""
    def run(value: float, se: float) -> RunResult:
        task = TaskResult(task="t", metrics={"none": {"acc": value}}, stderr={"none": {"acc": se}}, n_samples=500)
        return RunResult(provenance=RunProvenance(source="x"), tasks={"t": task})

    config = cfg(regression=[RegressionGate(metric="t/acc", max_drop=0.01, test="significance")], allow_unpaired=True)
    d = decide(config, run(0.8, 0.01), run(0.5, stderr), seed=0, contract_name="x")
    assert d.decision == "block" and one(d).verdict == "error"
    assert "the candidate run reports a non-finite stderr of acc/none for t" in one(d).reason
