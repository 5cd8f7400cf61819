"""`rlgate import` and `rlgate eval --responses` say which format they read a file as, and why a file was not
recognised: another tool's output named as that tool's (with the conversion), not parsed as the wrong one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()
OPENCOMPASS = Path(__file__).resolve().parents[1] / "fixtures" / "opencompass_tiny_gsm8k"


def _files(tmp_path: Path) -> dict[str, Path]:
    vlm = tmp_path / "Qwen2-VL_ChartQA_TEST.tsv"
    vlm.write_text("index\tquestion\tanswer\tprediction\n0\tq\t1\t1\n")
    lmms = tmp_path / "lmms" / "20260101_000000_samples_chartqa.jsonl"
    lmms.parent.mkdir()
    lmms.write_text('{"doc_id": 0, "target": "1", "resps": [["1"]]}\n')
    shutil.copytree(OPENCOMPASS, tmp_path / "oc")
    return {"vlmevalkit": vlm, "lmms-eval": lmms, "opencompass": tmp_path / "oc"}


def _contract(tmp_path: Path) -> Path:
    contract = {"schema_version": 1, "name": "c", "baseline": {"checkpoint": "base"},
                "splits": {"test_public": {"visibility": "nightly"}},
                "suites": [{"schema_version": 1, "name": "s", "tasks": [{"task": "gsm8k", "split": "test_public"}]}],
                "gates": {"primary": {"metric": "gsm8k/exact_match/strict-match", "min_delta": 0.0}}}
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract))
    return path


@pytest.mark.parametrize(("given", "wrong"), [("vlmevalkit", "lmms-eval"), ("lmms-eval", "opencompass"),
                                              ("opencompass", "vlmevalkit")])
def test_import_names_the_format_a_file_looks_like(tmp_path: Path, given: str, wrong: str) -> None:
    path = _files(tmp_path)[given]
    result = runner.invoke(app, ["import", "--from", wrong, str(path), "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"not {wrong} output: this looks like" in result.output and f"--from {given}" in result.output
    assert str(path) in result.output and not (tmp_path / "r.jsonl").exists()


def test_import_says_what_it_read_the_file_as(tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", "--from", "opencompass", str(OPENCOMPASS), "--out",
                                 str(tmp_path / "r.jsonl")])
    assert result.exit_code == 0, result.output
    assert "gsm8k: 20 responses (read as opencompass output; benchmark version gsm8k@e520fb)" in result.output


@pytest.mark.parametrize("given", ["vlmevalkit", "lmms-eval", "opencompass"])
def test_eval_responses_names_another_tool_s_output_and_the_conversion(tmp_path: Path, given: str) -> None:
    path = _files(tmp_path)[given]
    result = runner.invoke(app, ["eval", str(_contract(tmp_path)), "--responses", str(path), "--out",
                                 str(tmp_path / "o"), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "not a responses JSONL: this looks like" in result.output and f"rlgate import --from {given}" in \
        result.output


def test_eval_responses_on_an_unknown_folder_says_it_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("hello")
    result = runner.invoke(app, ["eval", str(_contract(tmp_path)), "--responses", str(tmp_path / "run"), "--out",
                                 str(tmp_path / "o"), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 2 and "is a folder, not a responses JSONL" in result.output
