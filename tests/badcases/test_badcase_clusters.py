"""Clusters: paired and unpaired growth tests, Holm, private examples, next actions and the summary block."""

from __future__ import annotations

from badcase_helpers import ifeval_sample, one_task_run

from rlgate.badcases.clusters import holm, mcnemar_greater, two_proportion_greater
from rlgate.badcases.report import attach_badcases, build_badcase_report, render_summary
from rlgate.engine.models import Decision, GateVerdict, RunRef
from rlgate.results.models import RunResult, SampleRecord

LENGTH = ["length_constraints:number_words"]


def _gsm8k_like(task: str, n: int, invalid: set[int], wrong: set[int], offset: int = 0) -> list[SampleRecord]:
    out = []
    for i in range(n):
        answer = "[invalid]" if i in invalid else ("7" if i in wrong else "5")
        out.append(SampleRecord(doc_id=i + offset, doc_hash=f"{task}-{i + offset}", prompt=f"q{i}", target="#### 5",
                                responses=[f"resp {answer}"], filtered={"flexible-extract": answer},
                                scores={"flexible-extract": {"exact_match": float(answer == "5")}}))
    return out


def _ifeval(n: int, violated: set[int], words: int) -> list[SampleRecord]:
    return [ifeval_sample(i, LENGTH, [i not in violated], response="word " * words) for i in range(n)]


def test_statistics_helpers() -> None:
    assert mcnemar_greater(0, 0) == 1.0
    assert mcnemar_greater(20, 2) < 0.001 < mcnemar_greater(2, 20)
    assert two_proportion_greater(10, 100, 30, 100) < 0.01 < two_proportion_greater(30, 100, 10, 100)
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]


def test_paired_growth_is_detected_and_examples_prefer_new_failures() -> None:
    base = one_task_run("base", "gsm8k", _gsm8k_like("gsm8k", 200, invalid={1, 2}, wrong=set(range(10, 40))))
    cand = one_task_run("cand", "gsm8k", _gsm8k_like("gsm8k", 200, invalid=set(range(1, 31)),
                                                     wrong=set(range(10, 40))))
    report = build_badcase_report(cand, base)
    fmt = next(c for c in report.clusters if c.failure_class == "gsm8k_final_answer_format_error")
    assert (fmt.baseline_count, fmt.candidate_count, fmt.new_in_candidate, fmt.fixed_in_candidate) == (2, 30, 28, 0)
    assert fmt.grew and fmt.test == "mcnemar_exact" and fmt.p_adjusted is not None and fmt.p_adjusted < 1e-6
    assert all(e.baseline_had_failure is False for e in fmt.examples)
    assert report.badcase_top[0] == "gsm8k_final_answer_format_error: 30"
    assert report.next_actions[0].rule == "format_failures_grew"


def test_identical_runs_grow_nothing() -> None:
    samples = _gsm8k_like("gsm8k", 100, invalid={1, 2, 3}, wrong={4, 5})
    report = build_badcase_report(one_task_run("a", "gsm8k", samples), one_task_run("b", "gsm8k", samples))
    assert not any(c.grew for c in report.clusters) and report.next_actions == []
    assert report.explanations[0].driver == "none"


def test_unpaired_runs_use_the_two_proportion_test() -> None:
    base = one_task_run("base", "gsm8k", _gsm8k_like("gsm8k", 300, invalid=set(range(5)), wrong=set()))
    cand = one_task_run("cand", "gsm8k", _gsm8k_like("gsm8k", 300, invalid=set(range(60)), wrong=set(),
                                                     offset=1000))
    fmt = next(c for c in build_badcase_report(cand, base).clusters if c.failure_class.endswith("format_error"))
    assert fmt.n_paired == 0 and fmt.test == "two_proportion_z" and fmt.grew


def test_private_tasks_are_counted_but_never_sampled() -> None:
    base = one_task_run("base", "gsm8k_private", _gsm8k_like("gsm8k_private", 100, invalid=set(), wrong=set()))
    cand = one_task_run("cand", "gsm8k_private", _gsm8k_like("gsm8k_private", 100, invalid=set(range(40)),
                                                             wrong=set()))
    report = build_badcase_report(cand, base, private_tasks=frozenset({"gsm8k_private"}))
    fmt = next(c for c in report.clusters if c.failure_class.endswith("format_error"))
    assert fmt.grew and fmt.candidate_count == 40 and fmt.examples == []
    assert fmt.private_tasks == ["gsm8k_private"] and report.private_tasks == ["gsm8k_private"]
    dumped = report.model_dump_json()
    assert "resp [invalid]" not in dumped and '"q1"' not in dumped


def _runs_with_ifeval(base_words: int, cand_words: int) -> tuple[RunResult, RunResult]:
    base = one_task_run("base", "ifeval", _ifeval(300, violated=set(range(10)), words=base_words))
    cand = one_task_run("cand", "ifeval", _ifeval(300, violated=set(range(71)), words=cand_words))
    return base, cand


def test_length_violations_with_longer_responses_ask_for_short_answer_data() -> None:
    base, cand = _runs_with_ifeval(base_words=40, cand_words=90)
    report = build_badcase_report(cand, base)
    [action] = report.next_actions
    assert action.rule == "length_violations_grew_with_length" and "short-answer retention" in action.action
    assert report.badcase_top == ["ifeval_length_constraint_violation: 71"]
    base, cand = _runs_with_ifeval(base_words=40, cand_words=40)
    [action] = build_badcase_report(cand, base).next_actions
    assert action.rule == "length_violations_grew"


def test_summary_block_and_decision_extensions() -> None:
    base, cand = _runs_with_ifeval(base_words=40, cand_words=90)
    report = build_badcase_report(cand, base)
    gates = [
        GateVerdict(name="gsm8k", kind="primary", metric="gsm8k/exact_match/flexible-extract", verdict="pass",
                    outcome="pass", effect="release", baseline=0.724, candidate=0.779, delta=0.055, reason="ok"),
        GateVerdict(name="ifeval", kind="regression", metric="ifeval/prompt_level_strict_acc/none", verdict="fail",
                    outcome="regression_fail", effect="block", baseline=0.8, candidate=0.742, delta=-0.058,
                    reason="dropped"),
    ]
    decision = Decision(decision="block", summary="blocked", gates=gates, contract="c.yaml", alpha=0.05, seed=0,
                        inputs=[RunRef(role="candidate", source="/runs/cand", model="ckpt-42")])
    text = render_summary(report, decision)
    lines = text.splitlines()
    assert lines[0] == "checkpoint: ckpt-42   primary_metric: gsm8k exact_match = 77.9% (+5.5)"
    assert "regressions: [ifeval prompt_level_strict_acc: -5.8]" in lines
    assert "badcase_clusters: [ifeval_length_constraint_violation: 71]" in lines
    assert any(line.startswith("next_actions: [") for line in lines)
    attached = attach_badcases(decision, report)
    assert attached.extensions["badcase_top"] == report.badcase_top
    assert attached.extensions["next_actions"][0]["rule"] == "length_violations_grew_with_length"
    assert Decision.model_validate_json(attached.model_dump_json()).extensions["badcases"]["schema_version"] == 1
    assert decision.extensions == {}
