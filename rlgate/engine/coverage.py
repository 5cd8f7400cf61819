"""Coverage against the contract: documents answered / documents a complete run of the task holds.

A run's own counts (lm-eval's n-samples effective, a manifest written by a run that chose its documents) can
describe a partial run consistently, so they never set what is expected. For each leaf of a gated task the
expected documents are the most any source promises: the contract's own count (the rlgate run manifest's
expected_documents, the suite's `limit`), the harness's size of the full split (lm-eval's n-samples original),
the documents of the task's cached document list (doc hashes by leaf, rlgate.results.expected), both runs'
reported counts, and the union of both runs' documents; a document the cached list does not hold is not
covered. A run answers a document when its samples hold it unchanged: a document
whose hash differs between the runs is not covered in either (the reason names the field that changed), and
a leaf without per-sample results answers none, unless the contract allows unpaired comparisons
(`allow_unpaired`), where its reported count stands. The gap per run goes to `gaps.judged` like every other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlgate.engine.context import GateContext
from rlgate.engine.gaps import CoverageGap, Shortfall
from rlgate.engine.models import GateVerdict
from rlgate.results.drops import CoverageShortfall
from rlgate.results.manifest import TaskRun
from rlgate.results.models import DocId, MetricKey, RunResult, SampleRecord, TaskResult

_SHOWN = 3


@dataclass
class _Count:
    expected: int = 0
    answered: int = 0
    causes: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    hint: str = ""  # how the gated task's harness logs per-sample results

    def add(self, cause: str, count: int, examples: list[str] = []) -> None:  # noqa: B006 - read only
        if count > 0:
            self.causes[cause] = self.causes.get(cause, 0) + count
            self.examples += examples[: max(0, _SHOWN - len(self.examples))]


def _manifest_entry(run: RunResult, leaf: str) -> TaskRun | None:
    manifest = run.provenance.manifest
    for entry in manifest.tasks if manifest is not None else []:
        if entry.task == leaf and entry.expected_documents is not None:
            return entry
    return None


def _promised(run: RunResult, leaf: str, task: TaskResult, other: TaskResult | None, limit: int | None,
              listed: int | None) -> tuple[int, str]:
    """(documents a complete run of the leaf holds, where that number comes from)."""
    entry = _manifest_entry(run, leaf)
    if entry is not None:  # the contract's own count, as the rlgate run recorded it
        stopped = len(entry.not_generated)  # a sequential check's stop: listed, never missing
        assert entry.expected_documents is not None
        return entry.expected_documents - stopped, "run_manifest.json expected_documents"
    sources = [(task.n_expected or 0, "the harness's full split (n-samples original)"),
               (other.n_expected or 0 if other is not None else 0, "the other run's full split"),
               (listed or 0, "the task's cached document list"),
               (task.n_samples, "the run's reported count"),
               (other.n_samples if other is not None else 0, "the other run's reported count")]
    size, source = max(sources, key=lambda s: s[0])
    if limit is not None and size > limit:
        return limit, f"the suite's limit {limit}"
    return size, source


def _changed_field(a: SampleRecord, b: SampleRecord) -> str:
    """Which part of a document differs between its two runs."""
    if isinstance(a.doc, dict) and isinstance(b.doc, dict):
        keys = sorted(k for k in set(a.doc) | set(b.doc) if a.doc.get(k) != b.doc.get(k))
        if keys:
            return ", ".join(map(str, keys[:3]))
    for name in ("prompt", "target"):
        if getattr(a, name) != getattr(b, name):
            return name
    return "doc_hash"


def _changed(task: TaskResult, other: TaskResult, leaf: str) -> list[str]:
    """Examples of documents whose hash differs between the runs, with the field that changed."""
    theirs: dict[DocId, SampleRecord] = {s.doc_id: s for s in other.samples}
    hashes = {s.doc_hash for s in other.samples}
    out: list[str] = []
    for sample in task.samples:
        partner = theirs.get(sample.doc_id)
        if partner is not None and partner.doc_hash != sample.doc_hash and sample.doc_hash not in hashes:
            out.append(f"{leaf}:{sample.doc_id} (changed: {_changed_field(sample, partner)})")
            if len(out) == _SHOWN:
                break
    return out


def _never_answered(task: TaskResult, expected: int, leaf: str) -> list[str]:
    """lm-eval's document ids are 0..n-1: name the first ones the run lacks."""
    ids = {s.doc_id for s in task.samples}
    if not all(type(d) is int for d in ids):
        return []
    return [f"{leaf}:{d}" for d in range(expected) if d not in ids][:_SHOWN]


