"""The lm-eval folder adapter on real-data folders built by lm-eval's own scoring code."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fixtures.lmeval_builders import build_synthetic_folder, cached_folder

from rlgate._core.errors import InputError
from rlgate.harness.lmeval.folder import find_results_file, parse_metric_key, read_lmeval_folder

pytest.importorskip("lm_eval")


@pytest.fixture(scope="module")
def abel7(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    return cached_folder(tmp_path_factory.getbasetemp(), "gsm8k_abel", shared_data, "7b")


@pytest.fixture(scope="module")
def llama_base(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    return cached_folder(tmp_path_factory.getbasetemp(), "mmlu_pro_llama", shared_data, "base")


def test_parse_metric_key() -> None:
    assert parse_metric_key("exact_match,flexible-extract") == ("exact_match", "flexible-extract", False)
    assert parse_metric_key("exact_match_stderr,strict-match") == ("exact_match", "strict-match", True)
    assert parse_metric_key("alias") is None


def test_reads_nested_gsm8k_folder(abel7: Path) -> None:
    run = read_lmeval_folder(abel7.parent)  # the --output_path folder; results sit one level below
    task = run.tasks["gsm8k"]
    assert run.provenance.model == "GAIR/Abel-7B-001"
    assert task.metrics["flexible-extract"]["exact_match"] == pytest.approx(788 / 1319)
    assert task.stderr["strict-match"]["exact_match"] == pytest.approx(0.0135085, abs=1e-6)
    assert task.n_samples == 1319 and len(task.samples) == 1319
    assert task.protocol.version == "3.0" and task.protocol.num_fewshot == 0
    assert task.protocol.filters == ["strict-match", "flexible-extract"]
    assert task.protocol.generation_kwargs["until"][0] == "Question:"
    first = task.samples[0]
    assert first.doc_id == 0 and len(first.doc_hash) == 64
    assert first.prompt and first.prompt.startswith("Question:\nJanet")
    assert first.filtered == {"strict-match": "18", "flexible-extract": "18"}
    assert first.scores["flexible-extract"]["exact_match"] == 1.0
    # per-sample values reproduce lm-eval's aggregate
    mean = np.mean([s.scores["strict-match"]["exact_match"] for s in task.samples])
    assert mean == pytest.approx(task.metrics["strict-match"]["exact_match"])


def test_derived_metrics(abel7: Path) -> None:
    task = read_lmeval_folder(abel7).tasks["gsm8k"]
    invalid = sum(s.filtered["strict-match"] == "[invalid]" for s in task.samples)
    # strict-match's regex, applied independently: responses without '#### N' are parse failures
    assert invalid == sum(re.search(r"#### (\-?[0-9\.\,]+)", s.responses[0]) is None for s in task.samples) > 0
    assert task.metrics["strict-match"]["answer_parse_failure_rate"] == pytest.approx(invalid / 1319)
    lengths = [len(s.responses[0]) for s in task.samples]
    assert task.metrics["flexible-extract"]["response_length_mean"] == pytest.approx(np.mean(lengths))
    assert "truncation_rate" not in task.metrics["flexible-extract"]  # not knowable from lm-eval samples


def test_mmlu_pro_group_weighted_by_size(llama_base: Path) -> None:
    run = read_lmeval_folder(llama_base)
    leaves = run.leaves("mmlu_pro")
    assert len(leaves) == 14 and run.groups["mmlu_pro"] == leaves
    reported = run.group_metrics["mmlu_pro"]["custom-extract"]["exact_match"]
    all_samples = [s.scores["custom-extract"]["exact_match"] for leaf in leaves for s in run.tasks[leaf].samples]
    assert len(all_samples) == 12032
    assert reported == pytest.approx(np.mean(all_samples))
    rate = run.group_metrics["mmlu_pro"]["custom-extract"]["answer_parse_failure_rate"]
    assert 0.0 < rate < 0.05


def test_newest_results_file_wins(abel7: Path, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(abel7, folder)
    old = next(folder.glob("results_*.json"))
    shutil.copy(old, folder / "results_2023-01-01T00-00-00.000000.json")
    assert find_results_file(tmp_path) == old


def test_several_models_is_an_error(abel7: Path, tmp_path: Path) -> None:
    shutil.copytree(abel7, tmp_path / "a")
    shutil.copytree(abel7, tmp_path / "b")
    with pytest.raises(InputError, match="several models"):
        read_lmeval_folder(tmp_path)


def test_missing_and_empty_folders(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read_lmeval_folder(tmp_path / "nope")
    assert str(tmp_path / "nope") in str(info.value)
    with pytest.raises(InputError, match="no results_"):
        read_lmeval_folder(tmp_path)


def test_corrupt_results_json_names_file_and_line(abel7: Path, tmp_path: Path) -> None:
    shutil.copytree(abel7, tmp_path / "m")
    results = next((tmp_path / "m").glob("results_*.json"))
    text = results.read_text()
    results.write_text(text[: len(text) // 2])
    with pytest.raises(InputError) as info:
        read_lmeval_folder(tmp_path / "m")
    assert info.value.file == results and info.value.line is not None
    assert f"{results}:{info.value.line}" in str(info.value)


def test_corrupt_sample_line_names_file_and_line(abel7: Path, tmp_path: Path) -> None:
    shutil.copytree(abel7, tmp_path / "m")
    samples = next((tmp_path / "m").glob("samples_*.jsonl"))
    lines = samples.read_text().splitlines(keepends=True)
    lines[41] = lines[41][:100] + "\n"
    samples.write_text("".join(lines))
    with pytest.raises(InputError) as info:
        read_lmeval_folder(tmp_path / "m")
    assert info.value.file == samples and info.value.line == 42


def test_not_an_lmeval_file(tmp_path: Path) -> None:
    (tmp_path / "results_2024.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(InputError, match="not an lm-eval results file"):
        read_lmeval_folder(tmp_path)
    (tmp_path / "results_2024.json").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(InputError, match="UTF-8"):
        read_lmeval_folder(tmp_path)


def test_without_samples_keeps_aggregates(abel7: Path, tmp_path: Path) -> None:
    shutil.copytree(abel7, tmp_path / "m")
    for f in (tmp_path / "m").glob("samples_*.jsonl"):
        f.unlink()
    task = read_lmeval_folder(tmp_path / "m").tasks["gsm8k"]
    assert task.samples == [] and task.metrics["strict-match"]["exact_match"] == pytest.approx(788 / 1319)


def test_synthetic_builder_round_trip(tmp_path: Path) -> None:
    folder = build_synthetic_folder(tmp_path, "org/model", {"synth_a": [True, False, True, True]})
    task = read_lmeval_folder(folder).tasks["synth_a"]
    assert [s.scores["flexible-extract"]["exact_match"] for s in task.samples] == [1.0, 0.0, 1.0, 1.0]


def test_reading_imports_neither_torch_nor_lm_eval(abel7: Path) -> None:
    code = (f"import sys; from rlgate.harness.lmeval.folder import read_lmeval_folder; "
            f"read_lmeval_folder({str(abel7)!r}); "
            "bad = [m for m in ('torch', 'lm_eval', 'transformers') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_token_counts_and_truncation_flags_when_recorded(tmp_path: Path) -> None:
    folder = build_synthetic_folder(tmp_path, "org/model", {"gsm8k": [True, False, True, True]})
    samples = next(folder.glob("samples_*.jsonl"))
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    for row in rows:
        row["response_tokens"] = [2048 if row["doc_id"] == 1 else 100 + row["doc_id"]]
        if row["doc_id"] == 3:
            row["truncated"] = [True]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = next(folder.glob("results_*.json"))
    doc = json.loads(results.read_text())
    doc["configs"]["gsm8k"]["generation_kwargs"]["max_gen_toks"] = 2048
    results.write_text(json.dumps(doc))
    task = read_lmeval_folder(folder).tasks["gsm8k"]
    metrics = task.metrics["flexible-extract"]
    assert metrics["response_length_mean"] == pytest.approx((100 + 2048 + 102 + 103) / 4)  # tokens, not characters
    assert metrics["truncation_rate"] == pytest.approx(2 / 4)  # doc 1 hit max_gen_toks, doc 3 flagged
