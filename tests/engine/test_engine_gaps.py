"""The four "documents missing" checks share one judgement (rlgate.engine.gaps): each source's reason and note,
word for word, and the order they take on one gate."""

from __future__ import annotations

from typing import Any

from fixtures.synthetic_runs import make_manifest, make_run

from rlgate.contract.models import GateConfig, HardGate, RegressionGate
from rlgate.engine import decide
from rlgate.results.models import RunResult

BASE = [1.0, 0.0] * 50
CAND = [1.0] * 100


def cfg(**kwargs: Any) -> GateConfig:
    kwargs.setdefault("bootstrap_resamples", 200)
    return GateConfig(hard=[HardGate(metric="t/acc", min=0.5)], **kwargs)


def with_manifest(run: RunResult, documents: int, missing: list[int]) -> RunResult:
    run.provenance.manifest = make_manifest(tasks=[{"task": "t", "documents": documents, "expected_documents": 100,
                                                    "missing_documents": missing}])
    return run


def test_a_manifest_short_of_min_coverage_names_the_counts_and_where_the_rest_is_listed() -> None:
    cand = with_manifest(make_run({"t": {"acc": CAND}}), 90, [90, 91, 92, 93])
    gate = decide(cfg(min_coverage=0.95), None, cand, seed=0, contract_name="x").gates[0]
    assert gate.reason == ("nodata: the candidate run answered 90 of 100 documents of t (coverage 90.0% < "
                           "min_coverage 95%) (missing e.g. t:90, t:91, t:92; all listed in run_manifest.json)")
    tolerated = decide(cfg(min_coverage=0.9), None, cand, seed=0, contract_name="x").gates[0]
    assert tolerated.verdict == "pass" and tolerated.details["coverage"] == {"candidate": "90/100"}
    assert tolerated.reason.endswith(" (coverage candidate 90/100 documents: values over answered documents)")


def test_a_cut_samples_file_without_lm_eval_ids_says_the_harness_counted_more() -> None:
    cand = make_run({"t": {"acc": CAND}})
    task = cand.tasks["t"]
    task.samples = [s.model_copy(update={"doc_id": f"d{s.doc_id}"}) for s in task.samples[:50]]
    gate = decide(cfg(), None, cand, seed=0, contract_name="x").gates[0]
    assert gate.reason == ("nodata: the candidate run answered 50 of 100 documents of t (coverage 50.0% < "
                           "min_coverage 100%) (the harness reported more documents than its samples hold)")


def test_missing_values_below_min_coverage_name_the_metric_and_the_fix() -> None:
    cand = make_run({"t": {"acc": CAND}})
    for sample in cand.tasks["t"].samples[:20]:
        del sample.scores["none"]["acc"]
    gate = decide(cfg(min_coverage=0.9), None, cand, seed=0, contract_name="x").gates[0]
    assert gate.reason == ("nodata: the candidate run has no acc/none value for 20 of 100 documents of t (e.g. "
                           "t:0, t:1, t:2; 80.0% scored < min_coverage 90%): its samples do not write the metric; "
                           "re-score them or lower min_coverage")


def test_every_tolerated_gap_is_noted_in_order_and_counts_stay_on_a_gate_that_fails_later() -> None:
    groups = {"g": ["t", "u"]}
    base = make_run({"t": {"acc": BASE}, "u": {"acc": [1.0] * 10}}, groups=groups)
    cand = make_run({"t": {"acc": CAND}}, groups=groups)
    with_manifest(cand, 95, [95])
    for sample in cand.tasks["t"].samples[:5]:
        del sample.scores["none"]["acc"]
    config = GateConfig(regression=[RegressionGate(metric="g/acc", max_drop=0.5)], min_coverage=0.8,
                        bootstrap_resamples=200)
    gate = decide(config, base, cand, seed=0, contract_name="x").gates[0]
    assert gate.verdict == "pass"
    shown = ("coverage", "missing_values", "missing_subtasks")
    assert [k for k in gate.details if k in shown] == list(shown)
    assert gate.details["coverage"] == {"candidate": "95/100"}
    assert gate.reason.endswith(" (coverage candidate 95/100 documents: values over answered documents)"
                                " (candidate 5 of 100 documents without a value: values over the rest)"
                                " (candidate lacks u: values over the subtasks present)")
    strict = decide(config.model_copy(update={"min_coverage": 0.93}), base, cand, seed=0, contract_name="x").gates[0]
    assert strict.verdict == "nodata" and "lacks subtask(s) u of g (10 of 110 documents" in strict.reason
    assert strict.details["coverage"] == {"candidate": "95/100"} and "missing_values" not in strict.details
