"""Reader-facing views of the report model, shared by the HTML and Markdown renderers.

Pure functions of the model: gate lines in words, the badcase sections, grouped task protocols,
subtask tables, ISO times and short run names. Both renderers call these, so every figure is
formatted once and reads the same in every format.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from rlgate.contract.metrics import MetricRef
from rlgate.engine import fmt as engine_fmt
from rlgate.engine.coverage import shortfalls
from rlgate.engine.models import GateVerdict
from rlgate.engine.summary import judge_trust_text, monitor_observed
from rlgate.report import fmt
from rlgate.report.builder import gate_ref
from rlgate.report.model import SUCCESS_ONLY, ReportModel, RunCard, paired_basis
from rlgate.report.rollout import WITHHELD

#: decision.extensions keys drawn as the designed badcase sections (not as generic data).
BADCASE_KEYS = ("badcase_top", "badcase_explanations", "badcase_clusters", "next_actions", "badcases")
_KIND_WORDS = {"format": "format", "truncation": "truncation", "knowledge": "wrong answer",
               "instruction": "instruction", "tool": "tool use", "safety": "safety", "other": "other"}
#: Protocol keys that differ per subtask by construction and do not make two protocols different.
_PER_TASK_KEYS = ("task_hash",)


def metric_words(ref: str) -> str:
    """`gsm8k/exact_match/flexible-extract` -> `gsm8k exact match (flexible-extract)`."""
    try:
        parsed = MetricRef.parse(ref)
    except ValueError:
        return ref
    words = f"{parsed.task} {parsed.metric.replace('_', ' ')}"
    return f"{words} ({parsed.filter})" if parsed.filter and parsed.filter != "none" else words


def _metric_name(ref: str) -> str:
    try:
        return MetricRef.parse(ref).metric
    except ValueError:
        return ref


def monitor_values(gate: GateVerdict) -> str:
    """A monitor finding's observed values in the threshold's units (the terminal shows the same values)."""
    limits = fmt.gate_value_limits(gate)
    return monitor_observed(gate, lambda v: fmt.value(v, False, limits))


def _threshold(gate: GateVerdict, bounded: bool) -> str:
    t = gate.threshold
    parts = []
    if "max_drop" in t and gate.kind != "primary":  # a primary's max_drop only names its regression check
        parts.append(f"allowed drop {fmt.magnitude(t['max_drop'], bounded, threshold=True)}")
    if "min_delta" in t:
        parts.append(f"needs {fmt.delta(t['min_delta'], bounded, threshold=True)}")
    if "max" in t:
        parts.append(f"max {fmt.value(t['max'], bounded, threshold=True)}")
    if "min" in t:
        parts.append(f"min {fmt.value(t['min'], bounded, threshold=True)}")
    if "max_relative_increase" in t:
        parts.append(f"at most +{100 * t['max_relative_increase']:.0f}%")
    return ", ".join(parts)


def gate_values(gate: GateVerdict, baselines: dict[str, float] | None = None) -> str:
    """`b → c`; a one-run gate (hard bound) shows the baseline's value of the metric too, where known.
    The candidate never reads as the max/min it is held to (see `engine.fmt.apart`)."""
    if gate.kind == "monitor" and gate.candidate is None:
        return monitor_values(gate)
    bounded = fmt.gate_bounded(gate)
    base = gate.baseline
    if base is None and baselines:
        base = baselines.get(gate.metric)
    candidate = fmt.value(gate.candidate, bounded, fmt.gate_value_limits(gate))
    if base is None:
        return candidate
    return f"{fmt.value(base, bounded)} → {candidate}"


def gate_line(gate: GateVerdict, baselines: dict[str, float] | None = None, alpha: float | None = None) -> str:
    """One gate in words, with all its numbers: what the first screen and the job summary show; figures
    never read as the thresholds (alpha included) they are compared with."""
    bounded = fmt.gate_bounded(gate)
    if gate.kind == "monitor" and gate.candidate is None:  # a finding: its rule, what it measured, its limit
        measured = monitor_values(gate)
        limit = _threshold(gate, bounded)
        text = f"{gate.metric.replace('_', ' ')}: {measured}" if measured else \
            gate.reason.split("] ", 1)[-1] if gate.reason.startswith("[") else gate.reason
        return "; ".join(p for p in (text, limit) if p)
    words = metric_words(gate.metric)
    if _metric_name(gate.metric) in SUCCESS_ONLY and gate.baseline is not None:
        words += f" ({paired_basis(gate.n)})"  # the task tables average each run's own successes instead
    parts = [f"{words} {gate_values(gate, baselines)}".rstrip()]
    if gate.delta is not None:
        moves = fmt.gate_change_limits(gate)
        change = fmt.delta(gate.delta, bounded, moves)
        if gate.ci is not None:
            level = f"{100 * gate.ci_level:.0f}% CI " if gate.ci_level else "CI "
            change += f", {level}{fmt.interval(gate.ci, bounded, moves)}"
        bound = gate.details.get("lower_bound_holm") if isinstance(gate.details, dict) else None
        if isinstance(bound, int | float) and math.isfinite(bound):
            # the verdict rests on this bound, not on the (two-sided, unadjusted) interval shown for reading
            side = "improvement" if gate.higher_is_better else "reduction"
            margin = [-gate.threshold["max_drop"]] if "max_drop" in gate.threshold else []
            # written as the reason writes it (engine figures), so the page has one number for the bound
            shown = engine_fmt.delta(bound, engine_fmt.Unit(bounded), margin)
            change += f"; deciding: the Holm-adjusted lower bound of the {side} {shown}"
            change += ", not the CI"
        parts.append(change)
    elif gate.ci is not None:
        parts.append(fmt.gate_delta(gate))
    p = fmt.gate_p(gate, alpha)
    if p != "–":
        holm = " (Holm)" if gate.p_adjusted is not None else ""
        parts.append(("p " + p if p.startswith("<") else f"p = {p}") + holm)
    if gate.n is not None:
        parts.append(f"n = {fmt.gate_n(gate)}")
        if fmt.gate_agreement(gate):
            parts.append(fmt.gate_agreement(gate))
    limit = _threshold(gate, bounded)
    if limit:
        parts.append(limit)
    trust = judge_trust_text(gate)
    if trust:
        parts.append(trust)
    return "; ".join(parts)


def headline(model: ReportModel) -> str:
    """The decision in one short sentence: the gates that decided it by name, then every other gate that did not
    pass (and the capability flags), never their figures, which the gate lines below give once, in the report's
    units (the engine's summary repeats them in its own: "4.17%" beside "4.2%"); the engine's summary where no
    gate decided."""
    d = model.decision
    deciding = [g for g in d.gates if g.name in d.deciding_gates]
    if not deciding:
        return d.summary
    shown = ", ".join(f"{g.kind} gate {g.name} ({g.verdict})" for g in deciding)
    others = [g for g in d.gates if g.name not in d.deciding_gates and g.verdict != "pass"]
    also = ("; also did not pass: " + ", ".join(  # every failure named, with the policy line where a file mapped it
        f"{g.kind} gate {g.name} ({g.verdict} → {g.effect}{' by ' + g.policy_line if g.policy_line else ''})"
        for g in others)) if others else ""
    flags = "".join(f"; {c.flag} ({c.summary})" for c in d.capabilities if c.flag)
    return f"{d.decision}: decided by {shown}{also}{flags}"


def known_baselines(model: ReportModel) -> dict[str, float]:
    """Gate metric (as the gate writes it) -> the baseline run's value, for one-run gates."""
    by_ref = {v.ref: v.baseline for v in model.metrics if v.baseline is not None}
    out: dict[str, float] = {}
    for gate in model.decision.gates:
        value = by_ref.get(gate_ref(gate))
        if value is not None:
            out[gate.metric] = value
    return out


@dataclass
class ClusterRow:
    """One failure cluster in words and percentages, with its examples (public tasks only)."""

    name: str
    kind: str
    family: str
    baseline: str
    candidate: str
    change: str
    new_fixed: str
    p: str
    grew: bool
    examples: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class BadcaseView:
    explanations: list[str]
    clusters: list[ClusterRow]
    actions: list[dict[str, str]]
    private_tasks: list[str]
    warnings: list[str]
    hidden_clusters: int = 0


def cluster_name(cluster: str) -> str:
    """`mmlu_pro_no_parseable_choice[law]` -> `mmlu_pro: no parseable choice [law]`."""
    base, _, category = cluster.partition("[")
    for family in ("mmlu_pro", "gsm8k", "ifeval"):
        if base.startswith(family + "_"):
            base = f"{family}: {base[len(family) + 1:].replace('_', ' ')}"
            break
    else:
        base = base.replace("_", " ")
    return f"{base} [{category}" if category else base


def _rate(count: Any, rate: Any) -> str:
    if rate is None or count is None:
        return "–"
    return f"{100 * float(rate):.1f}% ({count})"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _public(example: Any, private: set[str]) -> bool:
    """An example a reviewer may see: not from a release_gate_only task, nothing in it withheld."""
    return (isinstance(example, dict) and str(example.get("task")) not in private
            and WITHHELD not in example.values())


_EXAMPLE_KEYS = ("task", "doc_id", "prompt", "target", "baseline_response", "baseline_answer", "candidate_response",
                 "candidate_answer")


def _example(example: dict[str, Any]) -> dict[str, Any]:
    """An example with every field the templates read (missing ones None), values as text."""
    return {k: None if example.get(k) is None else _as_text(example[k]) for k in _EXAMPLE_KEYS}


def badcase_view(extensions: dict[str, Any], max_clusters: int = 12, alpha: float | None = None) -> BadcaseView | None:
    """The badcase sections from decision.extensions: what changed and why, clusters, next actions; a
    cluster's p (it grew where p < alpha) never printed as alpha."""
    if not any(extensions.get(k) for k in BADCASE_KEYS):
        return None
    found = extensions.get("badcases")
    full: dict[str, Any] = found if isinstance(found, dict) else {}
    raw = full.get("clusters") if isinstance(full.get("clusters"), list) else extensions.get("badcase_clusters")
    private = {str(t) for t in full.get("private_tasks") or []}
    rows: list[ClusterRow] = []
    clusters = [c for c in raw or [] if isinstance(c, dict) and (c.get("grew") or c.get("candidate_count"))]
    clusters.sort(key=lambda c: (not c.get("grew"), -(c.get("delta_rate") or 0), -(c.get("candidate_count") or 0)))
    for c in clusters[:max_clusters]:
        delta = c.get("delta_rate")
        p = c.get("p_adjusted") if c.get("p_adjusted") is not None else c.get("p_value")
        rows.append(ClusterRow(
            name=cluster_name(str(c.get("cluster", "?"))), kind=_KIND_WORDS.get(str(c.get("kind")), str(c.get("kind"))),
            family=str(c.get("family", "")),
            baseline=_rate(c.get("baseline_count"), c.get("baseline_rate")),
            candidate=_rate(c.get("candidate_count"), c.get("candidate_rate")),
            change=fmt.delta(delta, True) if isinstance(delta, int | float) else "–",
            new_fixed=(f"{c.get('new_in_candidate', 0)} / {c.get('fixed_in_candidate', 0)}"
                       if c.get("n_paired") else "–"),
            p=fmt.p_value(p, alpha) if isinstance(p, int | float) else "–", grew=bool(c.get("grew")),
            examples=[_example(e) for e in c.get("examples") or [] if _public(e, private)][:3]))
    actions = []
    for a in extensions.get("next_actions") or []:
        if isinstance(a, dict):
            actions.append({"area": _as_text(a.get("area", "")), "action": _as_text(a.get("action", "")),
                            "evidence": _as_text(a.get("evidence") or a.get("because") or "")})
        else:
            actions.append({"area": "", "action": _as_text(a), "evidence": ""})
    explanations = [_as_text(e) for e in extensions.get("badcase_explanations") or []]
    return BadcaseView(explanations=explanations, clusters=rows, actions=actions,
                       private_tasks=[str(t) for t in full.get("private_tasks") or []],
                       warnings=[str(w) for w in full.get("warnings") or []],
                       hidden_clusters=max(0, len(clusters) - max_clusters))


@dataclass
class ProtocolGroup:
    """Tasks that share one protocol: one line in words, the settings behind it."""

    label: str
    tasks: list[str]
    summary: str
    settings: dict[str, Any]


def _protocol_words(p: dict[str, Any]) -> str:
    words = []
    if p.get("version") is not None:
        words.append(f"version {p['version']}")
    if p.get("num_fewshot") is not None:
        words.append(f"{p['num_fewshot']}-shot")
    gen = p.get("generation_kwargs") or {}
    if isinstance(gen, dict):
        if gen.get("max_gen_toks") is not None:
            words.append(f"max {gen['max_gen_toks']} tokens")
        if gen.get("do_sample") is False or gen.get("temperature") == 0:
            words.append("greedy")
        elif gen.get("temperature") is not None:
            words.append(f"temperature {gen['temperature']}")
        if gen.get("until"):
            words.append("stop at " + ", ".join(repr(u) for u in gen["until"]))
    if p.get("filters"):
        words.append("filters " + ", ".join(str(f) for f in p["filters"]))
    return ", ".join(words) or "lm-eval defaults"


def protocol_groups(task_protocols: dict[str, dict[str, Any]]) -> list[ProtocolGroup]:
    """Identical protocols (but for per-task hashes) grouped: `14 mmlu_pro subtasks: version 3.1, 0-shot, …`."""
    groups: dict[str, list[str]] = {}
    settings: dict[str, dict[str, Any]] = {}
    for task, protocol in task_protocols.items():
        shared = {k: v for k, v in protocol.items() if k not in _PER_TASK_KEYS}
        key = json.dumps(shared, sort_keys=True, default=str)
        groups.setdefault(key, []).append(task)
        settings.setdefault(key, shared)
    out = []
    for key, tasks in groups.items():
        if len(tasks) == 1:
            label = tasks[0]
        else:
            prefix = _common_prefix(tasks)
            label = f"{len(tasks)} {prefix} subtasks" if prefix else f"{len(tasks)} tasks"
        out.append(ProtocolGroup(label=label, tasks=tasks, summary=_protocol_words(settings[key]),
                                 settings=settings[key]))
    return out


def _common_prefix(names: list[str]) -> str:
    first, *rest = names
    size = len(first)
    for name in rest:
        size = min(size, len(name))
        while size and name[:size] != first[:size]:
            size -= 1
    return first[:size].rstrip("_")


@dataclass
class SubtaskGroup:
    """A group's leaf tasks on its per-sample metric: shown in a table, not on the radar."""

    group: str
    metric: str
    rows: list[tuple[str, str, str, str, str]]  # task, baseline, candidate, delta, documents


def subtask_groups(model: ReportModel) -> list[SubtaskGroup]:
    by_group: dict[str, list[Any]] = {}
    for section in model.tasks:
        if section.suite_task and section.suite_task != section.task:
            by_group.setdefault(section.suite_task, []).append(section)
    out = []
    for group, sections in by_group.items():
        if len(sections) < 2:
            continue
        rows = []
        metric = sections[0].drill_metric or ""
        for s in sections:
            value = next((v for v in s.metrics if f"{v.metric}/{v.filter}" == s.drill_metric), None)
            short = s.task[len(group) + 1:] if s.task.startswith(group + "_") else s.task
            bounded = value.bounded if value else True  # BLEU, lengths: as they are, not in percent
            rows.append((short.replace("_", " "), fmt.value(value.baseline if value else None, bounded),
                         fmt.value(value.candidate if value else None, bounded),
                         fmt.delta(value.delta if value else None, bounded), f"{s.n_baseline} / {s.n_candidate}"))
        out.append(SubtaskGroup(group=group, metric=metric, rows=rows))
    return out


def libraries(runs: list[RunCard]) -> list[tuple[str, list[str]]]:
    """Library versions, one row per library (`lm_eval` and `lm_eval_version` are one row)."""
    names: dict[str, None] = {}
    per_run: list[dict[str, str]] = []
    for run in runs:
        merged: dict[str, str] = {}
        for key, version in run.library_versions.items():
            name = key.removesuffix("_version").replace("-", "_")
            merged.setdefault(name, version)
        per_run.append(merged)
        names.update(dict.fromkeys(merged))
    return [(name, [versions.get(name, "–") for versions in per_run]) for name in sorted(names)]


_DROP_WORDS = {"missing": "missing", "sandbox_failed": "sandbox failed", "errored": "errored",
               "timed_out": "timed out", "limit": "limit hit"}


def drop_lines(model: ReportModel, limit: int = 10) -> list[str]:
    """The drops manifest in words: each coverage shortfall; per run, how many agent runs did not finish normally
    and why; then the first `limit` of them. Empty when nothing fell short and the runs have no agent
    trajectories."""
    lines = [f"{s.run} {s.task}: {s.answered} of the {s.expected} documents the contract expects (< min_coverage "
             f"{s.min_coverage:g}), so gate {s.gate} is nodata: {'; '.join(s.causes) or s.check} (docs/coverage.md)"
             for s in shortfalls(model.decision.gates)]
    manifest = model.rollout.dropped_runs
    if manifest is None:
        return lines
    for run, counts in manifest.counts.items():
        found = ", ".join(f"{n} {_DROP_WORDS.get(k, k)}" for k, n in counts.items() if n)
        total = manifest.trajectories.get(run, 0)
        lines.append(f"{run}: {sum(counts.values())} of {total} trajectories did not finish normally ({found}); each "
                     "is counted as a failure" if found else f"{run}: all {total} trajectories finished normally")
    for drop in manifest.runs[:limit]:
        epoch = f" epoch {drop.epoch}" if drop.epoch > 1 else ""
        lines.append(f"{drop.run} {drop.task} {drop.doc_id}{epoch}: {_DROP_WORDS.get(drop.kind, drop.kind)} — "
                     f"{drop.detail}")
    if len(manifest.runs) > limit:
        lines.append(f"… and {len(manifest.runs) - limit} more (report.html and decision.json list all)")
    return lines


def sequential_lines(model: ReportModel, limit: int = 10) -> list[str]:
    """Sequential gating in words: the look the decision was reached at, and what was never generated."""
    r = model.decision.sequential
    if r is None:
        return []
    same = "" if r.matches_full is None else (" (the full-suite decision)" if r.matches_full
                                              else f" (the full suite decides {r.full_decision})")
    verb = "stopped" if r.mode == "check" else "replay: decided"
    lines = [f"{r.procedure_label}: {verb} at look {r.stop_look} of {r.looks_planned} "
             f"with {r.documents_used}/{r.documents_total} paired "
             f"{'documents' if r.epochs_per_sample is None else f'samples × {r.epochs_per_sample} epochs'} "
             f"({r.fraction_used:.0%}): "
             f"{r.decision_at_stop}{same}; {r.stop_reason}"]
    for ng in r.not_generated:
        shown = ", ".join(ng.documents[:limit]) + (" …" if len(ng.documents) > limit else "")
        lines.append(f"{ng.task}: {ng.count} {'documents' if r.epochs_per_sample is None else 'samples'} {ng.note} "
                     f"({shown}; all in decision.json)")
    return lines
