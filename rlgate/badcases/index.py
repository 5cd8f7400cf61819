"""One pass over both runs' classified samples: what clusters, explanations and next actions all read.

Before, the clusters, the drop explanations, the mean lengths and the tool-error counts each walked
every outcome of both runs (and paired them) again; this index walks them once, and each consumer
works with set operations and per-family lists.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, not_

from rlgate.badcases.columns import KeySets, PairCounts, RunOutcomes, pair_columns
from rlgate.badcases.models import FailureKind
from rlgate.badcases.taxonomy import Failure, SampleOutcome
from rlgate.results.models import DocId

Key = tuple[str, DocId]
Outcomes = Mapping[Key, SampleOutcome]
#: (family, failure class, category or None for "in any category")
ClassKey = tuple[str, str, str | None]
Pair = tuple[SampleOutcome, SampleOutcome]


@dataclass
class RunIndex:
    """One run's outcomes by family, failure class and category."""

    docs: dict[str, set[Key]] = field(default_factory=dict)
    failing: dict[ClassKey, set[Key]] = field(default_factory=dict)
    #: outcomes without a usable answer (most outcomes have one: at 10^6 documents the answered set was ~67 MB)
    unanswered: set[Key] = field(default_factory=set)
    categories: dict[str, dict[str, set[Key]]] = field(default_factory=dict)
    lengths: dict[str, list[int]] = field(default_factory=dict)  # family -> [total response chars, outcomes]
    tool_errors: dict[str, dict[str, int]] = field(default_factory=dict)
    family_kinds: dict[str, set[str]] = field(default_factory=dict)  # every failure kind a family shows


def index_run(run: Outcomes) -> tuple[RunIndex, dict[tuple[str, str], FailureKind], dict[tuple[str, str], set[str]]]:
    """The run's index, and each (family, class)'s kind and categories as the run shows them.

    A pass per question, each a comprehension or a C-level map; outcomes that fail are grouped by their
    failures tuple (classifiers share one tuple per kind of failure), and each group's failures walked once.
    """
    out = RunIndex()
    outcomes = list(run.values())
    families = list(dict.fromkeys(map(_family, outcomes)))
    if len(families) == 1:  # the common case: one family, so its documents are the run's keys
        out.docs = {families[0]: set(run)}
        out.lengths = {families[0]: [sum(map(_chars, outcomes)), len(run)]}
    else:
        docs: dict[str, set[Key]] = {family: set() for family in families}
        lengths: dict[str, list[int]] = {family: [0, 0] for family in families}
        for key, outcome in run.items():
            docs[outcome.family].add(key)
            length = lengths[outcome.family]
            length[0] += outcome.response_chars
            length[1] += 1
        out.docs, out.lengths = docs, lengths
    out.unanswered = set(compress(run, map(not_, map(_answered, outcomes))))
    by_category: dict[str, dict[str, set[Key]]] = defaultdict(lambda: defaultdict(set))
    for key, outcome in [(k, o) for k, o in run.items() if o.categories]:
        for category in outcome.categories:
            by_category[outcome.family][category].add(key)
    out.categories = {family: dict(cats) for family, cats in by_category.items()}
    # failing outcomes by (family, failures tuple), in order of first appearance
    groups: Groups = {}
    for key, outcome in [(k, o) for k, o in run.items() if o.failures]:
        failures = outcome.failures
        group = groups.get((outcome.family, id(failures)))
        if group is None:
            groups[(outcome.family, id(failures))] = (failures, [key])
        else:
            group[1].append(key)
    kinds, categories, conflicting = _walk_groups(out, groups)
    if conflicting:  # a class shown with two kinds: the kind of its last outcome wins, as outcome by outcome
        kinds = {(o.family, f.cls): f.kind for o in outcomes for f in o.failures}
    return out, kinds, categories


Groups = dict[tuple[str, int], tuple[tuple[Failure, ...], list[Key]]]


def _walk_groups(out: RunIndex, groups: Groups
                 ) -> tuple[dict[tuple[str, str], FailureKind], dict[tuple[str, str], set[str]], bool]:
    """Each group's failures, once: the failing sets, kinds, categories and tool-error counts; and whether
    a (family, class) showed two kinds (then the caller works the kinds out outcome by outcome)."""
    kinds: dict[tuple[str, str], FailureKind] = {}
    categories: dict[tuple[str, str], set[str]] = defaultdict(set)
    failing: dict[ClassKey, set[Key]] = defaultdict(set)
    conflicting = False
    for (family, _), (failures, keys) in groups.items():
        for failure in failures:
            cls = failure.cls
            conflicting = conflicting or kinds.get((family, cls), failure.kind) != failure.kind
            kinds[(family, cls)] = failure.kind
            out.family_kinds.setdefault(family, set()).add(failure.kind)
            failing[(family, cls, None)].update(keys)
            if failure.category is not None:
                failing[(family, cls, failure.category)].update(keys)
                if failure.category:
                    categories[(family, cls)].add(failure.category)
            if cls == "agent_unrecovered_tool_error" and failure.category:
                found = out.tool_errors.setdefault(family, {})
                found[failure.category] = found.get(failure.category, 0) + len(keys)
    out.failing = dict(failing)
    return kinds, categories, conflicting


