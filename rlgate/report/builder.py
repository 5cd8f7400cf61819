"""Build the report model once from the decision, the runs, their manifests and other layers' sections."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import rlgate
from rlgate.contract.loader import ResolvedContract
from rlgate.contract.metrics import MetricRef, higher_is_better, is_bounded
from rlgate.contract.models import RELEASE_GATE_ONLY
from rlgate.engine.models import Decision, GateVerdict
from rlgate.report.budget import FIELD_CAP, TEXT_BUDGET, apply_text_budget
from rlgate.report.fmt import gate_bounded, short_name
from rlgate.report.model import (
    SUCCESS_ONLY,
    MetricValue,
    RadarAxis,
    Regression,
    ReportModel,
    TaskSection,
    paired_basis,
)
from rlgate.report.rollout import as_dict, rollout_card, scrub_private
from rlgate.report.samples import task_origins, task_section
from rlgate.report.trajectories import TRAJECTORY_BUDGET, apply_trajectory_budget, task_trajectories
from rlgate.results.manifest import RunManifest
from rlgate.results.models import MetricKey, RunResult

#: More axes than this make a radar unreadable; the raw table beside it lists everything.
MAX_RADAR_AXES = 12
#: per-ability axes (task::ability pseudo-groups of VLM runs) added after the metrics above
MAX_ABILITY_AXES = 12
ABILITY = "::"
RADAR_NOTE = ("Axes: the gated metrics and each task's (or group's) per-sample metric; a group's subtasks are in "
              "their own table below. "
              "Every axis is 0–100 and higher is better. Fractions (accuracies, rates): 100 × value; "
              "fractions where lower is better (failure or truncation rates): 100 × (1 − value); "
              "unbounded metrics (lengths, perplexities): scaled so the better of the two runs is 100. "
              "The raw values are in the table.")


def gate_ref(gate: GateVerdict) -> str:
    """A gate's metric as `task/metric/filter` (the run's default filter filled in), or as written."""
    try:
        return str(MetricKey.from_ref(MetricRef.parse(gate.metric)))
    except ValueError:
        return gate.metric


def _metric_name(ref: str) -> str:
    parts = ref.split("/")
    return parts[1] if len(parts) > 1 else ref


def collect_metrics(decision: Decision, baseline: RunResult | None, candidate: RunResult | None,
                    tasks: list[TaskSection], overrides: dict[str, bool]) -> list[MetricValue]:
    """One entry per metric: gate metrics first, then groups' and leaf tasks' aggregates.

    A gated metric shows the runs' own aggregates where they report it, else the gate's numbers.
    """
    found: dict[str, MetricValue] = {}
    groups: dict[str, None] = dict.fromkeys([*(candidate.group_metrics if candidate else {}),
                                             *(baseline.group_metrics if baseline else {})])
    for group in groups:
        b = baseline.group_metrics.get(group, {}) if baseline else {}
        c = candidate.group_metrics.get(group, {}) if candidate else {}
        for filt in dict.fromkeys([*c, *b]):
            for metric in dict.fromkeys([*c.get(filt, {}), *b.get(filt, {})]):
                ref = f"{group}/{metric}/{filt}"
                bv, cv = b.get(filt, {}).get(metric), c.get(filt, {}).get(metric)
                found.setdefault(ref, MetricValue(
                    ref=ref, task=group, metric=metric, filter=filt, baseline=bv, candidate=cv,
                    higher_is_better=overrides.get(ref, higher_is_better(metric)),
                    bounded=_fraction(metric, candidate, baseline, group)))
    for section in tasks:
        for value in section.metrics:
            found.setdefault(value.ref, value)
    return gated_first(decision, found)


def _fraction(metric: str, candidate: RunResult | None, baseline: RunResult | None, task: str) -> bool:
    """A metric is shown as a fraction unless a harness declared another range for it."""
    for run in (candidate, baseline):
        declared = run.metric_range(task, metric) if run is not None else None
        if declared is not None:
            return declared.low == 0 and declared.high == 1
    return is_bounded(metric)


def gated_first(decision: Decision, found: dict[str, MetricValue]) -> list[MetricValue]:
    """Gated metrics first, then the rest.

    A comparative gate's own numbers (what decided) win; a one-run gate (hard bound) is completed
    with the runs' aggregates so the baseline shows too.
    """
    found = dict(found)
    first: dict[str, MetricValue] = {}
    for gate in decision.gates:
        if gate.kind == "monitor" or (gate.baseline is None and gate.candidate is None):
            continue
        ref = gate_ref(gate)
        known = found.pop(ref, None)
        if ref in first:
            continue
        parts = ref.split("/")
        value = MetricValue(
            ref=ref, task=parts[0], metric=_metric_name(ref), filter=parts[2] if len(parts) > 2 else "none",
            baseline=gate.baseline, candidate=gate.candidate, higher_is_better=gate.higher_is_better,
            bounded=gate_bounded(gate),
            basis=paired_basis(gate.n) if _metric_name(ref) in SUCCESS_ONLY and gate.baseline is not None else None)
        if known is not None and (gate.baseline is None or gate.candidate is None):
            value = value.model_copy(update={"baseline": gate.baseline if gate.baseline is not None else known.baseline,
                                             "candidate": gate.candidate if gate.candidate is not None
                                             else known.candidate})
        first[ref] = value
    return [*first.values(), *found.values()]


def normalise(value: float, other: float, bounded: bool, hib: bool) -> tuple[float | None, str]:
    """A raw value on a 0–100 higher-is-better scale, and the rule used."""
    if bounded:
        scaled = 100 * value if hib else 100 * (1 - value)
        return max(0.0, min(100.0, scaled)), "100 × value" if hib else "100 × (1 − value)"
    if hib:
        best = max(value, other)
        return (100 * value / best if best > 0 else None), "100 × value / better run"
    best = min(value, other)
    return (100 * best / value if value > 0 and best >= 0 else None), "100 × better run / value"


def radar_axes(metrics: list[MetricValue], main: set[str] | None = None, gated: set[str] | None = None
               ) -> list[RadarAxis]:
    """Up to MAX_RADAR_AXES metrics both runs report, normalised: gated ones, each task's main metric,
    then (only if fewer than three) any other."""
    both = [v for v in metrics if v.baseline is not None and v.candidate is not None]
    chosen = [v for v in both if v.ref in (gated or set()) or v.ref in (main or set())]
    if len(chosen) < 3:  # other metrics of the same tasks/groups first, then anything both runs report
        tasks = {v.task for v in chosen}
        chosen += [v for v in both if v not in chosen and v.task in tasks]
    if len(chosen) < 3:
        chosen += [v for v in both if v not in chosen]
    chosen = chosen[:MAX_RADAR_AXES]
    # per-ability axes (ChartQA human/augmented, MathVista skills, MMMU disciplines), MMBench-style
    chosen += [v for v in both if ABILITY in v.task and v not in chosen][:MAX_ABILITY_AXES]
    axes: list[RadarAxis] = []
    for value in chosen:
        assert value.baseline is not None and value.candidate is not None
        b, rule = normalise(value.baseline, value.candidate, value.bounded, value.higher_is_better)
        c, _ = normalise(value.candidate, value.baseline, value.bounded, value.higher_is_better)
        axes.append(RadarAxis(ref=value.ref, baseline_raw=value.baseline, candidate_raw=value.candidate,
                              baseline=b, candidate=c, higher_is_better=value.higher_is_better, rule=rule))
    return axes


def main_metrics(tasks: list[TaskSection]) -> set[str]:
    """One per-sample metric per capability for the radar: the group's for a group's subtasks
    (fourteen MMLU-Pro subjects of a few questions each are noise on a radar; they get their own table),
    the task's own for a task the suite names."""
    out = set()
    for section in tasks:
        if section.drill_metric:
            out.add(f"{section.suite_task or section.task}/{section.drill_metric}")
    return out


