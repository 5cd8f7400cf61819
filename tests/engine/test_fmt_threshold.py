"""A figure compared with a threshold never prints as the threshold, nor on its other side."""

from __future__ import annotations

from rlgate.engine import fmt
from rlgate.engine.models import Decision, GateVerdict
from rlgate.engine.summary import decision_markdown, decision_table


def test_p_values_either_side_of_alpha_print_apart_and_on_their_side() -> None:
    below, above = fmt.p_number(0.0496, 0.05), fmt.p_number(0.0504, 0.05)
    assert (below, above) == ("0.0496", "0.0504")  # both were "0.050"
    assert float(below) < 0.05 < float(above)
    assert fmt.p_number(0.04996, 0.05) == "0.04996"  # four decimals still read "0.0500"
    assert (fmt.p_number(0.00996, 0.01), fmt.p_number(0.01004, 0.01)) == ("0.00996", "0.01004")
    assert fmt.p(0.0496, 0.05) == "p=0.0496"


def test_p_values_far_from_alpha_or_equal_to_it_keep_the_usual_rounding() -> None:
    assert fmt.p_number(0.0496) == "0.050"  # no alpha given: as ever
    assert fmt.p_number(0.18, 0.05) == "0.180"
    assert fmt.p_number(0.0031, 0.05) == "0.0031"
    assert fmt.p_number(0.00001, 0.05) == "<0.0001"
    assert fmt.p_number(0.05, 0.05) == "0.050"  # equal is allowed to read equal


def test_a_change_near_min_delta_or_max_drop_prints_on_its_side() -> None:
    assert fmt.delta(0.0196, "accuracy", [0.02]) == "+1.96 pts"  # .2f already apart: unchanged
    assert fmt.delta(0.019996, "accuracy", [0.02]) == "+1.9996 pts"  # not "+2.00 pts"
    assert fmt.delta(-0.020004, "accuracy", [-0.02]) == "-2.0004 pts"
    assert fmt.delta(0.3, "accuracy", [0.02]) == "+30.00 pts"
    assert fmt.delta(2.00004, "perplexity", [2.0]) == "+2.00004"  # not "+2"


def test_a_value_near_a_hard_bound_prints_on_its_side() -> None:
    assert fmt.value(0.050004, "accuracy", [0.05]) == "5.0004%"  # not "5.00%"
    assert fmt.value(1024.4, "perplexity", [1024.0]) == "1024.4"  # not "1024"
    assert fmt.value(1024.4, "perplexity") == "1024"


def test_apart_gives_up_at_the_most_digits_it_may_add() -> None:
    texts = (f"{0.05 + 1e-12:.{d}f}" for d in range(3, fmt.MOST_DIGITS + 1))
    assert fmt.apart(0.05 + 1e-12, [(0.05, "0.05")], texts) == "0.050000"


def _gate(**kw: object) -> GateVerdict:
    base: dict = dict(name="acc", kind="primary", metric="gsm8k/accuracy", verdict="fail", outcome="primary_fail",
                      effect="research_only", baseline=0.5, candidate=0.53, delta=0.03, ci=(0.019996, 0.04),
                      ci_level=0.95, p_value=0.0504, threshold={"min_delta": 0.02, "max_drop": 0.01},
                      reason="fail")
    return GateVerdict(**{**base, **kw})


def test_the_terminal_table_and_summary_md_print_figures_apart_from_their_thresholds() -> None:
    d = Decision(decision="research_only", summary="s", gates=[_gate()], contract="c", alpha=0.05, seed=0)
    for text in (decision_table(d), decision_markdown(d)):
        assert "0.0504" in text and "0.050 " not in text
        assert "[+1.9996 pts, +4.00 pts]" in text


def test_lower_is_better_turns_the_thresholds_round() -> None:
    gate = _gate(higher_is_better=False, delta=-0.03, ci=(-0.04, -0.019996))
    d = Decision(decision="research_only", summary="s", gates=[gate], contract="c", alpha=0.05, seed=0)
    assert "[-4.00 pts, -1.9996 pts]" in decision_table(d)


def test_a_threshold_whose_own_text_is_rounded_only_needs_the_figure_not_to_read_as_it() -> None:
    # a threshold of 2.05 shown as "+2.0": 2.03 is below 2.05 yet above "+2.0"; it must at least not read "+2.0"
    assert fmt.apart(2.03, [(2.05, "+2.0")], (f"{2.03:+.{d}f}" for d in range(1, 7))) == "+2.03"


def test_gate_reasons_print_figures_apart_from_their_thresholds() -> None:
    from fixtures.synthetic_runs import make_run

    from rlgate.contract.models import GateConfig, HardGate, PrimaryGate
    from rlgate.engine import decide

    # a hard gate: 1,001 errors in 20,000 (5.005%) against max 5%: "5.00% > max 5.00%" before
    base = make_run({"t": {"err": [0.0] * 20_000}}, source="base")
    cand = make_run({"t": {"err": [1.0] * 1001 + [0.0] * 18_999}}, source="cand")
    hard = decide(GateConfig(hard=[HardGate(metric="t/err", max=0.05)]), base, cand, seed=0, contract_name="x")
    assert "candidate 5.005% > max 5.00%" in hard.gates[0].reason
    # a primary gate (lower is better) whose improvement is a hair under min_delta: "+3 < min_delta +3" before
    base_ppl = [10.0 + i % 7 for i in range(200)]
    cand_ppl = [v - 2.9999 + (0.5 if i % 2 else -0.5) for i, v in enumerate(base_ppl)]
    base, cand = make_run({"t": {"perplexity": base_ppl}}, source="b"), make_run({"t": {"perplexity": cand_ppl}})
    primary = decide(GateConfig(primary=PrimaryGate(metric="t/perplexity", min_delta=3.0), bootstrap_resamples=200),
                     base, cand, seed=0, contract_name="x")
    assert "improvement +2.9999 < min_delta +3," in primary.gates[0].reason


def test_a_threshold_prints_as_it_is() -> None:
    assert fmt.value(0.0178, "accuracy", threshold=True) == "1.78%"
    assert fmt.delta(0.02, "accuracy", threshold=True) == "+2.00 pts"
    assert fmt.delta(-0.053625, "accuracy", threshold=True) == "-5.3625 pts"
