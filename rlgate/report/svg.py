"""Inline SVG drawn in Python (no chart library, no external resources): CI bars and the radar.

Every piece of text that reaches the markup goes through markupsafe.escape.
"""

from __future__ import annotations

import math

from markupsafe import Markup, escape

from rlgate.engine.models import GateVerdict
from rlgate.report import fmt
from rlgate.report.model import RadarAxis

COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "nodata": "#6e7781", "error": "#9a6700"}


def _thresholds(gate: GateVerdict) -> list[float]:
    """Threshold positions on the delta axis (signed as the delta is)."""
    sign = 1.0 if gate.higher_is_better else -1.0
    out = []
    if "max_drop" in gate.threshold:
        out.append(-sign * gate.threshold["max_drop"])
    if "min_delta" in gate.threshold:
        out.append(sign * gate.threshold["min_delta"])
    return [t for t in out if math.isfinite(t)]


def ci_bar(gate: GateVerdict, width: int = 200, height: int = 22) -> Markup:
    """The delta with its confidence interval against zero and the gate's threshold."""
    if gate.delta is None or not math.isfinite(gate.delta):
        return Markup("")
    points = [gate.delta, *(gate.ci or ()), *_thresholds(gate)]
    extent = max([abs(p) for p in points if math.isfinite(p)] + [1e-9]) * 1.15
    half, mid, pad = width / 2, width / 2, 6.0

    def x(v: float) -> float:
        return round(mid + max(-1.0, min(1.0, v / extent)) * (half - pad), 2)

    colour = COLOURS.get(gate.verdict, "#6e7781")
    desc = f"delta {fmt.gate_delta(gate)}"
    parts = [f'<svg class="cibar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="{escape(desc)}"><title>{escape(desc)}</title>',
             f'<line x1="{mid}" y1="2" x2="{mid}" y2="{height - 2}" stroke="#8c959f" stroke-width="1"/>']
    for t in _thresholds(gate):
        parts.append(f'<line x1="{x(t)}" y1="1" x2="{x(t)}" y2="{height - 1}" stroke="#bf8700" '
                     'stroke-width="1.5" stroke-dasharray="3,2"/>')
    cy = height / 2
    if gate.ci is not None and all(math.isfinite(v) for v in gate.ci):
        lo, hi = x(gate.ci[0]), x(gate.ci[1])
        parts.append(f'<line x1="{lo}" y1="{cy}" x2="{hi}" y2="{cy}" stroke="{colour}" stroke-width="3" '
                     'stroke-linecap="round" opacity="0.55"/>')
        for end in (lo, hi):
            parts.append(f'<line x1="{end}" y1="{cy - 5}" x2="{end}" y2="{cy + 5}" stroke="{colour}" '
                         'stroke-width="1.5"/>')
    parts.append(f'<circle cx="{x(gate.delta)}" cy="{cy}" r="4" fill="{colour}"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


def axis_labels(axes: list[RadarAxis]) -> list[list[str]]:
    """Each axis's label lines: the task (or group), and the metric in words where a task has several axes."""
    tasks = [a.ref.split("/")[0] for a in axes]
    out = []
    for task, axis in zip(tasks, axes, strict=True):
        parts = axis.ref.split("/")
        lines = [task]
        if tasks.count(task) > 1 and len(parts) > 1:
            lines.append(parts[1].replace("_", " "))
        out.append([_short(line) for line in lines])
    return out


def _short(text: str, limit: int = 26) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: Width of one character of the 11 px label font, generously (system-ui / DejaVu Sans).
CHAR_PX = 6.8
LINE_PX = 13


def radar(axes: list[RadarAxis], size: int = 420, margin: int | None = None) -> Markup:
    """Baseline and candidate polygons on 0–100 axes (higher is better on every axis).

    The side margins fit the longest label, so no label is clipped; labels sit outside the rings.
    """
    if len(axes) < 3:
        return Markup("")
    labels = axis_labels(axes)
    if margin is None:
        margin = int(max(len(line) for lines in labels for line in lines) * CHAR_PX) + 16
    width = size + 2 * margin
    cx, cy = width / 2, size / 2
    radius = size / 2 - 50
    n = len(axes)

    def point(i: int, v: float | None) -> tuple[float, float]:
        angle = -math.pi / 2 + 2 * math.pi * i / n
        r = radius * max(0.0, min(100.0, v or 0.0)) / 100
        return round(cx + r * math.cos(angle), 2), round(cy + r * math.sin(angle), 2)

    parts = [f'<svg class="radar" width="{width}" height="{size}" viewBox="0 0 {width} {size}" role="img" '
             f'aria-label="capability radar, {n} metrics"><title>capability radar: candidate (blue) vs '
             'baseline (grey), 0–100, higher is better</title>']
    for ring in (25, 50, 75, 100):
        ring_pts = " ".join(f"{px},{py}" for px, py in (point(i, ring) for i in range(n)))
        parts.append(f'<polygon points="{ring_pts}" fill="none" stroke="#d0d7de" stroke-width="1"/>')
        rx, ry = point(0, ring)
        parts.append(f'<text x="{rx + 3}" y="{ry + 3}" font-size="9" fill="#8c959f">{ring}</text>')
    for i, (axis, lines) in enumerate(zip(axes, labels, strict=True)):
        ex, ey = point(i, 100)
        parts.append(f'<line x1="{cx}" y1="{cy}" x2="{ex}" y2="{ey}" stroke="#d0d7de" stroke-width="1"/>')
        angle = -math.pi / 2 + 2 * math.pi * i / n
        lx, ly = cx + (radius + 12) * math.cos(angle), cy + (radius + 12) * math.sin(angle)
        anchor = "start" if math.cos(angle) > 0.3 else "end" if math.cos(angle) < -0.3 else "middle"
        height = LINE_PX * len(lines)
        if abs(math.sin(angle)) < 0.7:
            top = ly - height / 2 + 10
        else:
            top = ly + 12 if math.sin(angle) > 0 else ly - height + 6
        spans = "".join(f'<tspan x="{lx:.1f}" y="{top + k * LINE_PX:.1f}">{escape(line)}</tspan>'
                        for k, line in enumerate(lines))
        parts.append(f'<text class="axis-label" font-size="11" text-anchor="{anchor}" fill="#24292f">'
                     f'<title>{escape(axis.ref)}</title>{spans}</text>')
    for values, stroke, fill, dash in (([a.baseline for a in axes], "#6e7781", "#6e7781", ' stroke-dasharray="4,3"'),
                                       ([a.candidate for a in axes], "#0969da", "#0969da", "")):
        pts = " ".join(f"{px},{py}" for px, py in (point(i, v) for i, v in enumerate(values)))
        parts.append(f'<polygon points="{pts}" fill="{fill}" fill-opacity="0.14" stroke="{stroke}" '
                     f'stroke-width="2"{dash}/>')
    parts.append("</svg>")
    return Markup("".join(parts))
