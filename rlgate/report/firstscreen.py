"""What the first screen must say beside the verdict, shared by the HTML and Markdown renderers.

The unsafe actions that decided a verdict (tool, arguments, sample, linked to the trajectory), gates that pass
without being able to show anything (a score at chance, a suite too small for its threshold), the warnings in
the report's own units, and the protocol rows that belong to this run's kind of task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlgate.contract.metrics import MetricRef
from rlgate.engine.decision import THRESHOLD_KEY, underpowered
from rlgate.report import fmt
from rlgate.report.model import ReportModel, ToolCallView

#: A task whose references are at most this many distinct short answers is multiple choice: chance is 1/k.
MAX_OPTIONS = 26
#: A score within this factor of chance cannot show a regression (there is nowhere lower to go).
CHANCE_FACTOR = 1.5
ARGS_EXCERPT = 120


@dataclass
class UnsafeAction:
    """One tool call that broke a safety rule, and where its trajectory is in the page."""

    run: str
    task: str
    doc_id: str
    function: str
    arguments: str
    rules: list[str]
    anchor: str
    deciding: bool


def unsafe_actions(model: ReportModel, limit: int = 5) -> list[UnsafeAction]:
    """The candidate's unsafe tool calls, first those of tasks whose gate decided the verdict."""
    d = model.decision
    deciding = {t for g in d.gates if g.name in d.deciding_gates for t in (_task(g.metric), g.name.split("/")[0])}
    out = []
    for ti, section in enumerate(model.tasks):
        for k, t in enumerate(section.trajectories):
            if t.run != "candidate" or not t.safety_violations:
                continue
            calls: list[ToolCallView | None] = [c for st in t.steps for c in st.tool_calls if c.unsafe]
            for call in calls or [None]:
                args = "" if call is None else call.arguments
                out.append(UnsafeAction(
                    run=t.run, task=section.task, doc_id=str(t.doc_id),
                    function=call.function if call else "–",
                    arguments=args if len(args) <= ARGS_EXCERPT else args[:ARGS_EXCERPT - 1] + "…",
                    rules=list(call.unsafe) if call else list(t.safety_violations), anchor=f"traj-{ti}-{k}",
                    deciding=bool(deciding & {section.task, section.suite_task}) or any(
                        g.kind == "safety" or "safety" in g.name for g in d.gates
                        if g.name in d.deciding_gates)))
    out.sort(key=lambda a: not a.deciding)
    return out[:limit]


def _task(metric: str) -> str:
    try:
        return MetricRef.parse(metric).task
    except ValueError:
        return metric.split("/")[0]


def chance_level(model: ReportModel, task: str) -> tuple[int, float] | None:
    """(options, chance) where the task's reference answers are a few distinct short labels (A–J), else None."""
    targets: set[str] = set()
    seen = False
    for section in model.tasks:
        if task not in (section.task, section.suite_task):
            continue
        for target in section.samples.target:
            if target is None:
                continue
            seen = True
            if len(target.strip()) > 3:
                return None
            targets.add(target.strip())
    if not seen or not 2 <= len(targets) <= MAX_OPTIONS:
        return None
    return len(targets), 1 / len(targets)


def gate_flags(model: ReportModel) -> dict[str, list[str]]:
    """Per passing gate, why its pass shows nothing: a score at chance, or an MDE over its threshold."""
    out: dict[str, list[str]] = {}
    for gate in model.decision.gates:
        if gate.verdict != "pass":
            continue
        flags = []
        chance = chance_level(model, _task(gate.metric)) if gate.kind in ("regression", "primary") else None
        bounded = fmt.gate_bounded(gate)
        values = [v for v in (gate.baseline, gate.candidate) if v is not None]
        if chance and bounded and values and max(values) <= CHANCE_FACTOR * chance[1]:
            flags.append(f"at chance ({chance[0]} options, chance {fmt.value(chance[1], True)}): cannot show a "
                         "regression")
        if gate.kind == "regression" and underpowered(gate) is not None:  # a passing primary showed its gain
            flags.append(f"too small to show it: MDE {fmt.gate_mde(gate)} exceeds the threshold")
        if flags:
            out[gate.name] = flags
    return out


