"""`rlgate demo --capability` end to end, offline: vendored AIME / MATH-500 / HumanEval+ / MBPP+ documents, two tiny
checkpoints, live hf runs with n responses at temperature 0.6, model code in the sandbox, the gate and badcases.

The candidate was trained on the right answers and the baseline on wrong ones and on programs that pass only the
examples the prompt shows; what they generate is measured by lm-eval's scorers, not assumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")
pytest.importorskip("torch")
pytest.importorskip("math_verify", reason="minerva_math500 needs rlgate's math extra")


def test_capability_demo_gates_math_and_code_on_cpu(tmp_path: Path) -> None:
    from rlgate.demo.capability import run_capability_demo
    from rlgate.sandbox import SandboxUnavailable, available

    try:
        available()
    except SandboxUnavailable as exc:  # pragma: no cover - machines without namespaces
        pytest.skip(f"no sandbox on this machine: {exc}")
    paths, result = run_capability_demo(tmp_path / "demo", log=lambda _: None)
    decision = json.loads((paths.root / "report" / "decision.json").read_text())
    gates = {g["metric"]: g for g in decision["gates"]}
    primary = gates["aime24/pass@1/none"]
    assert primary["n"] == 5 and primary["candidate"] > primary["baseline"]
    assert gates["humaneval_plus/pass@1/create_test"]["candidate"] > gates["humaneval_plus/pass@1/create_test"][
        "baseline"]
    assert any("too small to show" in w for w in decision["warnings"])
    for role in ("baseline", "candidate"):
        folder = next((paths.root / "report" / role).rglob("per_response_humaneval_plus_*.json"))
        checks = json.loads(folder.read_text())["filters"]["create_test"]
        assert len(checks) == 3 and all(len(c["correct"]) == 4 and c["code"] for c in checks.values())
    assert result.decision.decision in ("release", "research_only", "block")
