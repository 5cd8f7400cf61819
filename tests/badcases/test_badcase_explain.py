"""Why metrics moved: "format, not knowledge" only when format failures are most of the drop; the gate's p quoted."""

from __future__ import annotations

from rlgate.badcases.clusters import Outcomes
from rlgate.badcases.explain import explain_drops
from rlgate.badcases.taxonomy import Failure, SampleOutcome
from rlgate.engine.models import GateVerdict

WRONG = Failure("mmlu_pro_wrong_choice", "knowledge")
UNPARSEABLE = Failure("mmlu_pro_no_parseable_choice", "format")


def _outcome(i: int, correct: bool, failure: Failure | None = None, family: str = "mmlu_pro") -> SampleOutcome:
    return SampleOutcome(task=f"{family}_x", family=family, doc_id=i, doc_hash=f"h{i}", correct=correct,
                         parsed=failure is not UNPARSEABLE, failures=(failure,) if failure and not correct else ())


def _runs(n: int, lost_format: int, lost_wrong: int, gained: int) -> tuple[Outcomes, Outcomes]:
    """Baseline right on the first half; the candidate loses some (unparseable or wrong) and gains some."""
    base: Outcomes = {}
    cand: Outcomes = {}
    right = n // 2
    for i in range(n):
        b_ok = i < right
        base[("mmlu_pro_x", i)] = _outcome(i, b_ok, None if b_ok else WRONG)
        if i < lost_format:
            c = _outcome(i, False, UNPARSEABLE)
        elif i < lost_format + lost_wrong:
            c = _outcome(i, False, WRONG)
        elif right <= i < right + gained:
            c = _outcome(i, True)
        else:
            c = _outcome(i, b_ok, None if b_ok else WRONG)
        cand[("mmlu_pro_x", i)] = c
    return cand, base


def _gate(p: float, p_adjusted: float | None = None) -> GateVerdict:
    return GateVerdict(name="mmlu_pro_regression", kind="regression", metric="mmlu_pro/exact_match/custom-extract",
                       verdict="pass", outcome="regression_pass", effect="release", baseline=0.5, candidate=0.48,
                       delta=-0.02, p_value=p, p_adjusted=p_adjusted, reason="r")


def test_demo_case_one_unparseable_fourteen_wrong_is_not_a_format_problem() -> None:
    cand, base = _runs(210, lost_format=1, lost_wrong=14, gained=10)
    [e] = explain_drops(cand, base, gates=[_gate(0.2, p_adjusted=0.351)])
    assert e.delta < 0 and e.lost_to_format == 1 and e.lost_to_wrong_answer == 14
    assert e.driver == "wrong_answers"
    assert "not lost knowledge" not in e.text and "format problem, not" not in e.text
    assert "not a format problem: 14 of 15 lost answers were parsed but wrong" in e.text
    # the same p as the gate's verdict (Holm-adjusted), formatted as every other output formats it
    assert e.gate == "mmlu_pro_regression" and e.gate_p_value == 0.351
    assert "gate mmlu_pro_regression: p=0.351" in e.text
    assert "0.2" not in e.text.split("gate mmlu_pro_regression")[1].split(")")[0]


def test_format_majority_is_a_format_problem() -> None:
    cand, base = _runs(400, lost_format=30, lost_wrong=5, gained=3)
    [e] = explain_drops(cand, base)
    assert e.driver == "format"
    assert "format problem, not lost knowledge: 30 of 35" in e.text


def test_significant_wrong_answers_are_lost_knowledge_and_a_mix_says_both() -> None:
    cand, base = _runs(400, lost_format=2, lost_wrong=40, gained=2)
    [e] = explain_drops(cand, base)
    assert e.driver == "knowledge" and e.knowledge_p_value is not None and e.knowledge_p_value < 0.05
    cand, base = _runs(400, lost_format=12, lost_wrong=18, gained=0)
    [mixed] = explain_drops(cand, base)
    assert mixed.driver == "format_and_knowledge" and "partly format (12 of 30" in mixed.text


def test_a_rise_is_explained_too() -> None:
    cand, base = _runs(100, lost_format=0, lost_wrong=2, gained=9)
    [e] = explain_drops(cand, base)
    assert e.driver == "improved" and "9 answers gained and 2 lost" in e.text


def test_ifeval_drop_is_explained_by_the_instructions_broken() -> None:
    length = Failure("ifeval_length_constraint_violation", "instruction", "length_constraints:number_words")
    case = Failure("ifeval_change_case_violation", "instruction", "change_case:english_lowercase")
    base: Outcomes = {}
    cand: Outcomes = {}
    for i in range(60):
        base[("ifeval", i)] = SampleOutcome(task="ifeval", family="ifeval", doc_id=i, doc_hash=f"h{i}",
                                            correct=i < 40, categories=("x",),
                                            failures=() if i < 40 else (case,))
        failures = (length,) if i < 9 else (case,) if i < 12 else () if i < 40 else (case,)
        cand[("ifeval", i)] = SampleOutcome(task="ifeval", family="ifeval", doc_id=i, doc_hash=f"h{i}",
                                            correct=not failures, categories=("x",), failures=failures)
    gate = GateVerdict(name="ifeval_regression", kind="regression", metric="ifeval/prompt_level_strict_acc/none",
                       verdict="fail", outcome="regression_fail", effect="block", baseline=0.67, candidate=0.47,
                       delta=-0.2, p_value=0.09, p_adjusted=0.18, reason="r")
    [e] = explain_drops(cand, base, gates=[gate])
    assert e.driver == "instructions"
    assert e.instruction_losses == {"ifeval_length_constraint_violation": 9, "ifeval_change_case_violation": 3}
    assert "12 prompts the baseline followed fully were lost" in e.text
    assert "length constraint violation (9)" in e.text and "p=0.180" in e.text
