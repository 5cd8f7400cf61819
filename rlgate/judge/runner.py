"""Judge one task: rule first, the LLM only where the policy asks for it, every call recorded.

The order in which the two answers are shown is seeded per item (seed, task, doc id), so adding
items never reshuffles the others; with `samples >= 2` each item is judged in both orders. A call
whose output cannot be used is an error, never a win. The LLM judge is built only when an item
needs it, so a task fully decided by rules never loads deepeval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any, Protocol

from rlgate._core.errors import InputError
from rlgate.contract.judge_policy import JudgeSpec
from rlgate.harness.vocabulary import vocabulary_of
from rlgate.judge.bias import judge_trust, length_bias, position_bias
from rlgate.judge.report import JudgeCall, JudgeItem, Order, Outcome, TaskJudgeReport
from rlgate.judge.stats import win_rate
from rlgate.results.models import INVALID_ANSWER, SampleRecord, TaskResult, doc_order

_VALUE = {"win": 1.0, "tie": 0.5, "loss": 0.0}


class Judge(Protocol):
    """What the runner needs from an LLM judge (rlgate.judge.geval.GEvalJudge implements it)."""

    @property
    def model_name(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    def compare(self, question: str, first: str, second: str, sample: int) -> Any: ...

    def score(self, question: str, answer: str, sample: int) -> Any: ...

    @property
    def last_cached(self) -> bool: ...


@dataclass
class LazyJudge:
    """Builds the judge on first use and remembers it."""

    factory: Callable[[], Judge]
    judge: Judge | None = field(default=None)

    def get(self) -> Judge:
        if self.judge is None:
            self.judge = self.factory()
        return self.judge


def first_order(seed: int, key: str, randomize: bool) -> Order:
    """Which answer is shown first in sample 0: a seeded coin per item, or the candidate when off."""
    if not randomize:
        return "candidate_first"
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return "candidate_first" if digest[0] % 2 == 0 else "baseline_first"


def call_orders(spec: JudgeSpec, key: str) -> list[Order]:
    """Orders of the `samples` calls: alternating from the seeded first one, so samples >= 2 sees both."""
    first = first_order(spec.seed, key, spec.order_randomization)
    other: Order = "baseline_first" if first == "candidate_first" else "candidate_first"
    return [first if s % 2 == 0 else other for s in range(spec.samples)]


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def _combine(values: list[float]) -> Outcome:
    mean = fmean(values)
    return "win" if mean > 0.5 else "loss" if mean < 0.5 else "tie"


def judge_pair(judge: Judge, spec: JudgeSpec, key: str, question: str, candidate: str,
               baseline: str) -> tuple[Outcome, list[JudgeCall]]:
    """Judge candidate vs baseline over the policy's samples and orders; any unusable call makes an error."""
    calls: list[JudgeCall] = []
    for sample, order in enumerate(call_orders(spec, key)):
        first, second = (candidate, baseline) if order == "candidate_first" else (baseline, candidate)
        try:
            result = judge.compare(question, first, second, sample)
        except Exception as exc:  # deepeval raises ValueError/KeyError/... on unusable output: an error item
            calls.append(JudgeCall(sample=sample, order=order, error=_short(exc), cached=judge.last_cached))
            continue
        if result.verdict == "tie":
            outcome = "tie"
        else:
            candidate_won = (result.verdict == "first") == (order == "candidate_first")
            outcome = "win" if candidate_won else "loss"
        calls.append(JudgeCall(sample=sample, order=order, verdict=result.verdict, score=result.score,
                               outcome=outcome, cached=result.cached))
    if any(c.error for c in calls):
        return "error", calls
    return _combine([_VALUE[c.outcome] for c in calls if c.outcome]), calls


def judge_points(judge: Judge, spec: JudgeSpec, question: str, answer: str,
                 role: str) -> tuple[float | None, list[JudgeCall]]:
    """Mean pointwise score of one answer over the samples (None when any call failed)."""
    calls: list[JudgeCall] = []
    for sample in range(spec.samples):
        try:
            result = judge.score(question, answer, sample)
            calls.append(JudgeCall(sample=sample, answer=role, score=result.score, cached=result.cached))
        except Exception as exc:  # unusable output: an error, never a score
            calls.append(JudgeCall(sample=sample, answer=role, error=_short(exc), cached=judge.last_cached))
    scores = [c.score for c in calls if c.score is not None]
    return (fmean(scores) if len(scores) == len(calls) else None), calls


