"""Sequential (anytime-valid) gating replayed over stored results: how much of the suite was needed.

Each task's paired documents are put in a seeded random order and revealed in chunks (the contract's
`protocol.sequential`). After each look every gate is judged with the betting confidence sequence
(rlgate.stats.sequential; Waudby-Smith & Ramdas, JRSS-B 2024), valid under optional stopping:
- regression: pass once non-inferiority is shown (K+ at -max_drop rejects "change <= -max_drop"),
  fail once a drop beyond max_drop is shown; level alpha / (regression gates), Bonferroni.
- primary: pass once "improvement <= max(min_delta, 0)" is rejected; primary_regression once a drop
  beyond max_drop is shown; primary_fail once both "improvement >= min_delta" and "drop beyond
  max_drop" are rejected.
- hard / absolute diagnostic: the candidate's own mean against its bounds.
Gates that cannot be bounded (values outside [0, 1] without a declared range, relative diagnostics,
no per-sample scores) stay open. Gates from other layers (monitor, contamination, judge) do not
depend on the documents and count as settled. Generation stops when no gate is open, or as soon as
the settled gates already block (no later look can improve on block). If the last look arrives with
gates open, the fixed-sample engine decides on the documents generated: exactly the full-suite
decision when max_fraction is 1. Worst-case error of a release is then alpha (anytime looks) plus
alpha (the final fixed look); the simulation tests measure it below alpha for drops beyond the margin.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from rlgate.contract.models import GateConfig, Sequential
from rlgate.engine.context import GateContext
from rlgate.engine.decision import _named, decide
from rlgate.engine.gates import AnyGate, key_of, make_verdict
from rlgate.engine.models import (
    DECISION_ORDER,
    Decision,
    DecisionName,
    NotGenerated,
    SequentialGate,
    SequentialLook,
    SequentialReplay,
)
from rlgate.engine.pairing import pair_task
from rlgate.engine.scope import scope_gates
from rlgate.engine.values import paired_values
from rlgate.results.models import MetricKey, RunResult
from rlgate.stats.sequential import from_unit, rejects, to_unit

METHOD = ("betting confidence sequence with aGRAPA bets (Waudby-Smith & Ramdas, 'Estimating means of bounded "
          "random variables by betting', JRSS-B 2024), one-sided, valid at every look")


@dataclass
class _Track:
    """One gate's observations in generation order, and how many are known at the end of each look."""

    x: np.ndarray  # mapped onto [0, 1]
    at_look: list[int]
    low: float
    high: float


def order(leaf: str, size: int, seed: int) -> np.ndarray:
    """The seeded random order of a task's documents: the same seed and task name, the same order."""
    return np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(leaf.encode())]).permutation(size)


def _schedule(ctx: GateContext, plan: Sequential, seed: int) -> tuple[dict[str, np.ndarray], dict[str, list[int]], int]:
    perms, counts = {}, {}
    for leaf, task in ctx.paired.items():
        perms[leaf] = order(leaf, task.report.paired, seed)
        counts[leaf] = plan.counts(task.report.paired)
    looks = max((len(c) for c in counts.values()), default=1)
    for leaf, c in counts.items():
        counts[leaf] = c + [c[-1]] * (looks - len(c))
    return perms, counts, looks


