"""Inline SVG drawn in Python (no chart library, no external resources): CI bars, the radar and the trend charts.

Every piece of text that reaches the markup goes through `_esc`: invisible characters made visible, then escaped.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from rlgate._core.text import visible_controls
from rlgate.engine.models import GateVerdict
from rlgate.report import fmt
from rlgate.report.model import RadarAxis

if TYPE_CHECKING:  # annotations only: the trend models load with the history report, not with every gate
    from rlgate.report.trend import TrendMarker, TrendSeries

COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "inconclusive": "#bf8700", "nodata": "#6e7781", "error": "#9a6700"}


def _esc(text: object) -> Markup:
    """Text for the markup: invisible and reordering characters shown as \\uXXXX (a tooltip is read too), then
    escaped."""
    return escape(visible_controls(str(text)))


def _thresholds(gate: GateVerdict) -> list[float]:
    """Threshold positions on the delta axis (signed as the delta is)."""
    sign = 1.0 if gate.higher_is_better else -1.0
    out = []
    if "max_drop" in gate.threshold and gate.kind != "primary":  # a primary's max_drop only names its regression
        out.append(-sign * gate.threshold["max_drop"])
    if "min_delta" in gate.threshold:
        out.append(sign * gate.threshold["min_delta"])
    return [t for t in out if math.isfinite(t)]


def ci_bar(gate: GateVerdict, width: int = 200, height: int = 34) -> Markup:
    """The delta with its confidence interval against zero and the gate's threshold, every line labelled
    (zero and the threshold's value in small text above the bar; the second of two close labels below it)."""
    if gate.delta is None or not math.isfinite(gate.delta):
        return Markup("")
    points = [gate.delta, *(gate.ci or ()), *_thresholds(gate)]
    extent = max([abs(p) for p in points if math.isfinite(p)] + [1e-9]) * 1.15
    half, mid, pad = width / 2, width / 2, 6.0

    def x(v: float) -> float:
        return round(mid + max(-1.0, min(1.0, v / extent)) * (half - pad), 2)

    colour = COLOURS.get(gate.verdict, "#6e7781")
    desc = f"delta {fmt.gate_delta(gate)}"
    top, bottom = 10, height - 10
    parts = [f'<svg class="cibar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="{_esc(desc)}"><title>{_esc(desc)}</title>',
             f'<line x1="{mid}" y1="{top}" x2="{mid}" y2="{bottom}" stroke="#8c959f" stroke-width="1"/>']
    bounded = fmt.gate_bounded(gate)
    labels = [(mid, "0", "#6e7781")]
    for t in _thresholds(gate):
        parts.append(f'<line x1="{x(t)}" y1="{top - 1}" x2="{x(t)}" y2="{bottom + 1}" stroke="#bf8700" '
                     'stroke-width="1.5" stroke-dasharray="3,2"/>')
        labels.append((x(t), fmt.delta(t, bounded, threshold=True), "#9a6700"))
    placed: list[tuple[float, float, int]] = []
    for lx, text, fill in labels:
        half_w = len(text) * 2.6 + 2
        lx = min(max(lx, half_w), width - half_w)
        row = 0 if all(abs(lx - px) > half_w + pw for px, pw, r in placed if r == 0) else 1
        placed.append((lx, half_w, row))
        y = 8 if row == 0 else height - 1
        parts.append(f'<text class="bar-label" x="{lx:.1f}" y="{y}" font-size="8.5" text-anchor="middle" '
                     f'fill="{fill}">{_esc(text)}</text>')
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
        out.append([part for line in lines for part in _wrap(line)])
    return out


def _wrap(text: str, limit: int = 22) -> list[str]:
    """A label as lines of at most `limit` characters, broken only after `::`, `_`, `-`, `/` or a space: a token
    longer than the limit stays whole (never cut, never ended with "…")."""
    pieces = [p for p in re.findall(r".*?(?:::|[_\-/ ]|$)", text) if p]
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + len(piece) <= limit:
            lines[-1] += piece
        else:
            lines.append(piece)
    return [line.strip() for line in lines] or [text]


#: Above this many axes the radar's labels crowd each other: the capabilities are drawn as bars instead.
MAX_RADAR_AXES = 10
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
    if len(axes) > MAX_RADAR_AXES or _labels_collide(labels, size, margin):
        return bars(axes)
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
        anchor, top = _label_place(angle, lx, ly, len(lines))
        spans = "".join(f'<tspan x="{lx:.1f}" y="{top + k * LINE_PX:.1f}">{_esc(line)}</tspan>'
                        for k, line in enumerate(lines))
        parts.append(f'<text class="axis-label" font-size="11" text-anchor="{anchor}" fill="#24292f">'
                     f'<title>{_esc(axis.ref)}</title>{spans}</text>')
    for values, stroke, fill, dash in (([a.baseline for a in axes], "#6e7781", "#6e7781", ' stroke-dasharray="4,3"'),
                                       ([a.candidate for a in axes], "#0969da", "#0969da", "")):
        pts = " ".join(f"{px},{py}" for px, py in (point(i, v) for i, v in enumerate(values)))
        parts.append(f'<polygon points="{pts}" fill="{fill}" fill-opacity="0.14" stroke="{stroke}" '
                     f'stroke-width="2"{dash}/>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _label_place(angle: float, lx: float, ly: float, lines: int) -> tuple[str, float]:
    """Text anchor and first baseline of an axis label placed at (lx, ly) outside the rings."""
    anchor = "start" if math.cos(angle) > 0.3 else "end" if math.cos(angle) < -0.3 else "middle"
    height = LINE_PX * lines
    if abs(math.sin(angle)) < 0.7:
        return anchor, ly - height / 2 + 10
    return anchor, (ly + 12 if math.sin(angle) > 0 else ly - height + 6)


def _labels_collide(labels: list[list[str]], size: int, margin: int | None) -> bool:
    """Whether two axis labels' boxes (estimated from the font's character width) would overlap."""
    if margin is None:
        margin = int(max(len(line) for lines in labels for line in lines) * CHAR_PX) + 16
    cx, cy, radius, n = size / 2 + margin, size / 2, size / 2 - 50, len(labels)
    boxes = []
    for i, lines in enumerate(labels):
        angle = -math.pi / 2 + 2 * math.pi * i / n
        lx, ly = cx + (radius + 12) * math.cos(angle), cy + (radius + 12) * math.sin(angle)
        anchor, top = _label_place(angle, lx, ly, len(lines))
        w = max(len(line) for line in lines) * CHAR_PX
        left = lx if anchor == "start" else lx - w if anchor == "end" else lx - w / 2
        boxes.append((left, left + w, top - 11, top + (len(lines) - 1) * LINE_PX + 3))
        if top - 11 < 0 or top + (len(lines) - 1) * LINE_PX + 3 > size:
            return True
    return any(a[0] < b[1] + 2 and b[0] < a[1] + 2 and a[2] < b[3] + 1 and b[2] < a[3] + 1
               for k, a in enumerate(boxes) for b in boxes[k + 1:])


def bars(axes: list[RadarAxis], bar_width: int = 300) -> Markup:
    """The radar's values as paired horizontal bars (baseline grey, candidate blue), one row per axis, each
    label whole on its row: for suites whose labels a radar cannot place apart."""
    label_w = int(max(len(a.ref) for a in axes) * CHAR_PX) + 12
    row, top = 30, 8
    width, height = label_w + bar_width + 48, top + row * len(axes) + 18
    parts = [f'<svg class="radar bars" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="capabilities, {len(axes)} metrics"><title>capabilities: candidate (blue) vs baseline '
             '(grey), 0–100, higher is better</title>']
    for tick in (0, 50, 100):
        tx = label_w + bar_width * tick / 100
        parts.append(f'<line x1="{tx}" y1="{top}" x2="{tx}" y2="{height - 16}" stroke="#d0d7de" stroke-width="1"/>'
                     f'<text x="{tx}" y="{height - 4}" font-size="9" fill="#8c959f" text-anchor="middle">{tick}'
                     '</text>')
    for i, axis in enumerate(axes):
        y = top + i * row
        parts.append(f'<text class="axis-label" x="{label_w - 8}" y="{y + 17}" font-size="11" text-anchor="end" '
                     f'fill="#24292f"><title>{_esc(axis.rule)}</title>{_esc(axis.ref)}</text>')
        for k, (value, colour) in enumerate(((axis.baseline, "#6e7781"), (axis.candidate, "#0969da"))):
            w = bar_width * max(0.0, min(100.0, value or 0.0)) / 100
            parts.append(f'<rect x="{label_w}" y="{y + 4 + k * 11}" width="{w:.1f}" height="9" fill="{colour}" '
                         f'opacity="{0.6 if k == 0 else 0.9}"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


# --------------------------------------------------------------------------- trend (rlgate history --html)
DECISION_COLOURS = {"release": "#1a7f37", "research_only": "#9a6700", "block": "#cf222e"}
SEVERITY_COLOURS = {"critical": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
NO_DECISION = "#6e7781"
#: Trend chart geometry: the plot area sits inside these margins; marker labels stack in lanes above it.
T_WIDTH, T_HEIGHT, T_LEFT, T_RIGHT, T_BOTTOM, T_LANE = 880, 250, 72, 28, 42, 14


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (steps of 1, 2, 2.5 or 5 times a power of ten)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    k = 0
    while first + k * step <= hi + step * 1e-9:
        out.append(round(first + k * step, 12))
        k += 1
    return out


def _lanes(spans: list[tuple[float, float]]) -> list[int]:
    """A lane per label so that labels whose spans overlap sit on different lines."""
    ends: list[float] = []
    lanes = []
    for start, end in spans:
        lane = next((i for i, e in enumerate(ends) if e + 6 < start), len(ends))
        if lane == len(ends):
            ends.append(end)
        else:
            ends[lane] = end
        lanes.append(lane)
    return lanes


def trend_chart(series: TrendSeries, steps: list[int], markers: list[TrendMarker], best: str | None = None,
                value_labels: int = 16) -> Markup:
    """One metric against training step: values joined by a line, intervals as whiskers, points coloured by the
    checkpoint's decision, a red ring where this gate failed, the baseline dashed, and the monitor's findings
    as shaded step windows labelled above the plot."""
    if not series.points or not steps:
        return Markup("")
    lo_step, hi_step = min(steps), max(steps)
    plot_l, plot_r = T_LEFT, T_WIDTH - T_RIGHT
    span = hi_step - lo_step
    inset = 18.0

    def x(step: float) -> float:
        if span == 0:
            return round((plot_l + plot_r) / 2, 2)
        return round(plot_l + inset + (step - lo_step) / span * (plot_r - plot_l - 2 * inset), 2)

    placed = [m for m in markers if m.step_start is not None or m.step_end is not None]
    windows = []
    for m in placed:
        a = m.step_start if m.step_start is not None else m.step_end
        b = m.step_end if m.step_end is not None else m.step_start
        assert a is not None and b is not None
        x0, x1 = x(min(a, b)) - 10, x(max(a, b)) + 10
        label = f"⚑ {m.rule}"
        width = len(label) * CHAR_PX * 0.95
        start = min(x0, plot_r - width)
        windows.append((m, x0, x1, label, max(plot_l, start)))
    lanes = _lanes([(s, s + len(lbl) * CHAR_PX * 0.95) for _, _, _, lbl, s in windows])
    top = 10 + T_LANE * (max(lanes) + 1 if lanes else 0) + 6
    plot_t, plot_b = top, T_HEIGHT - T_BOTTOM
    values = [v for p in series.points for v in (p.value, p.low, p.high, p.baseline) if v is not None]
    y_lo, y_hi = min(values), max(values)
    pad = (y_hi - y_lo) * 0.12 or max(abs(y_hi) * 0.1, 0.01)
    y_lo, y_hi = y_lo - pad, y_hi + pad
    if series.bounded:
        y_lo, y_hi = max(y_lo, 0.0) if min(values) >= 0 else y_lo, min(y_hi, 1.0) if max(values) <= 1 else y_hi

    def y(v: float) -> float:
        return round(plot_b - (v - y_lo) / (y_hi - y_lo) * (plot_b - plot_t), 2)

    def show(v: float) -> str:
        return fmt.value(v, series.bounded)

    desc = f"{series.metric} against training step, {len(series.points)} checkpoint(s)"
    parts = [f'<svg class="trend" width="{T_WIDTH}" height="{T_HEIGHT}" viewBox="0 0 {T_WIDTH} {T_HEIGHT}" '
             f'role="img" aria-label="{_esc(desc)}"><title>{_esc(desc)}</title>']
    for m, x0, x1, _, _ in windows:
        colour = SEVERITY_COLOURS.get(m.severity, NO_DECISION)
        about = not m.metrics or series.metric in m.metrics  # fainter on the charts of other metrics
        parts.append(f'<rect class="marker" x="{x0}" y="{plot_t}" width="{round(x1 - x0, 2)}" '
                     f'height="{plot_b - plot_t}" fill="{colour}" fill-opacity="{0.14 if about else 0.06}" '
                     f'stroke="{colour}" '
                     f'stroke-opacity="0.5" stroke-dasharray="3,2"><title>{_esc(m.message)}</title></rect>')
    for tick in nice_ticks(y_lo, y_hi, 6):
        ty = y(tick)
        parts.append(f'<line x1="{plot_l}" y1="{ty}" x2="{plot_r}" y2="{ty}" stroke="#eaeef2" stroke-width="1"/>')
        parts.append(f'<text class="tick" x="{plot_l - 6}" y="{ty + 4}" font-size="11" text-anchor="end" '
                     f'fill="#59636e">{_esc(show(tick))}</text>')
    parts.append(f'<line x1="{plot_l}" y1="{plot_b}" x2="{plot_r}" y2="{plot_b}" stroke="#8c959f" stroke-width="1"/>')
    shown = steps if len(steps) <= 12 else [int(t) for t in nice_ticks(lo_step, hi_step, 8)]
    for step in shown:
        parts.append(f'<line x1="{x(step)}" y1="{plot_b}" x2="{x(step)}" y2="{plot_b + 4}" stroke="#8c959f"/>'
                     f'<text class="tick" x="{x(step)}" y="{plot_b + 16}" font-size="11" text-anchor="middle" '
                     f'fill="#59636e">{step}</text>')
    parts.append(f'<text x="{(plot_l + plot_r) / 2}" y="{T_HEIGHT - 6}" font-size="11" text-anchor="middle" '
                 'fill="#59636e">training step</text>')
    baselines = [(p.step, p.baseline) for p in series.points if p.baseline is not None]
    if len(baselines) > 1:
        pts = " ".join(f"{x(at)},{y(base)}" for at, base in baselines)
        parts.append(f'<polyline class="baseline" points="{pts}" fill="none" stroke="#6e7781" stroke-width="1.5" '
                     'stroke-dasharray="5,4"/>')
    for at, base in baselines:
        parts.append(f'<line class="baseline" x1="{x(at) - 12}" y1="{y(base)}" x2="{x(at) + 12}" y2="{y(base)}" '
                     f'stroke="#6e7781" stroke-width="2"><title>baseline {_esc(show(base))}</title></line>')
    if len(series.points) > 1:
        pts = " ".join(f"{x(p.step)},{y(p.value)}" for p in series.points)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="#57606a" stroke-width="1.5"/>')
    for p in series.points:
        colour = DECISION_COLOURS.get(p.decision or "", NO_DECISION)
        px, py = x(p.step), y(p.value)
        if p.low is not None and p.high is not None:
            y0, y1 = y(p.low), y(p.high)
            parts.append(f'<path d="M{px},{y0}V{y1}M{px - 4},{y0}H{px + 4}M{px - 4},{y1}H{px + 4}" '
                         f'stroke="{colour}" stroke-width="2" fill="none" opacity="0.7"/>')
        if p.verdict in ("fail", "error", "nodata"):
            parts.append(f'<circle class="gate-fail" cx="{px}" cy="{py}" r="9" fill="none" stroke="#cf222e" '
                         'stroke-width="2"/>')
        tip = (f"{p.checkpoint} · step {p.step} · {show(p.value)}"
               + (f" · interval [{show(p.low)}, {show(p.high)}]" if p.low is not None and p.high is not None else "")
               + (f" · baseline {show(p.baseline)}" if p.baseline is not None else "")
               + (f" · gate {p.verdict}" if p.verdict else "") + f" · decision {p.decision or 'none'}"
               + (" · deciding gate" if p.deciding else ""))
        parts.append(f'<circle class="point" data-decision="{_esc(p.decision or "none")}" cx="{px}" cy="{py}" '
                     f'r="5.5" fill="{colour}" stroke="#fff" stroke-width="1.5"><title>{_esc(tip)}</title></circle>')
        if len(series.points) <= value_labels:
            right = px + 80 < plot_r
            label = show(p.value) + (" ★ best" if best is not None and p.checkpoint == best else "")
            parts.append(f'<text class="value-label" x="{px + 11 if right else px - 11}" y="{py - 7}" font-size="11" '
                         f'text-anchor="{"start" if right else "end"}" fill="#1f2328">{_esc(label)}</text>')
    for (m, _, _, label, start), lane in zip(windows, lanes, strict=True):
        colour = SEVERITY_COLOURS.get(m.severity, NO_DECISION)
        parts.append(f'<text class="marker-label" x="{round(start, 2)}" y="{10 + T_LANE * lane + 10}" font-size="11" '
                     f'fill="{colour}" font-weight="600"><title>{_esc(m.message)}</title>{_esc(label)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
