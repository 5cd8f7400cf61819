"""Inspect tasks gate on their own metrics, and their safety verdicts are read strictly, on the demo's real logs.

The demo's toolbox task runs live (scripted mockllm policies) under the name `gsm8k` (inspect-evals ships
a gsm8k task; lm-eval's catalog once refused any gate on it but exact_match): gated on the scorer's own
`success`, it loads and gates. Then the candidate's logs get a `safety_violation` score written as the
string "unsafe" or "NaN", which inspect's value_to_float reads as 0.0 ("safe"): rlgate reads them as
corrupt, so the safety gate is an error and the decision blocks.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")

from rlgate.cli.app import app
from rlgate.demo.agent import write_project

runner = CliRunner()
UNSAFE_SAMPLES = (0, 5, 9)


def _eval(contract: Path, policy: str, out: Path) -> None:
    result = runner.invoke(app, ["eval", str(contract), "--checkpoint", f"mockllm/toolbox-{policy}", "--out", str(out),
                                 "--cache", str(out.parent / "cache")])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agent-vocab")
    paths = write_project(root)
    contract = yaml.safe_load(paths.contract.read_text())
    contract["suites"][0]["tasks"][0]["name"] = "gsm8k"
    contract["gates"] = {"primary": {"metric": "gsm8k/success", "min_delta": 0.0},
                         "hard": [{"metric": "gsm8k/safety_violation_rate", "max": 0.0}]}
    (root / "gsm8k.yaml").write_text(yaml.safe_dump(contract, sort_keys=False))
    for policy in ("baseline", "candidate"):
        _eval(root / "gsm8k.yaml", policy, root / "runs" / policy)
    return root


def _gate(project: Path, candidate: Path, out: str) -> tuple[int, str, dict[str, Any]]:
    result = runner.invoke(app, ["gate", str(project / "gsm8k.yaml"), "--baseline", str(project / "runs" / "baseline"),
                                 "--candidate", str(candidate), "--out", str(project / out)],
                           env={"RLGATE_HISTORY": str(project / "h.sqlite")})
    decision = json.loads((project / out / "decision.json").read_text()) if result.exit_code != 2 else {}
    return result.exit_code, result.output, decision


def test_an_inspect_task_named_gsm8k_gates_on_its_own_metric(project: Path) -> None:
    code, output, decision = _gate(project, project / "runs" / "candidate", "gate")
    assert code == 0, output
    assert decision["decision"] == "release"
    assert [g["metric"] for g in decision["gates"]] == ["gsm8k/success/none", "gsm8k/safety_violation_rate/none"]


def _with_safety_score(project: Path, value: object, name: str) -> Path:
    from inspect_ai.log import read_eval_log, write_eval_log

    target = project / "runs" / name
    shutil.copytree(project / "runs" / "candidate", target)
    log_file = next((target / "logs").glob("*.eval"))
    log = read_eval_log(str(log_file))
    for index in UNSAFE_SAMPLES:
        for score in log.samples[index].scores.values():
            assert isinstance(score.value, dict) and "safety_violation" in score.value
            score.value["safety_violation"] = value
    write_eval_log(log, str(log_file))
    return target


@pytest.mark.parametrize("value", ["unsafe", "NaN"])
def test_a_safety_score_that_is_not_a_number_is_corrupt_never_safe(project: Path, value: str) -> None:
    candidate = _with_safety_score(project, value, f"candidate-{value}")
    code, output, decision = _gate(project, candidate, f"gate-{value}")
    assert code == 1, output
    assert decision["decision"] == "block"
    hard = next(g for g in decision["gates"] if g["kind"] == "hard")
    assert hard["verdict"] == "error" and hard["reason"].startswith("error: 3 corrupt documents in "
                                                                     "gsm8k/safety_violation_rate/none")
    flagged = {c["value"] for c in decision["corrupt"] if c["metric"] == "safety_violation"}
    assert flagged == {json.dumps(value)}  # the scorer's own score, listed as written
    assert len({c["doc_id"] for c in decision["corrupt"]}) == len(UNSAFE_SAMPLES)
