"""Plain-text views of a Decision: the terminal table and the Markdown summary `rlgate gate` writes.

The full reports (HTML, job summary, JUnit) are the report layer's; these are the minimal,
dependency-free views. Model and user text never reaches them except gate names and metric
names, which are escaped for Markdown tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from rlgate._core.text import visible_controls
from rlgate.engine import fmt
from rlgate.engine.models import Decision, GateVerdict, PairingReport

_MARK = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE", "nodata": "NODATA", "error": "ERROR"}


def _p(gate: GateVerdict, alpha: float | None) -> str:
    p = fmt.deciding_p(gate.p_value, gate.p_adjusted)
    return "-" if p is None or math.isnan(p) else fmt.p_number(p, alpha)


def _n(gate: GateVerdict) -> str:
    """Samples, with `×epochs` where each sample has several records (their mean is the sample's value)."""
    if gate.n is None:
        return "-"
    units = gate.details.get("units")
    if not isinstance(units, dict):
        return str(gate.n)
    return f"{gate.n}×{units.get('epochs_per_sample') or units.get('responses_per_sample')}"


def monitor_observed(gate: GateVerdict, number: Callable[[float], str] = lambda v: f"{v:.4g}") -> str:
    """A monitor finding's observed values (as its rule measured them) and the steps they were measured over;
    empty for a gate without values (read errors, the all-clear gate). `number` formats each value."""
    details = gate.details if isinstance(gate.details, dict) else {}
    values = details.get("values")
    shown = [f"{k} {number(v)}" if isinstance(v, int | float) and not isinstance(v, bool) else f"{k} {v}"
             for k, v in (values.items() if isinstance(values, dict) else []) if v is not None]
    start, end = details.get("step_start"), details.get("step_end")
    if shown and start is not None and end is not None:
        shown[-1] += f" (steps {start}–{end})" if start != end else f" (step {start})"
    return ", ".join(shown)


def _candidate(gate: GateVerdict, metric: str, bounds: list[float]) -> str:
    if gate.candidate is not None:
        return fmt.value(gate.candidate, metric, bounds)
    return (monitor_observed(gate) or "-") if gate.kind == "monitor" else "-"


def _row(gate: GateVerdict, alpha: float, baselines: Mapping[str, float] | None = None) -> list[str]:
    metric = gate.metric.split("/")[1] if gate.metric.count("/") >= 1 else gate.metric
    moves = fmt.change_limits(gate.threshold, gate.higher_is_better)
    bounds = fmt.value_limits(gate.threshold)
    ci = f"[{fmt.delta(gate.ci[0], metric, moves)}, {fmt.delta(gate.ci[1], metric, moves)}]" \
        if gate.ci and gate.delta is not None else ""
    # a one-run gate (hard bound) has no baseline of its own: the baseline run's value, where the caller knows it
    base = gate.baseline if gate.baseline is not None else (baselines or {}).get(gate.metric)
    return [
        gate.kind,
        gate.name,
        fmt.value(base, metric) if base is not None else "-",
        _candidate(gate, metric, bounds),
        fmt.delta(gate.delta, metric, moves) if gate.delta is not None else "-",
        ci or "-",
        _p(gate, alpha),
        fmt.delta(gate.mde, metric, fmt.size_limits(gate.threshold)).lstrip("+")
        if gate.mde is not None and math.isfinite(gate.mde) else "-",
        _n(gate),
        _MARK[gate.verdict] + (f" ({gate.outcome} -> {gate.effect})" if fmt.special_outcome(gate.outcome)
                               or (gate.verdict != "pass" and gate.effect == "release") else ""),
    ]


HEADER = ["kind", "gate", "baseline", "candidate", "delta", "CI", "p", "MDE", "n", "verdict"]


def decision_table(decision: Decision, baselines: Mapping[str, float] | None = None) -> str:
    """A fixed-width table for the terminal, then the decision line. `baselines`: gate metric -> the baseline
    run's value, shown for one-run gates as the reports show it."""
    rows = [HEADER, *(_row(g, decision.alpha, baselines) for g in decision.gates)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines += judge_lines(decision)
    lines += scoped_lines(decision)
    lines += decision_lines(decision)
    return "\n".join(lines)


def summary_clauses(summary: str) -> list[str]:
    """The decision summary cut at its top-level `; ` (one clause per gate or check; parentheses kept whole)."""
    clauses, depth, start = [], 0, 0
    for i, ch in enumerate(summary):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if depth == 0 and summary.startswith("; ", i):
            clauses.append(summary[start:i])
            start = i + 2
    return [c for c in (*clauses, summary[start:]) if c.strip()]


def _summary_parts(decision: Decision) -> tuple[str, list[str]]:
    head = f"{decision.decision}: "
    body = decision.summary[len(head):] if decision.summary.startswith(head) else decision.summary
    return head, summary_clauses(body)


def _summary_markdown(decision: Decision) -> list[str]:
    """The summary as a paragraph, or `label:` and one bullet per clause when it has several."""
    head, clauses = _summary_parts(decision)
    if len(clauses) <= 1:
        return [_md(decision.summary)]
    return [_md(head.rstrip()), "", *(f"- {_md(c)}" for c in clauses)]


def decision_lines(decision: Decision) -> list[str]:
    """`decision: LABEL`, then the summary one clause per line: a terminal reader sees each reason on its own
    line instead of one run-on sentence (decision.json keeps the sentence as it is)."""
    _, clauses = _summary_parts(decision)
    if len(clauses) <= 1 and len(decision.summary) <= 100:
        return [f"decision: {decision.decision.upper()}  ({decision.summary})"]
    return [f"decision: {decision.decision.upper()}", *(f"  - {c}" for c in clauses)]


def judge_trust_text(gate: GateVerdict) -> str | None:
    """A judge gate's bias figures in one phrase (shown beside its win rate), or None for other gates."""
    trust = gate.details.get("judge_trust") if isinstance(gate.details, dict) else None
    if not isinstance(trust, dict):
        return None
    parts = []
    for name, words in (("position_flip_rate", "position flip"), ("length_follow_rate", "length-follow")):
        if name not in trust:
            continue
        rate, limit = trust.get(name), trust.get(f"max_{name}")
        shown = "not measured" if rate is None else f"{rate:.2f}"
        mark = "" if trust.get(f"{name}_enforced") or rate is None else ", not enforced"
        parts.append(f"{words} {shown} (max {limit:g}, n={trust.get(f'{name}_n', 0)}{mark})")
    verdict = "trusted" if trust.get("trusted") else f"NOT TRUSTED (on_bias: {trust.get('on_bias')})"
    return f"judge bias: {'; '.join(parts)}: {verdict}"


def judge_lines(decision: Decision) -> list[str]:
    """One line per judge gate with its bias figures, then a blank line; nothing without judge gates."""
    out = [f"{gate.name}: {text}" for gate in decision.gates if (text := judge_trust_text(gate))]
    return [*out, ""] if out else []


def scoped_lines(decision: Decision) -> list[str]:
    """One line per capability (scoped decisions), then a blank line; nothing without capabilities."""
    if not decision.capabilities:
        return []
    width = max(len(c.name) for c in decision.capabilities)
    out = [f"capability {c.name.ljust(width)}  {c.scope:<7}  {c.decision.upper()}"
           f"{(' [' + c.flag + ']') if c.flag else ''}  ({c.summary})" for c in decision.capabilities]
    return [*out, ""]


def _md(text: str) -> str:
    """Escape text for a Markdown table cell: no raw HTML, pipes or line breaks, nothing invisible."""
    out = visible_controls(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    for ch in "`*_[]":
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.split())


def _code(text: str) -> str:
    """A code span, or escaped text where a backtick or line break would end the span early."""
    text = visible_controls(text)  # (a CR is now the text \\r)
    return f"`{text}`" if "`" not in text and "\n" not in text else _md(text)


def pairing_text(p: PairingReport) -> str:
    """One task's pairing in samples, the unit of every test: `40 samples paired × 4 epochs (160 records)` where a
    harness writes several records per sample, `30 samples paired × 16 responses` where each holds several."""
    unpaired = f"{p.only_baseline} baseline-only, {p.only_candidate} candidate-only"
    if p.samples is not None:
        return (f"{p.samples} samples paired × {p.epochs_per_sample} epochs ({p.paired} records); unpaired records: "
                f"{unpaired}, {p.document_mismatch} changed")
    paired = f"{p.paired} samples paired × {p.responses_per_sample} responses" if p.responses_per_sample \
        else f"{p.paired} paired"
    return f"{paired}, {unpaired}, {p.document_mismatch} changed documents"


def decision_markdown(decision: Decision, baselines: Mapping[str, float] | None = None) -> str:
    """The plain Markdown summary: decision, gate table, reasons, pairing and warnings (`baselines` as in
    `decision_table`)."""
    lines = [f"# rlgate decision: **{decision.decision}**", "", *_summary_markdown(decision), "",
             f"Contract {_code(decision.contract)} · alpha {decision.alpha:g} · seed {decision.seed} · "
             f"{decision.engine_version}", ""]
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|" + "---|" * len(HEADER))
    for gate in decision.gates:
        cells = _row(gate, decision.alpha, baselines)
        cells[1] = _md(cells[1])
        lines.append("| " + " | ".join(cells) + " |")
    judged = [(g, t) for g in decision.gates if (t := judge_trust_text(g))]
    if judged:
        lines += ["", "## Judge trust", ""]
        lines += [f"- **{_md(g.name)}**: {_md(t)}" for g, t in judged]
    if decision.capabilities:
        lines += ["", "## Capabilities", "", "| capability | scope | tasks | decision | flag |",
                  "|---|---|---|---|---|"]
        lines += [f"| {_md(c.name)} | {c.scope} | {_md(', '.join(c.tasks))} | {c.decision} | "
                  f"{_md(c.flag) if c.flag else '-'} |" for c in decision.capabilities]
    lines += ["", "## Reasons", ""]
    lines += [f"- **{_md(g.name)}** ({g.kind}, {g.test or 'n/a'}): {_md(g.reason)}" for g in decision.gates]
    if decision.pairing:
        lines += ["", "## Pairing", ""]
        lines += [f"- {_md(p.task)}: {pairing_text(p)}" for p in decision.pairing]
    if decision.protocol_differences:
        lines += ["", "## Protocol differences (allowed by the contract)", ""]
        lines += [f"- {_md(d)}" for d in decision.protocol_differences]
    if decision.warnings:
        lines += ["", "## Warnings", ""]
        lines += [f"- {_md(w)}" for w in decision.warnings]
    lines += ["", "## Inputs", ""]
    lines += [f"- {r.role}: {_code(r.source)}" + (f" ({_md(r.model)})" if r.model else "") for r in decision.inputs]
    return "\n".join(lines) + "\n"
