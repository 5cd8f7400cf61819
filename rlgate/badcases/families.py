"""Built-in failure classifiers: GSM8K, MMLU-Pro and IFEval, read from lm-eval's per-sample results."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from rlgate.badcases.models import FailureKind
from rlgate.badcases.taxonomy import (
    ClassifyOptions,
    Failure,
    FailureClassifier,
    SampleOutcome,
    TaskBatchClassifier,
    binary_score,
    first_response,
    is_truncated,
    pick_filter,
)
from rlgate.metrics import catalog_task
from rlgate.results.models import INVALID_ANSWER, SampleRecord

_NO_SCORES: dict[str, Any] = {}
_NUMBER = re.compile(r"-?\$?\d[\d,]*(?:\.\d+)?")
#: An explicit final-answer statement followed closely by a number.
_ANSWER_MARKER = re.compile(r"(?i)(?:####|answer\s*(?:is|:)|\\boxed\{)[^0-9\-$]{0,24}(-?\$?\d[\d,]*(?:\.\d+)?)")

#: IFEval instruction-id prefixes and the class each becomes.
IFEVAL_GROUPS: dict[str, str] = {
    "keywords": "ifeval_keywords_violation",
    "length_constraints": "ifeval_length_constraint_violation",
    "detectable_format": "ifeval_detectable_format_violation",
    "language": "ifeval_language_violation",
    "punctuation": "ifeval_punctuation_violation",
    "startend": "ifeval_startend_violation",
    "change_case": "ifeval_change_case_violation",
    "combination": "ifeval_combination_violation",
    "detectable_content": "ifeval_detectable_content_violation",
}


def parse_number(text: str | None) -> float | None:
    """A GSM8K-style number ('$1,234.', '-5') as a float, or None."""
    if text is None:
        return None
    cleaned = text.replace(",", "").replace("$", "").strip().rstrip(".")
    try:
        return float(cleaned)
    except ValueError:
        return None


def gsm8k_gold(sample: SampleRecord) -> float | None:
    """The reference answer: the number after '####' in the target or the document's answer."""
    for text in (sample.target, (sample.doc or {}).get("answer")):
        if isinstance(text, str):
            found, gold = _gold_in(text)
            if found:
                return gold
    return None


@lru_cache(maxsize=1 << 16)
def _gold_in(text: str) -> tuple[bool, float | None]:
    """(a number follows the last '####', its value); memoised: the baseline and candidate share targets."""
    match = _NUMBER.search(text.split("####")[-1])
    return (True, parse_number(match.group(0))) if match else (False, None)


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) < 1e-6


def _gsm8k_failures(sample: SampleRecord, options: ClassifyOptions, parsed: bool, response: str,
                    numbers: dict[str, float | None]) -> tuple[Failure, ...]:
    """Why a wrong GSM8K answer is wrong: truncated, unparseable, right number in the wrong place, or wrong."""
    if is_truncated(sample, options):
        return _GSM8K_TRUNCATED
    if not parsed:
        return _GSM8K_FORMAT
    gold = gsm8k_gold(sample)
    if gold is not None:
        for marker in _ANSWER_MARKER.finditer(response):
            text = marker.group(1)
            stated = numbers[text] if text in numbers else numbers.setdefault(text, parse_number(text))
            if _same(stated, gold):
                return _GSM8K_MISPLACED
    return _GSM8K_WRONG


#: GSM8K's failures carry no category: one shared (immutable) tuple each
_GSM8K_TRUNCATED = (Failure("gsm8k_truncated_at_max_tokens", "truncation"),)
_GSM8K_FORMAT = (Failure("gsm8k_final_answer_format_error", "format"),)
_GSM8K_MISPLACED = (Failure("gsm8k_answer_misplaced", "format"),)
_GSM8K_WRONG = (Failure("gsm8k_wrong_answer", "knowledge"),)


class Gsm8kClassifier(TaskBatchClassifier):
    """GSM8K: truncated, no parseable final answer, right answer stated in the wrong place, wrong answer."""

    family = "gsm8k"

    def claims(self, task: str) -> bool:
        return catalog_task(task) in ("gsm8k", "gsm8k_cot") or task.startswith("gsm8k")

    def classify_many(self, task: str, samples: Iterable[SampleRecord],
                      options: ClassifyOptions) -> list[SampleOutcome]:
        """Every sample of a task: the filter choices worked out once, a right answer looked at no further."""
        family = self.family
        choices = options.filter_choices(task, family)
        first = choices[0] if choices else None
        numbers: dict[str, float | None] = {}  # the numbers stated after answer markers, parsed once each
        out: list[SampleOutcome] = []
        for sample in samples:
            scores = sample.scores
            filt = first if first in scores else pick_filter(choices, scores)
            value = scores.get(filt, _NO_SCORES).get("exact_match")
            right = value >= 0.5 if type(value) is float else binary_score(value)
            answer = sample.filtered.get(filt)
            parsed = answer is not None and answer != INVALID_ANSWER
            response = sample.responses[0] if sample.responses else ""
            out.append(SampleOutcome(task, family, sample.doc_id, sample.doc_hash, bool(right), parsed,
                                     () if right else _gsm8k_failures(sample, options, parsed, response, numbers),
                                     (), answer, len(response)))
        return out


