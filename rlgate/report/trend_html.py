"""history.html: the trend report of `rlgate history --html`, one self-contained page per history.

Rendered from a TrendReport only (rlgate.report.trend), through the report's jinja2 environment
(autoescape on, user template overrides by name), the report CSS and the inline SVG helpers. The page
runs no script; a Content Security Policy allows nothing but its own style and inline images.
"""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

from rlgate.report import svg
from rlgate.report.html import _csp_hash, environment
from rlgate.report.trend import TrendReport, TrendRun

TEMPLATE = "trend.html.j2"


def run_charts(run: TrendRun) -> list[Markup]:
    """One chart per series of the run, in the series' order, on the run's shared step axis."""
    return [svg.trend_chart(s, run.steps, run.markers, run.best if s.metric == run.primary else None)
            for s in run.series]


def render_trend_html(report: TrendReport, template_dir: str | Path | None = None) -> str:
    """The trend page for every run of the report."""
    env = environment(template_dir)
    css = env.get_template("report.css").render() + env.get_template("trend.css").render()
    csp = f"default-src 'none'; img-src data:; style-src {_csp_hash(css)}; base-uri 'none'; form-action 'none'"
    return env.get_template(TEMPLATE).render(
        r=report, css=Markup(css), csp=csp, charts=[run_charts(run) for run in report.runs],
        decision_colours=svg.DECISION_COLOURS, severity_colours=svg.SEVERITY_COLOURS, no_decision=svg.NO_DECISION)
