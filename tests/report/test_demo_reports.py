"""Every demo's report reads in a minute: checked in headless Chromium at 1400 and 800 px.

The report models `rlgate demo`, `rlgate demo --agent` and `rlgate demo --vlm` wrote are recorded under
tests/report/demo_models/ (gzipped; the runs take minutes, the renderers are what this test checks) and rendered
again with the current templates, as `rlgate report` does. For each page: under 6,000 px tall with every
<details> closed, no element wider than the viewport, no two texts of one SVG overlapping, no word broken
inside a token, and each gate's figures the same in the first-screen line, the gate table and report.md
(rendered with markdown-it). Set RLGATE_SCREENSHOT_DIR to save the first screen and the full page.
Skips without Chromium/playwright, except under RLGATE_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from rlgate.report import views
from rlgate.report.io import load_model, write_model
from tests.report.browser import visit
from tests.report.test_browser import _require_browser

pytestmark = pytest.mark.slow

MODELS = Path(__file__).resolve().parent / "demo_models"
DEMOS = sorted(p.name for p in MODELS.iterdir() if (p / "report_model.json.gz").is_file()) if MODELS.is_dir() else []
MAX_HEIGHT = 6_000
FIRST_SCREEN = 900

PAGE_JS = """() => {
  const vw = document.documentElement.clientWidth;
  const scrolls = (el) => { for (let a = el.parentElement; a; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  // what a closed <details> holds is not on the page (Chromium still lays it out, content-visibility: hidden)
  const hidden = (el) => {
    for (let d = el.closest('details'); d; d = d.parentElement ? d.parentElement.closest('details') : null) {
      const own = d.querySelector(':scope > summary');
      if (!d.open && !(own && own.contains(el))) return true;
    }
    return false;
  };
  const overflow = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (hidden(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width && r.right > vw + 1 && !scrolls(el))
      overflow.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
  }
  const overlaps = [];
  for (const svg of document.querySelectorAll('svg')) {
    if (hidden(svg)) continue;
    const texts = [...svg.querySelectorAll('text')].map(t => ({t: t.textContent, r: t.getBoundingClientRect()}))
      .filter(x => x.r.width > 0);
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i].r, b = texts[j].r;
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
        overlaps.push(texts[i].t + ' / ' + texts[j].t);
    }
  }
  // a token (no spaces) whose characters sit on more than one line was broken inside the word
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement;
    if (!p || p.closest('pre, script, style, svg') || hidden(p)) continue;
    const re = /[^\\s-]{2,}-?/g; let m;  // a break after a hyphen is a wrap, not a broken word
    while ((m = re.exec(n.data)) !== null) {
      const range = document.createRange(); range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0] + ' in ' + p.tagName + '.' + p.className);
    }
  }
  const text = (sel) => [...document.querySelectorAll(sel)].map(e => e.textContent.replace(/\\s+/g, ' ').trim());
  return {overflow, overlaps, broken, height: document.documentElement.scrollHeight,
          badge: document.querySelector('#decision-badge').getBoundingClientRect().bottom,
          lines: text('#gate-lines li'), rows: text('#gate-table tbody.gate tr:first-child'),
          unsafe: text('#unsafe-actions'), title: document.querySelector('h1').textContent,
          summary: text('#decision .summary')[0], checkpoints: text('#runs tr:first-child td')};
}"""


@pytest.fixture(scope="module", params=DEMOS or [pytest.param("none", marks=pytest.mark.skip("no recorded demo"))])
def demo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(request.param)
    with gzip.open(MODELS / request.param / "report_model.json.gz") as packed, \
            open(out / "report_model.json", "wb") as unpacked:
        shutil.copyfileobj(packed, unpacked)
    write_model(out, load_model(out), step_summary=False)
    return out


def _markdown_text(out: Path) -> str:
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render((out / "report.md").read_text(encoding="utf-8"))
    return " ".join(re.sub(r"<[^>]+>", " ", html).replace("&gt;", ">").replace("&lt;", "<")
                    .replace("&amp;", "&").split())


@pytest.mark.parametrize("width", [1400, 800])
def test_demo_report_reads_in_a_minute(demo: Path, width: int) -> None:
    _require_browser()
    shots = os.environ.get("RLGATE_SCREENSHOT_DIR")
    target = Path(shots) if shots else None
    if target:
        target.mkdir(parents=True, exist_ok=True)
        visit(demo / "report.html", target / f"demo_{demo.name.rstrip('0123456789')}_{width}_full.png",
              width=width, height=FIRST_SCREEN, full_page=True)
        visit(demo / "report.html", target / f"demo_{demo.name.rstrip('0123456789')}_{width}.png",
              width=width, height=FIRST_SCREEN, full_page=False)
    seen = visit(demo / "report.html", None, lambda page: page.evaluate(PAGE_JS), width=width, height=FIRST_SCREEN,
                 full_page=False)
    assert seen.page_errors == [] and seen.console_errors == [] and seen.violations == []
    c: dict[str, Any] = seen.checks
    assert c["height"] < MAX_HEIGHT, c["height"]
    assert c["overflow"] == [], c["overflow"][:5]
    assert c["overlaps"] == [], c["overlaps"][:5]
    assert c["broken"] == [], c["broken"][:10]
    assert c["badge"] <= FIRST_SCREEN
    model = load_model(demo)
    baselines = views.known_baselines(model)
    md = _markdown_text(demo)
    ordered = sorted(model.decision.gates, key=lambda g: g.name not in model.decision.deciding_gates)
    for gate, line in zip(ordered, c["lines"], strict=True):
        figures = " ".join(views.gate_values(gate, baselines).split())
        assert figures in line, (gate.name, figures, line)
        assert figures in md, (gate.name, figures)
    for gate, row in zip(model.decision.gates, c["rows"], strict=True):
        assert " ".join(views.gate_values(gate, baselines).split()) in row, (gate.name, row)
    for gate, line in zip(ordered, c["lines"], strict=True):
        assert "–;" not in line, (gate.name, line)  # a figure left out beside its limit
        if gate.metric.split("/")[1:2] and gate.metric.split("/")[1].endswith("_to_success") and gate.baseline:
            assert "both runs solved" in line, line  # a cost gate pairs only what both runs solved, and says so
    if model.decision.deciding_gates:  # the headline names the deciding gates; their figures are on their lines
        assert all(name in c["summary"] for name in model.decision.deciding_gates[:4]), c["summary"]
        assert " -> " not in c["summary"], c["summary"]
    if len(c["checkpoints"]) == 2:
        assert c["checkpoints"][0] != c["checkpoints"][1], c["checkpoints"]
    names = model.title.split(": ", 1)[-1].split(" vs ")
    assert len(names) < 2 or names[0] != names[1], model.title
    unsafe = [t for s in model.tasks for t in s.trajectories if t.run == "candidate" and t.safety_violations]
    if unsafe:  # named on the first screen and in report.md, with its sample
        assert c["unsafe"] and str(unsafe[0].doc_id) in c["unsafe"][0]
        assert "Unsafe action" in md and str(unsafe[0].doc_id) in md