def mmlu_pro_category(task: str, sample: SampleRecord) -> str | None:
    """The subject: the document's `category`, else the sample's extra, else the leaf task's suffix."""
    for source in (sample.doc or {}, sample.extra):
        value = source.get("category")
        if isinstance(value, str) and value:
            return value
    if task.startswith("mmlu_pro_"):
        return task[len("mmlu_pro_"):].replace("_", " ")
    return None


class MmluProClassifier(TaskBatchClassifier):
    """MMLU-Pro: no parseable choice, truncated, wrong choice; each placed in its subject category."""

    family = "mmlu_pro"

    def claims(self, task: str) -> bool:
        return task == "mmlu_pro" or task.startswith("mmlu_pro_")

    def classify_many(self, task: str, samples: Iterable[SampleRecord],
                      options: ClassifyOptions) -> list[SampleOutcome]:
        """Every sample of a task: the filter choices worked out once."""
        family = self.family
        choices = options.filter_choices(task, family)
        first = choices[0] if choices else None
        # a subject's failures and categories are the same for every sample: one shared (immutable) tuple each
        shared: dict[tuple[str, FailureKind, str | None], tuple[Failure, ...]] = {}
        subjects: dict[str | None, tuple[str, ...]] = {}
        out: list[SampleOutcome] = []
        for sample in samples:
            scores = sample.scores
            filt = first if first in scores else pick_filter(choices, scores)
            value = scores.get(filt, _NO_SCORES).get("exact_match")
            right = value >= 0.5 if type(value) is float else binary_score(value)
            answer = sample.filtered.get(filt)
            parsed = answer is not None and answer != INVALID_ANSWER
            category = mmlu_pro_category(task, sample)
            failures: tuple[Failure, ...] = ()
            if not right:
                found: tuple[str, FailureKind, str | None]
                if not parsed and is_truncated(sample, options):
                    found = ("mmlu_pro_truncated_at_max_tokens", "truncation", category)
                elif not parsed:
                    found = ("mmlu_pro_no_parseable_choice", "format", category)
                else:
                    found = ("mmlu_pro_wrong_choice", "knowledge", category)
                failures = shared.get(found) or shared.setdefault(found, (Failure(*found),))
            cats = subjects.get(category)
            if cats is None:
                cats = subjects[category] = (category,) if category else ()
            out.append(SampleOutcome(task, family, sample.doc_id, sample.doc_hash, bool(right), parsed, failures,
                                     cats, answer, len(sample.responses[0]) if sample.responses else 0))
        return out


class IfevalClassifier(TaskBatchClassifier):
    """IFEval: one failure per violated instruction group, from lm-eval's per-instruction results."""

    family = "ifeval"

    def claims(self, task: str) -> bool:
        return task == "ifeval" or task.startswith("ifeval_")

    def classify_many(self, task: str, samples: Iterable[SampleRecord],
                      options: ClassifyOptions) -> list[SampleOutcome]:
        """Every sample of a task: the filter choices worked out once."""
        choices = options.filter_choices(task, self.family)
        return [self._one(task, sample, pick_filter(choices, sample.scores), options) for sample in samples]

    def _one(self, task: str, sample: SampleRecord, filt: str, options: ClassifyOptions) -> SampleOutcome:
        scores = sample.scores.get(filt, {})
        right = binary_score(scores.get("prompt_level_strict_acc"))
        followed = scores.get("inst_level_strict_acc")
        ids = [str(i) for i in (sample.doc or {}).get("instruction_id_list", [])]
        response = first_response(sample)
        parsed = bool(response.strip())
        if right is None and isinstance(followed, list) and followed:
            right = all(bool(v) for v in followed)
        failures: list[Failure] = []
        if not right:
            if not parsed:
                failures.append(Failure("ifeval_empty_response", "format"))
            elif isinstance(followed, list) and len(followed) == len(ids):
                for iid, ok in zip(ids, followed, strict=True):
                    if not ok:
                        group = iid.split(":", 1)[0]
                        failures.append(Failure(IFEVAL_GROUPS.get(group, f"ifeval_{group}_violation"),
                                                "instruction", iid))
            else:
                failures.append(Failure("ifeval_unscored_instructions", "other"))
            if is_truncated(sample, options):
                failures.append(Failure("ifeval_truncated_at_max_tokens", "truncation"))
        return SampleOutcome(task=task, family=self.family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                             correct=bool(right), parsed=parsed, failures=tuple(dict.fromkeys(failures)),
                             categories=tuple(dict.fromkeys(ids)), answer=None, response_chars=len(response))


def _builtin() -> list[FailureClassifier]:
    from rlgate.badcases.vlm_families import VLM_CLASSIFIERS

    return [Gsm8kClassifier(), MmluProClassifier(), IfevalClassifier(), *VLM_CLASSIFIERS]


BUILTIN_CLASSIFIERS: list[FailureClassifier] = _builtin()
