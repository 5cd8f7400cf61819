"""report.html: one self-contained file (inline CSS, JS, SVG and data), readable offline and printable.

Templates ship in `rlgate/report/templates` (jinja2 PackageLoader, autoescape on); a user folder
given as `template_dir` overrides any of them by name. Per-sample data travels as JSON inside
`<script type="application/json">` and is drawn by the page with textContent only. A Content
Security Policy with hashes of the page's own script and style forbids everything else.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from rlgate._core.text import utf8_size, visible_controls
from rlgate.engine.references import EXTENSION, HEALTH_EXTENSION
from rlgate.report import firstscreen, fmt, nodes, svg, views
from rlgate.report.budget import TEXT_BUDGET
from rlgate.report.drilldown import drilldown
from rlgate.report.model import ReportModel
from rlgate.report.references import health_lines, reference_table
from rlgate.report.template_cache import template_cache

#: The page refuses to grow past this; the text budget is halved until it fits.
HTML_LIMIT = 9_500_000
_LAST_BUDGET = 10_000  # the halving stops below this many bytes of sample text
#: bytes a smaller budget may add to a page without texts (the count of texts left out has more digits)
_COUNT_SLACK = 1_000
#: the fewest bytes a drill-down row can take in the page: `[0,0,0,"",0,"","",0,"",0,"",0,"",0],`
_MIN_ROW_BYTES = 36


def environment(template_dir: str | Path | None = None, *, autoescape: bool = True,
                finalize: Callable[[Any], Any] | None = None) -> Environment:
    """Templates from `template_dir` first (user overrides), then the package's; compiled ones cached."""
    loaders: list[Any] = []
    if template_dir is not None:
        loaders.append(FileSystemLoader(os.fspath(template_dir)))
    loaders.append(PackageLoader("rlgate.report", "templates"))
    tag = f"autoescape={autoescape}|finalize={finalize.__module__}.{finalize.__qualname__}" if finalize else \
        f"autoescape={autoescape}"
    env = Environment(loader=ChoiceLoader(loaders), autoescape=autoescape, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, finalize=finalize,
                      bytecode_cache=template_cache(tag))
    env.filters.update(value=fmt.value, delta=fmt.delta, p=fmt.p_value, count=fmt.count, gate_n=fmt.gate_n,
                       gate_agreement=fmt.gate_agreement,
                       seconds=fmt.seconds,
                       gate_values=fmt.gate_values, gate_label=fmt.gate_label, gate_delta=fmt.gate_delta,
                       gate_p=fmt.gate_p, gate_p_note=fmt.gate_p_note, iso_utc=fmt.iso_utc,
                       outcome_note=fmt.outcome_note,
                       gate_bounded=fmt.gate_bounded, gate_mde=fmt.gate_mde, magnitude=fmt.magnitude,
                       ci_bar=svg.ci_bar, visible=visible_controls, svg_uri=nodes.svg_data_uri,
                       breakable=breakable, name_breakable=name_breakable, code_spans=code_spans,
                       tree=nodes.to_node, flatten=nodes.flatten)
    env.globals.update(DECISION_LABEL=fmt.DECISION_LABEL, VERDICT_LABEL=fmt.VERDICT_LABEL, gate_line=views.gate_line,
                       gate_values=views.gate_values, libraries=views.libraries)
    return env


def report_sections(model: ReportModel) -> list[tuple[str, str, nodes.Node]]:
    """Other layers' sections drawn generically: not the badcases (designed sections) nor the contract path."""
    hidden = {*views.BADCASE_KEYS, "contract_path", "drops", EXTENSION, HEALTH_EXTENSION}  # designed ones
    return nodes.sections({k: v for k, v in model.decision.extensions.items() if k not in hidden})


_LONG_RUN = re.compile(r"[0-9A-Za-z]{32,}")


def code_spans(text: object) -> Markup:
    """Text whose `backtick spans` (commands in rlgate's own advice) are shown as code, the rest escaped."""
    parts = visible_controls(str(text)).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no spans
        return escape("`".join(parts))
    return Markup("").join(escape(p) if i % 2 == 0 else Markup("<code>") + escape(p) + Markup("</code>")
                           for i, p in enumerate(parts))


def name_breakable(text: object) -> Markup:
    """A task name that may also wrap after each `_` (long subtask names in narrow cells)."""
    return Markup("_<wbr>").join(breakable(part) for part in str(text).split("_"))


