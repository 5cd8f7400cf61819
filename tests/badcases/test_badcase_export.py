"""`--export`: failed public samples as next-round training data; private samples never written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from badcase_helpers import one_task_run, scored_run

from rlgate._core.errors import InputError
from rlgate.badcases.export import export_badcases
from rlgate.results.models import RunResult

DOCS = [{"question": f"Tom has {i} apples and buys {i} more. How many?", "answer": f"{i}+{i}={2 * i}\n#### {2 * i}"}
        for i in range(1, 5)]


def _runs() -> tuple[RunResult, RunResult]:
    base = scored_run("base", "gsm8k", "gsm8k/gsm8k.yaml", DOCS,
                      ["1+1=2 #### 2", "2+2=4 #### 4", "I think 3+3 is 5 #### 5", "8 #### 8"])
    cand = scored_run("cand", "gsm8k", "gsm8k/gsm8k.yaml", DOCS,
                      ["1+1=2 #### 2", "no idea", "I think 3+3 is 5 #### 5", "8 #### 9"])
    return base, cand


def _read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_export_rows_carry_what_a_training_pipeline_needs(tmp_path: Path) -> None:
    base, cand = _runs()
    summary = export_badcases(tmp_path / "bad.jsonl", cand, base, frozenset())
    rows = _read(tmp_path / "bad.jsonl")
    assert summary.written == 3 == len(rows)
    by_doc = {r["doc_id"]: r for r in rows}
    assert by_doc[1]["failure_classes"] == ["gsm8k_final_answer_format_error"]
    assert by_doc[1]["bad_response"] == "no idea" and by_doc[1]["chosen_response"] == "2+2=4 #### 4"
    assert by_doc[1]["suggested_use"] == "sft" and "preference" in by_doc[1]["suggested_uses"]
    assert by_doc[1]["reference"] == DOCS[1]["answer"] and by_doc[1]["reference_answer"] == "4"
    assert by_doc[1]["prompt"] == f"Question: {DOCS[1]['question']}\nAnswer:"
    assert by_doc[2]["baseline_correct"] is False and by_doc[2]["chosen_response"] is None
    assert by_doc[3]["failure_classes"] == ["gsm8k_wrong_answer"] and by_doc[3]["extracted_answer"] == "9"
    assert not (tmp_path / "bad.jsonl.tmp").exists()


def test_only_new_failures(tmp_path: Path) -> None:
    base, cand = _runs()
    export_badcases(tmp_path / "new.jsonl", cand, base, frozenset(), only_new=True)
    assert [r["doc_id"] for r in _read(tmp_path / "new.jsonl")] == [1, 3]


def test_private_samples_are_never_exported(tmp_path: Path) -> None:
    base, cand = _runs()
    private = one_task_run("cand", "secret_math", [s.model_copy(update={"prompt": "SECRET " + (s.prompt or "")})
                                                   for s in cand.tasks["gsm8k"].samples])
    cand.tasks["secret_math"] = private.tasks["secret_math"]
    summary = export_badcases(tmp_path / "bad.jsonl", cand, base, frozenset({"secret_math"}))
    text = (tmp_path / "bad.jsonl").read_text(encoding="utf-8")
    assert "SECRET" not in text and summary.written == 3 and summary.private_withheld == 4


def test_missing_export_folder_is_an_input_error(tmp_path: Path) -> None:
    base, cand = _runs()
    with pytest.raises(InputError, match="export folder"):
        export_badcases(tmp_path / "nope" / "bad.jsonl", cand, base, frozenset())


def test_export_onto_a_folder_is_an_input_error_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    base, cand = _runs()
    (tmp_path / "bad.jsonl").mkdir()
    with pytest.raises(InputError) as info:
        export_badcases(tmp_path / "bad.jsonl", cand, base, frozenset())
    assert info.value.file == tmp_path / "bad.jsonl" and info.value.field == "--export" and info.value.fix
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]
