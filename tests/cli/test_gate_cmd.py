"""`rlgate gate` end to end: exit codes, written files, bad input, and no heavy imports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.lmeval_builders import build_synthetic_folder, cached_folder
from typer.testing import CliRunner

from rlgate.cli.app import app

CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
runner = CliRunner()
pytest.importorskip("lm_eval")


@pytest.fixture(scope="module")
def abel(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    root = tmp_path_factory.getbasetemp()
    return {m: cached_folder(root, "gsm8k_abel", shared_data, m) for m in ("7b", "13b")}


def _gate(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["gate", *args])
    return result.exit_code, result.output


def test_release_writes_decision_and_summary(abel: dict[str, Path], tmp_path: Path) -> None:
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(abel["13b"]),
                      "--baseline", str(abel["7b"]), "--out", str(tmp_path), "--seed", "3")
    assert code == 0, out
    assert "decision: RELEASE" in out and "gsm8k/exact_match/flexible-extract" in out
    decision = json.loads((tmp_path / "decision.json").read_text())
    assert decision["decision"] == "release" and decision["schema_version"] == 1 and decision["seed"] == 3
    gate = decision["gates"][0]
    for key in ("name", "kind", "metric", "verdict", "baseline", "candidate", "delta", "ci", "p_value", "mde", "n",
                "reason"):
        assert gate[key] is not None, key
    assert [i["role"] for i in decision["inputs"]] == ["baseline", "candidate"]
    assert decision["contract_hash"] and decision["contract"] == "abel_gsm8k"
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("# rlgate decision: **release**") and "| primary |" in summary
    assert f"wrote {tmp_path / 'report_model.json'}" in out and f"{tmp_path / 'summary.md'}" in out


def test_block_exit_code(abel: dict[str, Path], tmp_path: Path) -> None:
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(abel["7b"]),
                      "--baseline", str(abel["13b"]), "--out", str(tmp_path))
    assert code == 1 and "decision: BLOCK" in out


def test_research_only_exit_code_and_baseline_from_contract(tmp_path: Path) -> None:
    base = build_synthetic_folder(tmp_path / "base", "org/base", {"gsm8k": [True] * 60 + [False] * 40})
    cand = build_synthetic_folder(tmp_path / "cand", "org/cand", {"gsm8k": [True] * 61 + [False] * 39})
    suite = tmp_path / "suite.yaml"
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", suite)
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "schema_version: 1\nname: tiny\nbaseline:\n  results: base\nsplits:\n  test_public: {visibility: nightly}\n"
        "suites: [suite.yaml]\ngates:\n  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.02}\n")
    code, out = _gate(str(contract), "--candidate", str(cand), "--out", str(tmp_path / "out"))
    assert code == 3, out
    decision = json.loads((tmp_path / "out" / "decision.json").read_text())
    assert decision["decision"] == "research_only" and decision["inputs"][0]["source"] == str(base)


def test_a_run_gated_against_itself_is_warned_about(abel: dict[str, Path], tmp_path: Path) -> None:
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(abel["13b"]),
                      "--baseline", str(abel["13b"]) + "/", "--out", str(tmp_path))
    assert code == 3 and "decision: RESEARCH_ONLY" in out
    assert "warning: the baseline and the candidate are the same results" in out
    decision = json.loads((tmp_path / "decision.json").read_text())
    assert any("same results" in w for w in decision["warnings"])


def test_missing_baseline_is_never_release(abel: dict[str, Path], tmp_path: Path) -> None:
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(abel["13b"]), "--out", str(tmp_path))
    assert code == 1 and "NODATA" in out


def test_bad_folder_exits_2_naming_the_file(abel: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(abel["13b"], broken)
    samples = next(broken.glob("samples_*.jsonl"))
    samples.write_text(samples.read_text()[:5000])  # truncated mid-line
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(broken), "--baseline",
                      str(abel["7b"]), "--out", str(tmp_path / "o"))
    assert code == 2 and str(samples) in out and "Traceback" not in out
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(tmp_path / "absent"), "--baseline",
                      str(abel["7b"]))
    assert code == 2 and "absent" in out and not (tmp_path / "o" / "decision.json").exists()


def test_protocol_mismatch_exits_2(abel: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(abel["13b"], other)
    results = next(other.glob("results_*.json"))
    doc = json.loads(results.read_text())
    doc["n-shot"]["gsm8k"] = 5
    results.write_text(json.dumps(doc))
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(other), "--baseline", str(abel["7b"]),
                      "--out", str(tmp_path / "o"))
    assert code == 2 and "num_fewshot 0 (baseline) vs 5 (candidate)" in out and "allow_protocol_mismatch" in out


def test_gate_never_imports_torch_or_lm_eval(abel: dict[str, Path], tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from rlgate.cli.app import app\n"
        f"sys.argv = ['rlgate', 'gate', {str(CONTRACTS / 'abel_gsm8k.yaml')!r}, '--candidate', {str(abel['13b'])!r},"
        f" '--baseline', {str(abel['7b'])!r}, '--out', {str(tmp_path)!r}]\n"
        "try:\n    app()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        "bad = [m for m in ('torch', 'lm_eval', 'transformers', 'vllm', 'deepeval') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_sequential_replay_reports_the_look_and_the_documents_never_generated(abel: dict[str, Path],
                                                                               tmp_path: Path) -> None:
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(abel["7b"]),
                      "--baseline", str(abel["13b"]), "--out", str(tmp_path), "--sequential")
    assert code == 1 and "decision: BLOCK" in out
    assert "sequential (betting confidence sequence, valid at every look): decision BLOCK reached at look" in out
    assert "the same as the full-suite decision BLOCK" in out
    seq = json.loads((tmp_path / "decision.json").read_text())["sequential"]
    assert seq["matches_full"] and seq["stopped_early"] and seq["stop_look"] < seq["looks_planned"]
    assert seq["documents_used"] < seq["documents_total"] == 1319
    ng = seq["not_generated"][0]
    assert ng["task"] == "gsm8k" and ng["note"] == f"not generated: settled at look {seq['stop_look']}"
    assert ng["count"] == 1319 - seq["documents_used"] == len(ng["documents"])
    assert "Waudby-Smith" in seq["method"]
    code, out = _gate(str(CONTRACTS / "abel_gsm8k.yaml"), "--candidate", str(abel["7b"]),
                      "--baseline", str(abel["13b"]), "--out", str(tmp_path / "plain"))
    assert "sequential:" not in out
    assert json.loads((tmp_path / "plain" / "decision.json").read_text())["sequential"] is None


def test_sequential_replay_with_the_group_sequential_method(abel: dict[str, Path], tmp_path: Path) -> None:
    """protocol.sequential.method group_sequential: the same replay path, its method and boundaries reported."""
    for name in ("abel_gsm8k.yaml", "gsm8k_suite.yaml"):
        shutil.copy(CONTRACTS / name, tmp_path / name)
    contract = tmp_path / "abel_gsm8k.yaml"
    contract.write_text(contract.read_text() + "protocol:\n  sequential: {method: group_sequential, "
                        "spending: obrien_fleming}\n")
    code, out = _gate(str(contract), "--candidate", str(abel["13b"]), "--baseline", str(abel["7b"]),
                      "--out", str(tmp_path / "o"), "--sequential", "--seed", "2")
    assert code == 0 and "decision: RELEASE" in out
    assert ("sequential (group-sequential, obrien_fleming spending, valid at the planned looks): decision RELEASE "
            "reached at look") in out
    seq = json.loads((tmp_path / "o" / "decision.json").read_text())["sequential"]
    assert seq["procedure"] == "group_sequential" and seq["spending"] == "obrien_fleming"
    assert "Lan & DeMets" in seq["method"] and seq["matches_full"] and seq["stop_look"] < seq["looks_planned"]
    assert seq["documents_used"] + seq["not_generated"][0]["count"] == seq["documents_total"] == 1319
    primary = seq["gates"][0]
    assert primary["verdict"] == "pass" and primary["critical_z"] > 1.96 and primary["lower"] > 0


@pytest.mark.parametrize("where", ["taken", "taken/sub"])
def test_out_that_is_a_file_exits_2_before_gating(tmp_path: Path, where: str) -> None:
    base = build_synthetic_folder(tmp_path / "base", "org/base", {"gsm8k": [True] * 60 + [False] * 40})
    cand = build_synthetic_folder(tmp_path / "cand", "org/cand", {"gsm8k": [True] * 61 + [False] * 39})
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", tmp_path / "suite.yaml")
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "schema_version: 1\nname: tiny\nbaseline:\n  results: base\nsplits:\n  test_public: {visibility: nightly}\n"
        "suites: [suite.yaml]\ngates:\n  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.02}\n")
    (tmp_path / "taken").write_text("keep me", encoding="utf-8")
    code, out = _gate(str(contract), "--candidate", str(cand), "--baseline", str(base),
                      "--out", str(tmp_path / where))
    assert code == 2, out
    assert f"{tmp_path / 'taken'}: --out: is a file" in out and "fix:" in out and "Traceback" not in out
    assert "decision:" not in out  # refused before any gating
    assert (tmp_path / "taken").read_text(encoding="utf-8") == "keep me"
