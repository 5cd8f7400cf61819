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


def _near(**kw: object) -> GateVerdict:
    """A primary gate whose figures sit within rounding of their thresholds."""
    base: dict = dict(name="acc", kind="primary", metric="gsm8k/accuracy", verdict="fail", outcome="primary_fail",
                      effect="research_only", baseline=0.5, candidate=0.53, delta=0.03, ci=(0.0196, 0.04),
                      ci_level=0.95, p_value=0.0504, mde=0.0204, threshold={"min_delta": 0.02, "max_drop": 0.01},
                      fraction=True, reason="fail: lower bound +1.96 pts < min_delta +2.00 pts")
    return GateVerdict(**{**base, **kw})


def test_a_lower_bound_just_under_min_delta_reads_under_it() -> None:
    assert fmt.interval((0.0196, 0.04), True, [0.02]) == "[+1.96, +4.0]"  # was "[+2.0, +4.0]" beside "+2.0 pp"
    assert fmt.interval((0.0204, 0.04), True, [0.02]) == "[+2.04, +4.0]"
    assert fmt.interval((0.0196, 0.04), True) == "[+2.0, +4.0]"  # no threshold: as ever
    assert fmt.interval((0.1, 0.2), True, [0.02]) == "[+10.0, +20.0]"
    assert fmt.delta(-0.0099996, True, [-0.01]) == "-0.99996 pp"


def test_a_value_just_over_a_hard_max_reads_over_it() -> None:
    assert fmt.value(0.05004, True, [0.05]) == "5.004%"  # not "5.0%" beside "max 5.0%"
    assert fmt.value(0.04996, True, [0.05]) == "4.996%"
    assert fmt.value(0.3, True, [0.05]) == "30.0%"
    assert fmt.value(1024.4, False, [1024.0]) == "1,024.4"


def test_p_and_mde_near_their_thresholds() -> None:
    gate = _near()
    assert fmt.gate_p(gate, 0.05) == "0.0504" and fmt.gate_p(gate) == "0.050"
    assert fmt.gate_p(_near(p_value=0.0496), 0.05) == "0.0496"
    assert fmt.gate_p(_near(p_value=0.2, p_adjusted=0.0499), 0.05) == "0.0499"  # Holm-adjusted vs the same alpha
    assert fmt.gate_mde(gate) == "2.04 pp"  # not "2.0 pp" beside min_delta +2.0 pp


def test_every_report_prints_the_figures_apart_from_their_thresholds() -> None:
    from rlgate.engine.models import Decision
    from rlgate.report.html import render_html

    hard = GateVerdict(name="unsafe", kind="hard", metric="agent/unsafe_call_rate", verdict="fail",
                       outcome="hard_fail", effect="block", candidate=0.05004, n=100_000, threshold={"max": 0.05},
                       fraction=True, reason="fail: candidate 5.0040% > max 5.00%")
    decision = Decision(decision="block", summary="block", deciding_gates=["unsafe"], gates=[_near(), hard],
                        contract="c", alpha=0.05, seed=0)
    model = build_report(decision)
    md, html, junit = render_markdown(model), render_html(model), render_junit(model)
    for text in (md, html, junit):
        assert "[+1.96, +4.0]" in text and "[+2.0," not in text
        assert "0.0504" in text and "0.050<" not in text and "0.050 " not in text
        assert "5.004%" in text
    assert "needs +2.0 pp" in md


def test_a_threshold_rounded_past_its_figure_is_printed_as_it_is() -> None:
    from rlgate.report.views import gate_line

    assert fmt.value(0.0178, True, threshold=True) == "1.78%"  # not "1.8%"
    assert (fmt.value(0.05, True, threshold=True), fmt.delta(0.02, True, threshold=True)) == ("5.0%", "+2.0 pp")
    gate = GateVerdict(name="parse", kind="hard", metric="mmlu_pro/answer_parse_failure_rate", verdict="fail",
                       outcome="hard_fail", effect="block", candidate=0.017857, threshold={"max": 0.0178},
                       fraction=True, reason="fail")
    line = gate_line(gate)  # was "1.8%; max 1.8%" for a candidate over its max
    assert "max 1.78%" in line and "1.8%" in line.replace("max 1.78%", "")


def test_a_badcase_cluster_p_reads_apart_from_alpha() -> None:
    from rlgate.report.views import badcase_view

    cluster = {"cluster": "format:missing_answer", "kind": "format", "family": "gsm8k", "baseline_count": 3,
               "candidate_count": 9, "delta_rate": 0.06, "p_value": 0.0496, "p_adjusted": 0.0496, "grew": True}
    view = badcase_view({"badcase_clusters": [cluster]}, alpha=0.05)
    assert view is not None and view.clusters[0].p == "0.0496"  # "0.050" beside "grew (p < alpha)" before
