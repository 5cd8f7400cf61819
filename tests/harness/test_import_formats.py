"""Formats other tools write, beside the ones rlgate's own tests produce: each read right or refused in one line.

SWE-bench per-instance reports in the flat form and the summaries teams publish (mini-swe-agent's
results_summary.json, the experiments layout's results/results.json), OpenCompass predictions, VLMEvalKit
rows that share question and answer, and what `rlgate gate` says about a path no harness reads. The
shapes are those the tools' own code writes (cited per test).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.harness import read_results
from rlgate.harness.lmeval.responses import ResponseRow, match_rows, same_target

IDS = [f"django__django-{n}" for n in range(12001, 12007)]


def flat_report(resolved: bool) -> dict[str, object]:
    """What mini-swe-agent's logs/<instance_id>/report.json holds (get_eval_report's value, unwrapped)."""
    return {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True, "resolved": resolved,
            "tests_status": {"FAIL_TO_PASS": {"success": ["t1"] if resolved else [], "failure": [] if resolved
                                              else ["t1"]}, "PASS_TO_PASS": {"success": ["t2"], "failure": []}}}


def write_flat(root: Path, outcomes: dict[str, bool]) -> Path:
    for instance, resolved in outcomes.items():
        folder = root / "logs" / instance
        folder.mkdir(parents=True)
        (folder / "report.json").write_text(json.dumps(flat_report(resolved)))
    return root


def test_flat_per_instance_reports_take_their_folder_name_as_the_instance(tmp_path: Path) -> None:
    outcomes = {i: n % 2 == 0 for n, i in enumerate(IDS)}
    run = read_results(write_flat(tmp_path / "run", outcomes))
    (task,) = run.tasks.values()
    assert {s.doc_id: s.scores["none"]["task_success"] for s in task.samples} == {
        i: 1.0 if ok else 0.0 for i, ok in outcomes.items()}
    assert task.samples[0].extra["swebench_report"]["tests"] == {"FAIL_TO_PASS_success": 1, "FAIL_TO_PASS_failure": 0,
                                                                 "PASS_TO_PASS_success": 1, "PASS_TO_PASS_failure": 0}


def test_a_flat_report_outside_an_instance_folder_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "somewhere" / "report.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(flat_report(True)))
    with pytest.raises(InputError) as caught:
        read_results(bad)
    assert "'somewhere' is not an instance id" in str(caught.value) and caught.value.fix


def test_agent_side_results_summary_is_a_swebench_summary_not_an_inspect_log(tmp_path: Path) -> None:
    """mini-swe-agent's results_summary.json ({"total", "passed", "failed", "pass_rate", "instances"})."""
    rows = [{"instance_id": i, "resolved": n < 4, "patch_applied": True} for n, i in enumerate(IDS)]
    data = {"total": 6, "passed": 4, "failed": 2, "pass_rate": 66.7, "instances": rows}
    root = tmp_path / "run"
    root.mkdir()
    (root / "results_summary.json").write_text(json.dumps(data, indent=2))
    run = read_results(root / "results_summary.json")
    (task,) = run.tasks.values()
    assert run.provenance.harness == "swebench" and task.metrics["none"]["task_success"] == pytest.approx(4 / 6)
    write_flat(root, {IDS[0]: True, IDS[5]: True})  # a report that says resolved where the summary says not
    with pytest.raises(InputError) as caught:
        read_results(root)
    assert f"'{IDS[5]}' is resolved in its report but unresolved in results_summary.json" in str(caught.value)
    (root / "results_summary.json").write_text(json.dumps({**data, "passed": 5}))
    with pytest.raises(InputError, match="'passed' says 5 but 4"):
        read_results(root / "results_summary.json")


