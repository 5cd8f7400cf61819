"""One annotation per gate that did not pass, pointing at the line of the contract that set it.

GitHub shows at most 10 error and 10 warning annotations per step; beyond that they are folded
into one line naming how many more there are, so none is silently missing.
"""

from __future__ import annotations

from pathlib import Path

from rlgate.ci.commands import AnnotationLevel, annotation
from rlgate.engine import fmt
from rlgate.engine.fmt import special_outcome
from rlgate.engine.models import Decision, DecisionName, GateVerdict

#: GitHub's per-step display limit for each of error and warning annotations.
MAX_PER_LEVEL = 10
LEVEL_OF: dict[DecisionName, AnnotationLevel] = {"block": "error", "research_only": "warning", "release": "notice"}


def locate_metric(contract: Path) -> dict[str, int]:
    """Line number of the first mention of each metric reference in the contract file (1-based)."""
    try:
        text = contract.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.split("#", 1)[0]
        for token in code.replace("{", " ").replace("}", " ").replace(",", " ").replace(":", " ").split():
            if "/" in token:
                lines.setdefault(token.strip("'\""), number)
    return lines


def _raw(x: float, limits: list[float], digits: int = 4) -> str:
    """A raw figure with `digits` significant digits, or more where it would read as a limit it is held to."""
    return fmt.apart(x, [(v, f"{v:g}") for v in limits],
                     (f"{x:+.{k}g}" for k in range(digits, digits + fmt.MOST_DIGITS + 1)))


def _numbers(gate: GateVerdict, alpha: float | None = None) -> str:
    """The gate's raw figures; each one never printed as the threshold (or alpha) it is compared with."""
    parts: list[str] = []
    bounds = fmt.value_limits(gate.threshold)
    candidate = _raw(gate.candidate, bounds).lstrip("+") if gate.candidate is not None else ""
    if gate.baseline is not None and gate.candidate is not None:
        parts.append(f"baseline {gate.baseline:.4g} -> candidate {candidate}")
    elif gate.candidate is not None:
        parts.append(f"candidate {candidate}")
    if gate.delta is not None:
        moves = fmt.change_limits(gate.threshold, gate.higher_is_better)
        delta = f"delta {_raw(gate.delta, moves)}"
        if gate.ci is not None:
            delta += f" [{_raw(gate.ci[0], moves)}, {_raw(gate.ci[1], moves)}]"
        parts.append(delta)
    if gate.p_value is not None:  # the unadjusted p: held to alpha only where no Holm adjustment decides
        limits = [alpha] if alpha is not None and gate.p_adjusted is None else []
        parts.append(f"p={_raw(gate.p_value, limits, 3).lstrip('+')}")
    return "; ".join(parts)


def gate_message(gate: GateVerdict, alpha: float | None = None) -> str:
    """`reason (numbers)` — enough to act on without opening the report (the title names the metric)."""
    numbers = _numbers(gate, alpha)
    return gate.reason + (f" ({numbers})" if numbers else "")


def metric_line(metric: str, lines: dict[str, int]) -> int | None:
    """The contract line of a gate's metric; `task/metric/filter` also matches a contract's `task/metric`."""
    parts = metric.split("/")
    while len(parts) >= 2:
        line = lines.get("/".join(parts))
        if line is not None:
            return line
        parts = parts[:-1]
    return None


def gate_annotations(decision: Decision, file: str | None, lines: dict[str, int]) -> list[str]:
    """Workflow commands: the decision itself, then one per gate whose verdict is not `pass`."""
    level = LEVEL_OF[decision.decision]
    out: list[tuple[AnnotationLevel, str]] = [
        (level, annotation(level, decision.summary, title=f"rlgate decision: {decision.decision}"))]
    for gate in decision.gates:
        if gate.verdict == "pass":
            continue
        gate_level = LEVEL_OF[gate.effect]
        outcome = f"{gate.outcome} -> " if special_outcome(gate.outcome) else ""
        title = f"rlgate {gate.kind} gate {gate.metric}: {gate.verdict} ({outcome}{gate.effect})"
        line = metric_line(gate.metric, lines) if file else None
        message = gate_message(gate, decision.alpha)
        out.append((gate_level, annotation(gate_level, message, title=title, file=file, line=line)))
    return _fold(out)


def _fold(items: list[tuple[AnnotationLevel, str]]) -> list[str]:
    """Keep at most MAX_PER_LEVEL annotations per level; the last kept one says how many were folded."""
    result: list[str] = []
    for level in ("error", "warning", "notice"):
        mine = [text for lvl, text in items if lvl == level]
        if len(mine) > MAX_PER_LEVEL:
            hidden = len(mine) - (MAX_PER_LEVEL - 1)
            mine = [*mine[: MAX_PER_LEVEL - 1],
                    annotation(level, f"{hidden} more gates at this level: see the job summary and report.html",
                               title="rlgate: more gates")]
        result += mine
    return result
