"""`rlgate import` on lmms-eval / VLMEvalKit files with text no UTF-8 file takes (a lone surrogate escape, valid
JSON) or JSON no reader takes: converted with the text shown visibly, or one located error (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize(("name", "content", "source"), [
    ("20260101_samples_chartqa.jsonl", b'{"doc_id": 0, "target": "1", "filtered_resps": ["a\\ud800 b"]}\n',
     "lmms-eval"),
    ("llava_chartqa.json", b'{"args": {"tasks": "chartqa"}, "logs": [{"doc_id": 0, "target": "1", '
     b'"filtered_resps": ["a\\ud800 b"]}]}', "lmms-eval"),
    ("M_ChartQA_TEST.json", b'[{"index": 0, "question": "q", "answer": "1", "prediction": "a\\ud800 b"}]',
     "vlmevalkit"),
])
def test_a_lone_surrogate_in_a_response_is_converted_visible(tmp_path: Path, name: str, content: bytes,
                                                             source: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = runner.invoke(app, ["import", str(path), "--from", source, "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 0, result.output
    [row] = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["response"] == "a\\ud800 b"  # what the model wrote, as visible text


@pytest.mark.parametrize(("content", "expected"), [
    (b'[{"index": 0, "question": "q\xff", "answer": "1", "prediction": "a"}]', "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "not readable JSON"),
    (b'[{"index": 1' + b"0" * 5000 + b', "question": "q", "prediction": "a"}]', "not readable JSON"),
])
def test_an_unreadable_vlmevalkit_json_is_one_located_error(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "M_ChartQA_TEST.json"
    path.write_bytes(content)
    result = runner.invoke(app, ["import", str(path), "--from", "vlmevalkit", "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith(f"error: {path}") and expected in text and "fix:" in text, text
    assert not (tmp_path / "r.jsonl").exists()
