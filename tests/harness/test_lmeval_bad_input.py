"""Broken lm-eval folders (edited, foreign or corrupt files) give one located InputError, never a traceback."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.cli.app import app
from rlgate.harness.lmeval.folder import read_lmeval_folder

TS = "2024-06-01T12-00-00.000000"


def results_doc() -> dict[str, Any]:
    """The parts of lm-eval 0.4's results json the reader uses, for one gsm8k-like task of three documents."""
    return {
        "results": {"t": {"alias": "t", "exact_match,none": 2 / 3, "exact_match_stderr,none": 0.3}},
        "group_subtasks": {"t": []},
        "configs": {"t": {"task": "t", "dataset_path": "openai/gsm8k", "dataset_name": "main", "num_fewshot": 0,
                          "metadata": {"version": 3.0}, "generation_kwargs": {"until": ["\n"]},
                          "filter_list": [{"name": "none", "filter": [{"function": "take_first"}]}]}},
        "versions": {"t": 3.0}, "n-shot": {"t": 0}, "higher_is_better": {"t": {"exact_match": True}},
        "n-samples": {"t": {"original": 3, "effective": 3}}, "task_hashes": {"t": "abc"},
        "config": {"model": "hf", "model_args": "pretrained=m"}, "model_name": "m", "lm_eval_version": "0.4.8",
        "system_instruction": None, "fewshot_as_multiturn": False, "date": 1717243200.0,
    }


def sample_line(doc_id: Any, score: Any = 1.0) -> str:
    return json.dumps({"doc_id": doc_id, "doc": {"q": str(doc_id)}, "target": "1",
                       "arguments": {"gen_args_0": {"arg_0": f"Q{doc_id}", "arg_1": {}}}, "resps": [["1"]],
                       "filtered_resps": ["1"], "filter": "none", "metrics": ["exact_match"], "doc_hash": "h",
                       "exact_match": score})


def write(folder: Path, doc: dict[str, Any] | str, lines: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"results_{TS}.json").write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    lines = lines if lines is not None else [sample_line(i) for i in range(3)]
    (folder / f"samples_t_{TS}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_the_valid_folder_reads(tmp_path: Path) -> None:
    run = read_lmeval_folder(write(tmp_path / "m", results_doc()))
    assert run.tasks["t"].n_samples == 3 and len(run.tasks["t"].samples) == 3


WRONG_SHAPES = [
    ("configs", [1], "configs"),
    ("configs.t", [1], "configs.t"),
    ("configs.t.metadata", [1], "configs.t.metadata"),
    ("configs.t.generation_kwargs", [1], "configs.t.generation_kwargs"),
    ("configs.t.dataset_path", 5, "configs.t.dataset_path"),
    ("configs.t.dataset_kwargs", [1], "configs.t.dataset_kwargs"),
    ("configs.t.filter_list", [{"name": ["x"]}], "configs.t.filter_list"),
    ("versions", [1], "versions"),
    ("n-shot", [1], "n-shot"),
    ("higher_is_better", [1], "higher_is_better"),
    ("higher_is_better.t", [1], "higher_is_better.t"),
    ("n-samples", [1], "n-samples"),
    ("n-samples.t.effective", "x", "n-samples.t.effective"),
    ("group_subtasks", [1], "group_subtasks"),
    ("group_subtasks.g", [1], "group_subtasks.g"),
    ("task_hashes", [1], "task_hashes"),
    ("task_hashes.t", 5, "task_hashes.t"),
    ("config.model_args", [1], "config.model_args"),
    ("model_name", [1], "model_name"),
    ("lm_eval_version", 5, "lm_eval_version"),
    ("system_instruction", 5, "system_instruction"),
    ("fewshot_as_multiturn", "x", "fewshot_as_multiturn"),
]


@pytest.mark.parametrize(("where", "value", "field"), WRONG_SHAPES, ids=[w for w, _, _ in WRONG_SHAPES])
def test_a_wrong_shaped_results_field_is_named(tmp_path: Path, where: str, value: Any, field: str) -> None:
    doc = results_doc()
    *parents, last = where.split(".")
    node = doc
    for key in parents:
        node = node[key]
    node[last] = value
    folder = write(tmp_path / "m", doc)
    with pytest.raises(InputError) as info:
        read_lmeval_folder(folder)
    assert info.value.field == field
    assert info.value.file == folder / f"results_{TS}.json"


def test_a_missing_count_falls_back_to_sample_len_and_a_bad_one_is_named(tmp_path: Path) -> None:
    doc = results_doc()
    del doc["n-samples"]
    doc["results"]["t"]["sample_len"] = "lots"
    with pytest.raises(InputError) as info:
        read_lmeval_folder(write(tmp_path / "m", doc))
    assert info.value.field == "results.t.sample_len"


AGGREGATE = '"exact_match,none": 0.6666666666666666'


def test_an_integer_too_large_for_a_float_is_a_non_finite_aggregate(tmp_path: Path) -> None:
    text = json.dumps(results_doc()).replace(AGGREGATE, '"exact_match,none": 1' + "0" * 400)
    assert "0" * 400 in text
    run = read_lmeval_folder(write(tmp_path / "m", text))
    assert math.isinf(run.tasks["t"].metrics["none"]["exact_match"] or 0.0)


def test_an_integer_past_pythons_digit_limit_in_the_results_is_located(tmp_path: Path) -> None:
    text = json.dumps(results_doc()).replace(AGGREGATE, '"exact_match,none": 1' + "0" * 5000)
    folder = write(tmp_path / "m", text)
    with pytest.raises(InputError, match="not readable JSON") as info:
        read_lmeval_folder(folder)
    assert info.value.file == folder / f"results_{TS}.json"


def test_over_deep_results_json_is_located(tmp_path: Path) -> None:
    folder = write(tmp_path / "m", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="not readable JSON"):
        read_lmeval_folder(folder)


@pytest.mark.parametrize("line", [
    sample_line(1, score=7).replace('"exact_match": 7', '"exact_match": 1' + "0" * 5000),  # past 4300 digits
    sample_line(1)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}",
], ids=["huge-integer", "deep-nesting"])
def test_an_unreadable_sample_line_is_located(tmp_path: Path, line: str) -> None:
    folder = write(tmp_path / "m", results_doc(), [sample_line(0), line, sample_line(2)])
    with pytest.raises(InputError, match="not readable JSON") as info:
        read_lmeval_folder(folder)
    assert info.value.file == folder / f"samples_t_{TS}.jsonl" and info.value.line == 2


