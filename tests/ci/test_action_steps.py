"""The real action.yml, step by step, on precomputed rlgate outputs: summary, annotations, outputs, exit code.

The check step is replaced by a stub that reports rlgate's exit code and the out folder (the files
in it are written by the test); every other step runs exactly as in action.yml. The real check step
runs in test_action_demo.py.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ci_action_runner import ActionRun, run_action

from rlgate.engine.models import Decision, GateVerdict

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"
STUB_CHECK = ('printf "exit-code=%s\\nout=%s\\nstarted=%s\\n" "$STUB_EXIT" "$STUB_OUT" "$STUB_STARTED"'
              ' >> "$GITHUB_OUTPUT"')
TRICKY = "drop of 3.2% on 100%\nnext line: a,b ::error::forged"


def gate(name: str, kind: Any, verdict: Any, effect: Any, reason: str, metric: str, **numbers: Any) -> GateVerdict:
    outcome = "pass" if verdict == "pass" else f"{kind}_{verdict}"
    return GateVerdict(name=name, kind=kind, metric=metric, verdict=verdict, outcome=outcome, effect=effect,
                       reason=reason, **numbers)


PRIMARY = "aime24/pass@1"  # contracts/math_rlvr.yaml's primary gate
REGRESSION = "mmlu_pro/exact_match/custom-extract"


def decision_for(kind: str) -> Decision:
    gates = {
        "release": [
            gate("primary", "primary", "pass", "release", "gained 0.05 (CI above 0.02)", PRIMARY,
                 baseline=0.40, candidate=0.45, delta=0.05, ci=(0.03, 0.07), p_value=0.001),
            gate("mmlu_pro", "regression", "pass", "release", "no drop beyond 0.01", REGRESSION,
                 baseline=0.30, candidate=0.30, delta=0.0, ci=(-0.005, 0.006), p_value=0.9),
        ],
        "research_only": [
            gate("primary", "primary", "fail", "research_only", "gain 0.004 is below min_delta 0.02", PRIMARY,
                 baseline=0.40, candidate=0.404, delta=0.004, ci=(-0.01, 0.02), p_value=0.6),
            gate("mmlu_pro", "regression", "pass", "release", "no drop beyond 0.01", REGRESSION),
        ],
        "block": [
            gate("primary", "primary", "pass", "release", "gained 0.05", PRIMARY),
            gate("mmlu_pro", "regression", "fail", "block", TRICKY, REGRESSION,
                 baseline=0.30, candidate=0.268, delta=-0.032, ci=(-0.045, -0.02), p_value=0.0004),
            gate("ifeval", "regression", "nodata", "block", "no samples for ifeval", "ifeval/prompt_level_strict_acc"),
        ],
    }[kind]
    deciding = [g.name for g in gates if g.effect == kind and g.verdict != "pass"]
    return Decision(decision=kind, summary=f"{kind}: decided by {', '.join(deciding) or 'all gates passing'}",
                    deciding_gates=deciding, gates=gates, contract="math_rlvr", alpha=0.05, seed=0)


def write_outputs(out: Path, decision: Decision, report_md: str | None = "# rlgate report\n\nthe table\n") -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "decision.json").write_text(decision.model_dump_json(indent=2), encoding="utf-8")
    if report_md is not None:
        (out / "report.md").write_text(report_md, encoding="utf-8")
    (out / "report.html").write_text("<!doctype html><title>r</title>", encoding="utf-8")
    (out / "junit.xml").write_text("<testsuites/>", encoding="utf-8")


def run(tmp_path: Path, exit_code: int, inputs: dict[str, str] | None = None, started: float | None = None,
        ) -> ActionRun:
    workspace = tmp_path / "ws"
    (workspace / "contracts").mkdir(parents=True, exist_ok=True)
    contract = workspace / "contracts" / "math_rlvr.yaml"
    contract.write_text((REPO / "contracts" / "math_rlvr.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    given = {"contract": "contracts/math_rlvr.yaml", "checkpoint": "/ckpt/step-1", "setup-python": "false",
             "install": "false", "python": sys.executable, "out": str(tmp_path / "out")}
    given.update(inputs or {})
    env = {"STUB_EXIT": str(exit_code), "STUB_OUT": str(tmp_path / "out"),
           "STUB_STARTED": f"{started if started is not None else time.time() - 60:.3f}",
           "GITHUB_SERVER_URL": "https://github.example", "GITHUB_REPOSITORY": "acme/llm", "GITHUB_RUN_ID": "77"}
    return run_action(ACTION, given, workspace=workspace, runner_temp=tmp_path / "runner_temp", env=env,
                      stub={"check": STUB_CHECK})


def test_release_writes_summary_notice_outputs_and_exits_0(tmp_path: Path) -> None:
    write_outputs(tmp_path / "out", decision_for("release"))
    result = run(tmp_path, 0)
    assert result.exit_code == 0, result.log
    assert result.outputs["decision"] == "release"
    assert result.outputs["report-path"] == str(tmp_path / "out" / "report.html")
    assert result.outputs["out"] == str(tmp_path / "out")
    assert result.summary.startswith("# rlgate report\n\nthe table\n")
    assert result.summary.endswith("\n\nArtifact **rlgate-report** of [this run](https://github.example/acme/llm/"
                                   "actions/runs/77): report.html, report.md, decision.json, junit.xml.\n")
    assert [(a.level, a.properties.get("title")) for a in result.annotations] == [
        ("notice", "rlgate decision: release")]
    upload = result.step("Upload the report")
    assert upload.kind == "uses" and upload.uses == "actions/upload-artifact@v4"
    assert upload.with_["name"] == "rlgate-report"
    paths = [Path(p) for p in upload.with_["path"].split()]
    assert {p.name for p in paths} == {"report.html", "report.md", "decision.json", "junit.xml"}
    assert all(p.is_file() for p in paths)
    assert result.step("Set up Python").kind == "skipped" and result.step("Install rlgate").kind == "skipped"


def test_research_only_warns_per_failed_gate_and_exit_code_is_configurable(tmp_path: Path) -> None:
    write_outputs(tmp_path / "out", decision_for("research_only"))
    result = run(tmp_path, 3)
    assert result.exit_code == 0, result.log
    assert result.outputs["decision"] == "research_only"
    warnings = [a for a in result.annotations if a.level == "warning"]
    assert [a.properties["title"] for a in warnings] == [
        "rlgate decision: research_only", f"rlgate primary gate {PRIMARY}: fail (research_only)"]
    gate_warning = warnings[1]
    assert gate_warning.message == ("gain 0.004 is below min_delta 0.02 "
                                    "(baseline 0.4 -> candidate 0.404; delta +0.004 [-0.01, +0.02]; p=0.6)")
    assert gate_warning.properties["file"] == "contracts/math_rlvr.yaml"
    contract_lines = (REPO / "contracts" / "math_rlvr.yaml").read_text(encoding="utf-8").splitlines()
    assert PRIMARY in contract_lines[int(gate_warning.properties["line"]) - 1]
    assert not [a for a in result.annotations if a.level == "error"]

    failing = run(tmp_path, 3, {"research-only-exit-code": "3"})
    assert failing.exit_code == 3
    assert "decision research_only -> exit code 3" in failing.log


def test_block_errors_per_failed_gate_escaped_uploads_and_exits_1(tmp_path: Path) -> None:
    write_outputs(tmp_path / "out", decision_for("block"))
    result = run(tmp_path, 1, {"research-only-exit-code": "0"})
    assert result.exit_code == 1
    assert result.outputs["decision"] == "block"
    errors = [a for a in result.annotations if a.level == "error"]
    assert [a.properties["title"] for a in errors] == [
        "rlgate decision: block", f"rlgate regression gate {REGRESSION}: fail (block)",
        "rlgate regression gate ifeval/prompt_level_strict_acc: nodata (block)"]
    # Escaped on the wire (one physical line each, no forged command), exact after unescaping.
    raw = [line for line in result.log.splitlines() if "title=rlgate regression gate mmlu_pro/" in line]
    assert len(raw) == 1 and "%0A" in raw[0] and "%25" in raw[0]
    assert errors[1].message.startswith(f"{TRICKY} (baseline 0.3 -> candidate 0.268")
    assert not any(line.startswith("::error::forged") for line in result.log.splitlines())
    # The upload ran before the failing decision step, so a block's evidence is kept.
    names = [s.name for s in result.steps if s.ran]
    assert names.index("Upload the report") < names.index("Decision")
    assert result.step("Decision").rc == 1


def test_bad_input_from_rlgate_means_error_decision_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    result = run(tmp_path, 2)
    assert result.exit_code == 2
    assert result.outputs["decision"] == "error"
    assert result.outputs["report-path"] == ""
    assert "## rlgate decision: **error**" in result.summary
    assert "exited with 2 (bad input or usage)" in result.summary
    assert [a.properties["title"] for a in result.annotations] == ["rlgate: no decision"]


def test_stale_or_contradicting_decision_is_never_trusted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_outputs(out, decision_for("release"))
    old = time.time() - 3600
    os.utime(out / "decision.json", (old, old))
    stale = run(tmp_path, 0, started=time.time())
    assert (stale.outputs["decision"], stale.exit_code) == ("error", 2)
    assert "older than this run" in stale.annotations[0].message

    write_outputs(out, decision_for("release"))
    contradicting = run(tmp_path, 1)
    assert (contradicting.outputs["decision"], contradicting.exit_code) == ("error", 2)
    assert "exited with 1 but decision.json says 'release'" in contradicting.annotations[0].message


def test_without_report_md_the_summary_falls_back_to_the_decision(tmp_path: Path) -> None:
    write_outputs(tmp_path / "out", decision_for("block"), report_md=None)
    result = run(tmp_path, 1, {"upload-artifact": "false"})
    assert result.exit_code == 1
    assert result.summary.startswith("## rlgate decision: **block**\n")
    # the summary file is Markdown, not workflow commands: only what GitHub would render is escaped
    expected = ("**mmlu_pro** (regression, fail → block): "
                "drop of 3.2% on 100% ⏎ next line: a,b ::error::forged")
    assert expected in result.summary
    assert "artifact" not in result.summary.lower()
    assert result.step("Upload the report").kind == "skipped"


def test_bad_research_only_exit_code_is_bad_input(tmp_path: Path) -> None:
    write_outputs(tmp_path / "out", decision_for("research_only"))
    result = run(tmp_path, 3, {"research-only-exit-code": "maybe"})
    assert result.exit_code == 2
    assert any("research-only-exit-code must be an integer" in a.message for a in result.annotations)


def _fake_python(tmp_path: Path) -> Path:
    """A `python` that records `-m pip` calls and runs everything else with the real interpreter."""
    log = tmp_path / "pip.log"
    shim = tmp_path / "bin" / "python"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/usr/bin/env bash\nif [ "$1 $2" = "-m pip" ]; then printf "%s\\n" "$@" > "{log}"; exit 0; fi\n'
                    f'exec "{sys.executable}" "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return shim


def test_install_step_installs_the_action_copy_with_extras(tmp_path: Path) -> None:
    write_outputs(tmp_path / "out", decision_for("release"))
    shim = _fake_python(tmp_path)
    result = run(tmp_path, 0, {"install": "true", "python": str(shim), "extras": "vllm,ifeval"})
    assert result.step("Install rlgate").rc == 0, result.log
    args = (tmp_path / "pip.log").read_text(encoding="utf-8").splitlines()
    assert args == ["-m", "pip", "install", "--disable-pip-version-check", f"{REPO}[vllm,ifeval]"]
    assert result.exit_code == 0


@pytest.mark.parametrize("extras", ["vllm]; touch PWNED; echo [", "hf ifeval", "$(touch PWNED)"])
def test_install_step_rejects_extras_that_are_not_names(tmp_path: Path, extras: str) -> None:
    shim = _fake_python(tmp_path)
    result = run(tmp_path, 0, {"install": "true", "python": str(shim), "extras": extras})
    assert result.step("Install rlgate").rc == 2
    assert result.exit_code == 2
    assert not (tmp_path / "pip.log").exists()
    assert not (tmp_path / "ws" / "PWNED").exists()
    assert result.annotations[0].properties["title"] == "rlgate: bad input"
    assert result.step("Decision").kind == "skipped"


def test_summary_warns_when_the_history_lives_and_dies_with_the_job(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RLGATE_HISTORY", raising=False)  # the workflow passes an empty one when neither is set
    per_job = decision_for("release").model_copy(update={
        "extensions": {"history": str(tmp_path / "ws" / ".rlgate" / "history.sqlite")}})
    write_outputs(tmp_path / "out", per_job)
    summary = run(tmp_path, 0).summary
    assert summary.startswith("> **Warning: the checkpoint history is per-job.**")
    assert "RLGATE_HISTORY" in summary and "docs/ci.md" in summary


def test_no_history_warning_with_a_shared_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RLGATE_HISTORY", raising=False)
    shared = decision_for("release").model_copy(update={
        "extensions": {"history": "postgresql://gate:***@db.internal:5432/rlgate"}})
    write_outputs(tmp_path / "out", shared)
    assert run(tmp_path, 0).summary.startswith("# rlgate report")
    persistent = decision_for("release").model_copy(update={"extensions": {"history": "/srv/rlgate/history.sqlite"}})
    write_outputs(tmp_path / "out", persistent)
    assert run(tmp_path, 0).summary.startswith("# rlgate report")