def top_regressions(decision: Decision, metrics: list[MetricValue], tasks: list[TaskSection],
                    limit: int = 10) -> list[Regression]:
    """Metrics that got worse, worst first: fractions by points; unbounded ones (lengths) only when gated,
    by relative change."""
    gates = {gate_ref(g): g for g in decision.gates}
    found: list[tuple[float, Regression]] = []
    for value in metrics:
        delta = value.delta
        if delta is None or value.baseline is None or value.candidate is None:
            continue
        harm = -delta if value.higher_is_better else delta
        gate = gates.get(value.ref)
        if harm <= 0 or (not value.bounded and gate is None):
            continue
        size = harm if value.bounded else harm / max(abs(value.baseline), 1e-12)
        drill = f"{value.metric}/{value.filter}"
        leaves = [s for s in tasks if (s.task == value.task or s.suite_task == value.task) and s.drill_metric == drill]
        pairs = sum(s.counts.get("regressed", 0) for s in leaves) if leaves else None
        found.append((size, Regression(ref=value.ref, baseline=value.baseline, candidate=value.candidate,
                                       delta=delta, bounded=value.bounded, regressed_pairs=pairs,
                                       gate=gate.name if gate else None, verdict=gate.verdict if gate else None)))
    found.sort(key=lambda item: -item[0])
    return [r for _, r in found[:limit]]


def run_names(candidate: RunResult | None, baseline: RunResult | None) -> list[str]:
    """Names that tell the two runs apart: the checkpoints the run manifests name (two scripted policies of one
    `mockllm/model` differ only there), else the model ids, else the sources, else the model id with the run's
    role."""
    runs = [r for r in (candidate, baseline) if r is not None]
    for pick in (lambda r: r.provenance.manifest.checkpoint if r.provenance.manifest else None,
                 lambda r: r.provenance.model, lambda r: r.provenance.source):
        names = [short_name(pick(r)) if pick(r) else "" for r in runs]
        if all(names) and len(set(names)) == len(names):
            return names
    roles = ("candidate", "baseline") if candidate is not None else ("baseline",)
    return [f"{short_name(r.provenance.model or r.provenance.source)} ({role})" for r, role in zip(runs, roles,
                                                                                                 strict=False)]


