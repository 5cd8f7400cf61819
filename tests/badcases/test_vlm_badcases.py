"""VLM badcase classes and their next actions, on hand-built ChartQA / MathVista / MMMU samples."""

from __future__ import annotations

from rlgate.badcases.actions import ActionContext, vlm_rule
from rlgate.badcases.classify import classifier_for
from rlgate.badcases.taxonomy import ClassifyOptions
from rlgate.results.models import SampleRecord

TABLE = {"Sales": {"North": 40, "South": 20}, "Costs": {"North": 15, "South": 10}}


def _chart(response: str, label: str, relaxed: float, exact: float, query: str = "What is Sales in North?"
           ) -> str | None:
    sample = SampleRecord(doc_id=0, doc_hash="h", responses=[response], target=label,
                          doc={"query": query, "label": [label], "table": TABLE},
                          scores={"none": {"relaxed_accuracy": relaxed, "exact_match": exact}})
    outcome = classifier_for("chartqa").classify("chartqa", sample, ClassifyOptions())
    return outcome.failures[0].cls if outcome.failures else None


def test_chartqa_classes() -> None:
    assert _chart("Final Answer: 40", "40", 1.0, 1.0) is None
    assert _chart("it is forty", "40", 0.0, 0.0) == "chart_no_parseable_answer"
    assert _chart("Final Answer: 40 units", "40", 0.0, 0.0) == "chart_value_right_format_wrong"
    assert _chart("Final Answer: 41", "40", 1.0, 0.0) == "chart_value_right_format_wrong"
    assert _chart("Final Answer: 15", "40", 0.0, 0.0) == "chart_header_binding"  # Costs' North value
    assert _chart("Final Answer: 70", "40", 0.0, 0.0) == "chart_numeric_misread"
    assert _chart("Final Answer: South", "North", 0.0, 0.0, "Which region has the highest Sales?") == \
        "chart_header_binding"
    assert _chart("Final Answer: Mars", "North", 0.0, 0.0) == "chart_wrong_answer"


def test_mathvista_failure_carries_skill() -> None:
    sample = SampleRecord(doc_id=1, doc_hash="h", responses=["Final Answer: 9"], filtered={"rule": "9"},
                          doc={"answer": "12", "answer_type": "integer", "question_type": "free_form",
                               "metadata": {"skills": ["statistical reasoning", "arithmetic reasoning"]}},
                          scores={"rule": {"acc": 0.0}})
    outcome = classifier_for("mathvista_testmini").classify("mathvista_testmini", sample, ClassifyOptions())
    assert outcome.failures[0].cls == "mathvista_numeric_off"
    assert outcome.failures[0].category == "statistical reasoning"
    assert "arithmetic reasoning" in outcome.categories


def test_mmmu_no_parse() -> None:
    sample = SampleRecord(doc_id=2, doc_hash="h", responses=["hmm"], scores={"none": {"acc": 0.0}},
                          doc={"question_type": "multiple-choice", "options": "['1', '2']"})
    outcome = classifier_for("mmmu_val_art").classify("mmmu_val_art", sample, ClassifyOptions())
    assert outcome.failures[0].cls == "mmmu_no_parseable_choice" and not outcome.parsed


def test_vlm_actions_name_the_fix() -> None:
    from rlgate.badcases.models import ClusterStat

    fields = {name for name in ClusterStat.model_fields}
    base = {"cluster": "chart_numeric_misread", "family": "chartqa", "failure_class": "chart_numeric_misread",
            "kind": "knowledge", "category": None, "baseline_count": 1, "candidate_count": 9,
            "candidate_n": 20, "new_in_candidate": 8, "fixed_in_candidate": 0, "grew": True}
    stat = ClusterStat.model_validate({k: v for k, v in base.items() if k in fields}, strict=False)
    action = vlm_rule(stat, ActionContext())
    assert action is not None and "crops" in action.action and "preserve_aspect_ratio" in action.action
