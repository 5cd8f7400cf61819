"""A one-screen text summary of a resolved contract, for `rlgate validate`."""

from __future__ import annotations

from rlgate.contract.gatekinds import DECISIVE_KINDS, or_list
from rlgate.contract.judge_describe import judge_policy_lines
from rlgate.contract.loader import ResolvedContract
from rlgate.contract.references import Baseline, Reference


def _bound(gate: object) -> str:
    parts = []
    for name in ("min_delta", "max_drop", "max", "min", "max_relative_increase", "max_relative_decrease"):
        value = getattr(gate, name, None)
        if value is not None:
            parts.append(f"{name}={value:g}")
    for name in ("require", "test"):
        value = getattr(gate, name, None)
        if value and value not in ("significance",):
            parts.append(f"{name}={value}")
    if getattr(gate, "per_subtask", False):
        parts.append("per_subtask (one verdict per leaf task too)")
    return ", ".join(parts)


def _agent_line(rc: ResolvedContract, agent_tasks: bool) -> str:
    """The agent budget and safety rules, when the contract has agent tasks (its harnesses say which)."""
    if not agent_tasks:
        return ""
    budget = rc.contract.protocol.agent
    parts = [f"{k}={v:g}" for k, v in budget.model_dump().items() if v is not None]
    safety = rc.contract.safety
    rules = (f"; safety: {len(safety.forbidden_tools)} forbidden tool(s), {len(safety.forbidden_arguments)} "
             "argument pattern(s)") if safety else "; safety: scorer only"
    return f"agent     {' '.join(parts) or 'no budget (task defaults)'}{rules}"


def _baseline_lines(baseline: Baseline | dict[str, Reference]) -> list[str]:
    def one(ref: Baseline) -> str:
        return f"{ref.checkpoint or ''}{' results=' + ref.results if ref.results else ''}"

    if isinstance(baseline, Baseline):
        return [f"baseline  {one(baseline)}"]
    return [f"baseline  {name} ({ref.role}): {one(ref).strip()}" for name, ref in baseline.items()]


def contract_summary(rc: ResolvedContract, *, agent_tasks: bool = False) -> str:
    """Suites, tasks by split, protocol and gates, as plain text; `agent_tasks`: a task's harness runs agents."""
    c = rc.contract
    s = c.protocol.sampling
    lines = [
        f"contract  {c.name}  ({rc.path})",
        f"  {c.description}" if c.description else "",
        *_baseline_lines(c.baseline),
        f"protocol  backend={c.protocol.backend} chat_template={c.protocol.chat_template} "
        f"temperature={s.temperature:g} top_p={s.top_p:g} n={s.n} max_tokens={s.max_tokens} seed={s.seed}",
        _agent_line(rc, agent_tasks),
        "suites    " + ", ".join(f"{x.name} v{x.version} ({len(x.tasks)} tasks)" for x in rc.suites),
        "tasks by split:",
    ]
    for split, spec in c.splits.items():
        names = [t.name + (" [local data]" if t.data_files else "") + (" [local task]" if t.path else "")
                 for t in rc.tasks if t.split == split]
        lines.append(f"  {split:<14} {spec.visibility:<18} {', '.join(names) or '-'}")
    g = rc.gates
    lines.append(f"gates (alpha={g.alpha:g}, power={g.power:g}, bootstrap={g.bootstrap_resamples}):")
    for kind, gate in g.listed():
        lines.append(f"  {kind.kind:<11} {gate.metric}  {_bound(gate)}")
    policy = g.decision
    lines.append(f"decision  hard/regression/nodata/error -> {policy.hard_fail}/{policy.regression_fail}/"
                 f"{policy.nodata}/{policy.error}; primary miss -> {policy.primary_fail}; "
                 f"primary significantly worse -> {policy.primary_regression}; "
                 f"diagnostic -> {policy.diagnostic_fail}")
    if not any(kind.decisive for kind, _ in g.listed()):
        lines.append(f"decision  at most research_only: the contract has no {or_list(DECISIVE_KINDS)} gate "
                     "(diagnostics inform, never release); add gates.primary or a hard/regression gate")
    for outcome, source in sorted(g.decision_sources.items()):
        lines.append(f"  {outcome} -> {getattr(policy, outcome)}  ({source})")
    if c.monitor:
        lines.append(f"monitor   logs: {', '.join(c.monitor.logs) or '-'} (format {c.monitor.format})")
    lines += judge_policy_lines(rc)
    return "\n".join(line for line in lines if line)
