"""The gate engine's entry point: a pure function from gate settings and two runs to a Decision.

Kayenta's shape: classify every gate, aggregate the labels with the decision policy, decide. No
I/O, no globals, no clock: the same inputs and seed give the same Decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from rlgate._core.errors import InputError
from rlgate.contract.gatekinds import BY_KIND, DECISIVE_KINDS, GATE_KINDS, listed, or_list
from rlgate.contract.models import GateConfig
from rlgate.engine import fmt, trajectories
from rlgate.engine.aggregates import aggregate_warnings
from rlgate.engine.context import GateContext, NoData
from rlgate.engine.corrupt import (
    CorruptData,
    allowed,
    check,
    collect,
    count_in_pairing,
    for_gate,
    mark_excluded,
    roles_read,
    run_warnings,
)
from rlgate.engine.coverage import capped_unpaired, shortfall_details
from rlgate.engine.directions import direction_findings
from rlgate.engine.gaps import CoverageGap, Shortfall, coverage_gaps, judged, min_coverage, shown
from rlgate.engine.gates import (
    AnyGate,
    PreparedRegression,
    check_range,
    key_of,
    make_verdict,
)
from rlgate.engine.missing import value_gaps
from rlgate.engine.models import (
    DECISION_ORDER,
    CapabilityVerdict,
    CorruptDocument,
    Decision,
    DecisionName,
    GateKind,
    GateVerdict,
    PairingReport,
    RunRef,
)
from rlgate.engine.pairing import pair_task
from rlgate.engine.protocol import protocol_differences
from rlgate.engine.scope import scoped_decision
from rlgate.engine.subtask_gates import with_subtask_gates
from rlgate.engine.subtasks import subtask_gaps
from rlgate.engine.units import with_units
from rlgate.registry import resolve
from rlgate.results.models import RunResult
from rlgate.stats.multiple import holm
from rlgate.stats.noninferiority import holm_levels

THRESHOLD_KEY = {spec.kind: spec.threshold for spec in GATE_KINDS if spec.threshold}


def _evaluator(target: str) -> Callable[..., Any]:
    """A gate kind's evaluator (rlgate.contract.gatekinds names it; imported on first use)."""
    return cast(Callable[..., Any], resolve(target))


def _named(config: GateConfig) -> list[tuple[GateKind, AnyGate, str]]:
    seen: set[str] = set()
    out: list[tuple[GateKind, AnyGate, str]] = []
    for spec, gate in listed(config):
        kind = spec.kind
        name = gate.name or gate.metric
        if name in seen:
            name = f"{name} ({kind})"
        seen.add(name)
        out.append((kind, gate, name))
    return out


def _failed(kind: GateKind, gate: AnyGate, name: str, ctx: GateContext, error: Exception) -> GateVerdict:
    """nodata / error verdicts: a gate that cannot be computed never passes."""
    metric = str(key_of(gate, ctx.config))
    if isinstance(error, Shortfall):
        return make_verdict(name, kind, metric, "nodata", ctx.config.decision, f"nodata: {error}",
                            details=shortfall_details(name, error))
    if isinstance(error, NoData):
        return make_verdict(name, kind, metric, "nodata", ctx.config.decision, f"nodata: {error}")
    if isinstance(error, CorruptData):
        return make_verdict(name, kind, metric, "error", ctx.config.decision, f"error: {error}",
                            details={"corrupt": error.count})
    return make_verdict(name, kind, metric, "error", ctx.config.decision,
                        f"error: {type(error).__name__}: {error}")


def _policy_effect(gate: GateVerdict, config: GateConfig) -> GateVerdict:
    """Map an extra (monitor, contamination, judge) verdict's outcome through the decision policy."""
    policy = config.decision
    if gate.verdict == "pass" and gate.outcome in ("pass", ""):
        return gate.model_copy(update={"effect": "release", "outcome": "pass"}, deep=True)
    if gate.verdict in ("nodata", "error"):
        return gate.model_copy(update={"effect": getattr(policy, gate.verdict), "outcome": gate.verdict}, deep=True)
    if gate.outcome in type(policy).model_fields:
        return gate.model_copy(update={"effect": getattr(policy, gate.outcome)}, deep=True)
    return gate.model_copy(deep=True)  # the caller's object is never modified


def _outcome_note(gate: GateVerdict) -> str:
    """` [primary_regression]` when a failure's outcome is not its kind's plain `<kind>_fail`; with the policy line
    that mapped it (` [regression_fail -> release: gates/lenient.yaml:4 decision.regression_fail]`) where a file
    set it."""
    if gate.policy_line:
        return f" [{gate.outcome} -> {gate.effect}: {gate.policy_line}]"
    return f" [{gate.outcome}]" if fmt.special_outcome(gate.outcome) else ""


