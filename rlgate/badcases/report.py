"""Build the badcase report from two runs, attach it to a Decision, render the summary block.

Pure: runs and settings in, report out. Private tasks are counted but never sampled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rlgate.badcases.actions import ActionContext, next_actions
from rlgate.badcases.classify import classify_columns, classify_run
from rlgate.badcases.clusters import ClusterInputs, compute_clusters
from rlgate.badcases.columns import RunOutcomes, RunSamples
from rlgate.badcases.explain import explain_drops
from rlgate.badcases.index import Outcomes, build_index
from rlgate.badcases.models import AnchorShift, BadcaseReport, ClusterStat
from rlgate.badcases.taxonomy import ClassifyOptions
from rlgate.contract.metrics import MetricRef, is_bounded
from rlgate.engine.versions import VersionCheck
from rlgate.results.models import NO_FILTER, DocId, RunResult, SampleRecord

if TYPE_CHECKING:
    from rlgate.contract.loader import ResolvedContract
    from rlgate.engine.models import Decision, GateVerdict

TOP_CLUSTERS = 5


def classify_options(resolved: ResolvedContract | None) -> ClassifyOptions:
    """The filters the contract's gates read per task, and the protocol's token budget."""
    if resolved is None:
        return ClassifyOptions()
    filters: dict[str, str] = {}
    gates = resolved.gates
    for gate in gates.all_gates():
        ref = MetricRef.parse(gate.metric)
        if ref.filter and not ref.derived:
            filters.setdefault(ref.task, ref.filter)
    return ClassifyOptions(filters=filters, max_tokens=resolved.contract.protocol.sampling.max_tokens)


def _records(run: RunResult, outcomes: Outcomes | None = None) -> Mapping[tuple[str, DocId], SampleRecord]:
    """The run's samples by key: looked up through the outcomes' columns when they are columns."""
    if isinstance(outcomes, RunOutcomes):
        return RunSamples(run, outcomes)
    return {(name, s.doc_id): s for name, result in run.tasks.items() for s in result.samples}


def _mean_score(run: RunResult | None, task: str, metric: str) -> float | None:
    result = run.tasks.get(task) if run is not None else None
    values = [v for s in (result.samples if result else []) if s.trajectory is not None
              for v in [s.scores.get(NO_FILTER, {}).get(metric)] if isinstance(v, int | float)]
    return sum(values) / len(values) if values else None


def _agent_costs(candidate: RunResult, baseline: RunResult | None
                 ) -> dict[str, tuple[tuple[float | None, float | None], tuple[float | None, float | None]]]:
    """Agent task -> mean (steps, tokens) to success in (baseline, candidate), over each run's successes."""
    out = {}
    for task, result in candidate.tasks.items():
        if not result.is_agent:
            continue
        steps = (_mean_score(baseline, task, "steps_to_success"), _mean_score(candidate, task, "steps_to_success"))
        tokens = (_mean_score(baseline, task, "tokens_to_success"), _mean_score(candidate, task, "tokens_to_success"))
        out[task] = (steps, tokens)
    return out


def _label(run: RunResult) -> str:
    return run.provenance.model or run.provenance.source


def build_badcase_report(candidate: RunResult, baseline: RunResult | None, *,
                         private_tasks: frozenset[str] = frozenset(), options: ClassifyOptions | None = None,
                         alpha: float = 0.05, max_examples: int = 3, versions: VersionCheck | None = None,
                         anchors: list[AnchorShift] | None = None,
                         gates: Sequence[GateVerdict] | None = None) -> BadcaseReport:
    """Classify both runs, cluster the failures, explain what moved and propose next actions.

    `gates` (the decision's) lets each explanation quote the p-value of the gate on its metric.
    """
    options = options or ClassifyOptions()
    # as task columns where every task allows it (GSM8K, MMLU-Pro), else outcome objects
    cand_out: Outcomes | None = classify_columns(candidate, options)
    base_out: Outcomes | None = (classify_columns(baseline, options)
                                 if baseline is not None and cand_out is not None else None)
    if cand_out is None or (baseline is not None and base_out is None):
        cand_out = classify_run(candidate, options)
        base_out = classify_run(baseline, options) if baseline is not None else None
    data = ClusterInputs(candidate=cand_out, baseline=base_out, candidate_samples=_records(candidate, cand_out),
                         baseline_samples=_records(baseline, base_out) if baseline is not None else {},
                         private_tasks=private_tasks, alpha=alpha, max_examples=max_examples)
    index = build_index(cand_out, base_out)  # one pass over both runs, shared by everything below
    clusters, by_category = compute_clusters(data, index)
    explanations = (explain_drops(cand_out, base_out, alpha, gates=gates, pairs_by_family=index.pairs,
                                  family_kinds=index.family_kinds, counts_by_family=index.counts)
                    if base_out is not None else [])
    cand_len, base_len = index.mean_lengths(0), index.mean_lengths(1)
    ctx = ActionContext(lengths={f: (base_len.get(f), v) for f, v in cand_len.items()},
                        max_tokens=options.max_tokens, explanations={e.family: e for e in explanations},
                        tool_errors=index.runs[0].tool_errors, agent_costs=_agent_costs(candidate, baseline))
    warnings = []
    if versions is not None and versions.differences:
        warnings.append("benchmark versions differ (allowed explicitly): " + "; ".join(versions.differences))
    warnings.extend(a.text for a in anchors or [] if a.flagged)
    return BadcaseReport(
        candidate=_label(candidate), baseline=_label(baseline) if baseline is not None else None, alpha=alpha,
        clusters=clusters, category_clusters=by_category, badcase_top=top_clusters(clusters),
        explanations=explanations, next_actions=next_actions(clusters, by_category, ctx),
        private_tasks=sorted(t for t in private_tasks if t in candidate.tasks
                             or (baseline is not None and t in baseline.tasks)),
        versions=versions, anchor_shifts=anchors or [], warnings=warnings,
    )