def _title(contract_name: str, baseline: RunResult | None, candidate: RunResult | None) -> str:
    names = run_names(candidate, baseline)
    return f"{contract_name}: " + " vs ".join(names) if names else contract_name


def build_report(decision: Decision, *, contract: ResolvedContract | None = None,
                 baseline: RunResult | None = None, candidate: RunResult | None = None,
                 manifests: Mapping[str, RunManifest] | None = None, monitor: Any = None,
                 sample_limit: int | None = None, title: str | None = None, generated_at: str | None = None,
                 text_budget: int = TEXT_BUDGET, field_cap: int = FIELD_CAP,
                 trajectory_budget: int = TRAJECTORY_BUDGET) -> ReportModel:
    """The report model.

    Every document's verdict is kept; `sample_limit` keeps at most that many documents per task and
    `text_budget` (UTF-8 bytes) how much prompt/response text, changed pairs first in both cases;
    `trajectory_budget` how much agent step text (see `report.trajectories`).
    """
    origins = task_origins(contract, (baseline, candidate))
    overrides = {gate_ref(g): g.higher_is_better for g in decision.gates if g.kind != "monitor"}
    order = [t.name for t in contract.tasks] if contract else []
    leaves = list(dict.fromkeys([*(candidate.tasks if candidate else {}), *(baseline.tasks if baseline else {})]))
    rank = {name: i for i, name in enumerate(order)}
    leaves.sort(key=lambda t: (rank.get(origins[t].suite_task or "", len(rank)) if t in origins else len(rank)))
    built = [task_section(t, origins.get(t), contract is not None, decision,
                          baseline.tasks.get(t) if baseline else None,
                          candidate.tasks.get(t) if candidate else None, overrides, sample_limit)
             for t in leaves]
    trajectories = [task_trajectories(baseline.tasks.get(s.task) if baseline else None,
                                      candidate.tasks.get(s.task) if candidate else None,
                                      dict(zip(raw.get("doc_id", ()), raw.get("change", ()), strict=True)),
                                      contract.contract.safety if contract else None) for s, raw in built]
    sections, left_out = apply_text_budget([s for s, _ in built], [raw for _, raw in built], text_budget, field_cap)
    sections = [s.model_copy(update={"trajectories": views, "trajectories_total": total})
                for s, (views, total) in zip(sections, trajectories, strict=True)]
    steps_left_out = apply_trajectory_budget(sections, trajectory_budget)
    extensions = dict(decision.extensions)
    if monitor is not None and "monitor" not in extensions:
        extensions["monitor"] = as_dict(monitor)
    private = frozenset(name for name, o in origins.items() if o.visibility == RELEASE_GATE_ONLY)
    scrubbed = decision.model_copy(update={"extensions": scrub_private(extensions, private)})
    metrics = collect_metrics(decision, baseline, candidate, sections, overrides)
    contract_name = contract.name if contract else decision.contract
    shown = sum(len(s.samples) for s in sections)
    total = sum(s.samples_total for s in sections if not s.samples_withheld)
    note = f"{shown} of {total} documents of shareable tasks are in this report"
    if sample_limit is not None and shown < total:
        note += f" (at most {sample_limit} per task, changed pairs first)"
    if left_out:
        note += (f"; to keep the report small, the text of {left_out:,} documents is not included (changed pairs "
                 "were kept first; the runs' sample files have it all)")
    return ReportModel(
        trajectory_note=trajectory_note(sections, steps_left_out),
        generated_at=generated_at or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        rlgate_version=rlgate.__version__, title=title or _title(contract_name, baseline, candidate),
        contract_name=contract_name, decision=scrubbed, metrics=metrics,
        radar=radar_axes(metrics, main_metrics(sections), set(overrides)),
        radar_note=RADAR_NOTE, top_regressions=top_regressions(decision, metrics, sections), tasks=sections,
        rollout=rollout_card(decision, contract, baseline, candidate, manifests, private), sample_note=note,
        text_left_out=left_out)


def trajectory_note(sections: list[TaskSection], steps_left_out: int) -> str:
    """How many agent trajectories the report holds, of how many, and whose steps were left out."""
    shown = sum(len(s.trajectories) for s in sections)
    total = sum(s.trajectories_total for s in sections if not s.samples_withheld)
    if not total:
        return ""
    note = (f"{shown} of {total} agent trajectories of shareable tasks can be opened here (regressed and improved "
            "pairs first, then failures)")
    if steps_left_out:
        note += (f"; to keep the report small, {steps_left_out:,} show their outcome and cost but not their steps "
                 "(the runs' .eval logs have them all)")
    return note
