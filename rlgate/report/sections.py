"""Designed views of other layers' sections (judge, monitor, history, anything else): each reads in a minute.

Every section is the same shape: a one-line verdict, a small table of the numbers that decided, and the
detail collapsed behind it. Nothing is drawn as nested key/value lines: known sections are read through
their own versioned models (a section that does not validate is shown flattened, collapsed, and says so);
unknown ones become one `dotted.key | value` table behind a toggle.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import ValidationError

from rlgate.report import fmt
from rlgate.report.nodes import MAX_ITEMS, Node, flatten, is_svg

ITEM_ROWS = 100


def _text(value: str) -> Node:
    return Node("text", text=value)


def _pct(value: float | None) -> str:
    return fmt.value(value, True)  # as every other rate on the page


def _table(columns: list[str], rows: list[list[str]], more: int = 0) -> Node:
    return Node("table", columns=columns, rows=[[_text(c) for c in row] for row in rows], more=more)


def _details(summary: str, *children: Node) -> Node:
    return Node("details", text=summary, children=list(children))


def _stack(*children: Node | None) -> Node:
    return Node("stack", children=[c for c in children if c is not None])


def _flat_table(value: Any) -> Node:
    if isinstance(value, list):
        value = {str(i): v for i, v in enumerate(value)}
    rows = flatten(value) if isinstance(value, dict) else [("value", str(value))]
    rows = [(k, "(plot)" if is_svg(v) else v) for k, v in rows]
    return _table(["field", "value"], [list(r) for r in rows[:MAX_ITEMS]], more=max(0, len(rows) - MAX_ITEMS))


def generic_view(key: str, value: Any) -> Node:
    """An extension rlgate has no design for: what it is in one line, its fields flattened behind a toggle."""
    if not isinstance(value, dict | list):
        return _stack(Node("verdict", text=f"{key.replace('_', ' ')}: {value}"))
    rows = flatten(value if isinstance(value, dict) else {str(i): v for i, v in enumerate(value)})
    return _stack(Node("verdict", text=f"{len(rows)} field(s) recorded by {key.replace('_', ' ')}"),
                  _details(f"all {len(rows)} fields", _flat_table(value)))


def history_view(value: Any) -> Node:
    """Where this run was recorded: one line, no toggle."""
    return _stack(Node("verdict", text=f"This run is recorded in the history store {value}; "
                                       "rlgate history shows its trend across checkpoints."))


def judge_view(value: Any) -> Node:
    """The judge: per task the candidate's win rate with its interval, who decided, and whether to trust it."""
    from rlgate.judge.report import JudgeReport

    try:
        report = JudgeReport.model_validate(value)
    except ValidationError:
        return _stack(Node("verdict", text="the judge section does not match its schema: shown as recorded"),
                      _details("judge data as recorded", _flat_table(value)))
    lines, rows, item_rows = [], [], []
    for name, t in report.tasks.items():
        w = t.win_rate
        if w is not None and w.win_rate is not None:
            ci = f" [{_pct(w.ci[0])}, {_pct(w.ci[1])}]" if w.ci else ""
            p = f", sign test p = {fmt.p_value(w.p_value)}" if w.p_value is not None else ""
            head = f"candidate wins {_pct(w.win_rate)}{ci} of {w.n} comparisons{p}"
        elif t.mean_candidate_score is not None:
            head = (f"judge score {t.mean_candidate_score:.3g} (candidate) vs "
                    f"{'–' if t.mean_baseline_score is None else f'{t.mean_baseline_score:.3g}'} (baseline)")
        else:
            head = "no judged comparison"
        trust = "" if t.trust is None else f"; judge {'trusted' if t.trust.trusted else 'NOT trusted'}"
        lines.append(f"{name}: {head}{trust}")
        decided = t.decided_by
        rows.append([name, _pct(w.win_rate) if w else "–",
                     f"{w.wins} / {w.losses} / {w.ties} / {w.errors}" if w else "–",
                     f"{decided.get('rule', 0)} / {decided.get('llm', 0)} / {decided.get('undecided', 0)}",
                     "–" if t.trust is None else t.trust.message,
                     "–" if t.calibration is None else t.calibration.message])
        item_rows += [[str(i.doc_id), i.task or name, i.decided_by, i.outcome, i.reason] for i in t.items]
    verdict = "; ".join(lines) if len(lines) <= 2 else f"{len(lines)} judged tasks; " + "; ".join(lines[:2]) + " …"
    table = _table(["Task", "Win rate", "Wins / losses / ties / errors", "Rule / LLM / undecided", "Judge trust",
                    "Calibration"], rows)
    shown = item_rows[:ITEM_ROWS]
    items = _details(f"{len(item_rows)} judged item(s): who decided each and why",
                     _table(["Document", "Task", "Decided by", "Outcome", "Reason"], shown,
                            more=len(item_rows) - len(shown)))
    policies = _details("judge policy per task", _table(
        ["Task", "Setting", "Value"], [[name, k, v] for name, t in report.tasks.items() for k, v in flatten(t.policy)]))
    warn = _table(["Warning"], [[w] for w in report.warnings]) if report.warnings else None
    return _stack(Node("verdict", text=verdict), table, warn, items, policies)


