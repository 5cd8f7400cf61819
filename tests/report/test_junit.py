"""junit.xml must never show green where decision.json does not release: CI consumers read only failure/error."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from rlgate.engine.models import Decision, GateVerdict
from rlgate.report.builder import build_report
from rlgate.report.junit import render_junit


def passing_gate_that_decides() -> Decision:
    """A monitor note that passes, but that the contract's policy (`decision: {monitor_info: research_only}`)
    turns into research_only: the gate's verdict is pass, its effect is what decided."""
    gates = [
        GateVerdict(name="gsm8k gain", kind="primary", metric="gsm8k/exact_match/flexible-extract", verdict="pass",
                    outcome="pass", effect="release", baseline=0.5, candidate=0.75, delta=0.25, n=8,
                    reason="pass: improvement +25.00 pts"),
        GateVerdict(name="monitor:kl_spike", kind="monitor", metric="kl_spike", verdict="pass",
                    outcome="monitor_info", effect="research_only", reason="[kl] one KL spike at step 120"),
    ]
    return Decision(decision="research_only", summary="research_only: monitor gate monitor:kl_spike pass",
                    deciding_gates=["monitor:kl_spike"], gates=gates, contract="c", alpha=0.05, seed=0)


def test_a_passing_gate_whose_effect_is_not_release_is_a_junit_failure() -> None:
    root = ET.fromstring(render_junit(build_report(passing_gate_that_decides())))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and root.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["gsm8k gain"].find("failure") is None
    failure = cases["monitor:kl_spike"].find("failure")
    assert failure is not None and failure.get("type") == "monitor_info"
    assert "research_only" in (failure.get("message") or "")



def test_thresholds_are_in_the_units_of_the_figures_beside_them() -> None:
    gates = [GateVerdict(name="hard", kind="hard", metric="gsm8k/answer_parse_failure_rate", verdict="fail",
                         outcome="hard_fail", effect="block", candidate=0.086, n=2000, threshold={"max": 0.05},
                         reason="fail: candidate 8.60% > max 5.00%"),
             GateVerdict(name="primary", kind="primary", metric="gsm8k/exact_match/flexible-extract", verdict="pass",
                         outcome="pass", effect="release", baseline=0.36, candidate=0.42, delta=0.06, n=2000,
                         threshold={"min_delta": 0.02, "max_drop": 0.0}, reason="pass"),
             GateVerdict(name="length", kind="diagnostic", metric="gsm8k/response_length_mean", verdict="pass",
                         outcome="pass", effect="release", baseline=200.0, candidate=210.0, delta=10.0, n=2000,
                         threshold={"max_relative_increase": 0.3}, reason="pass"),
             GateVerdict(name="cap", kind="hard", metric="gsm8k/response_length_mean", verdict="pass",
                         outcome="pass", effect="release", candidate=1024.3, n=2000, threshold={"max": 1024.5},
                         reason="pass")]
    decision = Decision(decision="block", summary="block", deciding_gates=["hard"], gates=gates, contract="c",
                        alpha=0.05, seed=0)
    text = render_junit(build_report(decision))
    assert "threshold: max=5.0%" in text and "candidate: 8.6%" in text  # not max=0.05 beside 8.6%
    assert "threshold: min_delta=+2.0 pp, max_drop=0.0 pp" in text
    assert "threshold: max_relative_increase=0.3" in text  # a ratio, not a metric value
    assert "threshold: max=1024.5" in text  # an unbounded bound keeps its precision


def test_a_capability_name_with_control_characters_keeps_the_xml_parseable() -> None:
    """The flag `block_for_<capability>` comes from a contract key ("tool\\x01use" is valid YAML)."""
    from rlgate.engine.models import CapabilityVerdict

    gate = GateVerdict(name="x", kind="regression", metric="t/acc", verdict="fail", outcome="regression_fail",
                       effect="block", reason="dropped")
    cap = CapabilityVerdict(name="tool\x01use", scope="feature", tasks=["t"], decision="block", gates=["x"],
                            flag="block_for_tool\x01use", summary="blocked")
    decision = Decision(decision="release", summary="release", gates=[gate], capabilities=[cap],
                        flags=[cap.flag or ""], contract="c", alpha=0.05, seed=0)
    root = ET.fromstring(render_junit(build_report(decision)).encode("utf-8"))
    failure = next(c for c in root.iter("testcase") if "capability" in (c.get("name") or "")).find("failure")
    assert failure is not None and failure.get("type") == "block_for_tool\\u0001use"
    assert root.find("testsuite/properties/property[@name='flags']") is not None


def test_decision_warnings_are_in_the_suite_system_err() -> None:
    decision = passing_gate_that_decides().model_copy(update={"warnings": [
        "no baseline results: comparative gates are nodata", "candidate gsm8k: 3 corrupt documents \x07"]})
    root = ET.fromstring(render_junit(build_report(decision)).encode("utf-8"))
    err = root.find("testsuite/system-err")
    assert err is not None and err.text is not None
    assert err.text.splitlines() == ["warning: no baseline results: comparative gates are nodata",
                                     "warning: candidate gsm8k: 3 corrupt documents \\u0007"]
    assert list(root.find("testsuite") or [])[-1] is err  # after the testcases, as the JUnit schema orders them


def test_a_one_run_gate_shows_the_baseline_value_report_md_shows(tmp_path: Path) -> None:
    from rlgate.report.markdown import render_markdown
    from tests.report import factories as f

    hard = GateVerdict(name="floor", kind="hard", metric="gsm8k/exact_match/flexible-extract", verdict="pass",
                       outcome="pass", effect="release", candidate=0.625, n=8, threshold={"min": 0.1}, reason="pass")
    decision = Decision(decision="release", summary="release", gates=[hard], contract="c", alpha=0.05, seed=0)
    model = build_report(decision, contract=f.contract(tmp_path), baseline=f.run("b", [True, False]),
                         candidate=f.run("c", [True, True, True, True, True, False, False, False]))
    assert "50.0% → 62.5%" in render_markdown(model)
    assert "baseline -&gt; candidate: 50.0% → 62.5%" in render_junit(model)
