"""junit.xml must never show green where decision.json does not release: CI consumers read only failure/error."""

from __future__ import annotations

import xml.etree.ElementTree as ET

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