def _track(ctx: GateContext, key: MetricKey, role: str, hib: bool, perms: dict[str, np.ndarray],
           counts: dict[str, list[int]], looks: int) -> _Track | None:
    """Paired differences (role "paired") or candidate values ("candidate") of one metric, in generation order."""
    assert ctx.baseline is not None
    leaves = [leaf for leaf in ctx.leaves(key) if leaf in ctx.paired]
    if not leaves:
        return None
    parts: list[np.ndarray] = []
    at_look: list[int] = []
    total = 0
    for k in range(looks):
        for leaf in leaves:
            start = counts[leaf][k - 1] if k else 0
            chosen = perms[leaf][start:counts[leaf][k]]
            task = ctx.paired[leaf]
            b, c, _ = paired_values(ctx.baseline, ctx.candidate, key, [leaf],
                                    {leaf: (task.baseline_index[chosen], task.candidate_index[chosen])}, ctx.columns)
            parts.append(c - b if role == "paired" else c)
            total += parts[-1].size
        at_look.append(total)
    values = np.concatenate(parts) if parts else np.zeros(0)
    declared = ctx.candidate.metric_range(key.task, key.metric)
    lo, hi = (declared.low, declared.high) if declared is not None else (0.0, 1.0)
    if role == "paired":
        values, lo, hi = (values if hib else -values), -(hi - lo), hi - lo
    try:
        return _Track(to_unit(values, lo, hi), at_look, lo, hi)
    except ValueError:
        return None


def _first(hit: np.ndarray, at_look: list[int]) -> int | None:
    """First look (1-based) by whose end the anytime-valid test had rejected; None if never."""
    for k, n in enumerate(at_look, start=1):
        if n and hit[n - 1]:
            return k
    return None


def _test(track: _Track, threshold: float, alpha: float, side: str) -> int | None:
    m = float(to_unit(np.array([threshold]), track.low, track.high)[0]) if track.low <= threshold <= track.high \
        else (0.0 if threshold < track.low else 1.0)
    if m <= 0.0 or m >= 1.0:  # a threshold at the range's edge: never (or trivially) crossed; stay open
        return None
    return _first(rejects(track.x, m, alpha, side), track.at_look)


def _settle(kind: str, gate: AnyGate, track: _Track, alpha: float) -> tuple[str, str, int | None, str]:
    """(verdict pass|fail|open, outcome, settled look, reason) from the gate's anytime-valid tests."""
    def earliest(*looks: int | None) -> int | None:
        return None if any(look is None for look in looks) else max(look for look in looks if look is not None)

    if kind == "regression":
        limit = gate.max_drop  # type: ignore[union-attr]
        ok, bad = _test(track, -limit, alpha, "greater"), _test(track, -limit, alpha, "less")
        if ok is not None and (bad is None or ok <= bad):
            return "pass", "", ok, f"non-inferiority shown: lower bound >= -max_drop {-limit:g} at look {ok}"
        if bad is not None:
            return "fail", "regression_fail", bad, f"drop beyond max_drop {limit:g} shown at look {bad}"
        return "open", "", None, "neither non-inferiority nor a drop beyond max_drop shown"
    if kind == "primary":
        target = max(gate.min_delta, 0.0)  # type: ignore[union-attr]
        drop = gate.max_drop  # type: ignore[union-attr]
        ok = _test(track, target, alpha, "greater")
        regressed = _test(track, -drop, alpha, "less")
        missed = earliest(_test(track, gate.min_delta, alpha, "less"),  # type: ignore[union-attr]
                          _test(track, -drop, alpha, "greater"))
        found = [(look, v) for look, v in ((ok, "pass"), (regressed, "primary_regression"), (missed, "primary_fail"))
                 if look is not None]
        if not found:
            return "open", "", None, "improvement neither shown nor ruled out"
        look, what = min(found, key=lambda item: item[0])
        if what == "pass":
            return "pass", "", look, f"improvement above {target:g} shown at look {look}"
        return "fail", what, look, f"{what.replace('_', ' ')} shown at look {look}"
    bounds = [(name, float(getattr(gate, name))) for name in ("max", "min") if getattr(gate, name, None) is not None]
    within: list[int | None] = []
    for name, bound in bounds:
        side_ok, side_bad = ("less", "greater") if name == "max" else ("greater", "less")
        bad = _test(track, bound, alpha, side_bad)
        if bad is not None:
            return "fail", f"{kind}_fail", bad, f"value beyond {name} {bound:g} shown at look {bad}"
        within.append(_test(track, bound, alpha, side_ok))
    inside = earliest(*within)
    if inside is not None and within:
        return "pass", "", inside, f"value within its bounds shown at look {inside}"
    return "open", "", None, "value not yet shown on either side of its bound"


