"""`rlgate import`: lmms-eval samples files and VLMEvalKit result files, written here in the tools' real formats,
converted, scored by `rlgate eval --responses` (lm-eval's metric functions) and gated baseline vs candidate.

Format sources (read for these fixtures):
- lmms-eval: EvolvingLMMs-Lab/lmms-eval, lmms_eval/evaluator.py (the logged sample: doc_id, doc, target,
  arguments, resps, filtered_resps, token_counts, doc_hash, plus the task's process_results values) and
  lmms_eval/loggers/evaluation_tracker.py `save_results_samples` (file `<date_id>_samples_<task>.jsonl`; adds
  `input`, flattens one-request resps/filtered_resps, drops `resps` when equal to `filtered_resps`, stringifies
  `target`, drops `arguments` and `doc`). Per-sample values: chartqa/utils.py `chartqa_process_results`
  (relaxed_overall, relaxed_<split>), mmmu/utils.py `mmmu_process_results` (mmmu_acc = {id, subdomain,
  question_type, answer, parsed_pred}), mathvista/utils.py `mathvista_process_results` (llm_as_judge_eval =
  {question_id: pid, ...}); task names chartqa, mmmu_val, mathvista_testmini_{cot,format,solution}.
- VLMEvalKit: open-compass/VLMEvalKit, vlmeval/inference.py (the dataset's columns minus `image`, plus
  `prediction`; `dump` to `<model>_<dataset>.<fmt>`), vlmeval/smp/file.py (`get_pred_file_format`: xlsx by
  default, tsv/json with PRED_FORMAT; tsv quoted QUOTE_ALL, json a list of records), dataset names ChartQA_TEST,
  MMMU_DEV_VAL (a `split` column, dev and validation), MathVista_MINI (question_type, answer_type, precision,
  skills, task columns read by vlmeval/dataset/utils/mathvista.py).
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
pytest.importorskip("matplotlib")


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from rlgate.demo.vlm import write_contract
    from rlgate.demo.vlm_data import write_vlm_data

    root = tmp_path_factory.mktemp("import")
    write_vlm_data(root / "data", chartqa_charts=3, mmmu_per_subject=2, mathvista=4)
    contract = write_contract(root, root / "data", root / "no-checkpoints")
    # four MathVista items cannot show non-inferiority (that gate would be inconclusive -> research_only); this
    # test is about the import reaching a scoped gate decision, so the demo contract drops that gate here
    gate_line = "    - {metric: mathvista_testmini/acc/rule, max_drop: 0.10}\n"
    text = contract.read_text()
    assert gate_line in text
    contract.write_text(text.replace(gate_line, ""))
    return root, contract


def data(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    d = root / "data"
    return rows(d / "chartqa/test.jsonl"), rows(d / "mmmu/validation.jsonl"), rows(d / "mathvista/testmini.jsonl")


def wrong_number(answer: str) -> str:
    try:
        return f"{float(answer) * 1.5 + 3:g}"
    except ValueError:
        return "Nothing"


def mmmu_letter(row: dict[str, Any], right: bool) -> str:
    return row["answer"] if right else "ABCD"[("ABCD".index(row["answer"]) + 1) % 4]


# --------------------------------------------------------------------------- lmms-eval writer (its real format)
def write_lmms_samples(folder: Path, task: str, samples: list[dict[str, Any]]) -> Path:
    """What save_results_samples writes, sample by sample."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"20260101_120000_samples_{task}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for sample in samples:
            handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
    return path


def lmms_sample(doc_id: int, target: str, response: str, prompt: str, metrics: dict[str, Any]) -> dict[str, Any]:
    # one request per document: resps [[r]] -> [r], filtered_resps [r] -> r; resps dropped as equal
    return {"doc_id": doc_id, "target": target, "filtered_resps": response, "token_counts": [None],
            "doc_hash": hashlib.sha256(prompt.encode()).hexdigest(), "input": prompt, **metrics}


