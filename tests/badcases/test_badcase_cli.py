"""`rlgate badcases OUT_DIR` end to end on lm-eval folders built from the real MMLU-Pro outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from badcase_helpers import mmlu_pro_folders
from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()

CONTRACT = """\
schema_version: 1
name: mmlu_format_case
baseline: {{results: {baseline}}}
splits:
  public: {{visibility: nightly}}
  private: {{visibility: release_gate_only}}
suites:
  - schema_version: 1
    name: knowledge
    tasks:
      - {{task: mmlu_pro, split: {split}}}
gates:
  regression:
    - {{metric: mmlu_pro/exact_match/custom-extract, max_drop: 0.01}}
"""


@pytest.fixture(scope="module")
def folders(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return mmlu_pro_folders(shared_data, tmp_path_factory.mktemp("runs"), per_subject=60, format_break_share=35)


def _contract(tmp_path: Path, baseline: Path, split: str) -> Path:
    path = tmp_path / f"contract_{split}.yaml"
    path.write_text(CONTRACT.format(baseline=baseline, split=split), encoding="utf-8")
    return path


def test_gate_then_badcases_explains_the_block_and_exports_training_data(folders: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    base, cand = folders
    contract = _contract(tmp_path, base, "public")
    out = tmp_path / "out"
    gated = runner.invoke(app, ["gate", str(contract), "--candidate", str(cand), "--out", str(out)])
    assert gated.exit_code == 1, gated.output
    result = runner.invoke(app, ["badcases", str(out), "--contract", str(contract),
                                 "--export", str(tmp_path / "bad.jsonl")])
    assert result.exit_code == 0, result.output
    assert "checkpoint: meta-llama/Meta-Llama-3_1-8B-Instruct" in result.output
    assert "regressions: [mmlu_pro exact_match: -" in result.output
    assert "badcase_clusters: [mmlu_pro_no_parseable_choice: " in result.output
    assert "a format problem, not lost knowledge" in result.output
    assert "format-verifier reward" in result.output
    decision = json.loads((out / "decision.json").read_text(encoding="utf-8"))
    assert decision["decision"] == "block" and decision["gates"]
    assert decision["extensions"]["badcase_top"][0].startswith("mmlu_pro_no_parseable_choice")
    assert decision["extensions"]["next_actions"][0]["rule"] == "format_failures_grew"
    stored = json.loads((out / "badcases.json").read_text(encoding="utf-8"))
    assert stored["schema_version"] == 1 and stored["explanations"][0]["driver"] == "format"
    rows = [json.loads(line) for line in (tmp_path / "bad.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and {r["family"] for r in rows} == {"mmlu_pro"}
    formatted = [r for r in rows if r["failure_classes"] == ["mmlu_pro_no_parseable_choice"]]
    assert formatted and all(r["extracted_answer"] == "[invalid]" for r in formatted)
    assert any(r["chosen_response"] for r in formatted) and all(r["prompt"] for r in rows)


def test_private_split_samples_never_leave_the_report(folders: tuple[Path, Path], tmp_path: Path) -> None:
    base, cand = folders
    contract = _contract(tmp_path, base, "private")
    out = tmp_path / "out"
    (out / "candidate").parent.mkdir()
    shutil.copytree(cand, out / "candidate")
    shutil.copytree(base, out / "baseline")
    result = runner.invoke(app, ["badcases", str(out), "--contract", str(contract), "--export",
                                 str(tmp_path / "bad.jsonl")])
    assert result.exit_code == 0, result.output
    assert "private (counts only, samples withheld): mmlu_pro" in result.output
    assert "exported 0 failed samples" in result.output
    assert (tmp_path / "bad.jsonl").read_text(encoding="utf-8") == ""
    stored = (out / "badcases.json").read_text(encoding="utf-8")
    assert '"examples": []' in stored and "The correct answer is" not in stored and "Question:" not in stored
    assert "mmlu_pro_no_parseable_choice" in stored  # counts stay


def test_badcases_input_errors(folders: tuple[Path, Path], tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["badcases", str(empty)])
    assert result.exit_code == 2 and "no candidate run found" in result.output and "Traceback" not in result.output
    out = tmp_path / "runs"
    out.mkdir()
    shutil.copytree(folders[1], out / "candidate")
    result = runner.invoke(app, ["badcases", str(out)])
    assert result.exit_code == 2 and "pass --contract" in result.output
    result = runner.invoke(app, ["badcases", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "run folder does not exist" in result.output


def test_decision_with_badcases_for_the_gate_command(folders: tuple[Path, Path], tmp_path: Path) -> None:
    from rlgate.badcases.checks import decision_with_badcases
    from rlgate.engine.decision import decide
    from rlgate.harness.lmeval.folder import read_lmeval_folder
    from rlgate.harness.vocabulary import load_contract

    base, cand = (read_lmeval_folder(f) for f in folders)
    resolved = load_contract(_contract(tmp_path, folders[0], "private"))
    decision = decide(resolved.gates, base, cand, seed=0, contract_name=resolved.name)
    attached = decision_with_badcases(decision, cand, base, resolved)
    assert attached.decision == decision.decision == "block"
    assert attached.extensions["badcase_top"][0].startswith("mmlu_pro_no_parseable_choice")
    assert all(c["examples"] == [] for c in attached.extensions["badcases"]["clusters"])