def rule_metric(task: str, spec: JudgeSpec, sample: SampleRecord) -> tuple[str, str] | None:
    """The (metric, filter) whose per-sample score decides an item on the rule path."""
    known = vocabulary_of(task)
    default_filter = known.default_filter
    if spec.rule_metric:
        metric, _, filt = spec.rule_metric.partition("/")
        return metric, filt or default_filter
    if known.closed and known.metrics:
        return next(iter(known.metrics)), default_filter
    for filt, metrics in sample.scores.items():
        for metric in metrics:
            return metric, filt
    return None


def rule_value(sample: SampleRecord, metric: tuple[str, str] | None) -> tuple[float | None, str]:
    """The rule's score for a sample, or None with the reason it cannot decide."""
    if metric is None:
        return None, "the task has no rule metric"
    value = sample.score(*metric)
    if value is None:
        return None, f"no {metric[0]}/{metric[1]} score"
    if sample.filtered.get(metric[1]) == INVALID_ANSWER:
        return None, f"no parseable answer ({INVALID_ANSWER})"
    return (fmean(value) if isinstance(value, list) else float(value)), ""


def question_of(sample: SampleRecord) -> str:
    """The text the judge sees as the user's request."""
    if sample.prompt:
        return sample.prompt
    doc = sample.doc or {}
    for name in ("question", "prompt", "instruction", "input", "problem"):
        if isinstance(doc.get(name), str):
            return str(doc[name])
    return str(doc) if doc else f"document {sample.doc_id}"


def _answer(sample: SampleRecord | None) -> str:
    return sample.responses[0] if sample is not None and sample.responses else ""


def _rule_outcome(cand: float, base: float | None) -> Outcome:
    if base is None:
        return "scored"
    return "win" if cand > base else "loss" if cand < base else "tie"


def judge_item(task: str, spec: JudgeSpec, cand: SampleRecord, base: SampleRecord | None,
               lazy: LazyJudge) -> JudgeItem:
    """Decide one document by rule or by the LLM judge, as the policy says."""
    question, cand_text, base_text = question_of(cand), _answer(cand), _answer(base)
    common: dict[str, Any] = {"doc_id": cand.doc_id, "task": task, "candidate_chars": len(cand_text),
                              "baseline_chars": len(base_text) if base is not None else None}
    if spec.type != "llm":
        metric = rule_metric(task, spec, cand)
        cand_rule, why_c = rule_value(cand, metric)
        base_rule, why_b = rule_value(base, metric) if base is not None else (None, "")
        if cand_rule is not None and (base is None or base_rule is not None):
            assert metric is not None
            rule = {"candidate": cand_rule, **({"baseline": base_rule} if base_rule is not None else {})}
            return JudgeItem(decided_by="rule", outcome=_rule_outcome(cand_rule, base_rule), rule=rule,
                             reason=f"rule: {metric[0]}/{metric[1]}", **common)
        why = f"candidate: {why_c}" if cand_rule is None else f"baseline: {why_b}"
        if spec.type == "rule":
            return JudgeItem(decided_by="undecided", outcome="undecided", reason=f"rule cannot decide ({why})",
                             **common)
        reason = f"LLM judge: the rule cannot decide ({why})"
    else:
        reason = "LLM judge"
    judge = lazy.get()
    key = f"{task}:{cand.doc_id}"
    if spec.mode == "pairwise":
        if base is None:
            raise InputError(f"task {task}: the pairwise judge needs the baseline's answers",
                             field="judge.mode", fix="give baseline results, or use mode: pointwise")
        outcome, calls = judge_pair(judge, spec, key, question, cand_text, base_text)
        return JudgeItem(decided_by="llm", outcome=outcome, reason=reason, calls=calls, **common)
    cand_score, calls = judge_points(judge, spec, question, cand_text, "candidate")
    base_score = None
    if base is not None:
        base_score, base_calls = judge_points(judge, spec, question, base_text, "baseline")
        calls += base_calls
    if cand_score is None or (base is not None and base_score is None):
        return JudgeItem(decided_by="llm", outcome="error", reason=reason, calls=calls, **common)
    point: Outcome = "scored"
    if base_score is not None:
        diff = cand_score - base_score
        point = "win" if diff > spec.tie_margin else "loss" if diff < -spec.tie_margin else "tie"
    return JudgeItem(decided_by="llm", outcome=point, reason=reason, calls=calls, candidate_score=cand_score,
                     baseline_score=base_score, **common)


