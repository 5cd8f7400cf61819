"""Independent references for the batched badcase paths: the classifiers as they were written per sample
before `classify_many` existed, and cluster counts worked out straight from the outcomes (no index).

The classifier bodies are the pre-change code of `rlgate.badcases.families` / `taxonomy.GenericClassifier`,
copied here on purpose: the library's per-sample `classify` now calls its own `classify_many`, so only a copy
can tell whether batching changed an outcome. They reuse only the small helpers batching left alone
(score reading, truncation, GSM8K gold answer, MMLU-Pro subject).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable

from rlgate.badcases.clusters import mcnemar_greater, two_proportion_greater
from rlgate.badcases.families import IFEVAL_GROUPS, gsm8k_gold, mmlu_pro_category, parse_number
from rlgate.badcases.taxonomy import (
    ClassifyOptions,
    Failure,
    SampleOutcome,
    binary_score,
    first_response,
    is_truncated,
)
from rlgate.harness.lmeval.catalog import DEFAULT_FILTER, catalog_task
from rlgate.results.models import INVALID_ANSWER, DocId, RunResult, SampleRecord

_ANSWER_MARKER = re.compile(r"(?i)(?:####|answer\s*(?:is|:)|\\boxed\{)[^0-9\-$]{0,24}(-?\$?\d[\d,]*(?:\.\d+)?)")
_GENERIC_METRICS = ("exact_match", "acc", "acc_norm", "prompt_level_strict_acc", "pass@1", "em", "f1")
Key = tuple[str, DocId]


def filter_for(options: ClassifyOptions, task: str, family: str, sample: SampleRecord) -> str:
    """The per-sample filter rule as it was written before filter choices were worked out per task."""
    for name in (task, family):
        chosen = options.filters.get(name)
        if chosen and chosen in sample.scores:
            return chosen
    default = DEFAULT_FILTER.get(family)
    if default and default in sample.scores:
        return default
    return next(iter(sample.scores), "none")


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) < 1e-6


def gsm8k(task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
    filt = filter_for(options, task, "gsm8k", sample)
    right = binary_score(sample.score("exact_match", filt))
    answer = sample.filtered.get(filt)
    parsed = answer is not None and answer != INVALID_ANSWER
    response = first_response(sample)
    failures: tuple[Failure, ...] = ()
    if not right:
        gold = gsm8k_gold(sample)
        if is_truncated(sample, options):
            failures = (Failure("gsm8k_truncated_at_max_tokens", "truncation"),)
        elif not parsed:
            failures = (Failure("gsm8k_final_answer_format_error", "format"),)
        elif gold is not None and any(_same(parse_number(m.group(1)), gold)
                                      for m in _ANSWER_MARKER.finditer(response)):
            failures = (Failure("gsm8k_answer_misplaced", "format"),)
        else:
            failures = (Failure("gsm8k_wrong_answer", "knowledge"),)
    return SampleOutcome(task=task, family="gsm8k", doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                         correct=bool(right), parsed=parsed, failures=failures, answer=answer,
                         response_chars=len(response))


def mmlu_pro(task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
    filt = filter_for(options, task, "mmlu_pro", sample)
    right = binary_score(sample.score("exact_match", filt))
    answer = sample.filtered.get(filt)
    parsed = answer is not None and answer != INVALID_ANSWER
    category = mmlu_pro_category(task, sample)
    failures: tuple[Failure, ...] = ()
    if not right:
        if not parsed and is_truncated(sample, options):
            failures = (Failure("mmlu_pro_truncated_at_max_tokens", "truncation", category),)
        elif not parsed:
            failures = (Failure("mmlu_pro_no_parseable_choice", "format", category),)
        else:
            failures = (Failure("mmlu_pro_wrong_choice", "knowledge", category),)
    return SampleOutcome(task=task, family="mmlu_pro", doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                         correct=bool(right), parsed=parsed, failures=failures,
                         categories=(category,) if category else (), answer=answer,
                         response_chars=len(first_response(sample)))


def ifeval(task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
    filt = filter_for(options, task, "ifeval", sample)
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
    return SampleOutcome(task=task, family="ifeval", doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                         correct=bool(right), parsed=parsed, failures=tuple(dict.fromkeys(failures)),
                         categories=tuple(dict.fromkeys(ids)), answer=None, response_chars=len(response))


def generic(task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
    family = catalog_task(task) or task
    filt = filter_for(options, task, family, sample)
    metrics = sample.scores.get(filt, {})
    metric = next((m for m in _GENERIC_METRICS if m in metrics), next(iter(metrics), None))
    right = binary_score(metrics.get(metric)) if metric else None
    answer = sample.filtered.get(filt)
    parsed = answer != INVALID_ANSWER
    failures: tuple[Failure, ...] = ()
    if not right:
        if not parsed:
            failures = (Failure(f"{family}_invalid", "format"),)
        elif is_truncated(sample, options):
            failures = (Failure(f"{family}_truncated", "truncation"),)
        else:
            failures = (Failure(f"{family}_wrong", "knowledge"),)
    return SampleOutcome(task=task, family=family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                         correct=bool(right), parsed=parsed, failures=failures, answer=answer,
                         response_chars=len(first_response(sample)))


def reference_for(task: str) -> Callable[[str, SampleRecord, ClassifyOptions], SampleOutcome]:
    """The family the built-in registry gives a task (its claims rules, written out)."""
    if catalog_task(task) in ("gsm8k", "gsm8k_cot") or task.startswith("gsm8k"):
        return gsm8k
    if task == "mmlu_pro" or task.startswith("mmlu_pro_"):
        return mmlu_pro
    if task == "ifeval" or task.startswith("ifeval_"):
        return ifeval
    return generic


def classify_each(run: RunResult, options: ClassifyOptions) -> dict[Key, SampleOutcome]:
    """Every sample of the run classified alone by the pre-change per-sample code."""
    return {(name, sample.doc_id): reference_for(name)(name, sample, options)
            for name, result in run.tasks.items() for sample in result.samples}


def answered(outcome: SampleOutcome) -> bool:
    return outcome.parsed and not any(f.kind in ("format", "truncation") for f in outcome.failures)


ClusterCounts = dict[tuple[str, str, str | None], dict[str, object]]


def cluster_counts(cand: dict[Key, SampleOutcome], base: dict[Key, SampleOutcome] | None) -> ClusterCounts:
    """Per (family, class, category or None): the counts and p-value a cluster reports, by plain loops."""
    kinds: dict[tuple[str, str], str] = {}
    categories: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in [cand] + ([base] if base is not None else []):
        for outcome in run.values():
            for failure in outcome.failures:
                kinds[(outcome.family, failure.cls)] = failure.kind
                if failure.category:
                    categories[(outcome.family, failure.cls)].add(failure.category)

    def docs(run: dict[Key, SampleOutcome], family: str, category: str | None) -> set[Key]:
        return {k for k, o in run.items() if o.family == family and (category is None or category in o.categories)}

    def failing(run: dict[Key, SampleOutcome], keys: set[Key], cls: str, category: str | None) -> set[Key]:
        return {k for k in keys if any(f.cls == cls and (category is None or f.category == category)
                                       for f in run[k].failures)}

    out: ClusterCounts = {}
    for (family, cls), kind in kinds.items():
        for category in [None, *sorted(categories.get((family, cls), ()))]:
            cand_docs = docs(cand, family, category)
            cand_has = failing(cand, cand_docs, cls, category)
            row: dict[str, object] = {"kind": kind, "candidate_count": len(cand_has), "candidate_n": len(cand_docs)}
            if base is not None:
                base_docs = docs(base, family, category)
                base_has = failing(base, base_docs, cls, category)
                paired = {k for k in cand_docs & base_docs if cand[k].doc_hash == base[k].doc_hash}
                if kind == "knowledge":
                    paired = {k for k in paired if answered(cand[k]) and answered(base[k])}
                new, fixed = len(paired & cand_has - base_has), len(paired & base_has - cand_has)
                p = (mcnemar_greater(new, fixed) if paired else
                     two_proportion_greater(len(base_has), len(base_docs), len(cand_has), len(cand_docs)))
                row.update(baseline_count=len(base_has), baseline_n=len(base_docs), n_paired=len(paired),
                           new_in_candidate=new, fixed_in_candidate=fixed, p_value=p)
            out[(family, cls, category)] = row
    return out
