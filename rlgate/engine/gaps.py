"""Documents a gate reads that a run lacks: one model for every source, judged once against min_coverage.

Four checks find such documents: the run manifest (documents never answered), lm-eval's own count when
there is no manifest (a cut samples file), samples without the gated metric's value (rlgate.engine.missing)
and subtasks of a gated group a run lacks (rlgate.engine.subtasks). Each yields a CoverageGap per run;
`judged` makes the gate `nodata` (the source's reason, with the counts) when a run holds less than
`min_coverage` of the documents, and `shown` turns the gaps it let through into the details and the
"values over ..." notes beside a computed verdict. Gating on the rest silently would judge a smaller suite
than the contract names, so the engine and the judge gates both go through here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rlgate.contract.models import GateConfig
from rlgate.engine.context import GateContext, NoData
from rlgate.results.manifest import RunManifest
from rlgate.results.models import MetricKey, RunResult

Why = Literal["manifest", "samples", "values", "subtasks", "contract"]


@dataclass(frozen=True)
class CoverageGap:
    """One run's documents of a gated task: how many should be there, how many are missing and why, with a
    few examples (for a subtask gap, every subtask missing)."""

    role: str
    missing: int
    expected: int
    why: Why
    examples: tuple[str, ...] = ()
    causes: tuple[str, ...] = ()

    @property
    def answered(self) -> int:
        return self.expected - self.missing

    @property
    def share(self) -> float:
        return self.answered / self.expected if self.expected else 0.0

    @property
    def check(self) -> str:
        """Which of the three notes the gap belongs to: both coverage sources show as one."""
        return "coverage" if self.why in ("manifest", "samples", "contract") else self.why


def min_coverage(config: GateConfig, task: str) -> float:
    return config.task_min_coverage.get(task, config.min_coverage)


class Shortfall(NoData):
    """NoData for want of documents: the gap that fell short, for decision.json and the drops manifest."""

    def __init__(self, message: str, gap: CoverageGap, key: MetricKey, need: float) -> None:
        super().__init__(message)
        self.gap, self.key, self.need = gap, key, need


def judged(gaps: Iterable[CoverageGap], key: MetricKey, need: float) -> list[CoverageGap]:
    """The gaps, once all are within `need`; Shortfall (the first short run's reason) otherwise. Read lazily, so
    a source stops at the first short run, as each check always did."""
    out: list[CoverageGap] = []
    for gap in gaps:
        if gap.share < need:
            raise Shortfall(_reason(gap, key, need), gap, key, need)
        out.append(gap)
    return out


def _reason(gap: CoverageGap, key: MetricKey, need: float) -> str:
    r, task, named = gap.role, key.task, ", ".join(gap.examples)
    floor = f"< min_coverage {need:.0%}"
    if gap.why == "values":
        return (f"the {r} run has no {key.metric}/{key.filter} value for {gap.missing} of {gap.expected} documents "
                f"of {task} (e.g. {named}; {gap.share:.1%} scored {floor}): its samples do not write the metric; "
                "re-score them or lower min_coverage")
    if gap.why == "subtasks":
        return (f"the {r} run lacks subtask(s) {named} of {task} ({gap.missing} of {gap.expected} documents; "
                f"{gap.share:.1%} present {floor}): evaluate them, or lower min_coverage to gate on the subtasks "
                "present")
    if gap.why == "contract":
        named = f"; e.g. {named}" if named else ""
        return (f"the {r} run answered {gap.answered} of the {gap.expected} documents of {task} the contract expects "
                f"(coverage {gap.share:.1%} {floor}): {'; '.join(gap.causes)}{named}")
    if gap.why == "samples":  # lm-eval's own count, not a manifest's
        where = (f" (missing e.g. {named}; " if named else " (") + \
            "the harness reported more documents than its samples hold)"
    else:
        where = f" (missing e.g. {named}; all listed in run_manifest.json)" if named else ""
    return (f"the {r} run answered {gap.answered} of {gap.expected} documents of {task} "
            f"(coverage {gap.share:.1%} {floor}){where}")


def shown(gaps: list[CoverageGap], computed: bool, over: str = "values") -> tuple[dict[str, Any], str]:
    """(details, reason note) for a verdict: each run's answered/expected documents always (evidence even on a
    gate that failed later); the missing values and subtasks, and the notes on partial runs, only when the
    verdict was `computed` (it read values over the documents present, `over` names what)."""
    details: dict[str, Any] = {}
    note = ""
    coverage = [g for g in gaps if g.check == "coverage"]
    if coverage:
        details["coverage"] = {g.role: f"{g.answered}/{g.expected}" for g in coverage}
    if not computed:
        return details, note
    partial = [g for g in coverage if g.missing]
    if partial:
        note += f" (coverage {', '.join(f'{g.role} {g.answered}/{g.expected} documents' for g in partial)}: " \
            f"{over} over answered documents)"
    values = [g for g in gaps if g.check == "values"]
    if values:
        details["missing_values"] = {g.role: f"{g.missing}/{g.expected}" for g in values}
        note += (" (" + ", ".join(f"{g.role} {g.missing} of {g.expected} documents without a value" for g in values)
                 + ": values over the rest)")
    subtasks = [g for g in gaps if g.check == "subtasks"]
    if subtasks:
        details["missing_subtasks"] = {g.role: list(g.examples) for g in subtasks}
        note += (" (" + "; ".join(f"{g.role} lacks {', '.join(g.examples)}" for g in subtasks)
                 + ": values over the subtasks present)")
    return details, note


def coverage_gaps(ctx: GateContext, key: MetricKey, roles: tuple[str, ...],
                  listed: Mapping[str, frozenset[str]] | None = None) -> Iterator[CoverageGap]:
    """Each run's answered / expected documents of the metric's task: against what the contract expects
    (`coverage.contract_gap`; `listed` holds cached document hashes by leaf) when the run falls short of it,
    else from its run manifest; without one (a folder lm-eval wrote itself), the documents its samples hold
    against the count the harness reported (n_samples), only when short. A fully covered run without a
    manifest (or no such run) yields nothing."""
    from rlgate.engine.coverage import contract_gap  # it builds on CoverageGap

    for role in roles:
        run = ctx.candidate if role == "candidate" else ctx.baseline
        if run is None:
            continue
        manifest = run.provenance.manifest
        found = _from_manifest(run, manifest, role, key) if manifest is not None else None
        if found is None:  # a manifest without expected counts leaves lm-eval's own count check on
            found = _sample_shortfall(run, role, key)
        against = contract_gap(ctx, key, role, listed)
        if against is not None and (found is None or against.missing > found.missing or against.expected
                                    > found.expected):
            found = against  # what the contract expects wins over what the run says of itself
        if found is not None:
            yield found


def _from_manifest(run: RunResult, manifest: RunManifest, role: str, key: MetricKey) -> CoverageGap | None:
    leaves = set(run.leaves(key.task))
    answered = expected = 0
    missing: list[str] = []
    found = False
    for entry in manifest.tasks:
        if entry.task not in leaves or entry.expected_documents is None:
            continue
        found = True
        answered += entry.documents
        # a sequential check's documents after its stop were never generated: listed, not missing
        expected += entry.expected_documents - len(entry.not_generated)
        missing += [f"{entry.task}:{d}" for d in entry.missing_documents[:3]]
    return CoverageGap(role, expected - answered, expected, "manifest", tuple(missing)) if found else None


def _sample_shortfall(run: RunResult, role: str, key: MetricKey) -> CoverageGap | None:
    """Fewer samples than the harness says it evaluated (a cut samples file)."""
    answered = expected = 0
    missing: list[str] = []
    for leaf in run.leaves(key.task):
        task = run.tasks[leaf]
        if not task.samples or task.n_samples <= len(task.samples):
            answered += len(task.samples)
            expected += len(task.samples)
            continue
        answered += len(task.samples)
        expected += task.n_samples
        ids = {s.doc_id for s in task.samples}
        if all(type(d) is int and 0 <= d < task.n_samples for d in ids):  # lm-eval's 0..n-1: name the gaps
            missing += [f"{leaf}:{d}" for d in range(task.n_samples) if d not in ids][:3]
    return CoverageGap(role, expected - answered, expected, "samples", tuple(missing[:3])) \
        if answered < expected else None