def _gate_text(gate: GateVerdict) -> str:
    return f"{gate.kind} gate {gate.name} {gate.verdict}{_outcome_note(gate)} ({gate.reason.split(': ', 1)[-1]})"


def with_policy_lines(gates: Sequence[GateVerdict], sources: Mapping[str, str]) -> list[GateVerdict]:
    """The gates, each that did not pass (or passed yet decides) naming the policy line that mapped its outcome
    where a file set it (GateConfig.decision_sources); under rlgate's default policy there is none."""
    out = []
    for gate in gates:
        line = sources.get(gate.outcome) if gate.verdict != "pass" or gate.effect != "release" else None
        out.append(gate if gate.policy_line == line else gate.model_copy(update={"policy_line": line}))
    return out


def _summary(decision: str, deciding: list[GateVerdict], pool: list[GateVerdict], flags: Sequence[str] = (),
             capabilities: Sequence[CapabilityVerdict] = ()) -> str:
    """One sentence: the decision and every gate that did not pass, each with the policy line that mapped it where
    a file set it: the deciding gates, then those with a milder effect, then those the policy maps to release.
    Never "all gates passed" beside a FAIL, and no failure left out."""
    scoped = ""
    if flags:
        feature = {c.flag: c for c in capabilities if c.flag}
        scoped = "; " + "; ".join(f"{flag} ({feature[flag].summary})" for flag in flags)
    hidden = [g for g in pool if g.verdict != "pass" and g.effect == "release"]
    scope = "model-scope " if flags else ""
    mapped = ("the decision policy maps " + ("it" if len(hidden) == 1 else f"these {len(hidden)}") + " to release: "
              + "; ".join(_gate_text(g) for g in hidden)) if hidden else ""
    if decision == "release":
        if not hidden:
            return f"release: all {len(pool)} {scope}gates passed{scoped}"
        return (f"release: {len(pool) - len(hidden)} of {len(pool)} {scope}gates passed; {len(hidden)} did not, and "
                f"{mapped}{scoped}")
    shown = "; ".join(_gate_text(g) for g in deciding)
    named = {id(g) for g in deciding}
    milder = [(effect, [g for g in pool if g.effect == effect and id(g) not in named and g.verdict != "pass"])
              for effect in DECISION_ORDER[DECISION_ORDER.index(decision) + 1:-1]]
    also = "".join(f"; also {effect}: " + "; ".join(_gate_text(g) for g in gates) for effect, gates in milder if gates)
    return f"{decision}: {shown}{also}{f'; {mapped}' if hidden else ''}{scoped}"


_DECISIVE = DECISIVE_KINDS
NO_DECISIVE_GATE = (f"the contract has no {or_list(DECISIVE_KINDS)} gate, so nothing shows the candidate fit to "
                    "release (diagnostics inform, never release); add gates.primary or a hard/regression gate")


def capped(decision: DecisionName, summary: str, gates: Sequence[GateVerdict]) -> tuple[DecisionName, str]:
    """At most research_only without a primary, hard or regression gate: a diagnostic alone never releases."""
    if decision == "release" and not any(g.kind in _DECISIVE for g in gates):
        return "research_only", f"research_only: {NO_DECISIVE_GATE} ({summary})"
    return decision, summary


def underpowered(gate: GateVerdict) -> str | None:
    key = THRESHOLD_KEY.get(gate.kind)
    limit = gate.threshold.get(key) if key else None
    if limit and gate.mde is not None and gate.mde > limit:
        mde = fmt.apart(gate.mde, [(limit, f"{limit:g}")], (f"{gate.mde:.{k}g}" for k in range(4, 4 + fmt.MOST_DIGITS)))
        return (f"{gate.name}: the minimum detectable effect ({mde}) exceeds {key} ({limit:g}); "
                "the suite is too small to show what this gate asks")
    return None


def _pairing(ctx: GateContext) -> list[PairingReport]:
    """Each task's pairing, samples (and epochs or responses per sample) beside the records where they differ."""
    out = []
    for leaf, p in ctx.paired.items():
        assert ctx.baseline is not None
        out.append(with_units(p.report, ctx.baseline.tasks[leaf], ctx.candidate.tasks[leaf], p.baseline_index,
                              p.candidate_index, ctx.codes_of))
    return out + list(ctx.one_sided.values())


