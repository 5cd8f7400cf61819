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
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from rlgate.report import fmt, nodes, svg
from rlgate.report.model import CHANGES, ReportModel, SampleView
from rlgate.report.text import json_for_script, truncate, visible_controls

#: UTF-8 bytes of sample text embedded in one report; changed pairs are embedded first.
TEXT_BUDGET = 6_000_000
#: Longest single prompt/response embedded; longer text says how much was left out.
FIELD_CAP = 20_000
#: The page refuses to grow past this; the text budget is halved until it fits.
HTML_LIMIT = 9_500_000
_MIN_PREFIX = 200
_MAX_PREFIXES = 64


def environment(template_dir: str | Path | None = None, *, autoescape: bool = True) -> Environment:
    """Templates from `template_dir` first (user overrides), then the package's."""
    loaders: list[Any] = []
    if template_dir is not None:
        loaders.append(FileSystemLoader(os.fspath(template_dir)))
    loaders.append(PackageLoader("rlgate.report", "templates"))
    env = Environment(loader=ChoiceLoader(loaders), autoescape=autoescape, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(value=fmt.value, delta=fmt.delta, p=fmt.p_value, count=fmt.count, seconds=fmt.seconds,
                       gate_values=fmt.gate_values, gate_label=fmt.gate_label, gate_delta=fmt.gate_delta,
                       gate_p=fmt.gate_p,
                       gate_bounded=fmt.gate_bounded, gate_mde=fmt.gate_mde, magnitude=fmt.magnitude,
                       ci_bar=svg.ci_bar, visible=visible_controls, svg_uri=nodes.svg_data_uri,
                       breakable=breakable, tree=nodes.to_node, flatten=nodes.flatten)
    env.globals.update(DECISION_LABEL=fmt.DECISION_LABEL, VERDICT_LABEL=fmt.VERDICT_LABEL)
    return env


def breakable(text: object) -> Markup:
    """A metric path that may wrap after each `/` (escaped, then joined with <wbr>)."""
    return Markup("/<wbr>").join(escape(visible_controls(str(text))).split("/"))


def factor_prefixes(prompts: list[str | None]) -> tuple[list[str], list[tuple[int, str | None]]]:
    """Shared prompt prefixes (few-shot context) stored once: (prefixes, [(prefix index or -1, rest)])."""
    prefixes: list[str] = []
    out: list[tuple[int, str | None]] = []
    last_raw: str | None = None
    recent: list[int] = []
    for prompt in prompts:
        if prompt is None:
            out.append((-1, None))
            continue
        hit = next((i for i in recent if prompt.startswith(prefixes[i])), -1)
        if hit < 0 and last_raw is not None and len(prefixes) < _MAX_PREFIXES:
            common = os.path.commonprefix([last_raw, prompt])  # noqa: RUF071 (characters, not paths)
            cut = common.rfind("\n") + 1
            if cut >= _MIN_PREFIX:
                prefixes.append(common[:cut])
                hit = len(prefixes) - 1
        if hit >= 0:
            if recent[:1] != [hit]:
                recent = [hit, *[i for i in recent if i != hit]]
            out.append((hit, prompt[len(prefixes[hit]):]))
        else:
            out.append((-1, prompt))
            last_raw = prompt
    return prefixes, out


def _clean(text: str | None) -> str | None:
    return None if text is None else visible_controls(text)


def _score(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _rows(samples: list[SampleView]) -> tuple[list[str], list[list[Any]], list[list[str | None]]]:
    """Compact rows without their long texts, and the texts (prompt rest, responses) to budget."""
    prefixes, factored = factor_prefixes([_clean(s.prompt) for s in samples])
    rows: list[list[Any]] = []
    texts: list[list[str | None]] = []
    code = {c: i for i, c in enumerate(CHANGES)}
    for sample, (pfx, rest) in zip(samples, factored, strict=True):
        row: list[Any] = [sample.doc_id, code[sample.change], pfx, None,
                          len(prefixes[pfx]) + len(rest or "") if pfx >= 0 else len(rest or ""),
                          _clean(sample.target)]
        text: list[str | None] = [rest]
        for side in (sample.baseline, sample.candidate):
            if side is None:
                row += [None, -1, None, None]
                text.append(None)
            else:
                response = _clean(side.response)
                row += [None, len(response or ""), _clean(side.extracted), _score(side.score)]
                text.append(response)
        rows.append(row)
        texts.append(text)
    return prefixes, rows, texts


_TEXT_COLUMNS = (3, 6, 10)  # prompt rest, baseline response, candidate response


def drilldown_payload(model: ReportModel, text_budget: int = TEXT_BUDGET, field_cap: int = FIELD_CAP) -> dict:
    """Per-task sample rows for the page; long texts are capped, and embedded changed-pairs-first."""
    tasks: list[dict[str, Any]] = []
    pending: list[tuple[int, int, int, list[str | None]]] = []
    for index, section in enumerate(model.tasks):
        if not section.samples:
            continue
        prefixes, rows, texts = _rows(section.samples)
        tasks.append({"task": section.task, "section": index, "metric": section.drill_metric,
                      "prefixes": prefixes, "rows": rows})
        for r, text in enumerate(texts):
            pending.append((rows[r][1], len(tasks) - 1, r, text))
    pending.sort(key=lambda item: (item[0], item[2]))  # by change, tasks interleaved
    used = sum(len(p.encode()) for t in tasks for p in t["prefixes"])
    left_out = 0
    for _, t, r, text in pending:
        # prompts keep their end (the question follows the few-shot context), responses their start
        capped = [None if x is None else x[-field_cap:] if i == 0 else truncate(x, field_cap)[0]
                  for i, x in enumerate(text)]
        cost = sum(len(x.encode()) for x in capped if x)
        if used + cost > text_budget and cost:
            left_out += 1
            continue
        used += cost
        for column, value in zip(_TEXT_COLUMNS, capped, strict=True):
            tasks[t]["rows"][r][column] = value
    return {"changes": list(CHANGES), "tasks": tasks, "field_cap": field_cap,
            "text_left_out": left_out, "text_budget": text_budget}


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_html(model: ReportModel, template_dir: str | Path | None = None, *,
                text_budget: int = TEXT_BUDGET, field_cap: int = FIELD_CAP) -> str:
    """The report page; halves the sample-text budget until the page fits HTML_LIMIT."""
    env = environment(template_dir)
    css = env.get_template("report.css").render()
    js = env.get_template("report.js").render()
    csp = (f"default-src 'none'; img-src data:; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; "
           "base-uri 'none'; form-action 'none'")
    page = env.get_template("report.html.j2")
    while True:
        payload = drilldown_payload(model, text_budget, field_cap)
        html = page.render(
            m=model, d=model.decision, css=Markup(css), js=Markup(js), csp=csp,
            data=Markup(json_for_script(payload)), payload=payload, radar=svg.radar(model.radar),
            axes={a.ref: a for a in model.radar},
            radar_labels=svg.axis_labels(model.radar) if model.radar else [],
            sections=nodes.sections(model.decision.extensions))
        if len(html.encode()) <= HTML_LIMIT or text_budget < 10_000:
            return html
        text_budget //= 2
