"""Figures the reports print: rounding must never hide a drop, a violation, or a sign."""

from __future__ import annotations

from rlgate.engine.models import GateVerdict
from rlgate.report import fmt
from rlgate.report.builder import build_report
from rlgate.report.junit import render_junit
from rlgate.report.markdown import render_markdown


def test_a_small_nonzero_figure_is_never_printed_as_zero() -> None:
    assert fmt.delta(-0.0004, True) == "-0.04 pp"  # a 0.04-point drop, not "-0.0 pp"
    assert fmt.delta(0.00004, True) == "+0.004 pp"
    assert fmt.value(0.00001, True) == "0.001%"  # one violation in 100,000 is not "0.0%"
    assert fmt.value(0.99996, True) == "99.996%"  # nor "100.0%"
    assert fmt.interval((-0.0009, -0.00001), True) == "[-0.1, -0.001]"
    assert fmt.magnitude(0.0004, True) == "0.04 pp"
    assert (fmt.value(1e-9, True), fmt.delta(5.5e-17, True), fmt.delta(-1e-12, True)) == ("0.0%", "+0.0 pp", "-0.0 pp")
    # ordinary figures keep one decimal, exact zeros and bounds stay as they are
    assert (fmt.value(0.3595, True), fmt.value(0.0, True), fmt.value(1.0, True)) == ("35.9%", "0.0%", "100.0%")
    assert (fmt.delta(0.063, True), fmt.delta(0.0, True)) == ("+6.3 pp", "+0.0 pp")


def test_a_failed_hard_gate_shows_the_value_that_broke_its_bound() -> None:
    from rlgate.engine.models import Decision

    gate = GateVerdict(name="no unsafe calls", kind="hard", metric="agent/unsafe_call_rate", verdict="fail",
                       outcome="hard_fail", effect="block", candidate=0.00001, n=100_000, threshold={"max": 0.0},
                       fraction=True, reason="fail: candidate 0.00% > max 0.00%")
    decision = Decision(decision="block", summary="block", deciding_gates=[gate.name], gates=[gate], contract="c",
                        alpha=0.05, seed=0)
    model = build_report(decision)
    assert "0.001% " in render_markdown(model) and "max 0.0%" in render_markdown(model)
    assert "candidate: 0.001%" in render_junit(model)
