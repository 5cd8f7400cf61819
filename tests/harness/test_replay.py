"""Imported responses scored by lm-eval's own filters and metrics, checked against an independent computation.

The real generations in ../shared/data/outputs (Abel-7B/13B on GSM8K, Llama-3.1-8B base/Instruct on
MMLU-Pro) go through `rlgate eval --responses`; the expected accuracy is recomputed here with plain
`re`, following the task YAMLs (gsm8k: strict-match / flexible-extract regexes, exact_match with
regexes_to_ignore and ignore_case; mmlu_pro: custom-extract regex, ignore_case + ignore_punctuation).
"""

from __future__ import annotations

import gzip
import json
import re
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.real_data import require_by_reference

from rlgate.app.runs import evaluate, select_tasks
from rlgate.harness.vocabulary import load_contract

ContractFactory = Callable[..., Path]

pytest.importorskip("lm_eval")

GSM_IGNORE = [",", r"\$", "(?s).*#### ", r"\.$"]


def _gsm_normal(text: str) -> str:
    for pattern in GSM_IGNORE:
        text = re.sub(pattern, "", text)
    return text.lower()


def gsm8k_reference(response: str, answer: str) -> tuple[float, float]:
    strict = re.findall(r"#### (\-?[0-9\.\,]+)", response)
    strict_pred = strict[0].strip() if strict else "[invalid]"
    flexible = re.findall(r"(-?[$0-9.,]{2,})|(-?[0-9]+)", response)
    flex_pred = next((g for g in flexible[-1] if g), "[invalid]").strip() if flexible else "[invalid]"
    gold = _gsm_normal(answer)
    return float(_gsm_normal(strict_pred) == gold), float(_gsm_normal(flex_pred) == gold)


def mmlu_reference(response: str, letter: str) -> float:
    found = re.findall(r"answer is \(?([ABCDEFGHIJ])\)?", response)
    pred = found[0].strip() if found else "[invalid]"
    table = str.maketrans("", "", string.punctuation)
    return float(pred.lower().translate(table) == letter.lower().translate(table))


def _rows(path: Path) -> list[dict]:  # type: ignore[type-arg]
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _contract(write_contract: ContractFactory, shared_data: Path, task: str):
    entry = {"gsm8k": {"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
                       "data_files": str(shared_data / "gsm8k/test.jsonl")},
             "mmlu_pro": {"task": "mmlu_pro", "split": "test_public", "num_fewshot": 0,
                          "data_files": str(shared_data / "mmlu_pro/test.jsonl.gz")}}[task]
    resolved = load_contract(write_contract([entry]))
    return resolved, select_tasks(resolved, None, release_gate=False)


def _metric(results_file: Path, task: str, key: str) -> float:
    return float(json.loads(results_file.read_text())["results"][task][key])


