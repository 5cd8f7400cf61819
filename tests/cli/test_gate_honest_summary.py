"""Decision honesty on the real Abel GSM8K folders (issue 33): the summary names every gate that did not pass
and the policy line (two `use:` hops away) that mapped it to release; a contract whose only gate is a
diagnostic never releases, and `rlgate validate` says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fixtures.lmeval_builders import cached_folder
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.engine.summary import summary_clauses

pytest.importorskip("lm_eval")
CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
runner = CliRunner()


@pytest.fixture(scope="module")
def abel(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    root = tmp_path_factory.getbasetemp()
    return {"13b": cached_folder(root, "gsm8k_abel", shared_data, "13b"),
            "7b_broken": cached_folder(root, "gsm8k_abel", shared_data, "7b", broken=0.3)}


def _contract(folder: Path, gates: dict[str, object]) -> Path:
    (folder / "gsm8k_suite.yaml").write_text((CONTRACTS / "gsm8k_suite.yaml").read_text())
    contract = {"schema_version": 1, "name": "abel_honest", "baseline": {"checkpoint": "GAIR/Abel-13B-001"},
                "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["gsm8k_suite.yaml"], "gates": gates}
    path = folder / "contract.yaml"
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    return path


def _gate(contract: Path, abel: dict[str, Path], out: Path) -> tuple[int, str, dict[str, object]]:
    result = runner.invoke(app, ["gate", str(contract), "--candidate", str(abel["7b_broken"]), "--baseline",
                                 str(abel["13b"]), "--out", str(out)])
    return result.exit_code, result.output, json.loads((out / "decision.json").read_text())


def test_policy_two_use_hops_away_that_releases_failures_is_named_in_the_summary(
        abel: dict[str, Path], tmp_path: Path) -> None:
    gates = tmp_path / "gates"
    gates.mkdir()
    (gates / "lenient.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "lenient",
        "decision": {"regression_fail": "release", "primary_regression": "release"}}))
    (gates / "team.yaml").write_text(yaml.safe_dump({"schema_version": 1, "name": "team", "use": "lenient.yaml"}))
    contract = _contract(tmp_path, {"use": "gates/team.yaml",
                                    "primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.02},
                                    "regression": [{"metric": "gsm8k/exact_match/strict-match", "max_drop": 0.01}]})
    code, out, decision = _gate(contract, abel, tmp_path / "out")
    verdicts = {g["kind"]: g for g in decision["gates"]}  # type: ignore[attr-defined]
    assert verdicts["primary"]["verdict"] == verdicts["regression"]["verdict"] == "fail"
    assert verdicts["primary"]["delta"] < -0.1  # a double-digit drop
    assert decision["decision"] == "release" and code == 0  # what the policy asks for ...
    summary = str(decision["summary"])
    assert "all 2 gates passed" not in summary and "0 of 2 gates passed" in summary  # ... but said plainly
    lines = {key: f"gates/lenient.yaml:{line} decision.{key} (via gates/team.yaml)"
             for key, line in (("primary_regression", 2), ("regression_fail", 3))}  # the file two hops away
    for key, line in lines.items():
        assert f"[{key} -> release: {line}]" in summary
    assert {g["outcome"]: g["policy_line"] for g in decision["gates"]} == lines  # type: ignore[index]
    assert f"[regression_fail -> release: {lines['regression_fail']}]" in out  # the terminal's decision line
    assert "FAIL (regression_fail -> release)" in out and "FAIL (primary_regression -> release)" in out
    shown_md = (tmp_path / "out" / "summary.md").read_text()
    unescaped = shown_md.replace("\\", "").replace("&lt;", "<").replace("&gt;", ">")
    assert all(f"- {clause}\n" in unescaped for clause in summary_clauses(summary.split(": ", 1)[1]))  # escaped, whole
    first_screen = (tmp_path / "out" / "report.md").read_text().split("### What changed")[0]
    for key, line in lines.items():  # the report's first screen: the summary and each gate's line
        assert f"{key.replace('_', ' ')} → release by {line}" in first_screen
    html = (tmp_path / "out" / "report.html").read_text()
    assert f"regression fail → release by {lines['regression_fail']}" in html
    shown = runner.invoke(app, ["validate", str(contract)]).output
    assert f"regression_fail -> release  ({lines['regression_fail']})" in shown


def test_a_block_names_every_gate_that_did_not_pass_with_the_policy_line(abel: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    """The policy lets regression failures through but not the primary's drop: the decision is block, and the
    summary still names the regression gate the policy mapped to release, with its line."""
    gates = tmp_path / "gates"
    gates.mkdir()
    (gates / "lenient.yaml").write_text(yaml.safe_dump({"schema_version": 1, "name": "lenient",
                                                        "decision": {"regression_fail": "release"}}))
    (gates / "team.yaml").write_text(yaml.safe_dump({"schema_version": 1, "name": "team", "use": "lenient.yaml"}))
    contract = _contract(tmp_path, {"use": "gates/team.yaml",
                                    "primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.02},
                                    "regression": [{"metric": "gsm8k/exact_match/strict-match", "max_drop": 0.01}]})
    code, _, decision = _gate(contract, abel, tmp_path / "out")
    assert decision["decision"] == "block" and code != 0
    summary = str(decision["summary"])
    assert summary.startswith("block: primary gate gsm8k/exact_match/flexible-extract fail [primary_regression]")
    assert ("the decision policy maps it to release: regression gate gsm8k/exact_match/strict-match fail "
            "[regression_fail -> release: gates/lenient.yaml:2 decision.regression_fail (via gates/team.yaml)]"
            in summary)


def test_a_diagnostic_only_contract_never_releases_a_broken_candidate(abel: dict[str, Path], tmp_path: Path) -> None:
    contract = _contract(tmp_path, {"diagnostics": [{"metric": "gsm8k/response_length_mean",
                                                     "max_relative_increase": 5.0}]})
    code, _, decision = _gate(contract, abel, tmp_path / "out")
    [gate] = decision["gates"]  # type: ignore[misc]
    assert gate["verdict"] == "pass"  # the length is fine; 30 % of the answers have no number in them
    assert decision["decision"] == "research_only" and code != 0
    assert "no primary, hard or regression gate" in str(decision["summary"])
    shown = runner.invoke(app, ["validate", str(contract)])
    assert shown.exit_code == 0 and "at most research_only" in shown.output
