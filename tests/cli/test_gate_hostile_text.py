"""`rlgate gate` on lm-eval outputs whose responses carry text no report may choke on or act on."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fixtures.lmeval_builders import build_synthetic_folder
from typer.testing import CliRunner

from rlgate.cli.app import app

CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
pytest.importorskip("lm_eval")


def test_lone_surrogate_escape_in_a_response_is_shown_not_a_crash(tmp_path: Path) -> None:
    """`"\\ud800"` is valid JSON but no Unicode text: lm-eval can write it (json.dumps of a broken string)."""
    base = build_synthetic_folder(tmp_path / "base", "org/base", {"gsm8k": [True] * 30 + [False] * 30})
    cand = build_synthetic_folder(tmp_path / "cand", "org/cand", {"gsm8k": [True] * 40 + [False] * 20},
                                  response_suffix=" LONE-SURROGATE")
    samples = next(cand.rglob("samples_*.jsonl"))
    text = samples.read_text(encoding="utf-8")
    samples.write_text(text.replace("LONE-SURROGATE", "a\\ud800b \\udfff"), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["gate", str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(cand),
                                      "--baseline", str(base), "--out", str(out)])
    assert result.exit_code in (0, 1, 3), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    for name in ("decision.json", "report_model.json", "report.html", "report.md", "junit.xml"):
        assert (out / name).is_file(), name
    ET.parse(out / "junit.xml")
    model = json.loads((out / "report_model.json").read_text(encoding="utf-8"))
    responses = [r for t in model["tasks"] for r in t["samples"]["candidate_response"] if r]
    assert responses and all("a\\ud800b \\udfff" in r for r in responses)  # visible, as the model wrote it


def test_lone_surrogate_in_a_results_file_is_shown_not_a_crash(tmp_path: Path) -> None:
    """The results file's strings (system instruction, task configs) reach the rollout card and the model."""
    folders = {}
    for role, pattern in (("base", [True] * 30 + [False] * 30), ("cand", [True] * 40 + [False] * 20)):
        folders[role] = build_synthetic_folder(tmp_path / role, f"org/{role}", {"gsm8k": pattern})
        results = next(folders[role].rglob("results_*.json"))
        data = json.loads(results.read_text(encoding="utf-8"))
        data["system_instruction"] = "Be brief \ud800 ok"
        results.write_text(json.dumps(data), encoding="utf-8")  # json writes the escape "\\ud800"
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["gate", str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(folders["cand"]),
                                      "--baseline", str(folders["base"]), "--out", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1, 3), result.output
    model = json.loads((out / "report_model.json").read_text(encoding="utf-8"))
    assert {run["system_instruction"] for run in model["rollout"]["runs"]} == {"Be brief \\ud800 ok"}


@pytest.mark.parametrize("name", ["my cand ü", "cand\nx", "cand\u202e", os.fsdecode(b"cand-\xff")])
def test_a_results_folder_named_oddly_is_gated_and_reported(tmp_path: Path, name: str) -> None:
    """Spaces, unicode, a newline, a right-to-left override or bytes that are not UTF-8 (held by Python as lone
    surrogates, which no report can write: summary.md died with UnicodeEncodeError) in the results' path."""
    base = build_synthetic_folder(tmp_path / f"base {name}", "org/base", {"gsm8k": [True] * 30 + [False] * 30})
    cand = build_synthetic_folder(tmp_path / name, "org/cand", {"gsm8k": [True] * 40 + [False] * 20})
    out = tmp_path / "out"  # (echoed back; a test runner's stream is stricter than a terminal)
    result = CliRunner().invoke(app, ["gate", str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(cand),
                                      "--baseline", str(base), "--out", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1, 3), result.output
    for file in ("decision.json", "report_model.json", "report.html", "report.md", "junit.xml", "summary.md"):
        assert (out / file).is_file(), file
    decision = json.loads((out / "decision.json").read_text(encoding="utf-8"))
    shown = str(cand).encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate as \udcff
    assert [i["source"] for i in decision["inputs"] if i["role"] == "candidate"] == [shown]
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "org__cand" in summary.replace("\\_", "_")
    assert ("\\udcff" in summary) == ("\udcff" in name)


def test_a_warning_naming_an_odd_path_is_printed_on_one_visible_line(tmp_path: Path) -> None:
    """A newline in a printed path started a line of its own (in a GitHub Actions log `::error::` is a workflow
    command), and an escape sequence acted on the terminal."""
    cand = build_synthetic_folder(tmp_path / "run\n::error::x\x1b[2J", "org/cand",
                                  {"gsm8k": [True] * 40 + [False] * 20})
    result = CliRunner().invoke(app, ["gate", str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(cand),
                                      "--baseline", str(cand), "--out", str(tmp_path / "out")])
    assert result.exit_code in (0, 1, 3), result.output
    assert "run\\n::error::x\\u001b[2J" in result.output  # the same-results warning names the folder
    assert not any(line.startswith("::") for line in result.output.splitlines()) and "\x1b" not in result.output
