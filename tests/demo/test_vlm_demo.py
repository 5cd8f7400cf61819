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


def test_vlm_demo_scopes_a_chart_regression_to_chart_tasks(tmp_path: Path) -> None:
    from rlgate.demo.vlm import VlmDemoSettings, run_vlm_demo

    settings = VlmDemoSettings(mathvista=8)  # the demo's sizes otherwise: smaller suites cannot show the drop
    paths, _result = run_vlm_demo(tmp_path / "demo", settings=settings, log=lambda _: None)
    decision = json.loads((paths.root / "report" / "decision.json").read_text())
    gates = {g["metric"]: g for g in decision["gates"] if g.get("metric")}
    chart = gates["chartqa/relaxed_accuracy/none"]
    assert chart["candidate"] == 0.0 and chart["baseline"] > 0.0 and chart["verdict"] == "fail"
    # scoped decision: charts are `scope: feature` in the demo contract, so the chart regression blocks chart
    # tasks only; the global decision is left to the primary (MMMU) and the reasoning capability
    assert decision["flags"] == ["block_for_charts"] and decision["decision"] != "block"
    caps = {c["name"]: c for c in decision["capabilities"]}
    assert caps["charts"]["decision"] == "block" and caps["charts"]["scope"] == "feature"
    assert "chartqa/relaxed_accuracy" in caps["charts"]["deciding_gates"]
    assert caps["reasoning"]["decision"] == decision["decision"]  # no chart gate reaches the global decision
    for name in ("report.md", "report.html", "junit.xml"):
        assert "block_for_charts" in (paths.root / "report" / name).read_text(), name
    assert gates["chartqa/answer_parse_failure_rate/none"]["candidate"] == 1.0
    html = (paths.root / "report" / "report.html").read_text()
    assert "chartqa::human" in html and "mmmu_val::science" in html  # per-ability radar axes
    assert "chart_no_parseable_answer" in (paths.root / "report" / "report.md").read_text()
    manifest = json.loads(next((paths.root / "report" / "candidate").rglob("run_manifest.json")).read_text())
    assert manifest["protocol"]["image"]["image_resolution"] == 320 and manifest["backend"] == "hf-multimodal"
