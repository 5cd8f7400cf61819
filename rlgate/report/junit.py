"""junit.xml: one testcase per gate, so CI systems show gates natively.

`fail` and `inconclusive` → `<failure>` (type: the outcome), `nodata`/`error` → `<error>` (the
gate could not be evaluated), `pass` → a plain testcase, unless the contract's decision policy gives
its outcome a non-release effect (`monitor_info: research_only`): then a `<failure>` as well, since it
decides; then one testcase per capability (scoped decisions), a `<failure>` typed with its flag when
the capability is not released; the decision's warnings in the suite's `<system-err>`.
Built with ElementTree, which escapes markup; control characters XML 1.0 cannot
carry are written as visible `\\uXXXX` text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rlgate._core.text import xml_text
from rlgate.engine.models import Decision, GateVerdict
from rlgate.engine.summary import judge_trust_text
from rlgate.report import fmt, views
from rlgate.report.model import ReportModel


def _limit(key: str, limit: float, bounded: bool) -> str:
    """A threshold in the unit of the figures beside it: a fraction's bounds in percent, its changes in points;
    anything else as given (full precision: 1024.5 stays 1024.5)."""
    if not bounded:
        return f"{limit:g}"
    if key in ("max", "min"):
        return fmt.value(limit, bounded, threshold=True)
    if key == "min_delta":
        return fmt.delta(limit, bounded, threshold=True)
    if key == "max_drop":
        return fmt.magnitude(limit, bounded, threshold=True)
    return f"{limit:g}"


def _details(gate: GateVerdict, baselines: dict[str, float], alpha: float) -> str:
    lines = [
        f"metric: {gate.metric}",
        f"verdict: {gate.verdict} ({gate.outcome}, effect: {gate.effect})",
        f"baseline -> candidate: {views.gate_values(gate, baselines)}",
        f"delta: {fmt.gate_delta(gate)}",
        f"p: {fmt.gate_p(gate, alpha)}   MDE: {fmt.gate_mde(gate)}   n: {fmt.gate_n(gate)}",
    ]
    if gate.test:
        lines.append(f"test: {gate.test}")
    if gate.threshold:
        lines.append("threshold: " + ", ".join(f"{k}={_limit(k, v, fmt.gate_bounded(gate))}"
                                               for k, v in gate.threshold.items()))
    trust = judge_trust_text(gate)
    if trust:
        lines.append(trust)
    lines.append(f"reason: {gate.reason}")
    return xml_text("\n".join(lines))


def _decides_passing(gate: GateVerdict, decision: Decision) -> bool:
    """A deciding gate that passed: its outcome (monitor_info) has a non-release effect in the contract's policy."""
    return gate.verdict == "pass" and gate.effect != "release" and gate.name in decision.deciding_gates


def render_junit(model: ReportModel) -> str:
    """The JUnit XML document (testsuites > testsuite > testcase per gate)."""
    d = model.decision
    baselines = views.known_baselines(model)  # a one-run gate's baseline value, as report.md shows it
    failures = sum(g.verdict in ("fail", "inconclusive") or _decides_passing(g, d) for g in d.gates)
    failures += sum(c.decision != "release" for c in d.capabilities)
    errors = sum(g.verdict in ("nodata", "error") for g in d.gates)
    counts = {"tests": str(len(d.gates) + len(d.capabilities)), "failures": str(failures), "errors": str(errors),
              "skipped": "0",
              "time": "0"}
    root = ET.Element("testsuites", {"name": "rlgate", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": xml_text(f"rlgate.{model.contract_name}"), **counts,
                                              "timestamp": model.generated_at[:19]})
    props = ET.SubElement(suite, "properties")
    for name, value in (("decision", d.decision), ("summary", d.summary), ("contract", d.contract),
                        ("alpha", f"{d.alpha:g}"), ("seed", str(d.seed)), ("engine", d.engine_version),
                        *((("flags", " ".join(d.flags)),) if d.flags else ())):
        ET.SubElement(props, "property", {"name": name, "value": xml_text(value)})
    for gate in d.gates:
        case = ET.SubElement(suite, "testcase", {"name": xml_text(gate.name), "classname": f"rlgate.{gate.kind}",
                                                 "time": "0"})
        details = _details(gate, baselines, d.alpha)
        if gate.verdict in ("fail", "inconclusive"):
            failure = ET.SubElement(case, "failure", {"message": xml_text(gate.reason), "type": xml_text(gate.outcome)})
            failure.text = details
        elif _decides_passing(gate, d):  # passed, but the contract's policy makes this outcome decide
            failure = ET.SubElement(case, "failure", {
                "message": xml_text(f"{gate.reason} (outcome {gate.outcome} → {gate.effect} under the contract's "
                                    "decision policy)"), "type": xml_text(gate.outcome or "pass")})
            failure.text = details
        elif gate.verdict in ("nodata", "error"):
            error = ET.SubElement(case, "error", {"message": xml_text(gate.reason), "type": gate.verdict})
            error.text = details
        else:
            ET.SubElement(case, "system-out").text = details
    for cap in d.capabilities:  # scoped verdicts: one testcase per capability
        case = ET.SubElement(suite, "testcase", {"name": xml_text(f"capability {cap.name}"),
                                                 "classname": f"rlgate.capability.{cap.scope}", "time": "0"})
        text = xml_text(f"scope: {cap.scope}\ntasks: {', '.join(cap.tasks)}\ndecision: {cap.decision}\n"
                        f"gates: {', '.join(cap.gates) or '(none)'}\n{cap.summary}")
        if cap.decision != "release":
            ET.SubElement(case, "failure", {"message": xml_text(cap.summary),
                                            "type": xml_text(cap.flag or f"{cap.decision}_capability")}).text = text
        else:
            ET.SubElement(case, "system-out").text = text
    if d.warnings:  # what decision.json warns about (no baseline, corrupt scores, underpowered gates)
        ET.SubElement(suite, "system-err").text = xml_text("\n".join(f"warning: {w}" for w in d.warnings))
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