@pytest.mark.parametrize("doc_id", [True, False])
def test_a_boolean_doc_id_is_not_a_document(tmp_path: Path, doc_id: bool) -> None:
    folder = write(tmp_path / "m", results_doc(), [sample_line(0), sample_line(doc_id), sample_line(2)])
    with pytest.raises(InputError, match="integer 'doc_id'") as info:
        read_lmeval_folder(folder)
    assert info.value.line == 2


def test_gate_on_a_wrong_shaped_results_file_exits_2_without_a_traceback(tmp_path: Path) -> None:
    doc = results_doc()
    doc["configs"]["t"]["metadata"] = ["not", "a", "mapping"]
    candidate = write(tmp_path / "cand", doc)
    baseline = write(tmp_path / "base", results_doc())
    (tmp_path / "suite.yaml").write_text("schema_version: 1\nname: s\ntasks:\n  - {task: t, split: test_public}\n",
                                         encoding="utf-8")
    contract = tmp_path / "c.yaml"
    contract.write_text("schema_version: 1\nname: c\nbaseline: {checkpoint: base}\nsplits:\n  test_public: "
                        "{visibility: nightly}\nsuites: [suite.yaml]\ngates:\n  primary: "
                        "{metric: t/exact_match/none, min_delta: 0.0}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["gate", str(contract), "--candidate", str(candidate), "--baseline",
                                      str(baseline), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "configs.t.metadata" in result.output and str(candidate / f"results_{TS}.json") in result.output


@pytest.mark.parametrize("content", ["", "\n\n"], ids=["empty", "blank-lines"])
def test_a_samples_file_without_samples_is_located(tmp_path: Path, content: str) -> None:
    """A run killed as lm-eval began writing its samples: read as it is, the folder would pass for one run without
    --log_samples and be gated on its aggregates alone. (A file cut later is short coverage, in the engine.)"""
    folder = write(tmp_path / "m", results_doc())
    (folder / f"samples_t_{TS}.jsonl").write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match="holds no sample line, where the results file counts 3") as info:
        read_lmeval_folder(folder)
    assert info.value.file == folder / f"samples_t_{TS}.jsonl"


def test_without_a_document_count_any_samples_file_reads(tmp_path: Path) -> None:
    doc = results_doc()
    del doc["n-samples"]
    run = read_lmeval_folder(write(tmp_path / "m", doc, [sample_line(0)]))
    assert len(run.tasks["t"].samples) == 1


@pytest.mark.parametrize(("content", "task", "needle"), [
    ('{"args": [1], "logs": [{"doc_id": 0, "target": "1", "resps": [["a"]]}]}', None, "args.tasks"),
    ('{"args": {"tasks": "chartqa"}, "logs": [], "x": 1' + "0" * 5000 + "}", "chartqa", "not readable JSON"),
    ('{"args": {"tasks": "chartqa"}, "logs": [{"doc_id": 0, "target": "\udcff"}]}', "chartqa", "UTF-8"),
], ids=["args-not-a-mapping", "huge-integer", "not-utf8"])
def test_a_broken_legacy_lmms_eval_log_is_one_located_error(tmp_path: Path, content: str, task: str | None,
                                                            needle: str) -> None:
    from rlgate.harness.lmeval.convert import convert

    source = tmp_path / "chartqa.json"
    source.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(InputError, match=needle) as info:
        convert([source], "lmms-eval", tmp_path / "out.jsonl", task=task)
    assert info.value.file == source


@pytest.mark.parametrize("name", [f"results_{TS}z.json", f"samples_t_{TS}.jsonl"], ids=["results", "samples"])
def test_a_link_to_nothing_is_named_not_skipped(tmp_path: Path, name: str) -> None:
    folder = write(tmp_path / "m", results_doc())
    (folder / name).unlink(missing_ok=True)
    (folder / name).symlink_to(tmp_path / "gone")
    with pytest.raises(InputError, match="cannot read") as info:
        read_lmeval_folder(folder)
    assert info.value.file == folder / name


@pytest.mark.parametrize(("value", "key"), [(7, "7"), (None, "None"), ([1], "[1]")], ids=["number", "null", "list"])
def test_a_filter_that_is_not_text_is_its_text_everywhere(tmp_path: Path, value: Any, key: str) -> None:
    """lm-eval writes filters as strings; any other JSON value is read as its str (1 and "1" are one key), in the
    scores and answers as in the repeat check, so nothing downstream meets a filter that is not text."""
    lines = [sample_line(i).replace('"filter": "none"', f'"filter": {json.dumps(value)}') for i in range(3)]
    run = read_lmeval_folder(write(tmp_path / "m", results_doc(), lines))
    for sample in run.tasks["t"].samples:
        assert list(sample.scores) == [key] and list(sample.filtered) == [key]
