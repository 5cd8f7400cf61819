"""`rlgate check` on a tiny checkpoint: decision, reports, exit code, and the identical-weights warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()


def write(tmp_path: Path, shared_data: Path, baseline: dict[str, str]) -> Path:
    suite = {"schema_version": 1, "name": "s", "tasks": [
        {"task": "gsm8k", "split": "private", "num_fewshot": 0, "limit": 4,
         "data_files": str(shared_data / "gsm8k/test.jsonl")}]}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "check_cli", "baseline": baseline,
        "protocol": {"backend": "hf", "sampling": {"max_tokens": 8}, "hf": {"device": "cpu", "dtype": "float32"}},
        "splits": {"private": {"visibility": "release_gate_only"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.01}}}))
    return tmp_path / "c.yaml"


def test_check_same_weights_is_research_only_with_a_warning(tmp_path: Path, shared_data: Path,
                                                            tiny_checkpoint: Path) -> None:
    contract = write(tmp_path, shared_data, {"checkpoint": str(tiny_checkpoint)})
    out = tmp_path / "out"
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", str(tiny_checkpoint), "--out", str(out),
                                 "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 3, result.output  # the primary gate cannot pass: no improvement is possible
    assert "same weights as the baseline" in result.output
    for name in ("decision.json", "report.html", "report.md", "junit.xml", "summary.md"):
        assert (out / name).exists()
    decision = json.loads((out / "decision.json").read_text())
    assert decision["decision"] == "research_only"
    summary = (out / "summary.md").read_text(encoding="utf-8")  # check writes the CI summary as gate does
    assert summary.startswith("# rlgate decision: **research_only**") and "exact\\_match/flexible-extract" in summary
    assert f"summary: {out / 'summary.md'}" in " ".join(result.output.split())
    assert any("same weights" in w for w in decision["warnings"])
    base = json.loads((out / "baseline" / "run_manifest.json").read_text())
    cand = json.loads((out / "candidate" / "run_manifest.json").read_text())
    assert base["model_loaded"] and not cand["model_loaded"]  # identical fingerprint: all from the cache
    assert base["tasks"][0]["documents"] == 4  # the private split is evaluated by the release gate


def test_check_against_stored_baseline_results(tmp_path: Path, shared_data: Path, tiny_checkpoint: Path) -> None:
    first = write(tmp_path, shared_data, {"checkpoint": str(tiny_checkpoint)})
    runner.invoke(app, ["check", str(first), "--checkpoint", str(tiny_checkpoint), "--out", str(tmp_path / "o1"),
                        "--cache", str(tmp_path / "cache")])
    stored = tmp_path / "stored"
    stored.mkdir()
    contract = write(stored, shared_data, {"results": str(tmp_path / "o1" / "baseline")})
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", str(tiny_checkpoint), "--out",
                                 str(tmp_path / "o2"), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 3, result.output
    assert not (tmp_path / "o2" / "baseline").exists()


def test_check_bad_candidate_exits_2_before_any_run(tmp_path: Path, shared_data: Path, tiny_checkpoint: Path) -> None:
    contract = write(tmp_path, shared_data, {"checkpoint": str(tiny_checkpoint)})
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", str(tmp_path / "missing"), "--out",
                                 str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert not (tmp_path / "out" / "baseline").exists()


def test_check_baseline_option_overrides_the_contract(tmp_path: Path, shared_data: Path,
                                                      tiny_checkpoint: Path) -> None:
    first = write(tmp_path, shared_data, {"checkpoint": str(tiny_checkpoint)})
    runner.invoke(app, ["check", str(first), "--checkpoint", str(tiny_checkpoint), "--out", str(tmp_path / "o1"),
                        "--cache", str(tmp_path / "cache")])
    # The contract names a baseline that does not exist; --baseline replaces it with stored results ...
    other = tmp_path / "other"
    other.mkdir()
    contract = write(other, shared_data, {"checkpoint": "org/not-a-model"})
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", str(tiny_checkpoint), "--out",
                                 str(tmp_path / "o2"), "--cache", str(tmp_path / "cache"),
                                 "--baseline", str(tmp_path / "o1" / "baseline")])
    assert result.exit_code == 3, result.output
    assert not (tmp_path / "o2" / "baseline").exists()
    inputs = json.loads((tmp_path / "o2" / "decision.json").read_text())["inputs"]
    assert str(tmp_path / "o1" / "baseline") in inputs[0]["source"]
    # ... or with a checkpoint, which is then evaluated (from the cache: same fingerprint).
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", str(tiny_checkpoint), "--out",
                                 str(tmp_path / "o3"), "--cache", str(tmp_path / "cache"),
                                 "--baseline", str(tiny_checkpoint)])
    assert result.exit_code == 3, result.output
    assert (tmp_path / "o3" / "baseline" / "run_manifest.json").exists()


def test_check_bad_monitor_policy_exits_2_before_any_run(tmp_path: Path, shared_data: Path) -> None:
    contract = write(tmp_path, shared_data, {"checkpoint": "base"})
    data = yaml.safe_load(contract.read_text())
    (tmp_path / "train.jsonl").write_text('{"step": 1, "loss": 1.0}\n')
    contract.write_text(yaml.safe_dump({**data, "monitor": {"logs": ["train.jsonl"], "policy": "c.yaml"}}))
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", str(tmp_path / "nope"), "--out",
                                 str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 2, result.output
    assert f"{contract}:1:1: this file is a contract" in result.output and "monitor.policy takes" in result.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
