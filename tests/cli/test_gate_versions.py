"""Runner -> gate with no hand-made manifest: a task version that changed between the runs is refused.

Both runs are made by `rlgate eval` (imported responses through lm-eval), so the benchmark versions
come from the run manifests the harness writes; `rlgate gate` then reads them back from the folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()


def _project(tmp_path: Path, suite_version: str) -> Path:
    data = tmp_path / "gsm8k.jsonl"
    if not data.exists():
        data.write_text("".join(json.dumps({"question": f"What is {i} + {i}?", "answer": f"{i} + {i} = {2 * i}\n#### "
                                            f"{2 * i}"}) + "\n" for i in range(1, 9)))
    folder = tmp_path / f"v{suite_version}"
    folder.mkdir(exist_ok=True)
    suite = {"schema_version": 1, "name": "math", "version": suite_version, "tasks": [
        {"task": "gsm8k", "split": "public", "num_fewshot": 0, "data_files": str(data)}]}
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite))
    (folder / "c.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "versions", "baseline": {"checkpoint": "b"},
        "protocol": {"backend": "hf", "sampling": {"max_tokens": 8}},
        "splits": {"public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"regression": [{"metric": "gsm8k/exact_match/flexible-extract", "max_drop": 0.5}]}}))
    return folder / "c.yaml"


def _eval(contract: Path, responses: Path, out: Path, cache: Path) -> None:
    result = runner.invoke(app, ["eval", str(contract), "--responses", str(responses), "--out", str(out),
                                 "--cache", str(cache)])
    assert result.exit_code == 0, result.output


def test_gate_refuses_runs_on_different_suite_versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path / "history.sqlite"))
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps({"task": "gsm8k", "doc_id": i, "response": f"#### {2 * (i + 1)}"}) + "\n"
                                 for i in range(8)))
    old, new = _project(tmp_path, "1"), _project(tmp_path, "2")
    _eval(old, responses, tmp_path / "base", tmp_path / "cache")
    _eval(new, responses, tmp_path / "cand", tmp_path / "cache")
    recorded = json.loads((tmp_path / "cand" / "run_manifest.json").read_text())
    assert recorded["benchmark_versions"] == {"gsm8k": "math@2"} and recorded["harness"] == "lm_eval"

    refused = runner.invoke(app, ["gate", str(new), "--baseline", str(tmp_path / "base"), "--candidate",
                                  str(tmp_path / "cand"), "--out", str(tmp_path / "gated")])
    assert refused.exit_code == 2, refused.output
    assert "different benchmark versions" in refused.output
    assert "gsm8k: baseline math@1, candidate math@2" in refused.output
    assert "allow_protocol_mismatch" in refused.output and "Traceback" not in refused.output

    same = runner.invoke(app, ["gate", str(new), "--baseline", str(tmp_path / "cand"), "--candidate",
                               str(tmp_path / "cand"), "--out", str(tmp_path / "gated")])
    assert same.exit_code == 0, same.output


def test_a_baseline_without_a_manifest_against_a_versioned_candidate_is_an_input_difference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The main `baseline.results` case: the team's own lm-eval folder (no run manifest, so no known version)
    against a candidate rlgate ran on suite v2 was compared silently; it is refused unless the contract allows
    protocol mismatches, and then warned. The candidate's rollout card shows the seeds its run recorded."""
    import shutil

    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path / "history.sqlite"))
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps({"task": "gsm8k", "doc_id": i, "response": f"#### {2 * (i + 1)}"}) + "\n"
                                 for i in range(8)))
    contract = _project(tmp_path, "2")
    _eval(contract, responses, tmp_path / "cand", tmp_path / "cache")
    shutil.copytree(tmp_path / "cand", tmp_path / "base")
    (tmp_path / "base" / "run_manifest.json").unlink()  # what lm_eval alone writes
    args = ["gate", str(contract), "--baseline", str(tmp_path / "base"), "--candidate", str(tmp_path / "cand"),
            "--out", str(tmp_path / "gated")]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2, refused.output
    assert "gsm8k: baseline not recorded (no run manifest), candidate math@2" in refused.output
    assert "allow_protocol_mismatch" in refused.output and "Traceback" not in refused.output
    assert not (tmp_path / "gated" / "decision.json").exists()

    text = contract.read_text()
    contract.write_text(text + "allow_protocol_mismatch: true\n")
    allowed = runner.invoke(app, args)
    assert allowed.exit_code == 0, allowed.output
    decision = json.loads((tmp_path / "gated" / "decision.json").read_text())
    assert "benchmark version differs: gsm8k: baseline not recorded (no run manifest), candidate math@2" \
        in decision["warnings"]
    html = (tmp_path / "gated" / "report.html").read_text()
    assert "random_seed=1234" in html and "numpy_seed=1234" in html  # the seeds rlgate gave lm-eval
    assert "numpy_random_seed" not in html  # the manifest names them as the results file does: shown once