def test_experiments_layout_reads_results_json_with_the_logs(tmp_path: Path) -> None:
    """SWE-bench/experiments: results/results.json lists resolved / no_generation / no_logs; logs add the rest."""
    root = write_flat(tmp_path / "exp", {IDS[0]: True, IDS[1]: False, IDS[2]: False})
    (root / "logs" / IDS[3]).mkdir()  # a log folder without a report: evaluated by nobody, an error
    (root / "results").mkdir()
    (root / "results" / "results.json").write_text(json.dumps(
        {"no_generation": [IDS[4]], "no_logs": [IDS[5]], "resolved": [IDS[0]]}))
    (task,) = read_results(root).tasks.values()
    status = {s.doc_id: s.extra["swebench_status"] for s in task.samples}
    assert status == {IDS[0]: "resolved", IDS[1]: "unresolved", IDS[2]: "unresolved", IDS[3]: "error",
                      IDS[4]: "empty_patch", IDS[5]: "error"}
    assert task.metrics["none"]["task_success"] == pytest.approx(1 / 6)


def test_a_json_inspect_log_is_detected_and_a_summary_beside_it_is_not_taken_for_one(tmp_path: Path) -> None:
    from rlgate.harness.inspect import is_json_log

    log = tmp_path / "log.json"
    log.write_text('{\n  "version": 2,\n  "status": "success",\n  "eval": {"task": "t"}}')
    other = tmp_path / "results_summary.json"
    other.write_text('{"total": 1, "passed": 1, "instances": []}')
    assert is_json_log(log) and not is_json_log(other)


# --------------------------------------------------------------------------- OpenCompass
def write_predictions(root: Path, abbr: str, entries: dict[str, dict[str, object]]) -> Path:
    """GenInferencerOutputHandler.write_to_json: {str(idx): {origin_prompt, prediction, gold?}}, indent 4."""
    folder = root / "20260101_000000" / "predictions" / "tiny-hf"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{abbr}.json"
    path.write_text(json.dumps(entries, indent=4, ensure_ascii=False), encoding="utf-8")
    return path


