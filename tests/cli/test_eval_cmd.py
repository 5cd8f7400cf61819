"""`rlgate eval` as a user runs it: imported responses, a live tiny checkpoint, and every refusal (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()


def contract(tmp_path: Path, shared_data: Path) -> Path:
    suite = {"schema_version": 1, "name": "s", "tasks": [
        {"task": "gsm8k", "split": "public", "num_fewshot": 0, "data_files": str(shared_data / "gsm8k/test.jsonl")},
        {"task": "ifeval", "split": "private", "data_files": str(shared_data / "ifeval/input_data.jsonl")}]}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "cli", "baseline": {"checkpoint": "b"},
        "protocol": {"backend": "hf", "sampling": {"max_tokens": 8}, "hf": {"device": "cpu", "dtype": "float32"}},
        "splits": {"public": {"visibility": "nightly"}, "private": {"visibility": "release_gate_only"}},
        "suites": ["suite.yaml"], "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    return tmp_path / "c.yaml"


def test_eval_imported_responses(tmp_path: Path, shared_data: Path) -> None:
    responses = tmp_path / "r.jsonl"
    responses.write_text("\n".join(json.dumps({"task": "gsm8k", "doc_id": i, "response": "#### 18"}) for i in range(3))
                         + "\n" + json.dumps({"task": "gsm8k", "doc_id": 99999, "response": "x"}) + "\n")
    result = runner.invoke(app, ["eval", str(contract(tmp_path, shared_data)), "--responses", str(responses),
                                 "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"),
                                 "--responded-only"])
    assert result.exit_code == 0, result.output
    assert "gsm8k" in result.output and "exact_match" in result.output
    assert "imported 4 rows: 3 matched, 1 unmatched" in result.output
    assert "line 4: gsm8k row matches no document" in result.output
    manifest = json.loads((tmp_path / "out" / "run_manifest.json").read_text())
    assert [t["task"] for t in manifest["tasks"]] == ["gsm8k"]  # the private split is not evaluated
    assert manifest["tasks"][0]["documents"] == 3


def test_eval_live_checkpoint_then_cached(tmp_path: Path, shared_data: Path, tiny_checkpoint: Path) -> None:
    args = ["eval", str(contract(tmp_path, shared_data)), "--checkpoint", str(tiny_checkpoint), "--out",
            str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--limit", "2"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "requests: 2 (0 from cache; model loaded)" in first.output
    second = runner.invoke(app, args)
    assert second.exit_code == 0 and "requests: 2 (2 from cache; model not loaded)" in second.output


@pytest.mark.parametrize(("extra", "message"), [
    ([], "give exactly one of --checkpoint"),
    (["--checkpoint", "x", "--responses", "y.jsonl"], "give exactly one of --checkpoint"),
    (["--responses", "missing.jsonl"], "does not exist"),
    (["--checkpoint", "./no/such/folder"], "does not exist"),
    (["--checkpoint", "x", "--responded-only"], "--responded-only applies to --responses"),
    (["--responses", "r.jsonl", "--split", "private"], "release_gate_only"),
    (["--responses", "r.jsonl", "--split", "nope"], "unknown split 'nope'"),
])
def test_eval_refusals_exit_2(tmp_path: Path, shared_data: Path, extra: list[str], message: str,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.jsonl").write_text('{"task": "gsm8k", "doc_id": 0, "response": "1"}\n')
    result = runner.invoke(app, ["eval", str(contract(tmp_path, shared_data)), "--cache", str(tmp_path / "c"), *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_eval_refuses_a_lora_adapter_before_loading_anything(tmp_path: Path, shared_data: Path) -> None:
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    (adapter / "adapter_model.safetensors").write_bytes(b"x")
    result = runner.invoke(app, ["eval", str(contract(tmp_path, shared_data)), "--checkpoint", str(adapter),
                                 "--cache", str(tmp_path / "c")])
    assert result.exit_code == 2
    assert "LoRA adapter" in result.output and "merge_and_unload()" in result.output


def test_vllm_backend_without_vllm_installed_is_an_install_hint(tmp_path: Path, shared_data: Path,
                                                                 tiny_checkpoint: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    path = contract(tmp_path, shared_data)
    data = yaml.safe_load(path.read_text())
    data["protocol"]["backend"] = "vllm"
    path.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["eval", str(path), "--checkpoint", str(tiny_checkpoint), "--limit", "1",
                                 "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c")])
    assert result.exit_code == 2, result.output
    assert "pip install 'rl-release-gate[vllm]'" in result.output


def test_eval_responses_duplicates_collapse_or_exit_2(tmp_path: Path, shared_data: Path) -> None:
    """An identical repeated row is collapsed with a warning giving the count; a conflicting one names both lines."""
    rows = [json.dumps({"task": "gsm8k", "doc_id": i, "response": f"#### {i}"}) for i in range(3)]
    responses = tmp_path / "r.jsonl"
    responses.write_text("\n".join([*rows, rows[0], rows[1]]) + "\n")
    path = contract(tmp_path, shared_data)

    def args(out: str) -> list[str]:
        return ["eval", str(path), "--responses", str(responses), "--out", str(tmp_path / out),
                "--cache", str(tmp_path / "cache"), "--responded-only"]

    result = runner.invoke(app, args("out"))
    assert result.exit_code == 0, result.output
    assert "imported 5 rows: 3 matched, 0 unmatched, 2 identical duplicates collapsed" in result.output
    assert "line 4: identical duplicate of line 1 for gsm8k doc 0 (collapsed)" in result.output
    assert f"warning: 2 identical duplicate rows in {responses} collapsed" in " ".join(result.output.split())
    responses.write_text("\n".join([*rows, json.dumps({"task": "gsm8k", "doc_id": 1, "response": "#### 5"})]) + "\n")
    result = runner.invoke(app, args("out2"))
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{responses}:2 and {responses}:4 give different responses" in text and "gsm8k doc 1" in text
    assert not (tmp_path / "out2" / "run_manifest.json").exists()


def _import(tmp_path: Path, c: Path, name: str, answers: dict[int, str]) -> tuple[Path, str]:
    responses = tmp_path / f"{name}.jsonl"
    responses.write_text("".join(json.dumps({"task": "gsm8k", "doc_id": i, "response": r}) + "\n"
                                 for i, r in answers.items()))
    out = tmp_path / name
    result = runner.invoke(app, ["eval", str(c), "--responses", str(responses), "--out", str(out), "--limit", "20",
                                 "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    return out, result.output


def test_partial_import_reports_coverage_and_gates_nodata(tmp_path: Path, shared_data: Path) -> None:
    """10 of 20 documents answered (doc 0 right): score 10 % over the answered ones, coverage 50 %, never 5 %;
    a gate on the task is nodata at the default min_coverage 1.0 and computed on the paired answered
    documents once the contract accepts 50 %."""
    c = contract(tmp_path, shared_data)
    cand, output = _import(tmp_path, c, "cand", {0: "#### 18", **{i: "#### 0" for i in range(1, 10)}})
    assert "coverage gsm8k: 10/20 documents answered (50.0%)" in output and "0.1000" in output
    manifest = json.loads((cand / "run_manifest.json").read_text())["tasks"][0]
    assert manifest["documents"] == 10 and manifest["expected_documents"] == 20
    assert manifest["missing_documents"] == list(range(10, 20))
    base, _ = _import(tmp_path, c, "base", {i: "#### 0" for i in range(20)})
    result = runner.invoke(app, ["gate", str(c), "--candidate", str(cand), "--baseline", str(base),
                                 "--out", str(tmp_path / "g1")])
    assert result.exit_code == 1, result.output
    gate = json.loads((tmp_path / "g1" / "decision.json").read_text())["gates"][0]
    assert gate["verdict"] == "nodata"
    assert "the candidate run answered 10 of 20 documents of gsm8k (coverage 50.0% < min_coverage 100%)" \
        in gate["reason"] and "gsm8k:10" in gate["reason"]
    data = yaml.safe_load(c.read_text())
    data["gates"]["min_coverage"] = 0.5
    c.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["gate", str(c), "--candidate", str(cand), "--baseline", str(base),
                                 "--out", str(tmp_path / "g2")])
    decision = json.loads((tmp_path / "g2" / "decision.json").read_text())
    gate = decision["gates"][0]
    assert gate["verdict"] != "nodata" and gate["n"] == 10 and gate["n_unpaired"] == 10
    assert gate["details"]["coverage"] == {"baseline": "20/20", "candidate": "10/20"}
    assert "coverage candidate 10/20 documents" in gate["reason"] and gate["candidate"] == 0.1


@pytest.mark.parametrize("name", ["missing.jsonl", "gone/result"])
def test_a_missing_responses_file_is_refused_before_any_task_loads(tmp_path: Path, shared_data: Path, name: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import rlgate.app.runs

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("evaluate ran: the tasks' data would load before the missing file is noticed")

    monkeypatch.setattr(rlgate.app.runs, "evaluate", never)
    result = runner.invoke(app, ["eval", str(contract(tmp_path, shared_data)), "--responses", str(tmp_path / name),
                                 "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c")])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / name}: --responses: responses file" in result.output and "fix:" in result.output
    assert not (tmp_path / "out").exists()


def test_a_cache_that_is_a_file_exits_2(tmp_path: Path, shared_data: Path) -> None:
    (tmp_path / "r.jsonl").write_text('{"task": "gsm8k", "doc_id": 0, "response": "1"}\n')
    (tmp_path / "taken").write_text("keep me")
    result = runner.invoke(app, ["eval", str(contract(tmp_path, shared_data)), "--responses", str(tmp_path / "r.jsonl"),
                                 "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "taken")])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'taken'}: --cache: is a file" in result.output and "Traceback" not in result.output