def index_columns(run: RunOutcomes, keysets: KeySets | None = None
                  ) -> tuple[RunIndex, dict[tuple[str, str], FailureKind], dict[tuple[str, str], set[str]]]:
    """`index_run` of a run held as task columns: the same index, read from the lists (a family's documents
    from `keysets`, read only: the other run's set where both hold the same key lists)."""
    out = RunIndex()
    by_category: dict[str, dict[str, set[Key]]] = {}
    groups: Groups = {}
    members: dict[str, list[list[Key]]] = {}
    for part in run.parts:
        keys, family = part.keys(), part.family
        if not keys:  # a task without samples shows nothing, as in index_run
            continue
        members.setdefault(family, []).append(keys)
        length = out.lengths.setdefault(family, [0, 0])
        length[0] += sum(part.chars)
        length[1] += len(keys)
        out.unanswered.update(compress(keys, map(not_, part.answered)))
        if any(part.categories):
            cats = by_category.setdefault(family, {})
            for key, found in compress(zip(keys, part.categories, strict=True), part.categories):
                for category in found:
                    cats.setdefault(category, set()).add(key)
        for key, failures in compress(zip(keys, part.failures, strict=True), part.failures):
            group = groups.get((family, id(failures)))
            if group is None:
                groups[(family, id(failures))] = (failures, [key])
            else:
                group[1].append(key)
    out.categories = by_category
    keysets = keysets or KeySets()
    out.docs = {family: keysets.union(lists) for family, lists in members.items()}
    kinds, categories, conflicting = _walk_groups(out, groups)
    if conflicting:
        kinds = {(part.family, f.cls): f.kind for part in run.parts for fs in part.failures for f in fs}
    return out, kinds, categories


_family = attrgetter("family")
_chars = attrgetter("response_chars")
_answered = attrgetter("answered")


@dataclass
class OutcomeIndex:
    """Both runs indexed once; `pairs`: per family, (baseline, candidate) of the documents both runs have
    with the same document hash, in the candidate's order (or, for runs held as columns, `counts`);
    `paired`: their keys."""

    runs: list[RunIndex]
    kinds: dict[tuple[str, str], FailureKind]
    categories: dict[tuple[str, str], set[str]]
    pairs: dict[str, list[Pair]]
    paired: set[Key]
    family_kinds: dict[str, set[str]] = field(default_factory=dict)  # every failure kind a family shows
    #: runs held as columns: per family, its pairs counted (those families are not in `pairs`)
    counts: dict[str, PairCounts] = field(default_factory=dict)

    def mean_lengths(self, run: int) -> dict[str, float]:
        """Family -> mean response characters of that run's outcomes."""
        if run >= len(self.runs):
            return {}
        return {family: total / count for family, (total, count) in self.runs[run].lengths.items() if count}


def build_index(candidate: Outcomes, baseline: Outcomes | None) -> OutcomeIndex:
    """Index both runs (candidate first) and pair their outcomes; runs held as task columns (`RunOutcomes`,
    both of them) are read from their lists, and their pairs counted there (`OutcomeIndex.counts`)."""
    columns = isinstance(candidate, RunOutcomes) and (baseline is None or isinstance(baseline, RunOutcomes))
    if isinstance(candidate, RunOutcomes) and isinstance(baseline, RunOutcomes):
        candidate.share_keys(baseline)
    runs: list[RunIndex] = []
    kinds: dict[tuple[str, str], FailureKind] = {}
    categories: dict[tuple[str, str], set[str]] = defaultdict(set)
    family_kinds: dict[str, set[str]] = defaultdict(set)
    keysets = KeySets()  # the runs' equal document sets (and the paired one) as one set
    for run in [candidate] + ([baseline] if baseline is not None else []):
        found, run_kinds, run_categories = index_columns(run, keysets) \
            if isinstance(run, RunOutcomes) and columns else index_run(run)
        runs.append(found)
        for family, seen in found.family_kinds.items():
            family_kinds[family] |= seen
        kinds.update(run_kinds)  # as one loop over both runs did: the last run's kind wins
        for pair, cats in run_categories.items():
            categories[pair] |= cats
    pairs: dict[str, list[Pair]] = defaultdict(list)
    paired: set[Key] = set()
    counts: dict[str, PairCounts] = {}
    if isinstance(candidate, RunOutcomes) and isinstance(baseline, RunOutcomes):
        paired, counts = pair_columns(candidate, baseline, keysets)
    elif baseline is not None:
        get, add = baseline.get, paired.add
        for key, cand in candidate.items():
            base = get(key)
            if base is not None and base.doc_hash == cand.doc_hash:
                pairs[cand.family].append((base, cand))
                add(key)
    return OutcomeIndex(runs, kinds, dict(categories), dict(pairs), paired, dict(family_kinds), counts)
