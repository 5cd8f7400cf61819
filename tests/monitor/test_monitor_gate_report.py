"""Findings as gate verdicts, the report model on disk, and the SVG plots."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from monitor_helpers import make_log, ramp

from rlgate.contract.models import DecisionPolicy
from rlgate.monitor.api import run_monitor, write_report
from rlgate.monitor.findings import Finding
from rlgate.monitor.gate import monitor_gates
from rlgate.monitor.plots import plots_for, svg_plot
from rlgate.monitor.policy import MonitorPolicy
from rlgate.monitor.report import MonitorReport, build_report
from rlgate.monitor.rules import evaluate
from rlgate.report.sections import monitor_view


def _finding(rule: str, severity: str, domain: str = "algorithm") -> Finding:
    return Finding(rule=rule, domain=domain, severity=severity, message=f"{rule} happened", step_start=1, step_end=5,
                   values={"x": 1.5, "label": "a"}, threshold={"max": 0.1, "mode": "auto"})


def _report(*findings: Finding) -> MonitorReport:
    log = make_log({"reward_mean": ramp(0.1, 0.5), "kl": ramp(0.01, 0.02)})
    return build_report("test", [(log, list(findings), evaluate(log, MonitorPolicy())[1])])


def test_severities_map_to_outcomes_and_policy_effects() -> None:
    report = _report(_finding("kl_spike", "info"), _finding("length_blowup", "warning", "reward"),
                     _finding("reward_hacking", "critical", "reward"))
    gates = monitor_gates(report, DecisionPolicy())
    summary = [(g.name, g.kind, g.verdict, g.outcome, g.effect) for g in gates]
    assert summary == [
        ("monitor:reward_hacking", "monitor", "fail", "monitor_critical", "block"),
        ("monitor:length_blowup", "monitor", "fail", "monitor_warning", "research_only"),
        ("monitor:kl_spike", "monitor", "pass", "monitor_info", "release"),
    ]
    assert gates[0].threshold == {"max": 0.1} and gates[0].details["domain"] == "reward"
    assert gates[0].reason.startswith("[reward]")
    assert report.diagnosis is not None and report.diagnosis.rule == "reward_hacking"


def test_no_failure_gives_one_passing_monitor_gate() -> None:
    gates = monitor_gates(_report(_finding("kl_spike", "info")))
    assert [(g.name, g.verdict, g.outcome) for g in gates] == [("monitor", "pass", "monitor_info"),
                                                               ("monitor:kl_spike", "pass", "monitor_info")]


def test_a_log_no_rule_can_check_is_nodata_not_a_pass(tmp_path: Path) -> None:
    """Reward and KL under keys no vocabulary knows (or a log with no steps, or read with the wrong --format):
    every metric rule is skipped, only non_finite runs on nothing; that is "could not check", never release."""
    renamed = tmp_path / "trainer_state.json"
    renamed.write_text(json.dumps({"log_history": [{"step": i, "rewards/acc/mean": 0.01 * i, "train_kl_div": 0.01}
                                                   for i in range(1, 60)]}))
    empty = tmp_path / "empty" / "trainer_state.json"
    empty.parent.mkdir()
    empty.write_text(json.dumps({"log_history": []}))
    for path in (renamed, empty):
        report = run_monitor([path])
        assert [log.path for log in report.unchecked] == [str(path)] and report.exit_code() == 2
        gates = monitor_gates(report, DecisionPolicy())
        assert [(g.name, g.verdict, g.outcome, g.effect) for g in gates] == [
            ("monitor:nodata", "nodata", "nodata", "block")]
        assert str(path) in gates[0].reason and "could not be checked" in gates[0].reason
        assert report.unchecked_logs == [str(path)]
        verdict = monitor_view(report.model_dump(mode="json")).children[0]
        assert verdict.kind == "verdict" and verdict.text.startswith("no finding in what could be checked")
        assert verdict.text.endswith(f"a finite value): {path}")
    mapped = run_monitor([renamed], metrics={"reward_mean": "rewards/acc/mean", "kl_ref": "train_kl_div"})
    assert mapped.unchecked == [] and monitor_gates(mapped)[0].verdict == "pass"


def test_unreadable_log_is_an_error_gate(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"step": 1, "data": {"critic/score/mean": 0.1}}\n{"step": 2, "da')
    report = run_monitor([path])
    assert report.exit_code() == 2
    gates = monitor_gates(report)
    assert (gates[0].name, gates[0].verdict, gates[0].outcome, gates[0].effect) == ("monitor:read", "error", "error",
                                                                                    "block")
    assert f"{path}:2" in gates[0].reason


def test_report_round_trips_through_json_with_non_finite_values(tmp_path: Path) -> None:
    reward = ramp(0.1, 0.5)
    reward[10] = np.inf
    log = make_log({"reward_mean": reward, "mystery/key": ramp(1, 2)})
    findings, statuses = evaluate(log, MonitorPolicy())
    report = build_report("test", [(log, findings, statuses)], plots=plots_for(log, findings))
    written = write_report(report, tmp_path / "out")
    again = MonitorReport.model_validate_json(written.read_text())
    assert again == report
    assert again.logs[0].unknown_keys == ["mystery/key"]
    assert again.logs[0].metrics[0].non_finite == 1 and again.severity == "critical"
    assert any(not r.evaluated and "no declared reward range" in (r.reason or "") for r in again.logs[0].rules)


def test_svg_is_small_self_contained_xml_and_keeps_spikes() -> None:
    n = 1_000_000
    values = np.full(n, 1.0)
    values[654_321] = 50.0
    values[700_000] = np.nan
    log = make_log({"grad_norm": values})
    series = log.get("grad_norm")
    finding = _finding("grad_norm_explosion", "warning", "infrastructure").model_copy(
        update={"step_start": 654_321, "step_end": 654_321, "metrics": ["grad_norm"]})
    svg = svg_plot(series, [finding], "grad_norm <&> test")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert len(svg) < 40_000
    assert "href" not in svg and "url(" not in svg and svg.count("http") == 1  # only the xmlns
    assert "&lt;&amp;&gt;" in svg  # titles are escaped
    assert "50" in svg  # the spike sets the top of the axis
    assert "stroke-dasharray" in svg  # the NaN step is marked
    assert "grad_norm_explosion happened" in svg


def test_plots_cover_key_curves_and_flagged_metrics() -> None:
    log = make_log({"reward_mean": ramp(0.1, 0.5), "kl_ref": ramp(0, 0.1), "val_score/a": ([0, 100], [0.1, 0.2]),
                    "aborted_ratio": np.full(200, 0.3)})
    findings, _ = evaluate(log, MonitorPolicy())
    plots = plots_for(log, findings)
    metrics = [p.metric for p in plots]
    assert metrics[0] == "aborted_ratio"  # the flagged curve first
    assert {"reward_mean", "val_score/a", "kl_ref"} <= set(metrics)