def test_opencompass_predictions_become_rows_of_the_lm_eval_task(tmp_path: Path) -> None:
    from rlgate.harness.lmeval.convert import convert

    entries = {str(i): {"origin_prompt": f"Q{i}", "prediction": f"The answer is {i}", "gold": str(i)} for i in range(3)}
    write_predictions(tmp_path, "gsm8k", entries)
    out = tmp_path / "r.jsonl"
    report = convert([tmp_path], "opencompass", out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[1] == {"task": "gsm8k", "doc_id": 1, "target": "1", "response": "The answer is 1", "prompt": "Q1"}
    assert report.rows["gsm8k"] == 3 and report.versions == {"gsm8k": "gsm8k"}
    assert len(report.notes) == 1 and "OpenCompass generated these responses from its own prompt" in report.notes[0]
    summary = tmp_path / "20260101_000000" / "summary"  # the summarizer's csv holds the dataset config's hash
    summary.mkdir()
    (summary / "summary_20260101_000000.csv").write_text("dataset,version,metric,mode,tiny-hf\n"
                                                         "gsm8k,1d7fe4,accuracy,gen,0.00\n")
    assert convert([tmp_path], "opencompass", out).versions == {"gsm8k": "gsm8k@1d7fe4"}
    assert same_target("1", "Natalia sold 48/2 = 24 clips in May.\n#### 1")  # OpenCompass keeps the number only


def test_opencompass_partitioned_dataset_continues_the_numbering(tmp_path: Path) -> None:
    """SizePartitioner writes <abbr>_<part>.json, each test_range[i:i+step] numbered from 0."""
    from rlgate.harness.lmeval.opencompass import opencompass_rows

    entry = {"origin_prompt": "q", "prediction": "a"}
    write_predictions(tmp_path, "gsm8k_0", {str(i): entry for i in range(4)})
    second = write_predictions(tmp_path, "gsm8k_1", {str(i): entry for i in range(2)})
    assert [identity["doc_id"] for _, identity, _ in opencompass_rows(second, None)] == [4, 5]


@pytest.mark.parametrize(("abbr", "entry", "needle"), [
    ("COREV2_6A_", {"origin_prompt": "q", "prediction": "a", "gold": {"capability": "x"}}, "subjective"),
    ("race-high", {"origin_prompt": "q", "prediction": "A", "gold": "A"}, "no matching lm-eval task"),
    ("gsm8k", {"origin_prompt": "q"}, "no text 'prediction'"),
])
def test_opencompass_files_rlgate_cannot_score_are_refused(tmp_path: Path, abbr: str, entry: dict[str, object],
                                                           needle: str) -> None:
    from rlgate.harness.lmeval.convert import convert

    path = write_predictions(tmp_path, abbr, {"0": entry})
    with pytest.raises(InputError) as caught:
        convert([path], "opencompass", tmp_path / "r.jsonl")
    assert needle in str(caught.value) and str(path) in str(caught.value) and caught.value.fix
    assert not (tmp_path / "r.jsonl").exists()
    if abbr == "race-high":  # no lm-eval task: gated on OpenCompass's own verdicts instead
        assert "{task: race-high, harness: opencompass}" in caught.value.fix


# --------------------------------------------------------------------------- VLMEvalKit ties
def test_rows_sharing_question_and_answer_are_placed_by_the_sources_index() -> None:
    """ChartQA asks the same question with the same answer of different charts: only the index tells them apart."""
    docs = {"chartqa": [{"query": "Max?", "label": ["5"], "human_or_machine": 0} for _ in range(3)]
            + [{"query": "Min?", "label": ["1"], "human_or_machine": 0}]}
    rows = [ResponseRow(line, "chartqa", None, {"query": q, "human_or_machine": 0}, response, target, index)
            for line, (q, target, index, response) in enumerate([("Max?", "5", 12, "c"), ("Max?", "5", 10, "a"),
                                                                  ("Min?", "1", 13, "m"), ("Max?", "5", 11, "b")], 1)]
    result = match_rows(rows, docs, {}, target_of=lambda leaf, i: docs[leaf][i]["label"])
    assert result.responses == {("chartqa", 0): ["a"], ("chartqa", 1): ["b"], ("chartqa", 2): ["c"],
                                ("chartqa", 3): ["m"]}
    assert result.report is not None and result.report.unmatched == 0
    rows.append(ResponseRow(9, "chartqa", None, {"query": "Max?", "human_or_machine": 0}, "d", "5", 14))
    report = match_rows(rows, docs, {}, target_of=lambda leaf, i: docs[leaf][i]["label"]).report
    assert report is not None and report.unmatched == 4 and "share their fields with 3 documents" in report.examples[0]


# --------------------------------------------------------------------------- what gate says
@pytest.mark.parametrize(("name", "text", "needle"), [
    ("Tiny_ChartQA_TEST.xlsx", "", "VLMEvalKit result file"),
    ("20260218_234435_results.json", "{}", "lmms-eval output"),
    ("1b_step143000.json", '{"results": {"piqa": {"acc": 0.7}}, "versions": {"piqa": 0}, "config": {}}',
     "lm-eval < 0.4 single-file output"),
    ("results.json", '{"results": {"t": {"bypass,none": 999}}, "versions": {}, "configs": {}}', "--predict_only"),
])
def test_gate_names_the_format_of_a_path_no_harness_reads(tmp_path: Path, name: str, text: str, needle: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_results(path)
    assert needle in str(caught.value) and caught.value.fix and str(path) in str(caught.value)


def test_reading_a_vlmevalkit_table_leaves_the_process_wide_csv_limit_as_it_was(tmp_path: Path) -> None:
    """The csv module's cell limit is global: raised for VLMEvalKit tables, it must not stay raised for the
    monitor's CSV readers (whose bound is csv's own), as it did once a table had been converted in the process."""
    import csv

    from rlgate.harness.lmeval.convert import vlmevalkit_rows

    path = tmp_path / "M_ChartQA_TEST.tsv"
    path.write_text("index\tquestion\tanswer\tprediction\n0\tq\t1\t1\n")
    before = csv.field_size_limit()
    assert len(list(vlmevalkit_rows(path, None))) == 1
    assert csv.field_size_limit() == before
