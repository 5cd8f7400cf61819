"""`rlgate check` with protocol.sequential: a collapsed candidate stops early with fewer documents generated,
what was never generated is listed, and a later full run extends the cache instead of regenerating."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()
DOCS = 60


def _write(root: Path, shared_data: Path, baseline: dict[str, str], sequential: dict[str, Any] | None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    suite = {"schema_version": 1, "name": "s", "tasks": [
        {"task": "gsm8k", "split": "test_public", "num_fewshot": 0, "limit": DOCS,
         "data_files": str(shared_data / "gsm8k/test.jsonl")}]}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    protocol: dict[str, Any] = {"backend": "hf", "sampling": {"max_tokens": 6},
                                "hf": {"device": "cpu", "dtype": "float32", "batch_size": 8}}
    if sequential is not None:
        protocol["sequential"] = sequential
    contract = {
        "schema_version": 1, "name": "check_sequential", "baseline": baseline, "protocol": protocol,
        # the baseline is imported responses (backend "responses"): the difference is recorded, not refused
        "allow_protocol_mismatch": True,
        "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.0, "max_drop": 0.05},
                  "regression": [{"metric": "gsm8k/exact_match/strict-match", "max_drop": 0.05}],
                  "diagnostics": [{"metric": "gsm8k/response_length_mean", "max_relative_increase": 5.0}]}}
    (root / "c.yaml").write_text(yaml.safe_dump(contract))
    return root / "c.yaml"


def _gold_baseline(tmp_path: Path, shared_data: Path) -> Path:
    """A baseline that answers every document right: the gold answers imported as responses."""
    rows = [json.loads(line) for line in (shared_data / "gsm8k/test.jsonl").read_text().splitlines()[:DOCS]]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"task": "gsm8k", "doc_id": i, "response": r["answer"]}) + "\n"
                            for i, r in enumerate(rows)))
    contract = _write(tmp_path / "gold", shared_data, {"checkpoint": "unused"}, None)
    out = tmp_path / "baseline-results"
    result = runner.invoke(app, ["eval", str(contract), "--responses", str(gold), "--out", str(out),
                                 "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    return out


def _manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "run_manifest.json").read_text())["tasks"][0]


def test_a_collapsed_candidate_stops_early_and_a_full_run_extends_the_cache(
        tmp_path: Path, shared_data: Path, tiny_checkpoint: Path) -> None:
    stored = _gold_baseline(tmp_path, shared_data)
    plan = {"chunk": 10, "min_samples": 10}
    contract = _write(tmp_path / "seq", shared_data, {"results": str(stored)}, plan)
    out = tmp_path / "out-seq"
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", str(tiny_checkpoint), "--out", str(out),
                                 "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 1, result.output  # block: the tiny model answers none of GSM8K
    decision = json.loads((out / "decision.json").read_text())
    seq = decision["sequential"]
    assert seq["mode"] == "check" and seq["stopped_early"] and seq["stop_look"] < seq["looks_planned"] == 6
    task = _manifest(out / "candidate")
    generated = task["documents"]
    assert generated == 10 * seq["stop_look"] < DOCS
    assert task["generated"] == generated  # each document generated once over every look, never again
    assert task["not_generated"] and len(task["not_generated"]) == DOCS - generated
    (listed,) = seq["not_generated"]
    assert listed["note"] == f"not generated: settled at look {seq['stop_look']}"
    assert sorted(int(d) for d in listed["documents"]) == sorted(task["not_generated"])
    gates = {g["name"]: g for g in decision["gates"]}
    primary = gates["gsm8k/exact_match/flexible-extract"]
    assert primary["verdict"] == "fail" and "anytime-valid" in primary["reason"]
    assert primary["details"]["sequential"]["upper"] < -0.05
    assert all(g["verdict"] != "nodata" for g in decision["gates"])  # not generated is not missing
    markdown = (out / "report.md").read_text()
    assert "not generated: settled at look" in markdown
    assert "betting confidence sequence, valid at every look: stopped at look" in markdown  # the method is named
    assert "Test: betting confidence sequence, valid at every look." in (out / "report.html").read_text()
    # a later full run (sequential off) extends the same cache: only the documents never generated are generated
    full = _write(tmp_path / "full", shared_data, {"results": str(stored)}, None)
    result = runner.invoke(app, ["check", str(full), "--checkpoint", str(tiny_checkpoint), "--out",
                                 str(tmp_path / "out-full"), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 1, result.output
    task = _manifest(tmp_path / "out-full" / "candidate")
    assert task["documents"] == DOCS and task["cached"] == generated and task["generated"] == DOCS - generated
    logged = {json.loads(line)["doc_id"] for line in next((tmp_path / "out-seq" / "candidate").rglob(
        "samples_gsm8k_*.jsonl")).read_text().splitlines()}  # the true doc ids of the subset generated
    never = {int(d) for d in listed["documents"]}
    assert logged == set(range(DOCS)) - never and len(logged) == generated


def test_group_sequential_check_goes_through_the_same_live_path(tmp_path: Path, shared_data: Path,
                                                                tiny_checkpoint: Path) -> None:
    """method group_sequential: the same look-by-look generation, stop rule and listing, its method reported."""
    stored = _gold_baseline(tmp_path, shared_data)
    plan = {"chunk": 10, "min_samples": 10, "method": "group_sequential", "spending": "pocock"}
    contract = _write(tmp_path / "gs", shared_data, {"results": str(stored)}, plan)
    out = tmp_path / "out-gs"
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", str(tiny_checkpoint), "--out", str(out),
                                 "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 1, result.output
    decision = json.loads((out / "decision.json").read_text())
    seq = decision["sequential"]
    assert seq["mode"] == "check" and seq["procedure"] == "group_sequential" and seq["spending"] == "pocock"
    assert seq["stopped_early"] and seq["stop_look"] < seq["looks_planned"] == 6
    assert _manifest(out / "candidate")["documents"] == 10 * seq["stop_look"]
    assert seq["not_generated"][0]["note"] == f"not generated: settled at look {seq['stop_look']}"
    primary = {g["name"]: g for g in decision["gates"]}["gsm8k/exact_match/flexible-extract"]
    assert primary["verdict"] == "fail" and "group-sequential at a planned look" in primary["reason"]
    assert primary["details"]["sequential"]["critical_z"] > 1.645
    assert "group-sequential, pocock spending, valid at the planned looks: stopped at look" in \
        (out / "report.md").read_text()
