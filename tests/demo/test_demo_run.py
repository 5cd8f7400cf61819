"""The demo pipeline end to end at toy size: build, check, reports; a second run reuses everything.

The real demo's settings train for a few minutes; here the same code runs with a handful of steps
and documents, which checks the plumbing (not the size of the candidate's gain: the README's
`rlgate demo` run shows that).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlgate.demo.build import DemoSettings

pytest.importorskip("lm_eval")
pytest.importorskip("torch")

TOY = DemoSettings(gsm8k_test=12, gsm8k_train=120, mmlu_per_category=1, ifeval_test=10, base_steps=6, candidate_steps=6,
                 batch_size=8)


class Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def task_started(self, task: str, total: int, cached: int) -> None:
        self.lines.append(f"start {task} {total} {cached}")

    def advanced(self, task: str, count: int) -> None:
        return None

    def task_finished(self, task: str) -> None:
        return None

    def message(self, text: str) -> None:
        self.lines.append(text)


def test_demo_builds_checks_and_reuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlgate.demo.run import run_demo

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(name, "1")
    logs: list[str] = []
    paths, result = run_demo(tmp_path / "demo", settings=TOY, progress=Recorder(), log=logs.append)
    assert any("training the candidate" in line for line in logs)
    assert (paths.baseline / "model.safetensors").exists() and (paths.candidate / "model.safetensors").exists()
    assert result.decision.decision in ("release", "block", "research_only")
    gated = [g.metric for g in result.decision.gates]
    for metric in ("gsm8k/exact_match/flexible-extract", "mmlu_pro/exact_match/custom-extract",
                   "ifeval/prompt_level_strict_acc"):
        assert any(m.startswith(metric) for m in gated), gated
    for kind in ("html", "markdown", "decision", "junit"):
        assert result.reports[kind].exists()
    decision = json.loads(result.reports["decision"].read_text())
    assert decision["contract"] == "demo" and decision["gates"]
    assert result.baseline is not None and result.baseline.manifest.role == "baseline"
    assert result.candidate.manifest.checkpoint_fingerprint != result.baseline.manifest.checkpoint_fingerprint
    assert result.baseline.model_loaded and result.candidate.model_loaded

    logs.clear()
    recorder = Recorder()
    _, again = run_demo(tmp_path / "demo", settings=TOY, progress=recorder, log=logs.append)
    assert any("reusing the demo checkpoints" in line for line in logs)
    assert again.baseline is not None and not again.baseline.model_loaded and not again.candidate.model_loaded
    assert again.decision.decision == result.decision.decision
    assert [g.candidate for g in again.decision.gates] == [g.candidate for g in result.decision.gates]
    assert "start baseline gsm8k 12 12" in recorder.lines