def _leaf(ctx: GateContext, role: str, leaf: str, limit: int | None, count: _Count,
          listed: Mapping[str, frozenset[str]]) -> None:
    run = ctx.candidate if role == "candidate" else ctx.baseline
    other_run = ctx.baseline if role == "candidate" else ctx.candidate
    assert run is not None
    task = run.tasks[leaf]
    other = other_run.tasks.get(leaf) if other_run is not None else None
    known = listed.get(leaf)
    expected, source = _promised(run, leaf, task, other, limit, len(known) if known is not None else None)
    if not task.samples:
        answered = min(task.n_samples, expected) if ctx.config.allow_unpaired else 0
        if ctx.config.allow_unpaired:
            rest = expected - answered
        else:
            count.add(f"without per-sample results ({count.hint})", expected - answered,
                      [f"{leaf} (all)"])
            expected, rest = max(expected, 1), 0
    else:
        pairing = ctx.paired.get(leaf)
        if pairing is not None:
            r = pairing.report
            union = r.paired + r.only_baseline + r.only_candidate + r.document_mismatch
            own, theirs = (r.only_candidate, r.only_baseline) if role == "candidate" else \
                (r.only_baseline, r.only_candidate)
            answered = r.paired + own
            entry = _manifest_entry(run, leaf)
            stopped = len(entry.not_generated) if entry is not None else 0
            if stopped:  # a sequential check's stop: the documents after it were never generated, not missing
                dropped = min(stopped, theirs)
                theirs, union = theirs - dropped, union - dropped
            assert other is not None
            # the examples are looked for only where there is something to show (each is a pass over the run)
            count.add("changed between the runs (the document's hash differs)", r.document_mismatch,
                      _changed(task, other, leaf) if r.document_mismatch > 0 else [])
            count.add(f"answered by the {'baseline' if role == 'candidate' else 'candidate'} run only", theirs,
                      _never_answered(task, max(expected, union), leaf) if theirs > 0 else [])
        else:
            union = answered = len(task.samples)
        expected = max(expected, union)
        rest = expected - union
        if known is not None:  # a document whose hash the task's list lacks is not one the contract names
            foreign = [s for s in task.samples if s.doc_hash not in known]
            taken = min(len(foreign), answered)
            answered -= taken
            count.add("not in the task's cached document list (their hash is unknown to it)", taken,
                      [f"{leaf}:{s.doc_id}" for s in foreign[:_SHOWN]])
    if rest > 0:
        count.add(f"never answered ({leaf} has {expected} documents: {source})", rest,
                  _never_answered(task, expected, leaf))
    count.expected += expected
    count.answered += answered


def contract_gap(ctx: GateContext, key: MetricKey, role: str, listed: Mapping[str, frozenset[str]] | None = None
                 ) -> CoverageGap | None:
    """The run's documents of `key.task` against what the contract expects; None when every one is covered."""
    run = ctx.candidate if role == "candidate" else ctx.baseline
    if run is None:
        return None
    count = _Count(hint=ctx.config.samples_hint(key.task))
    for leaf in run.leaves(key.task):
        limit = ctx.config.task_limits.get(leaf, ctx.config.task_limits.get(key.task))
        _leaf(ctx, role, leaf, limit, count, listed or {})
    if count.answered >= count.expected:
        return None
    causes = tuple(f"{n} {cause}" for cause, n in count.causes.items())
    return CoverageGap(role, count.expected - count.answered, count.expected, "contract", tuple(count.examples),
                       causes)


def without_samples(verdict: GateVerdict) -> bool:
    """Whether a verdict was computed from reported aggregates, not per-sample values (allow_unpaired)."""
    test = verdict.test or ""
    return test.startswith("unpaired") or "(reported aggregate)" in test


def capped_unpaired(verdict: GateVerdict) -> str | None:
    """A passing verdict computed without per-sample values decides at most research_only (the contract opted
    in with allow_unpaired; such a comparison cannot show what a paired one would): the warning, or None."""
    if verdict.effect != "release" or not without_samples(verdict):
        return None
    verdict.effect = "research_only"
    verdict.reason += " (without per-sample values under allow_unpaired: at most research_only)"
    return (f"{verdict.name}: computed without per-sample values (allow_unpaired): the decision is at most "
            "research_only")


def shortfall_details(name: str, error: Shortfall) -> dict[str, Any]:
    """What a gate left nodata by a coverage shortfall records in its details (decision.json)."""
    gap = error.gap
    found = CoverageShortfall(gate=name, run="candidate" if gap.role == "candidate" else "baseline",
                              task=error.key.task, check=gap.why, expected=gap.expected, answered=gap.answered,
                              min_coverage=error.need, causes=list(gap.causes), examples=list(gap.examples))
    details: dict[str, Any] = {"shortfall": found.model_dump(mode="json")}
    if gap.check == "coverage":  # answered / expected documents; values and subtasks keep their own counts
        details["coverage"] = {gap.role: f"{gap.answered}/{gap.expected}"}
    return details


def shortfalls(gates: Sequence[GateVerdict]) -> list[CoverageShortfall]:
    """Every coverage shortfall a decision's gates recorded, typed (for the drops manifest and the report)."""
    return [CoverageShortfall.model_validate(g.details["shortfall"]) for g in gates
            if g.verdict == "nodata" and isinstance(g.details.get("shortfall"), dict)]
