"""Scoped decisions: a verdict per capability beside the global one.

A contract groups tasks into capabilities. Gates of a `scope: model` capability (and gates on no
capability, the primary gate wherever it is, monitor verdicts) decide the global decision as before. Gates of a
`scope: feature` capability decide only that capability: when it is not release, the model can
still be released, flagged `block_for_<capability>` — how a reviewer writes "release, block for
chart tasks". Fail-closed holds per scope: a feature's nodata/error gates block that feature.
Pure: GateVerdicts and the capability table in, verdicts out (reused by any harness's gates).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from rlgate.contract.models import Capability
from rlgate.engine.models import DECISION_ORDER, CapabilityVerdict, DecisionName, GateVerdict


def gate_task(gate: GateVerdict) -> str:
    """The task a gate reads: the first part of its `task/metric[/filter]`."""
    return gate.metric.split("/", 1)[0]


def capability_of(gate: GateVerdict, capabilities: Mapping[str, Capability]) -> str | None:
    """The capability whose tasks a gate reads (None for monitor rules and tasks on no capability)."""
    if gate.kind == "monitor":
        return None
    task = gate_task(gate)
    for name, cap in capabilities.items():
        if task in cap.tasks:
            return name
    return None


def worst(effects: Sequence[DecisionName]) -> DecisionName:
    return min(effects, key=DECISION_ORDER.index, default="release")


def flag_for(name: str, decision: DecisionName) -> str:
    return f"{decision}_for_{name}" if decision != "release" else ""


def _mapped(gate: GateVerdict) -> str:
    """The outcome, with the policy line that mapped it where a file set it."""
    return f"{gate.outcome}: {gate.policy_line}" if gate.policy_line else gate.outcome


def _named(gate: GateVerdict) -> str:
    return f"{gate.name} {gate.verdict}" + (f" [{_mapped(gate)}]" if gate.policy_line else "")


def scope_gates(gates: Sequence[GateVerdict], capabilities: Mapping[str, Capability]
                ) -> tuple[list[GateVerdict], list[CapabilityVerdict], list[str]]:
    """(gates that decide globally, a verdict per capability, flags of feature capabilities not released)."""
    owner = {id(g): capability_of(g, capabilities) for g in gates}
    # the primary gate always decides for the model: it is why the checkpoint exists
    def decides_globally(gate: GateVerdict) -> bool:
        cap = owner[id(gate)]
        return gate.kind == "primary" or cap is None or capabilities[cap].scope == "model"

    global_gates = [g for g in gates if decides_globally(g)]
    verdicts: list[CapabilityVerdict] = []
    flags: list[str] = []
    for name, cap in capabilities.items():
        mine = [g for g in gates if owner[id(g)] == name]
        decision = worst([g.effect for g in mine])
        deciding = [g.name for g in mine if g.effect == decision] if decision != "release" else []
        flag = flag_for(name, decision) if cap.scope == "feature" and decision != "release" else None
        if flag:
            flags.append(flag)
        if not mine:
            summary = "no gate on this capability's tasks"
        elif decision == "release":
            hidden = [g for g in mine if g.verdict != "pass"]
            summary = (f"release: all {len(mine)} gates passed" if not hidden else
                       f"release: {len(mine) - len(hidden)} of {len(mine)} gates passed; the decision policy maps "
                       + "; ".join(f"{g.name} {g.verdict} [{_mapped(g)}]" for g in hidden) + " to release")
        else:  # the deciding gates, then every other gate that did not pass
            summary = f"{decision}: " + "; ".join(_named(g) for g in mine if g.effect == decision) + "".join(
                f"; also {effect}: " + "; ".join(_named(g) for g in others)
                for effect in DECISION_ORDER[DECISION_ORDER.index(decision) + 1:]
                if (others := [g for g in mine if g.effect == effect and g.verdict != "pass"]))
        verdicts.append(CapabilityVerdict(name=name, scope=cap.scope, tasks=list(cap.tasks), decision=decision,
                                          gates=[g.name for g in mine], deciding_gates=deciding, flag=flag,
                                          summary=summary))
    return global_gates, verdicts, flags


class ScopedDecision(NamedTuple):
    decision: DecisionName
    deciding: list[GateVerdict]  # the gates whose effect is the decision (none when it is release)
    pool: list[GateVerdict]  # the gates that decide for the whole model
    capabilities: list[CapabilityVerdict]
    flags: list[str]


def scoped_decision(gates: Sequence[GateVerdict], capabilities: Mapping[str, Capability]) -> ScopedDecision:
    """The worst effect among the gates that decide for the whole model, with the per-capability verdicts."""
    pool, verdicts, flags = scope_gates(gates, capabilities)
    decision = worst([g.effect for g in pool])
    deciding = [g for g in pool if g.effect == decision] if decision != "release" else []
    return ScopedDecision(decision, deciding, pool, verdicts, flags)