def _bounds(track: _Track, n: int, alpha: float) -> tuple[float | None, float | None]:
    from rlgate.stats.sequential import confidence_sequence

    if n == 0:
        return None, None
    lower, upper = confidence_sequence(track.x[:n], alpha, grid=1001)
    return float(from_unit(lower[-1], track.low, track.high)), float(from_unit(upper[-1], track.low, track.high))


def replay(config: GateConfig, baseline: RunResult, candidate: RunResult, plan: Sequential, full: Decision, *,
           seed: int, contract_name: str = "",
           allow_protocol_mismatch: bool = False) -> SequentialReplay:
    """Replay the seeded chunked order over two stored runs; `full` is the fixed-sample decision on all of it
    (its gates from other layers, such as monitor or judge, count as settled from the first look)."""
    ctx = GateContext(config, baseline, candidate, seed)
    for leaf in sorted(set(baseline.tasks) & set(candidate.tasks)):
        if baseline.tasks[leaf].samples and candidate.tasks[leaf].samples:
            ctx.paired[leaf] = pair_task(leaf, baseline.tasks[leaf], candidate.tasks[leaf])
    perms, counts, looks = _schedule(ctx, plan, seed)
    named = _named(config)
    family = max(1, sum(1 for kind, _, _ in named if kind == "regression"))
    settled: dict[str, SequentialGate] = {}
    tracks: dict[str, _Track] = {}
    for kind, gate, name in named:
        key = key_of(gate)
        alpha = config.alpha / family if kind == "regression" else config.alpha
        relative = kind == "diagnostic" and (gate.max_relative_increase is not None  # type: ignore[union-attr]
                                             or gate.max_relative_decrease is not None)  # type: ignore[union-attr]
        try:
            hib = ctx.direction(gate.ref, gate.higher_is_better)
            track = None if relative else _track(ctx, key, "paired" if kind in ("primary", "regression")
                                                 else "candidate", hib, perms, counts, looks)
        except Exception as error:  # a gate that cannot be tracked stays open (fail closed)
            track, why = None, f"{type(error).__name__}: {error}"
        else:
            why = ("relative diagnostics need the full suite" if relative
                   else "no bounded per-sample values to track")
        if track is None:
            settled[name] = SequentialGate(name=name, kind=kind, verdict="open", reason=f"open: {why}")
            continue
        tracks[name] = track
        verdict, outcome, look, reason = _settle(kind, gate, track, alpha)
        settled[name] = SequentialGate(name=name, kind=kind, verdict=verdict, outcome=outcome,
                                       settled_look=look, reason=reason)
    stop, reason, trace = looks, "every look used: the fixed-sample tests decide", []
    extras = [g for g in full.gates if g.kind not in ("primary", "hard", "regression", "diagnostic")]
    decision_at_stop: DecisionName | None = None
    totals = [sum(c[k] for c in counts.values()) for k in range(looks)]
    grand = sum(task.report.paired for task in ctx.paired.values())
    for k in range(1, looks + 1):
        open_now = [n for n, s in settled.items() if s.settled_look is None or s.settled_look > k]
        trace.append(SequentialLook(look=k, documents=totals[k - 1], fraction=totals[k - 1] / max(grand, 1),
                                    open_gates=open_now))
        verdicts = [make_verdict(n, s.kind, n, s.verdict if s.verdict != "open" else "pass",  # type: ignore[arg-type]
                                 config.decision, s.reason, outcome=s.outcome or None)
                    for n, s in settled.items() if n not in open_now] + list(extras)
        pool, _, _ = scope_gates(verdicts, config.capabilities)
        worst: DecisionName = min((g.effect for g in pool), key=DECISION_ORDER.index, default="release")
        if k < looks and (not open_now or worst == "block"):
            stop, decision_at_stop = k, worst
            reason = "every gate settled" if not open_now else "a blocking gate failed decisively"
            break
    if decision_at_stop is None:
        if totals[-1] >= grand:
            decision_at_stop = full.decision
        else:  # max_fraction < 1: the fixed-sample engine on the documents generated
            decision_at_stop = decide(config, _prefix(baseline, ctx, perms, counts, True),
                                      _prefix(candidate, ctx, perms, counts, False), seed=seed,
                                      contract_name=contract_name, extra_gates=extras,
                                      allow_protocol_mismatch=allow_protocol_mismatch).decision
            reason = f"max_fraction {plan.max_fraction:g} reached with gates open: the fixed-sample tests decide"
    gates_out = []
    for name, s in settled.items():
        if s.settled_look is not None and s.settled_look > stop:
            s = s.model_copy(update={"verdict": "open", "outcome": "", "settled_look": None,
                                     "reason": f"open at look {stop} ({s.reason})"})
        track = tracks.get(name)
        if track is not None:
            n = track.at_look[stop - 1]
            kind_alpha = config.alpha / family if s.kind == "regression" else config.alpha
            low, high = _bounds(track, n, kind_alpha)
            s = s.model_copy(update={"lower": low, "upper": high, "n": n})
        gates_out.append(s)
    not_generated = []
    for leaf, task in ctx.paired.items():
        used = counts[leaf][stop - 1]
        rest = perms[leaf][used:]
        if rest.size:
            ids = [str(baseline.tasks[leaf].samples[int(i)].doc_id) for i in task.baseline_index[rest]]
            not_generated.append(NotGenerated(task=leaf, count=int(rest.size), settled_at_look=stop,
                                              note=f"not generated: settled at look {stop}", documents=ids))
    used_total = totals[stop - 1]
    return SequentialReplay(
        method=METHOD, seed=seed, looks_planned=looks, stop_look=stop, stopped_early=stop < looks or used_total < grand,
        stop_reason=reason, decision_at_stop=decision_at_stop, full_decision=full.decision,
        matches_full=decision_at_stop == full.decision, documents_used=used_total, documents_total=grand,
        fraction_used=used_total / max(grand, 1), gates=gates_out, looks=trace[:stop], not_generated=not_generated)