def test_abel_gsm8k_generations_score_as_lm_eval_filters_give(write_contract: ContractFactory, shared_data: Path,
                                                            tmp_path: Path) -> None:
    resolved, tasks = _contract(write_contract, shared_data, "gsm8k")
    gold = [json.loads(line)["answer"] for line in (shared_data / "gsm8k/test.jsonl").open()]
    questions = [json.loads(line)["question"] for line in (shared_data / "gsm8k/test.jsonl").open()]
    for size in ("7b", "13b"):
        rows = _rows(require_by_reference(shared_data / f"outputs/gsm8k_abel/{size}.jsonl.gz"))
        assert len(rows) == 1319
        responses = tmp_path / f"abel-{size}.jsonl"
        with responses.open("w") as handle:
            for row in rows:
                ident = {"doc_id": row["id"]} if size == "7b" else {"doc": {"question": questions[row["id"]]}}
                handle.write(json.dumps({"task": "gsm8k", **ident, "response": row["response"]}) + "\n")
            if size == "7b":  # an identical duplicate and a row for no document: reported, never silently used
                again = {"task": "gsm8k", "doc_id": rows[0]["id"], "response": rows[0]["response"]}
                handle.write(json.dumps(again) + "\n")
                handle.write(json.dumps({"task": "gsm8k", "doc": {"question": "nowhere"}, "response": "1"}) + "\n")
        out = evaluate(resolved, tasks, tmp_path / size, cache_dir=tmp_path / "cache", responses=responses)
        expected = [gsm8k_reference(r["response"], gold[r["id"]]) for r in rows]
        strict = sum(e[0] for e in expected) / len(expected)
        flexible = sum(e[1] for e in expected) / len(expected)
        assert _metric(out.results_file, "gsm8k", "exact_match,strict-match") == pytest.approx(strict, abs=1e-12)
        assert _metric(out.results_file, "gsm8k", "exact_match,flexible-extract") == pytest.approx(flexible, abs=1e-12)
        assert 0.5 < flexible < 0.75  # Abel reports 59.7 (7B) and 66.4 (13B) with its own extraction
        report = out.manifest.import_report
        assert report is not None and report.matched == 1319
        if size == "7b":
            assert (report.rows, report.duplicates, report.unmatched) == (1321, 1, 1)
        assert out.manifest.drops.missing == 0 and out.manifest.model_spec["lm_eval_model"] == "rlgate-replay"


def test_llama_mmlu_pro_generations_score_as_custom_extract_gives(write_contract: ContractFactory, shared_data: Path,
                                                                 tmp_path: Path) -> None:
    resolved, tasks = _contract(write_contract, shared_data, "mmlu_pro")
    answers = {}
    with gzip.open(shared_data / "mmlu_pro/test.jsonl.gz", "rt") as handle:
        for line in handle:
            doc = json.loads(line)
            answers[doc["question_id"]] = doc["answer"]
    accuracy = {}
    for name in ("Meta-Llama-3_1-8B", "Meta-Llama-3_1-8B-Instruct"):
        rows = _rows(shared_data / f"outputs/mmlu_pro/{name}.generations.jsonl.gz")
        responses = tmp_path / f"{name}.jsonl"
        responses.write_text("".join(json.dumps({"task": "mmlu_pro", "doc": {"question_id": r["question_id"]},
                                                 "response": r["generated_text"]}) + "\n" for r in rows))
        out = evaluate(resolved, tasks, tmp_path / name, cache_dir=tmp_path / "cache", responses=responses,
                       responded_only=True)
        expected = sum(mmlu_reference(r["generated_text"], answers[r["question_id"]]) for r in rows) / len(rows)
        got = _metric(out.results_file, "mmlu_pro", "exact_match,custom-extract")
        assert got == pytest.approx(expected, abs=1e-9)
        assert sum(t.documents for t in out.manifest.tasks) == 2000
        accuracy[name] = got
    assert accuracy["Meta-Llama-3_1-8B-Instruct"] > accuracy["Meta-Llama-3_1-8B"]


def test_unanswered_documents_are_recorded_as_missing_not_scored(write_contract: ContractFactory,
                                                                 shared_data: Path, tmp_path: Path) -> None:
    """Coverage instead of silent zeros: only answered documents are scored; the rest are listed as missing."""
    resolved, tasks = _contract(write_contract, shared_data, "gsm8k")
    responses = tmp_path / "few.jsonl"
    responses.write_text("".join(json.dumps({"task": "gsm8k", "doc_id": i, "response": "#### 0"}) + "\n"
                                 for i in range(5)))
    out = evaluate(resolved, tasks, tmp_path / "out", cache_dir=tmp_path / "cache", responses=responses, limit=20)
    task = out.manifest.tasks[0]
    assert (task.documents, task.expected_documents) == (5, 20)
    assert task.missing_documents == list(range(5, 20))
    assert _metric(out.results_file, "gsm8k", "exact_match,flexible-extract") == 0.0