def lmms_files(root: Path, folder: Path, chart_right: bool, mmmu_share: float) -> list[Path]:
    chart, mmmu, vista = data(root)
    charts = [lmms_sample(i, r["label"][0], r["label"][0] if chart_right else wrong_number(r["label"][0]),
                          r["query"] + "\nAnswer the question with a single word.",
                          {"relaxed_overall": float(chart_right),
                           "relaxed_human_split" if r["human_or_machine"] == 0 else "relaxed_augmented_split":
                           float(chart_right)})
              for i, r in enumerate(chart)]
    mmmus = []
    for i, r in enumerate(mmmu):
        letter = mmmu_letter(r, i < mmmu_share * len(mmmu))
        acc = {"id": r["id"], "subdomain": r["subfield"], "question_type": r["question_type"], "answer": r["answer"],
               "parsed_pred": [letter]}
        mmmus.append(lmms_sample(i, r["answer"], letter, r["question"], {"mmmu_acc": acc, "mmmu_acc_pass_at_k": acc,
                                                                          "submission": {r["id"]: letter}}))
    vistas = [lmms_sample(i, r["answer"], r["answer"], r["query"],
                          {"llm_as_judge_eval": {"question_id": r["pid"], "query": r["query"], "answer": r["answer"],
                                                 "true_false": True},
                           "submission": {"question_id": r["pid"]}})
              for i, r in enumerate(vista)]
    return [write_lmms_samples(folder, "chartqa", charts), write_lmms_samples(folder, "mmmu_val", mmmus),
            write_lmms_samples(folder, "mathvista_testmini_format", vistas)]


# --------------------------------------------------------------------------- VLMEvalKit writer (its real format)
def vlmevalkit_tables(root: Path, chart_right: bool, mmmu_share: float) -> dict[str, list[dict[str, Any]]]:
    chart, mmmu, vista = data(root)
    tables: dict[str, list[dict[str, Any]]] = {"ChartQA_TEST": [], "MMMU_DEV_VAL": [], "MathVista_MINI": []}
    for i, r in enumerate(chart):
        answer = r["label"][0]
        number = float(answer) if answer.replace(".", "").isdigit() else answer  # xlsx cells hold numbers
        tables["ChartQA_TEST"].append({"index": i, "question": r["query"], "answer": number,
                                       "split": "human" if r["human_or_machine"] == 0 else "augmented",
                                       "prediction": answer if chart_right else wrong_number(answer)})
    # MMMU_DEV_VAL holds MMMU's dev split too (not in lm-eval's mmmu_val): one dev row, skipped on import
    tables["MMMU_DEV_VAL"].append({"index": 0, "question": "<image 1> A dev question?", "A": "1", "B": "2", "C": "3",
                                   "D": "4", "answer": "A", "category": "Art", "split": "dev", "prediction": "A"})
    for i, r in enumerate(mmmu):
        options = ast.literal_eval(r["options"])
        tables["MMMU_DEV_VAL"].append({"index": i + 1, "question": r["question"],
                                       **dict(zip("ABCD", options, strict=True)), "answer": r["answer"],
                                       "category": r["subfield"], "split": "validation",
                                       "prediction": mmmu_letter(r, i < mmmu_share * len(mmmu))})
    for i, r in enumerate(vista):
        tables["MathVista_MINI"].append({"index": i + 1, "question": r["question"], "answer": r["answer"],
                                         "question_type": r["question_type"], "answer_type": r["answer_type"],
                                         "precision": r["precision"], "choices": str(r["choices"]),
                                         "skills": str(r["metadata"]["skills"]), "task": r["metadata"]["task"],
                                         "prediction": r["answer"]})
    return tables


def write_xlsx(path: Path, table: list[dict[str, Any]]) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    header = list(dict.fromkeys(k for row in table for k in row))
    sheet.append(header)
    for row in table:
        sheet.append([row.get(k) for k in header])
    book.save(path)
    return path


def write_tsv(path: Path, table: list[dict[str, Any]]) -> Path:
    header = list(dict.fromkeys(k for row in table for k in row))
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, header, delimiter="\t", quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerows(table)
    return path


