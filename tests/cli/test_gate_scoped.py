"""Scoped decisions end to end: `rlgate gate` with contract capabilities, every report, the action's outputs."""

from __future__ import annotations

import io
import json
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ci.ci_action_runner import parse_env_file
from fixtures.lmeval_builders import build_synthetic_folder
from typer.testing import CliRunner

from rlgate.ci.steps import run_report
from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()
N = 400

CONTRACT = """schema_version: 1
name: scoped
baseline: {results: base}
splits:
  test_public: {visibility: nightly}
suites:
  - schema_version: 1
    name: s
    tasks:
      - {task: gsm8k, split: test_public}
      - {task: chartqa, split: test_public}
capabilities:
  math: {tasks: [gsm8k]}
  charts: {tasks: [chartqa], scope: SCOPE}
gates:
  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.02}
  regression:
    - {metric: chartqa/exact_match/flexible-extract, max_drop: 0.02}
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scoped")
    build_synthetic_folder(root / "base", "org/base", {"gsm8k": [i % 10 < 6 for i in range(N)],
                                                       "chartqa": [i % 10 < 7 for i in range(N)]})
    build_synthetic_folder(root / "cand", "org/cand", {"gsm8k": [i % 10 < 8 for i in range(N)],
                                                       "chartqa": [i % 10 < 5 for i in range(N)]})
    return root


def _gate(root: Path, scope: str, out: Path) -> tuple[int, str]:
    contract = root / f"c_{scope}.yaml"
    contract.write_text(CONTRACT.replace("SCOPE", scope))
    result = runner.invoke(app, ["gate", str(contract), "--candidate", str(root / "cand"), "--out", str(out)])
    return result.exit_code, result.output


def test_feature_scope_releases_and_flags_in_every_output(folders: Path, tmp_path: Path) -> None:
    started = str(time.time() - 5)
    code, out = _gate(folders, "feature", tmp_path)
    assert code == 0, out
    assert "decision: RELEASE" in out and "capability charts  feature  BLOCK [block_for_charts]" in out
    decision = json.loads((tmp_path / "decision.json").read_text())
    assert decision["decision"] == "release" and decision["flags"] == ["block_for_charts"]
    caps = {c["name"]: c for c in decision["capabilities"]}
    assert caps["charts"]["decision"] == "block" and caps["math"]["decision"] == "release"
    assert caps["math"]["gates"] == ["gsm8k/exact_match/flexible-extract"]
    assert "block_for_charts" in (tmp_path / "report.md").read_text()
    assert "block_for_charts" in (tmp_path / "report.html").read_text()
    assert "## Capabilities" in (tmp_path / "summary.md").read_text()
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    case = next(c for c in suite.iter("testcase") if c.get("name") == "capability charts")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "block_for_charts"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["flags"] == "block_for_charts" and props["decision"] == "release"
    output = tmp_path / "gh_output"
    run_report({"RLGATE_CI_OUT": str(tmp_path), "RLGATE_CI_CHECK_EXIT": "0", "RLGATE_CI_STARTED": started,
                "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary_gh.md")}, io.StringIO())
    values = parse_env_file(output)
    assert values["decision"] == "release" and values["flags"] == "block_for_charts"
    assert json.loads(values["capabilities"]) == {"charts": "block", "math": "release"}


def test_model_scope_blocks_as_today(folders: Path, tmp_path: Path) -> None:
    code, out = _gate(folders, "model", tmp_path)
    assert code == 1 and "decision: BLOCK" in out
    decision = json.loads((tmp_path / "decision.json").read_text())
    assert decision["flags"] == [] and {c["name"]: c["decision"] for c in decision["capabilities"]} == {
        "math": "release", "charts": "block"}


def test_capability_naming_an_unknown_task_is_bad_input(folders: Path, tmp_path: Path) -> None:
    contract = folders / "c_bad.yaml"
    contract.write_text(CONTRACT.replace("SCOPE", "feature").replace("tasks: [chartqa]", "tasks: [chartqa, docvqa]"))
    result = runner.invoke(app, ["gate", str(contract), "--candidate", str(folders / "cand"), "--out", str(tmp_path)])
    assert result.exit_code == 2 and "docvqa" in result.output and "capabilities" in result.output
