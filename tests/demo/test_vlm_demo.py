"""`rlgate demo --vlm` end to end, offline: charts, two tiny LLaVA checkpoints, live hf-multimodal runs, the gate.

Small settings keep it to a minute or two on two cores; the decision is measured, not assumed: the
candidate was trained to answer chart questions in prose, which lm-eval's chartqa scorer cannot read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("lm_eval")
pytest.importorskip("torch")


def test_vlm_demo_gates_a_chart_regression(tmp_path: Path) -> None:
    from rlgate.demo.vlm import VlmDemoSettings, run_vlm_demo

    settings = VlmDemoSettings(mathvista=8)  # the demo's sizes otherwise: smaller suites cannot show the drop
    paths, _result = run_vlm_demo(tmp_path / "demo", settings=settings, log=lambda _: None)
    decision = json.loads((paths.root / "report" / "decision.json").read_text())
    gates = {g["metric"]: g for g in decision["gates"] if g.get("metric")}
    chart = gates["chartqa/relaxed_accuracy/none"]
    assert chart["candidate"] == 0.0 and chart["baseline"] > 0.0 and chart["verdict"] == "fail"
    assert decision["decision"] == "block"
    assert gates["chartqa/answer_parse_failure_rate/none"]["candidate"] == 1.0
    html = (paths.root / "report" / "report.html").read_text()
    assert "chartqa::human" in html and "mmmu_val::science" in html  # per-ability radar axes
    assert "chart_no_parseable_answer" in (paths.root / "report" / "report.md").read_text()
    manifest = json.loads(next((paths.root / "report" / "candidate").rglob("run_manifest.json")).read_text())
    assert manifest["protocol"]["image"]["image_resolution"] == 320 and manifest["backend"] == "hf-multimodal"
