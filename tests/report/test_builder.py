"""The report model: pairing of samples, private-split discipline, radar, regressions, rollout card."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.synthetic_runs import make_manifest

from rlgate.engine.models import PairingReport
from rlgate.report.builder import build_report, normalise
from rlgate.report.io import write_reports
from rlgate.report.model import MetricValue
from rlgate.results.models import SampleRecord
from tests.report import factories as f

BASE = [True, True, False, True, True, False, True, False]
CAND = [True, False, True, True, False, True, True, True]


def _counts(base: list[bool], cand: list[bool]) -> dict[str, int]:
    pairs = list(zip(base, cand, strict=True))
    return {"regressed": sum(b and not c for b, c in pairs), "improved": sum(c and not b for b, c in pairs),
            "same": sum(b == c for b, c in pairs)}


def test_pairs_are_classified_per_document(tmp_path: Path) -> None:
    model = build_report(f.decision(), contract=f.contract(tmp_path), baseline=f.run("b", BASE),
                         candidate=f.run("c", CAND))
    gsm = next(t for t in model.tasks if t.task == "gsm8k")
    expected = _counts(BASE, CAND)
    assert {k: gsm.counts[k] for k in expected} == expected
    assert gsm.drill_metric == "exact_match/flexible-extract"
    views = gsm.samples.views()
    regressed = [s.doc_id for s in views if s.change == "regressed"]
    assert regressed == [i for i, (b, c) in enumerate(zip(BASE, CAND, strict=True)) if b and not c]
    first = views[0]
    assert first.baseline is not None and first.baseline.response == f.HOSTILE_RESPONSE
    assert first.prompt == f.HOSTILE_PROMPT and first.target == "B"


def test_private_split_samples_appear_in_no_output(tmp_path: Path) -> None:
    leak = {"badcase_top": [{"task": "ifeval", "cluster": "length", "count": 3,
                             "examples": [f"{f.PRIVATE_MARKER} example"], "prompt": f.PRIVATE_MARKER}],
            "judge": {"ifeval": [f"{f.PRIVATE_MARKER} judged"], "gsm8k": {"win_rate": 0.6}}}
    written = write_reports(tmp_path / "out", f.decision(leak), contract=f.contract(tmp_path),
                            baseline=f.run("b", BASE), candidate=f.run("c", CAND), step_summary=False)
    assert set(written) == {"model", "decision", "html", "markdown", "junit"}
    for path in (tmp_path / "out").iterdir():
        assert f.PRIVATE_MARKER not in path.read_text(encoding="utf-8"), path.name
    model = build_report(f.decision(leak), contract=f.contract(tmp_path), baseline=f.run("b", BASE),
                         candidate=f.run("c", CAND))
    ifeval = next(t for t in model.tasks if t.task == "ifeval")
    assert len(ifeval.samples) == 0 and "release_gate_only" in (ifeval.samples_withheld or "")
    assert ifeval.counts["regressed"] == _counts(BASE, CAND)["regressed"]  # counts stay
    assert model.decision.extensions["judge"]["gsm8k"] == {"win_rate": 0.6}  # aggregates stay


def test_without_a_contract_samples_are_withheld() -> None:
    model = build_report(f.decision(), baseline=f.run("b", BASE), candidate=f.run("c", CAND))
    assert all(len(t.samples) == 0 and t.samples_withheld for t in model.tasks)
    assert all(t.counts["same"] == _counts(BASE, CAND)["same"] for t in model.tasks)


def test_sample_limit_keeps_changed_pairs_first(tmp_path: Path) -> None:
    model = build_report(f.decision(), contract=f.contract(tmp_path), baseline=f.run("b", BASE, n=80),
                         candidate=f.run("c", CAND, n=80), sample_limit=12)
    gsm = next(t for t in model.tasks if t.task == "gsm8k")
    assert len(gsm.samples) == 12 and gsm.samples_total == 80
    assert set(gsm.samples.change) == {"regressed"}  # 20 regressed pairs exist
    assert gsm.samples.doc_id == sorted(gsm.samples.doc_id)
    assert "at most 12 per task" in model.sample_note


def test_unpaired_and_mismatched_documents_are_kept(tmp_path: Path) -> None:
    base, cand = f.run("b", BASE), f.run("c", CAND)
    cand.tasks["gsm8k"].samples[3] = cand.tasks["gsm8k"].samples[3].model_copy(update={"doc_hash": "other"})
    cand.tasks["gsm8k"].samples.append(SampleRecord(doc_id=99, doc_hash="h99", responses=["x"]))
    model = build_report(f.decision(), contract=f.contract(tmp_path), baseline=base, candidate=cand)
    gsm = next(t for t in model.tasks if t.task == "gsm8k")
    assert gsm.counts["only_baseline"] == 1 and gsm.counts["only_candidate"] == 2
    assert gsm.samples_total == len(BASE) + 2


def test_radar_normalisation_orients_every_axis_higher_is_better() -> None:
    assert normalise(0.8, 0.5, bounded=True, hib=True) == (pytest.approx(80.0), "100 × value")
    assert normalise(0.1, 0.3, bounded=True, hib=False)[0] == pytest.approx(90.0)
    assert normalise(50.0, 100.0, bounded=False, hib=True)[0] == pytest.approx(50.0)
    assert normalise(200.0, 100.0, bounded=False, hib=False)[0] == pytest.approx(50.0)
    assert normalise(100.0, 200.0, bounded=False, hib=False)[0] == pytest.approx(100.0)


def test_radar_and_raw_metrics(tmp_path: Path) -> None:
    model = build_report(f.decision(), contract=f.contract(tmp_path), baseline=f.run("b", BASE),
                         candidate=f.run("c", CAND))
    refs = [m.ref for m in model.metrics]
    assert refs[0] == "gsm8k/exact_match/flexible-extract"  # gated metrics first
    assert len(refs) == len(set(refs))
    axes = {a.ref: a for a in model.radar}
    # one axis per task or group: the group's subtasks are not axes (they get their own table)
    assert "mmlu_pro_math/exact_match/custom-extract" not in axes
    assert "mmlu_pro/exact_match/custom-extract" in axes
    gated = axes["gsm8k/exact_match/flexible-extract"]  # a comparative gate's own numbers decided: they win
    assert (gated.baseline_raw, gated.candidate_raw) == (0.5, 0.75)
    assert "higher is better" in model.radar_note


def test_top_regressions_rank_drops_and_skip_ungated_lengths(tmp_path: Path) -> None:
    model = build_report(f.decision(), contract=f.contract(tmp_path), baseline=f.run("b", BASE),
                         candidate=f.run("c", CAND))
    top = model.top_regressions
    assert [r.ref for r in top] == ["mmlu_pro/exact_match/custom-extract"]
    assert top[0].gate == "mmlu_pro | <b>no drop</b>" and top[0].verdict == "fail"
    value = MetricValue(ref="t/response_length_mean/none", task="t", metric="response_length_mean",
                        baseline=10.0, candidate=20.0, higher_is_better=False, bounded=False)
    from rlgate.report.builder import top_regressions

    assert top_regressions(f.decision(), [value], []) == []


def test_rollout_card_merges_provenance_manifests_and_drops(tmp_path: Path) -> None:
    decision = f.decision().model_copy(update={"pairing": [
        PairingReport(task="gsm8k", paired=7, only_candidate=1, examples=["doc 99"])]})
    manifest = make_manifest(seeds={"random_seed": 1234}, library_versions={"vllm": "0.6.3"}, backend="vllm",
                             tasks=[{"task": "gsm8k", "tokens_out": 5}])
    model = build_report(decision, contract=f.contract(tmp_path), baseline=f.run("b", BASE),
                         candidate=f.run("c", CAND), manifests={"candidate": manifest},
                         monitor={"severity": None, "findings": []})
    card = model.rollout
    cand = next(r for r in card.runs if r.role == "candidate")
    assert cand.seeds == {"random_seed": 1234} and cand.library_versions == {"torch": "2.13.0", "vllm": "0.6.3"}
    # the samples' own token counts win over the manifest's per-task count
    assert cand.response_tokens == 12 * 3 * len(CAND) and cand.wall_time_s == 321.0
    assert cand.manifest["backend"] == "vllm" and "library_versions" not in cand.manifest
    assert card.reporting_rules[0].startswith("Empty or unparseable answers")
    assert {d["run"] for d in card.drops} == {"pairing"}
    assert model.decision.extensions["monitor"] == {"severity": None, "findings": []}


def test_rollout_card_reads_the_manifest_a_run_carries(tmp_path: Path) -> None:
    """`rlgate gate` on folders rlgate produced passes no manifests: the card reads those the runs carry. A manifest
    written before `seeds` was recorded shows the protocol's sampling seed; tokens come from the manifest when the
    samples do not count them."""
    cand = f.run("c", CAND)
    for task in cand.tasks.values():
        for sample in task.samples:
            sample.response_tokens = None
    cand.provenance.manifest = make_manifest(protocol={"sampling": {"seed": 1234, "temperature": 0.0}},
                                             tasks=[{"task": "gsm8k", "tokens_out": 40}, {"task": "mmlu_pro"}])
    card = build_report(f.decision(), contract=f.contract(tmp_path), baseline=f.run("b", BASE),
                        candidate=cand).rollout
    base_card, cand_card = card.runs
    assert cand_card.seeds == {"sampling_seed": 1234} and cand_card.response_tokens == 40
    assert base_card.seeds == {} and base_card.manifest == {}
