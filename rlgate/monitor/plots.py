"""Small inline SVG plots of the key curves with finding markers (pure string building, no external refs).

Long series are reduced to at most `width` columns keeping each column's min and max, so a spike of
one step in a million-step log still shows. Finding windows are shaded by severity and carry the
finding's message as a tooltip (<title>).
"""

from __future__ import annotations

from html import escape
from itertools import pairwise

import numpy as np

from rlgate.monitor.findings import Finding
from rlgate.monitor.report import Plot
from rlgate.monitor.series import Series, TrainingLog

KEY_CURVES = ("reward_mean", "val_score", "len_mean", "trunc_ratio", "kl_ref", "entropy", "grad_norm",
              "mismatch_kl", "zero_std_frac")
COLORS = {"critical": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
WIDTH, HEIGHT, PAD_L, PAD_R, PAD_T, PAD_B = 360, 120, 52, 8, 18, 18
MAX_PLOTS = 8


def _reduce(steps: np.ndarray, values: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """At most 2 points per column (its min and max, in step order) so spikes survive."""
    if steps.size <= 2 * columns:
        return steps, values
    edges = np.linspace(0, steps.size, columns + 1).astype(int)
    xs: list[float] = []
    ys: list[float] = []
    for a, b in pairwise(edges):
        if b <= a:
            continue
        chunk = values[a:b]
        lo, hi = int(np.argmin(chunk)), int(np.argmax(chunk))
        for i in sorted({lo, hi}):
            xs.append(float(steps[a + i]))
            ys.append(float(chunk[i]))
    return np.asarray(xs), np.asarray(ys)


def _num(v: float) -> str:
    return f"{v:.3g}"


def svg_plot(series: Series, findings: list[Finding], title: str) -> str:
    """One curve as a standalone <svg> element."""
    finite = series.finite()
    inner_w, inner_h = WIDTH - PAD_L - PAD_R, HEIGHT - PAD_T - PAD_B
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}" '
             'font-family="sans-serif" font-size="10">',
             f"<title>{escape(title)}</title>",
             f'<text x="{PAD_L}" y="12" font-weight="bold">{escape(title)}</text>']
    if len(finite) == 0:
        parts.append(f'<text x="{PAD_L}" y="{PAD_T + inner_h / 2}">no finite values</text></svg>')
        return "".join(parts)
    x0, x1 = float(series.steps[0]), float(series.steps[-1])
    x1 = x1 if x1 > x0 else x0 + 1
    lo, hi = float(finite.values.min()), float(finite.values.max())
    if hi <= lo:
        lo, hi = lo - 0.5 * (abs(lo) or 1.0), hi + 0.5 * (abs(hi) or 1.0)

    def px(step: float) -> float:
        return PAD_L + (step - x0) / (x1 - x0) * inner_w

    def py(value: float) -> float:
        return PAD_T + (hi - value) / (hi - lo) * inner_h

    for f in findings:
        if f.step_start is None:
            continue
        a, b = px(max(f.step_start, x0)), px(min(f.step_end if f.step_end is not None else f.step_start, x1))
        color = COLORS[f.severity]
        parts.append(f'<rect x="{a:.1f}" y="{PAD_T}" width="{max(b - a, 2.0):.1f}" height="{inner_h}" '
                     f'fill="{color}" fill-opacity="0.15"><title>{escape(f"{f.severity}: {f.message}")}</title></rect>')
        parts.append(f'<circle cx="{b:.1f}" cy="{PAD_T + 4}" r="3.5" fill="{color}">'
                     f"<title>{escape(f'{f.rule} ({f.domain})')}</title></circle>")
    parts.append(f'<rect x="{PAD_L}" y="{PAD_T}" width="{inner_w}" height="{inner_h}" fill="none" stroke="#999"/>')
    xs, ys = _reduce(finite.steps, finite.values, inner_w)
    points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys, strict=True))
    parts.append(f'<polyline fill="none" stroke="#333" stroke-width="1.2" points="{points}"/>')
    bad = series.steps[~np.isfinite(series.values)]
    for step in bad[:50]:
        parts.append(f'<line x1="{px(float(step)):.1f}" x2="{px(float(step)):.1f}" y1="{PAD_T}" '
                     f'y2="{PAD_T + inner_h}" stroke="{COLORS["critical"]}" stroke-dasharray="2,2"/>')
    parts.append(f'<text x="{PAD_L - 3}" y="{PAD_T + 8}" text-anchor="end">{_num(hi)}</text>')
    parts.append(f'<text x="{PAD_L - 3}" y="{PAD_T + inner_h}" text-anchor="end">{_num(lo)}</text>')
    parts.append(f'<text x="{PAD_L}" y="{HEIGHT - 4}">{int(x0)}</text>')
    parts.append(f'<text x="{WIDTH - PAD_R}" y="{HEIGHT - 4}" text-anchor="end">step {int(series.steps[-1])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def plots_for(log: TrainingLog, findings: list[Finding]) -> list[Plot]:
    """Plots of the key curves present in the log, plus any curve a finding points at."""
    names = [n for n in KEY_CURVES if n != "val_score" and n in log.metrics]
    names[1:1] = sorted(n for n in log.metrics if n.startswith("val_score/"))
    flagged = [m for f in sorted(findings, key=lambda f: f.rank) for m in f.metrics if m in log.metrics]
    chosen = list(dict.fromkeys([*flagged, *names]))
    out = []
    for name in chosen[:MAX_PLOTS]:
        series = log.metrics[name]
        related = [f for f in findings if name in f.metrics]
        title = f"{name} ({series.source_key})"
        out.append(Plot(log=log.path, metric=name, title=title, svg=svg_plot(series, related, title)))
    return out
