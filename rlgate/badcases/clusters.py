"""Failure clusters of baseline and candidate, and which grew significantly.

Paired where both runs have the document (exact McNemar on the documents whose failure status
changed), else a one-sided two-proportion z-test; Holm-adjusted within each level (class,
class x category). Knowledge classes (wrong answers) are tested only on documents both runs
answered in a parseable form. Examples come only from tasks outside `release_gate_only` splits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from heapq import nsmallest

from rlgate.badcases.index import Key, OutcomeIndex, Outcomes, RunIndex, build_index
from rlgate.badcases.models import BadcaseExample, ClusterStat, FailureKind
from rlgate.badcases.taxonomy import SampleOutcome
from rlgate.results.models import SampleRecord, doc_order
from rlgate.stats.distributions import normal_cdf
from rlgate.stats.multiple import holm
from rlgate.stats.paired_tests import mcnemar_exact

_TEXT_LIMIT = 600
_NONE: frozenset[Key] = frozenset()


def mcnemar_greater(new: int, fixed: int) -> float:
    """One-sided exact McNemar: P(at least `new` of the discordant pairs went the candidate's bad way)."""
    return mcnemar_exact(new, fixed, "greater")


def two_proportion_greater(x1: int, n1: int, x2: int, n2: int) -> float:
    """One-sided pooled z-test that the second rate exceeds the first (unpaired runs)."""
    if n1 == 0 or n2 == 0:
        return 1.0
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    return normal_cdf(-(x2 / n2 - x1 / n1) / se)


def shorten(text: str | None, limit: int = _TEXT_LIMIT) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


@dataclass
class ClusterInputs:
    """Both runs' classified samples, their records (for examples) and the private tasks."""

    candidate: Outcomes
    baseline: Outcomes | None
    candidate_samples: Mapping[Key, SampleRecord]
    baseline_samples: Mapping[Key, SampleRecord]
    private_tasks: frozenset[str]
    alpha: float = 0.05
    max_examples: int = 3


def _has(outcome: SampleOutcome, cls: str, category: str | None) -> bool:
    return any(f.cls == cls and (category is None or f.category == category) for f in outcome.failures)


def _example(key: Key, data: ClusterInputs, cls: str, category: str | None) -> BadcaseExample:
    cand = data.candidate_samples.get(key)
    base = data.baseline_samples.get(key)
    base_out = data.baseline.get(key) if data.baseline else None
    cand_out = data.candidate[key]
    return BadcaseExample(
        task=key[0], doc_id=key[1],
        prompt=shorten(cand.prompt if cand else None), target=shorten(cand.target if cand else None),
        candidate_response=shorten(cand.responses[0] if cand and cand.responses else None),
        candidate_answer=cand_out.answer,
        baseline_response=shorten(base.responses[0] if base and base.responses else None),
        baseline_answer=base_out.answer if base_out else None,
        baseline_had_failure=_has(base_out, cls, category) if base_out else None,
    )


def _examples(data: ClusterInputs, keys: Iterable[Key], new: set[Key], cls: str,
              category: str | None) -> list[BadcaseExample]:
    """Up to max_examples public documents, newly failing ones first, in a stable order.

    The first few of each group are picked with a heap rather than by sorting every failing document."""
    # ids are int | str (inspect, toy harnesses): order them like everywhere else, never by raw comparison
    limit = data.max_examples
    private = data.private_tasks
    public = [k for k in keys if k[0] not in private] if private else list(keys)
    if limit <= 0:  # as a slice [:limit] of the whole ranking reads it
        public.sort(key=_order)
        ranked = [k for k in public if k in new] + [k for k in public if k not in new]
        return [_example(k, data, cls, category) for k in ranked[:limit]]
    ranked = nsmallest(limit, [k for k in public if k in new], key=_order) if new else []
    if len(ranked) < limit:
        ranked += nsmallest(limit - len(ranked), [k for k in public if k not in new] if new else public, key=_order)
    return [_example(k, data, cls, category) for k in ranked]


def _order(key: Key) -> tuple[str, tuple[int, int | str]]:
    """Sort key for examples: task, then `doc_order` (int and str ids mixed, never compared raw)."""
    return key[0], doc_order(key[1])


#: (family, category, answered by both only) -> the documents both runs have with the same hash
PairedMemo = dict[tuple[str, str | None, bool], set[Key]]


def _stat(data: ClusterInputs, index: OutcomeIndex, memos: tuple[PairedMemo,
                                                                   dict[tuple[str, str | None], list[str]]],
          family: str, cls: str, kind: FailureKind, category: str | None, cand_docs: set[Key],
          base_docs: set[Key]) -> ClusterStat:
    paired_memo, private_memo = memos
    # a class's failing documents (any category) are documents of its family: nothing to intersect
    cand_has = index.runs[0].failing.get((family, cls, category), _NONE)
    if category is not None:
        cand_has = cand_has & cand_docs
    name = f"{cls}[{category}]" if category else cls
    memo = (family, category)
    private: list[str] = []
    if data.private_tasks:  # depends on the documents only, as the pairing does: once per (family, category)
        if memo not in private_memo:
            private_memo[memo] = sorted({k[0] for k in cand_docs | base_docs if k[0] in data.private_tasks})
        private = private_memo[memo]
    stat = ClusterStat(cluster=name, failure_class=cls, category=category, family=family, kind=kind,
                       candidate_count=len(cand_has), candidate_n=len(cand_docs),
                       candidate_rate=len(cand_has) / len(cand_docs) if cand_docs else 0.0,
                       private_tasks=list(private))
    new: set[Key] = set()
    if data.baseline is not None:
        base_has = index.runs[1].failing.get((family, cls, category), _NONE)
        if category is not None:
            base_has = base_has & base_docs
        if (family, category, False) not in paired_memo:  # documents both runs have, with the same hash
            paired_memo[(family, category, False)] = _within(index.paired, cand_docs, base_docs)
        paired = paired_memo[(family, category, False)]
        if kind == "knowledge":
            # A wrong answer only counts against knowledge where both runs gave a parseable answer;
            # otherwise a format fix in one run would show up as "more wrong answers".
            if (family, category, True) not in paired_memo:
                paired_memo[(family, category, True)] = _answered_by_both(paired, index.runs[0].unanswered,
                                                                          index.runs[1].unanswered)
            paired = paired_memo[(family, category, True)]
        new = paired & cand_has - base_has
        fixed = paired & base_has - cand_has
        stat.baseline_count, stat.baseline_n = len(base_has), len(base_docs)
        stat.baseline_rate = len(base_has) / len(base_docs) if base_docs else 0.0
        stat.delta_rate = stat.candidate_rate - stat.baseline_rate
        stat.n_paired, stat.new_in_candidate, stat.fixed_in_candidate = len(paired), len(new), len(fixed)
        if paired:
            stat.test, stat.p_value = "mcnemar_exact", mcnemar_greater(len(new), len(fixed))
        else:
            stat.test = "two_proportion_z"
            stat.p_value = two_proportion_greater(len(base_has), len(base_docs), len(cand_has), len(cand_docs))
    stat.examples = _examples(data, cand_has, new, cls, category)
    return stat


def _within(keys: set[Key], first: set[Key], second: set[Key]) -> set[Key]:
    """`keys & first & second`, read only: `keys` itself when it lies in both (one family, every document
    paired: no copy of 10^6 keys), else the intersection."""
    if len(keys) <= min(len(first), len(second)) and keys <= first and keys <= second:
        return keys
    return keys & first & second


def _answered_by_both(paired: set[Key], candidate: set[Key], baseline: set[Key]) -> set[Key]:
    """The paired documents both runs answered, read only: `paired` itself when neither run left one unanswered
    (every paired document is an outcome of both runs, so it is answered unless listed unanswered)."""
    if paired.isdisjoint(candidate) and paired.isdisjoint(baseline):
        return paired
    return paired - candidate - baseline


def _adjust(stats: list[ClusterStat], alpha: float) -> list[ClusterStat]:
    tested = [s for s in stats if s.p_value is not None]
    for stat, adjusted in zip(tested, holm([1.0 if s.p_value is None else s.p_value for s in tested]), strict=True):
        stat.p_adjusted = adjusted
        growth = stat.new_in_candidate > stat.fixed_in_candidate if stat.n_paired else (stat.delta_rate or 0.0) > 0
        stat.grew = adjusted < alpha and growth
    return sorted(stats, key=lambda s: (not s.grew, -(s.new_in_candidate - s.fixed_in_candidate),
                                        -s.candidate_count, s.cluster))


def compute_clusters(data: ClusterInputs, index: OutcomeIndex | None = None
                     ) -> tuple[list[ClusterStat], list[ClusterStat]]:
    """Class-level and class x category clusters, each sorted grown-first then by net growth.

    `index`: both runs' outcomes indexed once (`badcases.index`), shared with the drop explanations.
    """
    if index is None:
        index = build_index(data.candidate, data.baseline)
    memos: tuple[PairedMemo, dict[tuple[str, str | None], list[str]]] = ({}, {})
    base_run = index.runs[1] if data.baseline is not None else RunIndex()
    top: list[ClusterStat] = []
    by_category: list[ClusterStat] = []
    for (family, cls), kind in sorted(index.kinds.items()):
        cand_docs = index.runs[0].docs.get(family, set())
        base_docs = base_run.docs.get(family, set())
        top.append(_stat(data, index, memos, family, cls, kind, None, cand_docs, base_docs))
        cand_index = index.runs[0].categories.get(family, {})
        base_index = base_run.categories.get(family, {})
        for category in sorted(index.categories.get((family, cls), ())):
            by_category.append(_stat(data, index, memos, family, cls, kind, category,
                                     cand_index.get(category, set()), base_index.get(category, set())))
    return _adjust(top, data.alpha), _adjust(by_category, data.alpha)
