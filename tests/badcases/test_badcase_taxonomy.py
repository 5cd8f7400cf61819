"""Per-sample failure classes for GSM8K, MMLU-Pro, IFEval and unknown tasks, and classifier plug-ins."""

from __future__ import annotations

from badcase_helpers import ifeval_sample, one_task_run, scored_run

from rlgate.badcases.classify import classify_run, register_classifier
from rlgate.badcases.taxonomy import ClassifyOptions, Failure, SampleOutcome
from rlgate.results.models import SampleRecord

GSM8K_DOC = {"question": "How many eggs?", "answer": "16 - 3 - 4 = 9 and 9 * 2 = 18\n#### 18"}


def _gsm8k(responses: list[str], options: ClassifyOptions | None = None) -> list[SampleOutcome]:
    run = scored_run("m", "gsm8k", "gsm8k/gsm8k.yaml", [GSM8K_DOC] * len(responses), responses)
    out = classify_run(run, options)
    return [out[("gsm8k", i)] for i in range(len(responses))]


def test_gsm8k_classes_from_lm_eval_filters() -> None:
    outcomes = _gsm8k([
        "She sells 9 eggs for $2 each, so 18 dollars.\n#### 18",        # right
        "I am not sure how to count these.",                           # no number at all: format
        "The answer is 18.\n\nQuestion: Tom has 3 cats and 5 dogs",     # right answer, extractor reads 5
        "16 - 3 = 13 and 13 * 2 = 26. #### 26",                         # wrong answer
    ])
    assert outcomes[0].correct and outcomes[0].failures == ()
    assert [o.classes for o in outcomes[1:]] == [
        {"gsm8k_final_answer_format_error"}, {"gsm8k_answer_misplaced"}, {"gsm8k_wrong_answer"}]
    assert not outcomes[1].parsed and outcomes[3].answer == "26"


def test_gsm8k_strict_filter_from_the_gates_turns_missing_marker_into_format_error() -> None:
    strict = ClassifyOptions(filters={"gsm8k": "strict-match"})
    [flexible_view] = _gsm8k(["So she makes 18 dollars."])
    [strict_view] = _gsm8k(["So she makes 18 dollars."], strict)
    assert flexible_view.correct
    assert strict_view.classes == {"gsm8k_final_answer_format_error"}


def test_gsm8k_truncation_from_runner_flag_or_token_count() -> None:
    run = scored_run("m", "gsm8k", "gsm8k/gsm8k.yaml", [GSM8K_DOC] * 2, ["16 - 3 = 13 and then", "Let me think 3"])
    samples = run.tasks["gsm8k"].samples
    samples[0].truncated = [True]
    samples[1].response_tokens = [512]
    out = classify_run(run, ClassifyOptions(max_tokens=512))
    assert out[("gsm8k", 0)].classes == {"gsm8k_truncated_at_max_tokens"}
    assert out[("gsm8k", 1)].classes == {"gsm8k_truncated_at_max_tokens"}
    assert classify_run(run)[("gsm8k", 1)].classes == {"gsm8k_wrong_answer"}


def test_mmlu_pro_choice_classes_and_category() -> None:
    def sample(i: int, answer: str, score: float, category: str) -> SampleRecord:
        return SampleRecord(doc_id=i, doc_hash=f"h{i}", responses=["..."], filtered={"custom-extract": answer},
                            scores={"custom-extract": {"exact_match": score}}, doc={"category": category})

    run = one_task_run("m", "mmlu_pro_law", [sample(0, "A", 1.0, "law"), sample(1, "[invalid]", 0.0, "law"),
                                             sample(2, "B", 0.0, "law")])
    out = classify_run(run)
    assert out[("mmlu_pro_law", 0)].failures == ()
    assert out[("mmlu_pro_law", 1)].failures == (Failure("mmlu_pro_no_parseable_choice", "format", "law"),)
    assert out[("mmlu_pro_law", 2)].failures == (Failure("mmlu_pro_wrong_choice", "knowledge", "law"),)
    assert out[("mmlu_pro_law", 2)].categories == ("law",)


