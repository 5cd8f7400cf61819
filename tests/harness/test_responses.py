"""Reading and matching imported responses: every row is matched or reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.lmeval.responses import match_rows, read_responses

DOCS = {
    "gsm8k": [{"question": "q0", "answer": "#### 1"}, {"question": "q1", "answer": "#### 2"}],
    "mmlu_pro_math": [{"question_id": 10, "question": "m"}, {"question_id": 11, "question": "n"}],
    "mmlu_pro_law": [{"question_id": 20, "question": "l"}],
}
GROUPS = {"mmlu_pro": ["mmlu_pro_math", "mmlu_pro_law"]}


def write(tmp_path: Path, rows: list[object]) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_rows_match_by_doc_id_doc_fields_and_group(tmp_path: Path) -> None:
    rows = read_responses(write(tmp_path, [
        {"task": "gsm8k", "doc_id": 1, "response": "a1"},
        {"task": "gsm8k", "doc": {"question": " q0 "}, "response": "a0"},
        {"task": "mmlu_pro", "doc": {"question_id": 20}, "response": "law"},
        {"task": "mmlu_pro_math", "doc_id": 0, "response": "math"},
    ]))
    result = match_rows(rows, DOCS, GROUPS, source="r.jsonl")
    assert result.responses == {("gsm8k", 1): ["a1"], ("gsm8k", 0): ["a0"], ("mmlu_pro_law", 0): ["law"],
                                ("mmlu_pro_math", 0): ["math"]}
    assert result.report is not None and result.report.matched == 4 and result.report.unmatched == 0
    assert result.doc_ids("gsm8k") == [0, 1]


def test_unmatched_ambiguous_duplicate_and_unknown_rows_are_reported(tmp_path: Path) -> None:
    rows = read_responses(write(tmp_path, [
        {"task": "gsm8k", "doc_id": 0, "response": "first"},
        {"task": "gsm8k", "doc_id": 0, "response": "first"},
        {"task": "gsm8k", "doc_id": 9, "response": "out of range"},
        {"task": "gsm8k", "doc": {"question": "not there"}, "response": "x"},
        {"task": "mmlu_pro", "doc_id": 0, "response": "which subtask?"},
        {"task": "arc_easy", "doc_id": 0, "response": "not in the contract"},
    ]))
    report = match_rows(rows, DOCS, GROUPS).report
    assert report is not None
    assert (report.rows, report.matched, report.unmatched, report.duplicates, report.unknown_task) == (6, 1, 3, 1, 1)
    text = "\n".join(report.examples)
    assert "line 2: identical duplicate of line 1" in text and "line 3" in text
    assert "ambiguous" in text and "arc_easy" in text


def test_repeats_allow_n_responses_per_document(tmp_path: Path) -> None:
    rows = read_responses(write(tmp_path, [{"task": "gsm8k", "doc_id": 0, "response": r} for r in "010"]))
    result = match_rows(rows, DOCS, GROUPS, repeats=2)
    assert result.responses[("gsm8k", 0)] == ["0", "1"]  # the third row repeats the first: collapsed
    assert result.report is not None and result.report.duplicates == 1


def test_conflicting_duplicate_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, [{"task": "gsm8k", "doc_id": 1, "response": "a"},
                            {"task": "gsm8k", "doc_id": 0, "response": "first"},
                            {"task": "gsm8k", "doc_id": 0, "response": "other"}])
    with pytest.raises(InputError) as info:
        match_rows(read_responses(path), DOCS, GROUPS, source=str(path))
    assert info.value.line == 3 and f"{path}:2 and {path}:3" in str(info.value)
    assert "gsm8k doc 0" in str(info.value)


def test_more_distinct_responses_than_samples_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, [{"task": "gsm8k", "doc_id": 0, "response": str(i)} for i in range(3)])
    with pytest.raises(InputError) as info:
        match_rows(read_responses(path), DOCS, GROUPS, repeats=2, source=str(path))
    assert "(n=2)" in str(info.value) and f"{path}:1, {path}:2 and {path}:3" in str(info.value)


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "not valid JSON"),
    ('["a list"]', "must be a JSON object"),
    ('{"task": "gsm8k", "doc_id": 0}', "'response' must be a string"),
    ('{"task": "gsm8k", "response": "x"}', "exactly one of 'doc_id'"),
    ('{"task": "gsm8k", "doc_id": 0, "doc": {"q": 1}, "response": "x"}', "exactly one of 'doc_id'"),
    ('{"task": "gsm8k", "doc_id": -1, "response": "x"}', "non-negative"),
    ('{"task": "gsm8k", "doc": {}, "response": "x"}', "non-empty object"),
    ('{"task": "gsm8k", "doc_id": 0, "response": "x", "extra": 1}', "unknown key"),
    ('{"task": "", "doc_id": 0, "response": "x"}', "'task'"),
])
def test_bad_rows_name_their_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, ['{"task": "gsm8k", "doc_id": 0, "response": "ok"}', line])
    with pytest.raises(InputError, match=message) as err:
        read_responses(path)
    assert err.value.line == 2 and err.value.file == path


def test_missing_empty_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_responses(tmp_path / "none.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(InputError, match="no rows"):
        read_responses(empty)
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(InputError, match="UTF-8"):
        read_responses(binary)


def test_a_reported_row_shows_its_odd_task_name_on_one_visible_line(tmp_path: Path) -> None:
    """The examples are printed by `rlgate eval`: a newline in a task name started a line of its own (in a GitHub
    Actions log, `::error::...` is a workflow command) and an escape sequence or bidi override acted on the
    terminal."""
    rows = read_responses(write(tmp_path, [
        {"task": "gsm8k\u202e\x1b[2J\n::error::injected", "doc_id": 0, "response": "x"},
        {"task": "gsm\n8k", "doc": {"question": "q"}, "response": "y"},
    ]))
    report = match_rows(rows, DOCS, GROUPS).report
    assert report is not None and len(report.examples) == 2
    assert "task 'gsm8k\\u202e\\u001b[2J\\n::error::injected' is not evaluated" in report.examples[0]
    assert not any(ch in "".join(report.examples) for ch in "\n\x1b\u202e")
