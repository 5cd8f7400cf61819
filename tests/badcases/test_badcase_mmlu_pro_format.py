"""Done-when (1): a drop driven by unparseable answers is a format cluster, not lost knowledge.

Mistral-7B-v0.1 base vs Instruct style, built from the real Llama-3.1-8B MMLU-Pro outputs: the
candidate keeps the Instruct model's real choices but states a third of them in a form lm-eval's
custom-extract regex cannot parse. The reverse comparison (real answers, no format change) is a
genuine knowledge drop and must be reported as one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from badcase_helpers import mmlu_pro_runs

from rlgate.badcases.report import build_badcase_report, render_summary
from rlgate.results.models import RunResult


@pytest.fixture(scope="module")
def format_case(shared_data: Path) -> tuple[RunResult, RunResult]:
    return mmlu_pro_runs(shared_data, per_subject=None, format_break_share=35)


def test_format_driven_drop_is_a_format_cluster(format_case: tuple[RunResult, RunResult]) -> None:
    base, candidate = format_case
    report = build_badcase_report(candidate, base)
    [explanation] = report.explanations
    assert explanation.delta < -0.05, "the fixture must show a real drop"
    assert explanation.driver == "format"
    assert explanation.lost_to_format > explanation.lost_to_wrong_answer
    assert explanation.candidate_accuracy_parsed is not None and explanation.baseline_accuracy_parsed is not None
    assert explanation.candidate_accuracy_parsed > explanation.baseline_accuracy_parsed
    by_name = {c.cluster: c for c in report.clusters}
    assert by_name["mmlu_pro_no_parseable_choice"].grew
    assert by_name["mmlu_pro_no_parseable_choice"].test == "mcnemar_exact"
    assert not by_name["mmlu_pro_wrong_choice"].grew
    assert report.badcase_top[0].startswith("mmlu_pro_no_parseable_choice: ")
    assert [a.rule for a in report.next_actions] == ["format_failures_grew"]
    assert not any(a.rule in ("category_regressed", "task_regressed") for a in report.next_actions)
    text = render_summary(report)
    assert "not lost knowledge" in text and "format-verifier reward" in text
    example = by_name["mmlu_pro_no_parseable_choice"].examples[0]
    assert example.candidate_answer == "[invalid]" and example.baseline_had_failure is False


def test_real_knowledge_drop_is_reported_as_knowledge(shared_data: Path) -> None:
    base, instruct = mmlu_pro_runs(shared_data, per_subject=150, format_break_share=0)
    report = build_badcase_report(base, instruct)  # candidate = base model: it knows less
    [explanation] = report.explanations
    assert explanation.driver == "knowledge"
    by_name = {c.cluster: c for c in report.clusters}
    assert by_name["mmlu_pro_wrong_choice"].grew and not by_name["mmlu_pro_no_parseable_choice"].grew
    assert {"task_regressed", "category_regressed"} <= {a.rule for a in report.next_actions}
    assert "format_failures_grew" not in {a.rule for a in report.next_actions}