def decide(
    config: GateConfig,
    baseline: RunResult | None,
    candidate: RunResult,
    *,
    seed: int,
    contract_name: str,
    allow_protocol_mismatch: bool = False,
    extra_gates: Sequence[GateVerdict] = (),
    contract_hash: str | None = None,
    expected_documents: Mapping[str, frozenset[str]] | None = None,
) -> Decision:
    """Classify every gate of `config`, aggregate with its decision policy, and return the Decision.

    `baseline` None (no baseline results) makes the comparative gates `nodata`, so the decision is
    never release. Protocol differences between the runs raise InputError listing them unless
    `allow_protocol_mismatch` (then they are recorded in the Decision and its warnings).
    `extra_gates` lets other layers (training monitor, contamination, judge) feed their own
    GateVerdicts (kind monitor, contamination, ...) into the same aggregation: a verdict whose
    `outcome` names a decision-policy key (e.g. monitor_critical) gets that key's effect; nodata
    and error map to the policy's nodata / error. One gate's failure to compute never stops another.
    `expected_documents` (leaf task -> doc hashes of its cached document list) adds to what the contract
    expects of every run (rlgate.engine.coverage).
    """
    config = with_subtask_gates(config, baseline, candidate)
    ctx = GateContext(config, baseline, candidate, seed)
    named = _named(config)
    keys = [key_of(gate, config) for _, gate, _ in named]
    corrupt = collect(baseline, "baseline", keys, ctx.columns) + collect(candidate, "candidate", keys, ctx.columns)
    warnings: list[str] = run_warnings(corrupt, baseline, candidate)
    warnings += aggregate_warnings(keys, config, baseline, candidate, ctx.columns)
    differences: list[str] = []
    if baseline is not None:
        named_tasks = {gate.ref.task for _, gate, _ in named}
        every = {leaf for task in named_tasks for run in (baseline, candidate) for leaf in run.leaves(task)}
        leaves = sorted(leaf for leaf in every if leaf in baseline.tasks and leaf in candidate.tasks)
        for leaf in leaves:
            if baseline.tasks[leaf].samples and candidate.tasks[leaf].samples:
                ctx.paired[leaf] = pair_task(leaf, baseline.tasks[leaf], candidate.tasks[leaf])
        for leaf in sorted(every - set(leaves)):  # a subtask one run lacks entirely: counted, not dropped
            in_base = leaf in baseline.tasks
            task = (baseline if in_base else candidate).tasks[leaf]
            size = len(task.samples) or task.n_samples
            ctx.one_sided[leaf] = PairingReport(
                task=leaf, paired=0, only_baseline=size if in_base else 0, only_candidate=0 if in_base else size,
                examples=[f"task {leaf} is only in the {'baseline' if in_base else 'candidate'} run"])
        differences = protocol_differences(baseline, candidate, leaves, ctx.paired)
    flag_warnings, flag_differences = direction_findings(
        config, ((gate.ref, gate.higher_is_better) for _, gate, _ in named), baseline, candidate)
    warnings += flag_warnings
    if baseline is not None:
        differences += flag_differences
        if differences and not allow_protocol_mismatch:
            raise InputError(
                "baseline and candidate were evaluated under different protocols, so their scores are not "
                "comparable:\n    " + "\n    ".join(differences),
                fix="re-run both under the same protocol, or set allow_protocol_mismatch: true in the contract "
                "(the differences are then recorded in the decision)")
        warnings += [f"protocol difference allowed by the contract: {d}" for d in differences]
        for r in [p.report for p in ctx.paired.values()] + list(ctx.one_sided.values()):
            if r.only_baseline or r.only_candidate or r.document_mismatch:
                warnings.append(f"{r.task}: {r.paired} documents paired; {r.only_baseline} baseline-only, "
                                f"{r.only_candidate} candidate-only, {r.document_mismatch} changed documents "
                                "(not used in paired tests)")
    verdicts: dict[str, GateVerdict] = {}
    gaps: dict[str, list[CoverageGap]] = {}
    prepared: dict[str, list[PreparedRegression]] = {}  # multiplicity-adjusted families, by kind
    tolerated: dict[str, tuple[list[CorruptDocument], int]] = {}
    unknowns: dict[str, int] = {}  # gate -> unknown trajectories it tolerated (allow_missing_trajectories)
    for kind, gate, name in named:
        try:
            items = for_gate(key_of(gate, config), roles_read(gate), corrupt, baseline, candidate)
            check(key_of(gate, config), items, allowed(gate, config))  # fail closed before any number is computed
            if items:
                tolerated[name] = (items, allowed(gate, config))
            check_range(gate, ctx)
            key, roles = key_of(gate, config), roles_read(gate)
            unknown = trajectories.checked(ctx, key, roles)  # a safety gate with unknown trajectories fails closed
            if unknown:
                warnings.append(trajectories.note(name, unknown, config.allow_missing_trajectories))
                unknowns[name] = len(unknown)
            gaps[name] = []  # each source judged in turn: one short run stops the gate before the next is read
            spec = BY_KIND[kind]
            counted = ("candidate",) if spec.candidate_only else ("baseline", "candidate")
            for source in (coverage_gaps(ctx, key, counted, expected_documents),
                           value_gaps(ctx, key, roles, items, unknown), subtask_gaps(ctx, key, roles)):
                gaps[name] += judged(source, key, min_coverage(config, key.task))
            if spec.family_finish is None:
                verdicts[name] = _evaluator(spec.evaluator)(gate, ctx, name)
            else:  # judged as a family once all its gates are prepared (Holm across them)
                prepared.setdefault(kind, []).append(_evaluator(spec.evaluator)(gate, ctx, name))
        except Exception as error:  # one gate's failure never stops the others
            verdicts[name] = _failed(kind, gate, name, ctx, error)
    for kind, family in prepared.items():
        finish = _evaluator(BY_KIND[kind].family_finish or "")
        adjusted = holm([p.p_drop for p in family])
        ni_p = [p.p_noninferior for p in family]
        ni_levels, ni_adjusted = holm_levels(ni_p, config.alpha), holm(ni_p)
        for prep, p_adj, level, ni_adj in zip(family, adjusted, ni_levels, ni_adjusted, strict=True):
            try:
                verdicts[prep.name] = finish(prep, p_adj, len(family), ctx, level, ni_adj)
            except Exception as error:
                verdicts[prep.name] = _failed(kind, prep.gate, prep.name, ctx, error)
    for name, (items, limit) in tolerated.items():
        if verdicts[name].verdict in ("pass", "fail", "inconclusive"):
            warnings.append(mark_excluded(verdicts[name], items, limit))
    for name, count in unknowns.items():
        if verdicts[name].effect == "release":  # safe on the trajectories seen; the rest is unknown
            verdicts[name].effect = "research_only"
            verdicts[name].reason += (f" ({count} trajectories unknown under allow_missing_trajectories: at most "
                                      "research_only)")
    for _, gate, name in named:
        verdicts[name].fraction = ctx.unit(key_of(gate, config)).fraction
        evidence, gap_note = shown(gaps.get(name, []), computed=verdicts[name].verdict not in ("nodata", "error"))
        if "coverage" in evidence and "coverage" in verdicts[name].details:  # a shortfall's run is already there
            evidence["coverage"] = {**evidence["coverage"], **verdicts[name].details["coverage"]}
        verdicts[name].details.update(evidence)  # answered / missing documents per run, beside the values
        verdicts[name].reason += gap_note
    gates = [verdicts[name] for _, _, name in named] + [_policy_effect(g, config) for g in extra_gates]
    for verdict in gates:
        note = underpowered(verdict)
        if note:
            verdict.details["underpowered"] = True
            warnings.append(note)
        if verdict.test and verdict.test.startswith("unpaired"):
            warnings.append(f"{verdict.name}: compared without per-sample results (unpaired z-test); "
                            f"{config.samples_hint(verdict.metric.split('/')[0])} for paired tests")
        note = capped_unpaired(verdict)
        if note:
            warnings.append(note)
    gates = with_policy_lines(gates, config.decision_sources)
    decision, deciding, deciding_pool, capabilities, flags = scoped_decision(gates, config.capabilities)
    decision, summary = capped(decision, _summary(decision, deciding, deciding_pool, flags, capabilities), gates)
    if not any(g.kind in _DECISIVE for g in gates):
        warnings.append(NO_DECISIVE_GATE)
    inputs = [RunRef(role="candidate", source=candidate.provenance.source, model=candidate.provenance.model,
                     checkpoint_fingerprint=candidate.provenance.checkpoint_fingerprint)]
    if baseline is not None:
        inputs.insert(0, RunRef(role="baseline", source=baseline.provenance.source, model=baseline.provenance.model,
                                checkpoint_fingerprint=baseline.provenance.checkpoint_fingerprint))
    else:
        warnings.append("no baseline results: comparative gates are nodata and the decision cannot be release")
    return Decision(
        decision=decision, summary=summary,
        deciding_gates=[g.name for g in deciding], capabilities=capabilities, flags=flags,
        gates=gates, pairing=[count_in_pairing(r, corrupt) for r in _pairing(ctx)],
        protocol_differences=differences, corrupt=corrupt,
        contract=contract_name, contract_hash=contract_hash, inputs=inputs, alpha=config.alpha, seed=seed,
        warnings=warnings,
    )