def shown_warnings(model: ReportModel) -> list[str]:
    """The decision's warnings, an underpowered gate's written with the report's MDE figure (one number per page)."""
    notes = {underpowered(g): g for g in model.decision.gates}
    out = []
    for w in model.decision.warnings:
        gate = notes.get(w)
        if gate is None:
            out.append(w)
            continue
        key = THRESHOLD_KEY.get(gate.kind, "max_drop")
        limit = gate.threshold.get(key)
        shown = fmt.magnitude(limit, fmt.gate_bounded(gate), threshold=True) if limit is not None else "–"
        out.append(f"{gate.name}: the minimum detectable effect ({fmt.gate_mde(gate)}) exceeds {key} ({shown}); "
                   "the suite is too small to show what this gate asks")
    return out


def protocol_rows(model: ReportModel) -> list[tuple[str, str]]:
    """The contract protocol's settings, without the agent.* rows of a run with no agent task and the image.*
    rows of a run with no image task (defaults of a kind of task the run does not have), and without the
    executor.* rows of a run made in one process (where the shards ran never changes a result)."""
    from rlgate.report.nodes import flatten

    agent = any(s.trajectories or s.trajectories_total for s in model.tasks)
    image = any(any("image" in str(k) or "multimodal" in str(v) for k, v in p.items())
                for p in model.rollout.task_protocols.values())
    rows = flatten(model.rollout.protocol)
    local = dict(rows).get("executor.kind", "local") == "local"
    out = [(k, v) for k, v in rows
           if not (k.startswith("agent.") and not agent) and not (k.startswith("image.") and not image)
           and not (k.startswith("executor.") and local)]
    runs = model.rollout.runs
    if runs and all((r.checkpoint_fingerprint or "").startswith("scripted:") for r in runs):
        # scripted policies answered (harness.checkpoint): no model ran, so the contract's backend went unused
        named = ", ".join(str(r.checkpoint or r.model) for r in runs)
        out = [("backend", f"none: scripted policies ({named}), the contract's backend options unused")
               if k == "backend" else (k, v) for k, v in out if not k.startswith(("hf.", "vllm.", "openai."))]
    return out


@dataclass
class TaskGroup:
    """Consecutive task sections of one suite group (4+ subtasks: one summed row), or a single task."""

    key: int
    name: str
    indices: list[int]
    split: str | None = None
    metric: str | None = None
    n_baseline: int = 0
    n_candidate: int = 0
    counts: dict[str, int] = field(default_factory=dict)


def task_groups(model: ReportModel, min_size: int = 4) -> list[TaskGroup]:
    """The task table's rows: a group of `min_size`+ subtasks is one row with the counts summed."""
    runs: list[list[int]] = []
    for i, s in enumerate(model.tasks):
        prev = model.tasks[runs[-1][0]] if runs else None
        if prev is not None and s.suite_task and s.suite_task != s.task and s.suite_task == prev.suite_task:
            runs[-1].append(i)
        else:
            runs.append([i])
    out = []
    for key, indices in enumerate(runs):
        if len(indices) < min_size:
            out += [TaskGroup(key=key * 1000 + k, name=model.tasks[i].task, indices=[i]) for k, i in enumerate(indices)]
            continue
        sections = [model.tasks[i] for i in indices]
        counts: dict[str, int] = {}
        for s in sections:
            for change, n in s.counts.items():
                counts[change] = counts.get(change, 0) + n
        splits, metrics = {s.split for s in sections}, {s.drill_metric for s in sections}
        out.append(TaskGroup(key=key, name=str(sections[0].suite_task), indices=indices,
                             split=splits.pop() if len(splits) == 1 else "mixed",
                             metric=metrics.pop() if len(metrics) == 1 else "mixed",
                             n_baseline=sum(s.n_baseline for s in sections),
                             n_candidate=sum(s.n_candidate for s in sections), counts=counts))
    return out