def _prefix(run: RunResult, ctx: GateContext, perms: dict[str, np.ndarray], counts: dict[str, list[int]],
            is_baseline: bool) -> RunResult:
    """The run restricted to the documents generated by the last look (max_fraction < 1)."""
    tasks = dict(run.tasks)
    for leaf, task in ctx.paired.items():
        index = task.baseline_index if is_baseline else task.candidate_index
        keep = sorted(int(i) for i in index[perms[leaf][:counts[leaf][-1]]])
        samples = [run.tasks[leaf].samples[i] for i in keep]
        tasks[leaf] = run.tasks[leaf].model_copy(update={"samples": samples, "n_samples": len(samples)})
    return run.model_copy(update={"tasks": tasks})


def sequential_lines(r: SequentialReplay) -> list[str]:
    """The terminal's view of a replay: the look reached, each gate's settling, what was never generated."""
    same = "the same as" if r.matches_full else "DIFFERENT from"
    lines = ["", f"sequential: decision {r.decision_at_stop.upper()} reached at look {r.stop_look} of "
             f"{r.looks_planned} with {r.documents_used}/{r.documents_total} documents ({r.fraction_used:.0%}); "
             f"{same} the full-suite decision {r.full_decision.upper()} ({r.stop_reason})"]
    for g in r.gates:
        bounds = f" [{g.lower:+.4f}, {g.upper:+.4f}] over {g.n}" if g.lower is not None and g.upper is not None else ""
        lines.append(f"  {g.kind} {g.name}: {g.verdict}{(' (' + g.outcome + ')') if g.outcome else ''}{bounds}: "
                     f"{g.reason}")
    for ng in r.not_generated:
        lines.append(f"  {ng.task}: {ng.count} documents {ng.note}")
    return lines


__all__ = ["METHOD", "order", "replay", "sequential_lines"]