def test_mmlu_pro_category_falls_back_to_the_leaf_task_name() -> None:
    record = SampleRecord(doc_id=0, doc_hash="h", filtered={"custom-extract": "C"},
                          scores={"custom-extract": {"exact_match": 0.0}})
    out = classify_run(one_task_run("m", "mmlu_pro_computer_science", [record]))
    assert out[("mmlu_pro_computer_science", 0)].failures[0].category == "computer science"


def test_ifeval_failures_per_instruction_group() -> None:
    samples = [
        ifeval_sample(0, ["length_constraints:number_words", "punctuation:no_comma"], [True, True]),
        ifeval_sample(1, ["length_constraints:number_words", "length_constraints:number_sentences",
                          "detectable_format:title", "change_case:english_lowercase"], [False, False, True, False]),
        ifeval_sample(2, ["startend:quotation", "combination:repeat_prompt", "detectable_content:postscript",
                          "keywords:existence", "language:response_language"], [False, False, False, False, False]),
        ifeval_sample(3, ["punctuation:no_comma"], [False], response="   "),
    ]
    out = classify_run(one_task_run("m", "ifeval", samples))
    assert out[("ifeval", 0)].correct and not out[("ifeval", 0)].failures
    assert out[("ifeval", 1)].classes == {"ifeval_length_constraint_violation", "ifeval_change_case_violation"}
    assert {f.category for f in out[("ifeval", 1)].failures} == {
        "length_constraints:number_words", "length_constraints:number_sentences", "change_case:english_lowercase"}
    assert out[("ifeval", 2)].classes == {
        "ifeval_startend_violation", "ifeval_combination_violation", "ifeval_detectable_content_violation",
        "ifeval_keywords_violation", "ifeval_language_violation"}
    assert out[("ifeval", 3)].classes == {"ifeval_empty_response"}


def test_unknown_tasks_fall_back_to_right_wrong_invalid() -> None:
    def sample(i: int, answer: str, acc: float) -> SampleRecord:
        return SampleRecord(doc_id=i, doc_hash=f"h{i}", filtered={"none": answer}, scores={"none": {"acc": acc}})

    out = classify_run(one_task_run("m", "my_task", [sample(0, "x", 1.0), sample(1, "y", 0.0),
                                                     sample(2, "[invalid]", 0.0)]))
    assert [out[("my_task", i)].classes for i in range(3)] == [set(), {"my_task_wrong"}, {"my_task_invalid"}]


def test_a_registered_classifier_takes_over_its_family() -> None:
    class Refusals:
        family = "safety"

        def claims(self, task: str) -> bool:
            return task == "refusal_suite"

        def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
            refused = "cannot help" in sample.responses[0]
            return SampleOutcome(task=task, family=self.family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                                 correct=not refused,
                                 failures=(Failure("over_refusal", "other"),) if refused else ())

    register_classifier(Refusals())
    record = SampleRecord(doc_id=0, doc_hash="h", responses=["I cannot help with that."])
    assert classify_run(one_task_run("m", "refusal_suite", [record]))[("refusal_suite", 0)].classes == {"over_refusal"}


def test_sample_outcome_init_matches_its_fields() -> None:
    """The hand-written __init__ takes exactly the dataclass fields, with the same defaults, and stays frozen."""
    import dataclasses
    import inspect

    import pytest

    from rlgate.badcases.taxonomy import Failure, SampleOutcome

    params = inspect.signature(SampleOutcome.__init__).parameters
    fields = dataclasses.fields(SampleOutcome)
    assert [p for p in params if p != "self"] == [f.name for f in fields]
    for f in fields:
        default = params[f.name].default
        assert default == (inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default), f.name
    a = SampleOutcome("t", "f", 1, "h", False, failures=(Failure("x", "format"),))
    assert a == SampleOutcome("t", "f", 1, "h", False, failures=(Failure("x", "format"),))
    assert hash(a) == hash(SampleOutcome("t", "f", 1, "h", False, failures=(Failure("x", "format"),)))
    assert dataclasses.replace(a, correct=True).correct and not a.correct
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.correct = True  # type: ignore[misc]