# --------------------------------------------------------------------------- helpers
def run(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


def import_eval(root: Path, contract: Path, name: str, files: list[Path], source: str) -> Path:
    out = root / f"{name}.jsonl"
    result = run(["import", *map(str, files), "--from", source, "--out", str(out), "--answer-marker"])
    assert result.exit_code == 0, result.output
    folder = root / f"{name}-eval"
    result = run(["eval", str(contract), "--responses", str(out), "--out", str(folder), "--cache",
                  str(root / "cache")])
    assert result.exit_code == 0, result.output
    assert " 0 unmatched" in result.output, result.output
    return folder


def gate(root: Path, contract: Path, base: Path, cand: Path, name: str) -> dict[str, Any]:
    out = root / f"{name}-gate"
    result = run(["gate", str(contract), "--baseline", str(base), "--candidate", str(cand), "--out", str(out)])
    assert result.exit_code == 0, result.output  # release
    return dict(json.loads((out / "decision.json").read_text()))


# --------------------------------------------------------------------------- end to end
def test_lmms_eval_samples_to_a_gate(setup: tuple[Path, Path]) -> None:
    root, contract = setup
    base = import_eval(root, contract, "lmms-base", lmms_files(root, root / "lmms-base", True, 0.5), "lmms-eval")
    cand = import_eval(root, contract, "lmms-cand", lmms_files(root, root / "lmms-cand", False, 1.0), "lmms-eval")
    results = json.loads(next(cand.rglob("results_*.json")).read_text())["results"]
    assert results["chartqa"]["relaxed_accuracy,none"] == 0.0 and results["mmmu_val"]["acc,none"] == 1.0
    assert results["mathvista_testmini"]["acc,rule"] == 1.0
    base_results = json.loads(next(base.rglob("results_*.json")).read_text())["results"]
    assert base_results["chartqa"]["relaxed_accuracy,none"] == 1.0
    assert base_results["mmmu_val"]["acc,none"] == pytest.approx(0.5, abs=0.02)
    decision = gate(root, contract, base, cand, "lmms")
    assert decision["decision"] == "release" and decision["flags"] == ["block_for_charts"]


def test_vlmevalkit_results_to_a_gate(setup: tuple[Path, Path]) -> None:
    root, contract = setup
    folder = root / "vlmevalkit"
    folder.mkdir()
    made: dict[str, list[Path]] = {}
    for role, chart_right, share in (("base", True, 0.5), ("cand", False, 1.0)):
        tables = vlmevalkit_tables(root, chart_right, share)
        made[role] = [write_xlsx(folder / f"Tiny-{role}_ChartQA_TEST.xlsx", tables["ChartQA_TEST"]),
                      write_tsv(folder / f"Tiny-{role}_MMMU_DEV_VAL.tsv", tables["MMMU_DEV_VAL"]),
                      write_xlsx(folder / f"Tiny-{role}_MathVista_MINI.xlsx", tables["MathVista_MINI"])]
    result = run(["import", *map(str, made["base"]), "--from", "vlmevalkit", "--out", str(root / "v.jsonl")])
    assert result.exit_code == 0, result.output
    assert "skipped 1 rows: MMMU dev split (not in mmmu_val)" in result.output
    assert "chartqa responses have no 'Final Answer:' marker" in result.output  # the hint without --answer-marker
    converted = rows(root / "v.jsonl")
    first = data(root)[0][0]  # ChartQA's split (human / augmented) is kept; the index places tied rows
    assert converted[0]["doc"] == {"query": first["query"], "human_or_machine": first["human_or_machine"]}
    assert "target" in converted[0] and converted[0]["index"] == 0
    base = import_eval(root, contract, "vlmek-base", made["base"], "vlmevalkit")
    cand = import_eval(root, contract, "vlmek-cand", made["cand"], "vlmevalkit")
    results = json.loads(next(cand.rglob("results_*.json")).read_text())["results"]
    assert results["chartqa"]["relaxed_accuracy,none"] == 0.0 and results["mmmu_val"]["acc,none"] == 1.0
    decision = gate(root, contract, base, cand, "vlmek")
    assert decision["decision"] == "release" and decision["flags"] == ["block_for_charts"]


# --------------------------------------------------------------------------- format details and bad input
def test_lmms_eval_raw_resps_samples_and_legacy_logs(tmp_path: Path) -> None:
    from rlgate.harness.lmeval.convert import lmms_rows

    # n=2 samples kept as raw resps (filtered differs); mathvista variants map onto one task
    path = write_lmms_samples(tmp_path, "mathvista_testmini_cot", [
        {"doc_id": 3, "target": "7", "resps": ["Final Answer: 7", "It is 8"], "filtered_resps": ["7", "8"],
         "llm_as_judge_eval": {"question_id": "4"}}])
    assert list(lmms_rows(path, None)) == [
        (1, {"task": "mathvista_testmini", "doc": {"pid": "4"}, "target": "7"}, ["Final Answer: 7", "It is 8"])]
    legacy = tmp_path / "llava_chartqa.json"  # lmms-eval < 0.2.3: {"args", "logs"} per task, docs kept
    legacy.write_text(json.dumps({"args": {"tasks": "mmmu_val"}, "logs": [
        {"doc_id": 0, "doc": {"id": "validation_Art_1", "question": "q"}, "target": "B", "arguments": [],
         "resps": [["(B)"]], "filtered_resps": ["(B)"]}]}, indent=4))
    assert list(lmms_rows(legacy, None)) == [(1, {"task": "mmmu_val", "doc": {"id": "validation_Art_1"},
                                                  "target": "B"}, ["(B)"])]


def test_shuffled_doc_ids_are_reported_not_scored(setup: tuple[Path, Path], tmp_path: Path) -> None:
    root, contract = setup
    chart = data(root)[0]
    # odd rows carry the next document's target (the other tool's data in another order)
    source = [i if i % 2 == 0 else (i + 1) % len(chart) for i in range(len(chart))]
    samples = [lmms_sample(i, chart[source[i]]["label"][0], "x", "p", {}) for i in range(len(chart))]
    path = write_lmms_samples(tmp_path, "chartqa", samples)
    out = tmp_path / "r.jsonl"
    assert run(["import", str(path), "--from", "lmms-eval", "--out", str(out)]).exit_code == 0
    result = run(["eval", str(contract), "--responses", str(out), "--out", str(tmp_path / "e"), "--cache",
                  str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    mismatched = sum(1 for i in range(len(chart)) if chart[i]["label"][0] != chart[source[i]]["label"][0])
    assert mismatched > 0 and f"{len(chart) - mismatched} matched, {mismatched} unmatched" in text
    assert "the row says" in text and "(different data order or copy?)" in text


@pytest.mark.parametrize(("name", "content", "source", "expected"), [
    ("20260101_samples_chartqa.jsonl", '{"doc_id": 0, "target": "1", "filtered_resps": "1"}\n{"target": "2"}\n',
     "lmms-eval", ["20260101_samples_chartqa.jsonl:2", "doc_id", "--log_samples"]),
    ("20260101_samples_chartqa.jsonl", '{"doc_id": 0, "target": "1"}\n', "lmms-eval",
     ["20260101_samples_chartqa.jsonl:1", "filtered_resps", "neither"]),
    ("20260101_samples_chartqa.jsonl", "{not json\n", "lmms-eval", ["20260101_samples_chartqa.jsonl:1"]),
    ("20260101_samples_mmmu_val.jsonl", '{"doc_id": 0, "target": "A", "filtered_resps": "A"}\n', "lmms-eval",
     ["mmmu_acc", "validation_Art_1"]),
    ("M_ChartQA_TEST.tsv", '"index"\t"question"\t"answer"\n"0"\t"q"\t"1"\n', "vlmevalkit",
     ["M_ChartQA_TEST.tsv", "prediction", "columns: index, question, answer"]),
    ("M_ChartQA_TEST.tsv", '"index"\t"question"\t"answer"\t"prediction"\n"0"\t""\t"1"\t"1"\n', "vlmevalkit",
     ["M_ChartQA_TEST.tsv:2", "question", "empty"]),
    ("M_ChartQA_TEST.xlsx", "not a zip", "vlmevalkit", ["M_ChartQA_TEST.xlsx", "cannot read the workbook",
                                                       "PRED_FORMAT=tsv"]),
    ("model_results.tsv", '"question"\t"prediction"\n"q"\t"1"\n', "vlmevalkit", ["--task", "ChartQA_TEST"]),
])
def test_malformed_files_are_one_clear_error(tmp_path: Path, name: str, content: str, source: str,
                                             expected: list[str]) -> None:
    path = tmp_path / name
    path.write_text(content)
    out = tmp_path / "r.jsonl"
    result = run(["import", str(path), "--from", source, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.startswith("error: ")
    text = " ".join(result.output.split())
    for part in expected:
        assert part in text, (part, text)
    assert not out.exists()  # nothing half-written


@pytest.mark.parametrize("case", ["not_utf8", "header_only", "out_is_folder", "out_unwritable"])
def test_bad_encoding_empty_files_and_bad_out_paths_are_one_clear_error(tmp_path: Path, case: str) -> None:
    path = tmp_path / "M_ChartQA_TEST.tsv"
    header = '"index"\t"question"\t"answer"\t"prediction"\n'
    path.write_bytes(b"\xff\xfe" + header.encode() if case == "not_utf8" else header.encode()
                     + (b"" if case == "header_only" else b'"0"\t"q"\t"1"\t"1"\n'))
    out = {"out_is_folder": tmp_path, "out_unwritable": tmp_path / "not-a-dir.txt" / "r.jsonl"}.get(
        case, tmp_path / "r.jsonl")
    (tmp_path / "not-a-dir.txt").write_text("a file where --out expects a folder")
    result = run(["import", str(path), "--from", "vlmevalkit", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.startswith("error: ")
    expected = {"not_utf8": "not UTF-8", "header_only": "no predictions found", "out_is_folder": "is a folder",
                "out_unwritable": "cannot write the responses file"}[case]
    assert expected in " ".join(result.output.split()), result.output
    assert not (tmp_path / "r.jsonl").exists()  # nothing half-written, not even an empty file
