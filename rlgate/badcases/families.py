"""Built-in failure classifiers: GSM8K, MMLU-Pro and IFEval, read from lm-eval's per-sample results."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate, islice
from typing import Any

from rlgate.badcases.columns import Flags, TaskColumns
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
from rlgate.harness.vocabulary import family_of
from rlgate.results.models import INVALID_ANSWER, SampleRecord

_NO_SCORES: dict[str, Any] = {}
_NUMBER = re.compile(r"-?\$?\d[\d,]*(?:\.\d+)?")
#: An explicit final-answer statement followed closely by a number.
_ANSWER_MARKER = re.compile(r"(?i)(?:####|answer\s*(?:is|:)|\\boxed\{)[^0-9\-$]{0,24}(-?\$?\d[\d,]*(?:\.\d+)?)")
#: The same over responses joined by NULs: the gap may not cross a NUL, so no match spans two responses.
_JOINED_MARKER = re.compile(r"(?i)(?:####|answer\s*(?:is|:)|\\boxed\{)[^0-9\-$\x00]{0,24}(-?\$?\d[\d,]*(?:\.\d+)?)")

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
            gold = _gold_in(text)
            if gold is not None:
                return gold
    return None


def _gold_in(text: str) -> float | None:
    """The first number after the text's last '####' (None: no number there); remembered in `_GOLD_MEMO`
    (the baseline and the candidate share their targets)."""
    memo = _GOLD_MEMO
    if text in memo:
        return memo[text]
    match = _NUMBER.search(text.split("####")[-1])
    gold = parse_number(match.group(0)) if match else None
    if len(memo) >= _GOLD_MEMO_SIZE:
        memo.clear()
    memo[text] = gold
    return gold


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) < 1e-6


#: GSM8K's failures carry no category: one shared (immutable) tuple each
_GSM8K_TRUNCATED = (Failure("gsm8k_truncated_at_max_tokens", "truncation"),)
_GSM8K_FORMAT = (Failure("gsm8k_final_answer_format_error", "format"),)
_GSM8K_MISPLACED = (Failure("gsm8k_answer_misplaced", "format"),)
_GSM8K_WRONG = (Failure("gsm8k_wrong_answer", "knowledge"),)


class Gsm8kClassifier(TaskBatchClassifier):
    """GSM8K: truncated, no parseable final answer, right answer stated in the wrong place, wrong answer."""

    family = "gsm8k"

    def claims(self, task: str) -> bool:
        return family_of(task) in ("gsm8k", "gsm8k_cot") or task.startswith("gsm8k")

    def classify_many(self, task: str, samples: Iterable[SampleRecord],
                      options: ClassifyOptions) -> list[SampleOutcome]:
        return self.classify_columns(task, samples, options).outcomes()

    def classify_columns(self, task: str, samples: Iterable[SampleRecord], options: ClassifyOptions) -> TaskColumns:
        """Every sample of a task, as columns: the filter choices worked out once, a right answer looked at
        no further.

        Wrong, parsed, untruncated answers are either misplaced or wrong: that needs each one's gold number and
        the numbers its response states after answer markers, worked out for all of them at once below
        (`_misplaced`) rather than sample by sample (most of the classification's time before)."""
        family = self.family
        choices = options.filter_choices(task, family)
        first = choices[0] if choices else None
        samples = samples if isinstance(samples, list) else list(samples)
        correct, parsed_list, answered = Flags(), Flags(), Flags()
        failures_list: list[tuple[Failure, ...]] = []
        answers: list[str | None] = []
        chars: list[int] = []
        suspects = array("q")  # rows whose answer is wrong, parsed and not cut off: misplaced or wrong
        suspect_samples: list[SampleRecord] = []
        suspect_responses: list[str] = []
        for row, sample in enumerate(samples):
            scores = sample.scores
            filt = first if first in scores else pick_filter(choices, scores)
            value = scores.get(filt, _NO_SCORES).get("exact_match")
            right = value >= 0.5 if type(value) is float else binary_score(value)
            answer = sample.filtered.get(filt)
            parsed = answer is not None and answer != INVALID_ANSWER
            response = sample.responses[0] if sample.responses else ""
            failures: tuple[Failure, ...] = ()
            usable = parsed
            if not right:
                if is_truncated(sample, options):
                    failures, usable = _GSM8K_TRUNCATED, False
                elif not parsed:
                    failures = _GSM8K_FORMAT
                else:
                    failures = _GSM8K_WRONG
                    suspects.append(row)
                    suspect_samples.append(sample)
                    suspect_responses.append(response)
            correct.append(bool(right))
            parsed_list.append(parsed)
            failures_list.append(failures)
            answers.append(answer)
            chars.append(len(response))
            answered.append(usable)
        for at in _misplaced(suspect_samples, suspect_responses):
            failures_list[suspects[at]], answered[suspects[at]] = _GSM8K_MISPLACED, False
        return TaskColumns(task, family, [s.doc_id for s in samples], [s.doc_hash for s in samples], correct,
                           parsed_list, failures_list, [()] * len(samples), answers, chars, answered)


def _numbers(texts: list[str]) -> list[float]:
    """`parse_number` of each text matched by a number pattern, its commas and dollar signs dropped from all
    of them at once, then `float` over the list. Such a text always converts (a sign, digits - any Unicode
    decimal digit, which `float` reads - and a decimal part; no newline, no trailing dot)."""
    if not texts:
        return []
    return list(map(float, "\n".join(texts).replace(",", "").replace("$", "").split("\n")))


def _golds(samples: list[SampleRecord]) -> list[float | None]:
    """`gsm8k_gold` of each sample: the targets not yet in `_GOLD_MEMO` searched and parsed over the list and
    remembered there (the baseline and the candidate share their targets); a sample whose target has no
    number is read one by one (its document's answer).

    Every target is looked up before any sample is read one by one: that reading (`_gold_in`) may empty a
    full memo, and lookups after it would all miss (at 10^6 documents: a million samples read one by one).
    A memo too full for this call's targets keeps only them."""
    targets = [s.target for s in samples]
    memo = _GOLD_MEMO
    fresh = [t for t in dict.fromkeys(targets) if type(t) is str and t not in memo]
    if fresh:
        if len(memo) + len(fresh) > _GOLD_MEMO_SIZE:
            kept = {t: memo[t] for t in targets if type(t) is str and t in memo}
            memo.clear()
            memo.update(kept)
        found = [_NUMBER.search(t.split("####")[-1]) for t in fresh]
        values = iter(_numbers([m.group(0) for m in found if m is not None]))
        memo.update(zip(fresh, [next(values) if m is not None else None for m in found], strict=True))
    golds = [memo.get(t) if type(t) is str else None for t in targets]
    return [gold if gold is not None else gsm8k_gold(s) for gold, s in zip(golds, samples, strict=True)]


#: text -> the first number after its last '####' (None: no number there), for `_gold_in` and `_golds`
_GOLD_MEMO: dict[str, float | None] = {}
_GOLD_MEMO_SIZE = 1 << 16


def _misplaced(samples: list[SampleRecord], responses: list[str]) -> list[int]:
    """Which of these wrong answers' responses state the gold number after an answer marker: one regex pass
    over the responses joined by NULs (the joined pattern cannot match across one), the stated numbers
    parsed together. Responses that hold a NUL themselves are searched one by one."""
    if not samples:
        return []
    golds = _golds(samples)
    searched = array("q", (i for i, gold in enumerate(golds) if gold is not None))
    texts = [responses[i] for i in searched]
    joined = "\x00".join(texts)
    if joined.count("\x00") != len(texts) - 1:  # a response holds a NUL: search them one at a time
        return [i for i, text in zip(searched, texts, strict=True)
                if any(_same(parse_number(m.group(1)), golds[i]) for m in _ANSWER_MARKER.finditer(text))]
    starts = array("q", accumulate((len(text) + 1 for text in texts[:-1]), initial=0))
    del texts
    found: list[int] = []
    matches = _JOINED_MARKER.finditer(joined)
    # a batch of matches at a time: at 10^6 documents the wrong answers' matches held at once were ~90 MB
    while batch := list(islice(matches, _MATCH_BATCH)):
        for match, value in zip(batch, _numbers([m.group(1) for m in batch]), strict=True):
            at = searched[bisect_right(starts, match.start()) - 1]
            gold = golds[at]
            if gold is not None and abs(value - gold) < 1e-6 and (not found or found[-1] != at):
                found.append(at)
    return found


_MATCH_BATCH = 1 << 14


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
        return self.classify_columns(task, samples, options).outcomes()

    def classify_columns(self, task: str, samples: Iterable[SampleRecord], options: ClassifyOptions) -> TaskColumns:
        """Every sample of a task, as columns: the filter choices worked out once."""
        family = self.family
        choices = options.filter_choices(task, family)
        first = choices[0] if choices else None
        samples = samples if isinstance(samples, list) else list(samples)
        # a subject's failures and categories are the same for every sample: one shared (immutable) tuple each
        shared: dict[tuple[str, FailureKind, str | None], tuple[Failure, ...]] = {}
        subjects: dict[str | None, tuple[str, ...]] = {}
        correct, parsed_list = Flags(), Flags()
        failures_list: list[tuple[Failure, ...]] = []
        categories: list[tuple[str, ...]] = []
        answers: list[str | None] = []
        for sample in samples:
            scores = sample.scores
            filt = first if first is not None and first in scores else pick_filter(choices, scores)
            value = scores.get(filt, _NO_SCORES).get("exact_match")
            right = value >= 0.5 if type(value) is float else binary_score(value)
            answer = sample.filtered.get(filt)
            parsed = answer is not None and answer != INVALID_ANSWER
            doc = sample.doc  # the document's category, else mmlu_pro_category's other places
            category = doc.get("category") if doc else None
            if not (type(category) is str and category):
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
            correct.append(bool(right))
            parsed_list.append(parsed)
            failures_list.append(failures)
            categories.append(cats)
            answers.append(answer)
        # answered is parsed: a failure without a parsed choice is format or truncation, one with it knowledge
        return TaskColumns(task, family, [s.doc_id for s in samples], [s.doc_hash for s in samples], correct,
                           parsed_list, failures_list, categories, answers,
                           [len(r[0]) if r else 0 for r in [s.responses for s in samples]], parsed_list)


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
    from rlgate.badcases.code_families import CODE_CLASSIFIERS
    from rlgate.badcases.vlm_families import VLM_CLASSIFIERS

    return [Gsm8kClassifier(), MmluProClassifier(), IfevalClassifier(), *VLM_CLASSIFIERS, *CODE_CLASSIFIERS]


BUILTIN_CLASSIFIERS: list[FailureClassifier] = _builtin()
