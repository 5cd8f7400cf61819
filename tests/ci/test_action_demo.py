"""The real action.yml with the real `rlgate check` on the demo: checkpoints rlgate trains, lm-eval scoring.

One small demo build per session (`rlgate.demo.build`, fewer documents and steps than `rlgate demo`).
The demo contract is gated as built; then three variants of it, written beside it and differing
only in their gates, give a release, a research_only and a block decision from the same cached
generations (the generation cache is keyed by checkpoint, task and protocol, not by gates).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from ci_action_runner import ActionRun, run_action

from rlgate.engine.fmt import special_outcome
from rlgate.engine.models import Decision

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("lm_eval")
    pytest.importorskip("torch")
    from rlgate.demo.build import DemoSettings, build

    settings = DemoSettings(gsm8k_test=30, mmlu_per_category=2, ifeval_test=20, base_steps=40, candidate_steps=40)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in OFFLINE.items():
            patch.setenv(name, value)
        return build(tmp_path_factory.mktemp("demo"), settings, log=lambda _: None)


def variant(demo: Any, name: str, gates: dict[str, Any]) -> str:
    """A copy of the demo contract with other gates, beside it (its suite path stays valid)."""
    data = yaml.safe_load(demo.contract.read_text(encoding="utf-8"))
    data["name"] = f"demo_{name}"
    data["gates"] = {"alpha": 0.05, **gates}
    path = demo.root / f"contract_{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path.name


def run_gate(demo: Any, contract: str, tmp_path: Path, **inputs: str) -> ActionRun:
    given = {"contract": contract, "checkpoint": str(demo.candidate), "out": str(tmp_path / "out"),
             "args": f"--cache {demo.root / 'cache'}", "setup-python": "false", "install": "false",
             "python": sys.executable, **inputs}
    return run_action(ACTION, given, workspace=demo.root, runner_temp=tmp_path / "runner_temp", env=OFFLINE)


def check_consistent(result: ActionRun, out: Path, contract: str) -> Decision:
    """What every real run must show: outputs, summary, annotations and exit code agree with decision.json."""
    decision = Decision.model_validate_json((out / "decision.json").read_text(encoding="utf-8"))
    assert result.outputs["decision"] == decision.decision
    assert result.outputs["report-path"] == str(out / "report.html")
    assert (out / "report.html").is_file() and (out / "junit.xml").is_file()
    report_md = (out / "report.md").read_text(encoding="utf-8")
    # Exactly one copy of the report in the job summary: rlgate itself must not append a second.
    assert result.summary.startswith(report_md.rstrip("\n"))
    assert result.summary.count(report_md.splitlines()[0]) == 1
    annotations = result.annotations
    assert annotations[0].properties["title"] == f"rlgate decision: {decision.decision}"
    failed = [g for g in decision.gates if g.verdict != "pass"]
    gate_titles = [a.properties["title"] for a in annotations[1:]]
    named = {g.name: (f"{g.outcome} -> " if special_outcome(g.outcome) else "") for g in failed}
    assert sorted(gate_titles) == sorted(f"rlgate {g.kind} gate {g.metric}: {g.verdict} ({named[g.name]}{g.effect})"
                                         for g in failed)
    assert all(a.properties["file"] == contract for a in annotations[1:])
    upload = result.step("Upload the report")
    assert all(Path(p).is_file() for p in upload.with_["path"].split())
    return decision


def test_demo_contract_as_built(demo: Any, tmp_path: Path) -> None:
    result = run_gate(demo, demo.contract.name, tmp_path)
    decision = check_consistent(result, tmp_path / "out", demo.contract.name)
    expected_exit = {"release": 0, "research_only": 0, "block": 1}[decision.decision]
    assert result.exit_code == expected_exit, result.log
    assert f"rlgate check exited with {({'release': 0, 'research_only': 3, 'block': 1})[decision.decision]}" \
        in result.step("check").stdout


ALWAYS_MET = {"hard": [{"metric": "gsm8k/answer_parse_failure_rate", "max": 1.0}]}


def test_release_from_real_output(demo: Any, tmp_path: Path) -> None:
    contract = variant(demo, "release", ALWAYS_MET)
    result = run_gate(demo, contract, tmp_path)
    decision = check_consistent(result, tmp_path / "out", contract)
    assert decision.decision == "release"
    assert result.exit_code == 0
    assert [a.level for a in result.annotations] == ["notice"]


def test_research_only_from_real_output(demo: Any, tmp_path: Path) -> None:
    contract = variant(demo, "research_only", {
        **ALWAYS_MET, "primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.99}})
    result = run_gate(demo, contract, tmp_path, **{"research-only-exit-code": "3"})
    decision = check_consistent(result, tmp_path / "out", contract)
    assert decision.decision == "research_only"
    assert result.exit_code == 3
    [primary] = [a for a in result.annotations if "primary gate" in a.properties["title"]]
    assert primary.level == "warning"
    line = int(primary.properties["line"])
    assert "gsm8k/exact_match/flexible-extract" in (demo.root / contract).read_text(encoding="utf-8").splitlines()[
        line - 1]


def test_block_from_real_output(demo: Any, tmp_path: Path) -> None:
    contract = variant(demo, "block", {
        "hard": [*ALWAYS_MET["hard"], {"metric": "ifeval/prompt_level_strict_acc", "min": 0.999}]})
    result = run_gate(demo, contract, tmp_path, **{"research-only-exit-code": "3"})
    decision = check_consistent(result, tmp_path / "out", contract)
    assert decision.decision == "block"
    assert result.exit_code == 1
    errors = [a for a in result.annotations if a.level == "error"]
    assert [a.properties["title"] for a in errors][1:] == [
        "rlgate hard gate ifeval/prompt_level_strict_acc/none: fail (block)"]
    assert result.step("Decision").rc == 1


def test_real_check_step_on_a_missing_contract_is_an_error_decision(tmp_path: Path) -> None:
    result = run_action(ACTION, {"contract": "nope.yaml", "checkpoint": str(tmp_path), "setup-python": "false",
                                 "install": "false", "python": sys.executable},
                        workspace=tmp_path, runner_temp=tmp_path / "runner_temp", env=OFFLINE)
    assert "rlgate check exited with 2" in result.step("check").stdout
    assert "nope.yaml" in result.step("check").stdout
    assert result.outputs["decision"] == "error"
    assert result.outputs["out"] == str(tmp_path / "runner_temp" / "rlgate-report")
    assert result.exit_code == 2
    assert "exited with 2 (bad input or usage)" in result.summary
