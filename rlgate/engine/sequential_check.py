"""Sequential gating live (`rlgate check` with protocol.sequential): judge the documents generated so far.

The runner generates looks 1..k of each task's seeded order (Sequential.order, the same order
`rlgate gate --sequential` replays). After each look `judge_generated` runs the anytime-valid tests
of rlgate.engine.sequential (the contract's method: betting, or group_sequential at the planned looks)
over the paired documents in that order and says whether to stop:
every decision gate settled, or a blocking gate failed decisively. Diagnostics never hold up
stopping. The final decision is the fixed-sample engine's on the generated documents, with each
gate the sequential test settled taking the sequential verdict (`with_sequential`); documents
never generated are listed in the decision, "not generated: settled at look k", never dropped.
"""

from __future__ import annotations

import numpy as np

from rlgate._core.errors import InputError
from rlgate.contract.models import GateConfig, Sequential
from rlgate.engine.context import GateContext
from rlgate.engine.decision import _summary, capped, with_policy_lines
from rlgate.engine.models import Decision, NotGenerated, SequentialReplay
from rlgate.engine.pairing import pair_task
from rlgate.engine.scope import scoped_decision
from rlgate.engine.sequential import (
    DIAGNOSTIC_NOTE,
    _at_stop,
    _scan,
    _spending,
    _track_gates,
    samples_of,
    with_settled,
)
from rlgate.engine.sequential_methods import method_of
from rlgate.results.models import RunResult


def judge_generated(config: GateConfig, baseline: RunResult, candidate: RunResult, plan: Sequential, *, seed: int,
                    totals: dict[str, int], look: int) -> tuple[SequentialReplay, bool]:
    """(status after `look`, stop?) for runs holding the documents of looks 1..look (true doc ids);
    `totals`: each leaf task's documents in the full suite. Protocols are not compared here: the final
    fixed-sample decision checks them."""
    ctx = GateContext(config, baseline, candidate, seed)
    for leaf in sorted(set(baseline.tasks) & set(candidate.tasks)):
        if baseline.tasks[leaf].samples and candidate.tasks[leaf].samples:
            ctx.paired[leaf] = pair_task(leaf, baseline.tasks[leaf], candidate.tasks[leaf])
    clustered = sorted(leaf for leaf in ctx.paired if samples_of(ctx, leaf) is not None)
    if clustered:  # generation is ordered by document: a sample's epochs would be generated and counted apart
        raise InputError(f"a sequential check generates documents one record each, and {', '.join(clustered)} has "
                         "several records (epochs) per sample",
                         fix="run the suite whole, then replay it with `rlgate gate --sequential` (which orders and "
                         "counts samples, each with all its epochs)")
    schedule = {leaf: plan.counts(total) for leaf, total in totals.items()}
    planned = max((len(c) for c in schedule.values()), default=1)
    perms: dict[str, np.ndarray] = {}
    counts: dict[str, list[int]] = {}
    for leaf, task in ctx.paired.items():
        total = totals.get(leaf, task.report.paired)
        steps = schedule.get(leaf) or plan.counts(total)
        steps = steps + [steps[-1]] * (planned - len(steps))
        position = {_doc(baseline, leaf, int(i)): p for p, i in enumerate(task.baseline_index)}
        ordered = Sequential.order(leaf, total, seed)
        chosen: list[int] = []
        counts[leaf] = []
        for j in range(look):  # the paired documents of each look, in the seeded order
            start = steps[j - 1] if j else 0
            chosen += [position[d] for d in ordered[start:steps[j]] if d in position]
            counts[leaf].append(len(chosen))
        perms[leaf] = np.asarray(chosen, dtype=np.int64)
    method = method_of(plan.method, plan.spending)
    planned_docs = {leaf: steps[-1] for leaf, steps in schedule.items()}
    settled, tracks, family = _track_gates(config, ctx, perms, counts, look, method, planned_docs, planned)
    totals_at = [sum(c[j] for c in counts.values()) for j in range(look)]
    grand = sum(totals.get(leaf, t.report.paired) for leaf, t in ctx.paired.items())
    found, reason, worst, trace = _scan(config, settled, [], totals_at, grand, look, planned, method)
    stop = found is not None or look >= planned
    if found is None and look < planned:
        reason = "gates open: generating the next look"
    not_generated = []
    for leaf, total in sorted(totals.items()):
        steps = schedule[leaf]
        used = steps[min(look, len(steps)) - 1]
        rest = Sequential.order(leaf, total, seed)[used:]
        if rest:
            note = (f"not generated: settled at look {look}" if look < planned
                    else f"not generated: max_fraction {plan.max_fraction:g} reached at look {look}")
            not_generated.append(NotGenerated(task=leaf, count=len(rest), settled_at_look=look, note=note,
                                              documents=[str(d) for d in rest]))
    used_total = totals_at[-1] if totals_at else 0
    status = SequentialReplay(
        mode="check", method=method.description, procedure=method.name, spending=_spending(method), seed=seed,
        looks_planned=planned, stop_look=look,
        stopped_early=bool(not_generated), stop_reason=reason, decision_at_stop=worst or "release",
        documents_used=used_total, documents_total=grand, fraction_used=used_total / max(grand, 1),
        gates=_at_stop(config, settled, tracks, family, look, method), looks=trace, not_generated=not_generated)
    return status, stop


def _doc(run: RunResult, leaf: str, index: int) -> int:
    doc_id = run.tasks[leaf].samples[index].doc_id
    return int(doc_id) if isinstance(doc_id, int) or str(doc_id).isdigit() else -1


def with_sequential(decision: Decision, status: SequentialReplay, config: GateConfig) -> Decision:
    """The fixed-sample decision on the generated documents, each gate the sequential test settled by the stop
    taking its sequential verdict (bounds in details.sequential); the decision re-aggregated, the status attached."""
    settled = [s.name for s in status.gates if s.kind != "diagnostic" and s.verdict != "open"]
    gates = with_settled(decision.gates, status.gates, config, status.procedure)
    gates = with_policy_lines(gates, config.decision_sources)
    final, deciding, pool, capabilities, flags = scoped_decision(gates, config.capabilities)
    final, summary = capped(final, _summary(final, deciding, pool, flags, capabilities), gates)
    judged = {g.name: g for g in decision.gates if g.kind == "diagnostic"}
    diagnostics = [s if s.name not in judged else s.model_copy(update={
        "verdict": judged[s.name].verdict if judged[s.name].verdict in ("pass", "fail") else "open",
        "outcome": judged[s.name].outcome if judged[s.name].verdict == "fail" else "",
        "reason": f"{DIAGNOSTIC_NOTE}: {judged[s.name].reason}"}) for s in status.gates]
    status = status.model_copy(update={"decision_at_stop": final, "gates": diagnostics})
    unseen = {ng.task: ng.count for ng in status.not_generated}
    warnings = [w + " — the baseline-only ones are the documents this sequential check did not generate"
                if any(w.startswith(f"{task}: ") and f"; {count} baseline-only" in w for task, count in unseen.items())
                else w for w in decision.warnings
                # the fixed-sample test's power on a prefix says nothing about a gate the sequence settled
                if not any(w.startswith(f"{name}: the minimum detectable effect") for name in settled)]
    return decision.model_copy(update={
        "decision": final, "gates": gates, "capabilities": capabilities, "flags": flags,
        "deciding_gates": [g.name for g in deciding], "sequential": status, "warnings": warnings,
        "summary": summary})
