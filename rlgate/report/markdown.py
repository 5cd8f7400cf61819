"""report.md: a GitHub-flavoured job summary (decision, gates, top regressions, sections, link to the HTML).

The template environment escapes every `{{ value }}` for Markdown (jinja2 `finalize`), the way
HTML autoescape does: only text rlgate formatted itself (`Md`) passes through. No raw HTML is
ever emitted, so GitHub's renderer gets nothing it could execute or turn into a link.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from rlgate._core.text import md_inline
from rlgate.report import firstscreen, fmt, nodes, views
from rlgate.report.html import environment
from rlgate.report.model import ReportModel

VERDICT_ICON = {"pass": "✅", "fail": "❌", "inconclusive": "❔", "nodata": "⚪", "error": "⚠️"}
DECISION_ICON = {"release": "🟢", "research_only": "🟡", "block": "🔴"}
TEXT_LIMIT = 300
TABLE_ROWS = 20
TABLE_COLUMNS = 6


class Md(str):
    """Markdown rlgate wrote itself; passes the template's escaping unchanged."""


def _finalize(value: Any) -> Any:
    if isinstance(value, Md):
        return value
    return "" if value is None else md_inline(value)


def _md(func: Any) -> Any:
    def wrapped(*args: Any, **kwargs: Any) -> Md:
        return Md(func(*args, **kwargs))
    return wrapped


def md_link(text: str, url: str) -> Md:
    """A link whose target is relative or http(s), percent-encoded so it cannot break out."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("", "http", "https"):
        return Md(md_inline(f"{text} ({url})"))
    return Md(f"[{md_inline(text)}](<{quote(url, safe=':/#?=&%.,~+-_')}>)")


def _cell(text: str, limit: int = TEXT_LIMIT) -> str:
    if len(text) > limit:
        return md_inline(text[:limit]) + " … \\(truncated; full text in the HTML report\\)"
    return md_inline(text) if text else " "


def md_node(node: nodes.Node, depth: int = 0) -> Md:
    """A section tree as Markdown; deep or long content points to the HTML report."""
    indent = "  " * depth
    if node.kind == "text":
        return Md(_cell(node.text))
    if node.kind == "image":
        return Md("_\\(plot in the HTML report\\)_")
    if node.kind == "gallery":
        count = len(node.children)
        return Md(f"_\\({count} plot{'s' if count != 1 else ''} in the HTML report\\)_")
    if node.kind == "verdict":
        return Md(f"**{_cell(node.text)}**")
    if node.kind == "stack":  # the section's verdict and its table; what is collapsed in HTML is one line here
        return Md("\n\n".join(md_node(c, depth) for c in node.children))
    if node.kind == "details":
        return Md(f"_{md_inline(node.text or 'data')}: in the HTML report_")
    if depth >= 3:
        return Md("_\\(details in the HTML report\\)_")
    lines: list[str] = []
    if node.kind == "table":
        shown = node.columns[:TABLE_COLUMNS]
        lines.append("| " + " | ".join(md_inline(c) for c in shown) + " |")
        lines.append("|" + "---|" * len(shown))
        for row in node.rows[:TABLE_ROWS]:
            lines.append("| " + " | ".join(md_node(c, 3) if c.kind != "text" else _cell(c.text, 120)
                                           for c in row[:TABLE_COLUMNS]) + " |")
        if len(node.columns) > TABLE_COLUMNS:
            lines += ["", f"_{md_inline(', '.join(node.columns[TABLE_COLUMNS:]))}: in the HTML report_"]
        more = node.more + max(0, len(node.rows) - TABLE_ROWS)
    elif node.kind == "kv":
        for key, value in node.items:
            if value.kind in ("text", "image", "gallery", "details"):
                lines.append(f"{indent}- **{md_inline(key)}**: {md_node(value, depth + 1)}")
            else:
                lines.append(f"{indent}- **{md_inline(key)}**:")
                lines.append(_indented(value, depth + 1))
        more = node.more
    else:
        for child in node.children[:TABLE_ROWS]:
            if child.kind in ("text", "image"):
                lines.append(f"{indent}- {md_node(child, depth + 1)}")
            elif child.kind == "kv" and all(v.kind in ("text", "image") for _, v in child.items):
                lines.append(f"{indent}- " + " · ".join(f"**{md_inline(k)}**: {md_node(v, depth + 1)}"
                                                        for k, v in child.items))
            else:
                lines.append(f"{indent}-")
                lines.append(_indented(child, depth + 1))
        more = node.more + max(0, len(node.children) - TABLE_ROWS)
    if more:
        lines.append(f"{indent}- … {more} more in the HTML report")
    return Md("\n".join(lines))


def _indented(node: nodes.Node, depth: int) -> str:
    text = md_node(node, depth)
    if node.kind == "table":
        return "\n".join("  " * depth + line for line in text.splitlines())
    return text


def github_run_url() -> str | None:
    """This job's run page (where the HTML artifact is), when running in GitHub Actions."""
    server, repo, run = (os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    if server and repo and run:
        return f"{server.rstrip('/')}/{repo}/actions/runs/{run}"
    return None


def render_markdown(model: ReportModel, template_dir: str | Path | None = None, *,
                    html_url: str | None = None, run_url: str | None = None) -> str:
    """The job summary text."""
    env = environment(template_dir, autoescape=False, finalize=_finalize)
    for name in ("value", "delta", "p", "count", "gate_n", "gate_values", "gate_delta", "gate_p", "gate_mde",
                 "magnitude"):
        env.filters[name] = _md(env.filters[name])
    env.filters["md_node"] = md_node
    env.globals.update(VERDICT_ICON=VERDICT_ICON, DECISION_ICON=DECISION_ICON, Md=Md,
                       gate_line=views.gate_line, gate_values=views.gate_values)
    from rlgate.report.html import report_sections

    all_sections = report_sections(model)
    d = model.decision
    ordered = ([g for g in d.gates if g.name in d.deciding_gates]
               + [g for g in d.gates if g.name not in d.deciding_gates])
    return env.get_template("report.md.j2").render(
        m=model, d=model.decision, sections=[s for s in all_sections if s[0] in nodes.SUMMARY_SECTIONS],
        other_titles=[title for key, title, _ in all_sections if key not in nodes.SUMMARY_SECTIONS],
        html_link=md_link(model.html_name, html_url or model.html_name),
        run_link=md_link("this run's artifacts", run_url) if run_url else None,
        decision_label=Md(fmt.DECISION_LABEL[model.decision.decision]), ordered_gates=ordered,
        bad=views.badcase_view(model.decision.extensions, alpha=model.decision.alpha),
        baselines=views.known_baselines(model), headline=views.headline(model),
        generated=fmt.iso_utc(model.generated_at), drops=views.drop_lines(model),
        sequential=views.sequential_lines(model), flags=firstscreen.gate_flags(model),
        unsafe=firstscreen.unsafe_actions(model), warnings=firstscreen.shown_warnings(model),
        html_name_anchor=lambda anchor: md_link("trajectory", f"{html_url or model.html_name}#{anchor}"))