def breakable(text: object) -> Markup:
    """A metric name or path that may wrap after each `/`, `__` and `:` (escaped, then joined with <wbr>); a digest
    (a run of 32+ letters and digits) may wrap every 16 characters. No other break falls inside a word."""
    def chunks(piece: str) -> str:
        return _LONG_RUN.sub(lambda m: "\0".join(m.group(0)[i:i + 16] for i in range(0, len(m.group(0)), 16)), piece)

    marked = chunks(visible_controls(str(text))).replace("/", "/\0").replace("__", "__\0").replace(":", ":\0")
    return Markup("<wbr>").join(escape(part) for part in marked.split("\0"))


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def _last_budget() -> int:
    """The budget the halving from TEXT_BUDGET ends at (the first below _LAST_BUDGET)."""
    budget = TEXT_BUDGET
    while budget >= _LAST_BUDGET:
        budget //= 2
    return budget


def render_html(model: ReportModel, template_dir: str | Path | None = None, *,
                text_budget: int | None = None, field_cap: int | None = None) -> str:
    """The report page (`render_html_parts` joined)."""
    return "".join(render_html_parts(model, template_dir, text_budget=text_budget, field_cap=field_cap))


def render_html_parts(model: ReportModel, template_dir: str | Path | None = None, *,
                      text_budget: int | None = None, field_cap: int | None = None) -> list[str]:
    """The report page as parts to write one after another: the template's text, with the sample data (tens
    of MB at 10^6 documents) between them wherever the template places it, never copied into one string.

    If the page would pass HTML_LIMIT, the sample text is budgeted (halving) until it fits. A page whose rows
    alone pass the limit (10^6 documents) cannot fit at any budget: when even the shortest rows would pass it,
    or the first page is over twice the limit and one with every text left out shows it, the last budget of
    the halving is rendered at once (the page the halving would end in, in one or three renders rather than
    a dozen of tens of MB)."""
    env = environment(template_dir)
    css = env.get_template("report.css").render()
    js = env.get_template("report.js").render()
    csp = (f"default-src 'none'; img-src data:; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; "
           "base-uri 'none'; form-action 'none'")
    page = env.get_template("report.html.j2")

    def rendered(text_budget: int | None) -> tuple[list[str], int]:
        payload = drilldown(model, text_budget, field_cap)
        slot = f"rlgate-data-{secrets.token_hex(16)}"  # unguessable: no text of the model can hold it
        html = page.render(
            m=model, d=model.decision, css=Markup(css), js=Markup(js), csp=csp,
            data=Markup(slot), payload=payload, radar=svg.radar(model.radar),
            axes={a.ref: a for a in model.radar},
            radar_labels=svg.axis_labels(model.radar) if model.radar else [],
            sections=report_sections(model),
            bad=views.badcase_view(model.decision.extensions, alpha=model.decision.alpha),
            baselines=views.known_baselines(model), headline=views.headline(model),
            subtasks=views.subtask_groups(model),
            protocols=views.protocol_groups(model.rollout.task_protocols), sequential=views.sequential_lines(model),
            references=reference_table(model), health=health_lines(model),
            flags=firstscreen.gate_flags(model), unsafe=firstscreen.unsafe_actions(model),
            warnings=firstscreen.shown_warnings(model), protocol_rows=firstscreen.protocol_rows(model),
            task_groups=firstscreen.task_groups(model))
        pieces = html.split(slot)
        parts = pieces[:1]
        if len(pieces) > 1:
            data = payload.script_parts()
            for piece in pieces[1:]:
                parts += [*data, piece]
        return parts, sum(map(utf8_size, parts))

    rows = sum(len(section.samples.doc_id) for section in model.tasks if section.samples)
    if text_budget is None and rows * _MIN_ROW_BYTES > HTML_LIMIT:  # no budget can fit: the halving's last page
        text_budget = _last_budget()
    while True:
        parts, size = rendered(text_budget)
        if size <= HTML_LIMIT or (text_budget is not None and text_budget < _LAST_BUDGET):
            return parts
        if text_budget is None and size > 2 * HTML_LIMIT and rendered(0)[1] - _COUNT_SLACK > HTML_LIMIT:
            text_budget = _last_budget()
            continue
        text_budget = TEXT_BUDGET if text_budget is None else text_budget // 2