def monitor_view(value: Any) -> Node:
    """The training monitor: the worst finding (or none) in one line, findings grouped, logs and plots collapsed."""
    from rlgate.monitor.report import MonitorReport

    try:
        report = MonitorReport.model_validate(value)
    except ValidationError:
        return _stack(Node("verdict", text="the monitor section does not match its schema: shown as recorded"),
                      _details("monitor data as recorded", _flat_table(value)))
    findings = [*report.findings, *report.history_findings]
    if report.diagnosis is not None:
        verdict = f"{report.diagnosis.severity}: {report.diagnosis.summary}"
    elif findings:
        worst = findings[0]
        verdict = f"{worst.severity}: {worst.message}"
    elif report.unchecked_logs:
        verdict = (f"no finding in what could be checked; could not check {len(report.unchecked_logs)} training "
                   "log(s) no rule could judge (no recognised metric with a finite value): "
                   + ", ".join(report.unchecked_logs[:MAX_ITEMS]))
    else:
        verdict = "no finding" if report.logs else "no training log given: only the cross-checkpoint rules ran"
    # the same message from several logs or rules is one row with a count, not the message four times
    grouped: Counter[tuple[str, str, str]] = Counter((f.severity, f.rule, f.message) for f in findings)
    rows = [[sev, rule, msg, str(n)] for (sev, rule, msg), n in grouped.items()]
    table = _table(["Severity", "Rule", "Finding", "Times"], rows) if rows else None
    logs = _details(f"{len(report.logs)} training log(s) read", _table(
        ["Log", "Format", "Steps", "Metrics", "Problems"],
        [[lg.path, lg.format, str(lg.steps), ", ".join(s.name for s in lg.metrics[:12])
          + (" …" if len(lg.metrics) > 12 else ""), str(len(lg.problems))] for lg in report.logs])) \
        if report.logs else None
    not_run = _details(f"{len(report.rules_not_run)} log rules not run", _table(
        ["Rule", "Domain", "Why not", "Needs"],
        [[r.rule, r.domain, r.reason or "–", ", ".join(r.needs) or "–"] for r in report.rules_not_run])) \
        if report.rules_not_run else None
    plots = None
    if report.plots:
        gallery = Node("gallery")
        for plot in report.plots[:MAX_ITEMS]:
            if is_svg(plot.svg):
                gallery.children.append(Node("image", text=plot.svg, items=[("caption", _text(plot.title))]))
        plots = _details(f"{len(gallery.children)} plot(s)", gallery)
    return _stack(Node("verdict", text=verdict), table, plots, logs, not_run,
                  _text(f"policy: {report.policy}"))


DESIGNED = {"judge": judge_view, "monitor": monitor_view, "history": history_view}


def view(key: str, value: Any) -> Node:
    """The designed view of one extension."""
    return DESIGNED[key](value) if key in DESIGNED else generic_view(key, value)
