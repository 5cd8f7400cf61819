"""Reports: one report model, rendered to HTML, Markdown (job summary), decision.json and JUnit XML.

Callers (`rlgate gate`, `rlgate check`) use `write_reports(out_dir, decision, contract=..., baseline=...,
candidate=...)`; `rlgate report OUT_DIR` uses `rerender`; `rlgate history --html` renders a `TrendReport`
(the history's checkpoints against step) with `render_trend_html`. Exports are lazy so importing the package
costs nothing until a report is written.
"""

from __future__ import annotations

from rlgate._core.lazy import lazy_getattr

_EXPORTS = {
    "ReportModel": "rlgate.report.model",
    "build_report": "rlgate.report.builder",
    "write_reports": "rlgate.report.io",
    "write_model": "rlgate.report.io",
    "load_model": "rlgate.report.io",
    "rerender": "rlgate.report.io",
    "FILES": "rlgate.report.io",
    "render_html": "rlgate.report.html",
    "render_markdown": "rlgate.report.markdown",
    "render_junit": "rlgate.report.junit",
    "decision_json_schema": "rlgate.report.schema",
    "TrendReport": "rlgate.report.trend",
    "render_trend_html": "rlgate.report.trend_html",
}

__all__ = list(_EXPORTS)


__getattr__ = lazy_getattr(__name__, _EXPORTS)