def judge_items(task: str, spec: JudgeSpec, candidate: TaskResult, baseline: TaskResult | None,
                lazy: LazyJudge) -> tuple[list[JudgeItem], int]:
    """Items of one leaf task, paired by doc id, and how many documents could not be paired."""
    base_by_id = {s.doc_id: s for s in baseline.samples} if baseline is not None else {}
    items: list[JudgeItem] = []
    for cand in sorted(candidate.samples, key=lambda s: doc_order(s.doc_id)):
        if baseline is not None and cand.doc_id not in base_by_id:
            continue
        items.append(judge_item(task, spec, cand, base_by_id.get(cand.doc_id), lazy))
    unpaired = len({s.doc_id for s in candidate.samples} ^ set(base_by_id)) if baseline is not None else 0
    return items, unpaired


def judge_task(task: str, spec: JudgeSpec, candidate: TaskResult, baseline: TaskResult | None,
               judge_factory: Callable[[], Judge], level: float = 0.95) -> TaskJudgeReport:
    """Judge every paired document of a task and summarise win rate, errors and the judge's biases."""
    lazy = LazyJudge(judge_factory)
    items, unpaired = judge_items(task, spec, candidate, baseline, lazy)
    return summarise(task, spec, items, lazy.judge, level, unpaired)


def summarise(task: str, spec: JudgeSpec, items: list[JudgeItem], judge: Judge | None, level: float,
              unpaired: int = 0) -> TaskJudgeReport:
    """Counts, win rate under the tie policy, and the judge's position and length biases."""
    count = {o: sum(i.outcome == o for i in items) for o in ("win", "loss", "tie", "error")}
    llm_items = [i for i in items if i.decided_by == "llm"]
    errors = count["error"]
    examples = list(dict.fromkeys(c.error for i in items for c in i.calls if c.error))[:5]
    has_pairs = any(i.outcome in ("win", "loss", "tie") for i in items) or (
        errors > 0 and (spec.mode == "pairwise" or any(i.baseline_chars is not None for i in items)))
    scores_c = [i.candidate_score for i in items if i.candidate_score is not None]
    scores_b = [i.baseline_score for i in items if i.baseline_score is not None]
    calls = [c for i in items for c in i.calls]
    position = position_bias(llm_items) if spec.mode == "pairwise" and llm_items else None
    length = length_bias(llm_items) if llm_items and has_pairs else None
    return TaskJudgeReport(
        task=task, policy=spec.model_dump(mode="json"), items=items, unpaired=unpaired,
        judge_model=judge.model_name if judge is not None else None,
        judge_fingerprint=judge.fingerprint if judge is not None else None,
        decided_by={k: sum(i.decided_by == k for i in items) for k in ("rule", "llm", "undecided")},
        errors=errors, error_rate=errors / len(llm_items) if llm_items else None, error_examples=examples,
        win_rate=win_rate(count["win"], count["loss"], count["tie"], errors, spec.tie_policy, level)
        if has_pairs else None,
        mean_candidate_score=fmean(scores_c) if scores_c else None,
        mean_baseline_score=fmean(scores_b) if scores_b else None,
        position_bias=position, length_bias=length,
        trust=judge_trust(spec, position, length) if position is not None or length is not None else None,
        llm_calls=sum(not c.cached for c in calls), cache_hits=sum(c.cached for c in calls),
    )