def top_clusters(clusters: list[ClusterStat], limit: int = TOP_CLUSTERS) -> list[str]:
    """'cluster: candidate count' for grown clusters first, then the largest remaining ones."""
    grown = [c for c in clusters if c.grew]
    rest = sorted((c for c in clusters if not c.grew and c.candidate_count),
                  key=lambda c: (-c.candidate_count, c.cluster))
    return [f"{c.cluster}: {c.candidate_count}" for c in [*grown, *rest][:limit]]


def _compact(c: ClusterStat) -> dict[str, object]:
    return c.model_dump(mode="json", exclude={"examples"})


def attach_badcases(decision: Decision, report: BadcaseReport) -> Decision:
    """A copy of the decision with badcase_top, badcase_clusters, next_actions and the full report."""
    extensions = dict(decision.extensions)
    extensions.update({
        "badcase_top": list(report.badcase_top),
        "badcase_clusters": [_compact(c) for c in report.clusters if c.grew or c.candidate_count],
        "next_actions": [a.model_dump(mode="json") for a in report.next_actions],
        "badcase_explanations": [e.text for e in report.explanations if e.driver != "none"],
        "badcases": report.model_dump(mode="json"),
    })
    return decision.model_copy(update={"extensions": extensions})


def _points(metric: str, value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    if is_bounded(MetricRef.parse(metric).metric):
        return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}%"
    return f"{value:+.3g}" if signed else f"{value:.3g}"


def _metric_words(gate: GateVerdict) -> str:
    try:
        ref = MetricRef.parse(gate.metric)
    except ValueError:
        return gate.metric
    return f"{ref.task} {ref.metric}"


def render_summary(report: BadcaseReport, decision: Decision | None = None) -> str:
    """The plain-text block for terminals and job summaries (the issue's layout)."""
    lines: list[str] = []
    checkpoint = report.candidate
    primary = ""
    regressions: list[str] = []
    if decision is not None:
        cand = next((r for r in decision.inputs if r.role == "candidate"), None)
        checkpoint = (cand.model or cand.source) if cand else checkpoint
        for gate in decision.gates:
            if gate.kind == "primary":
                primary = (f"   primary_metric: {_metric_words(gate)} = {_points(gate.metric, gate.candidate)} "
                           f"({_points(gate.metric, gate.delta, signed=True)})")
            elif gate.kind == "regression" and gate.verdict == "fail":
                regressions.append(f"{_metric_words(gate)}: {_points(gate.metric, gate.delta, signed=True)}")
    lines.append(f"checkpoint: {checkpoint}{primary}")
    if decision is not None:
        lines.append(f"decision: {decision.decision}")
        lines.append(f"regressions: [{', '.join(regressions)}]")
    lines.append(f"badcase_clusters: [{', '.join(report.badcase_top)}]")
    for explanation in report.explanations:
        if explanation.driver != "none":
            lines.append(f"why: {explanation.text}")
    if report.next_actions:
        lines.append("next_actions: [")
        lines.extend(f"  [{a.area}] {a.action} (evidence: {a.evidence})," for a in report.next_actions)
        lines.append("]")
    else:
        lines.append("next_actions: []  # no failure class grew significantly")
    if report.private_tasks:
        lines.append(f"private (counts only, samples withheld): {', '.join(report.private_tasks)}")
    lines.extend(f"warning: {w}" for w in report.warnings)
    return "\n".join(lines)
