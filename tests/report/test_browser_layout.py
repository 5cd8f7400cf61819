"""The report reads in a minute: layout checked in headless Chromium at 1400 and 800 px.

For a demo-like report (three capabilities, a 14-subject MMLU-Pro group, badcases) and the committed docs
example: no horizontal overflow outside scroll containers, no overlapping or clipped radar labels
(bounding boxes), the decision and the deciding gates on the first screen, and the page under a stated height.
Skips without Chromium/playwright, except under RLGATE_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rlgate.engine.models import GateVerdict
from rlgate.report.io import write_reports
from rlgate.results.models import RunResult, TaskProtocol, TaskResult
from tests.report import factories as f
from tests.report.browser import visit
from tests.report.test_browser import _require_browser
from tests.report.test_consistency import BADCASES

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
#: The first screen a reviewer sees without scrolling.
FIRST_SCREEN = 900
#: Upper bounds on the whole page (every <details> closed, as it opens): a reviewer scrolls, never hunts.
MAX_HEIGHT = {1400: 8_000, 800: 12_000}
SUBJECTS = ["biology", "business", "chemistry", "computer_science", "economics", "engineering", "health",
            "history", "law", "math", "other", "philosophy", "physics", "psychology"]

LAYOUT_JS = """() => {
  const vw = document.documentElement.clientWidth;
  const scrolls = (el) => { for (let a = el.parentElement; a; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  const overflow = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > vw + 1 && !scrolls(el))
      overflow.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
  }
  const svg = document.querySelector('svg.radar');
  const box = svg ? svg.getBoundingClientRect() : null;
  const labels = [...document.querySelectorAll('svg.radar text.axis-label')].map(t => {
    const r = t.getBoundingClientRect(); return {text: t.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom}; });
  const overlaps = [], clipped = [];
  for (let i = 0; i < labels.length; i++) {
    const a = labels[i];
    if (box && (a.l < box.left - 0.5 || a.r > box.right + 0.5 || a.t < box.top - 0.5 || a.b > box.bottom + 0.5))
      clipped.push(a.text);
    for (let j = i + 1; j < labels.length; j++) {
      const b = labels[j];
      if (a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b) overlaps.push(a.text + ' / ' + b.text);
    }
  }
  const bottom = (sel) => [...document.querySelectorAll(sel)]
    .map(e => e.getBoundingClientRect().bottom + window.scrollY);
  return {docOverflow: document.documentElement.scrollWidth - vw, overflow, labels: labels.length, overlaps, clipped,
          badge: bottom('#decision-badge'), deciding: bottom('#gate-lines li.deciding'),
          lines: document.querySelectorAll('#gate-lines li').length, allLines: bottom('#gate-lines li'),
          height: document.documentElement.scrollHeight};
}"""


def _group_runs() -> tuple[RunResult, RunResult]:
    """The factories' runs plus a 14-subject mmlu_pro group of 15 questions each, as the demo has."""
    runs = []
    for name, pattern in (("base", [True, True, False, True, True, False, True, False]),
                          ("cand", [True, False, True, True, False, True, True, True])):
        run = f.run(name, pattern, n=40)
        template = run.tasks["mmlu_pro_math"]
        tasks = {k: v for k, v in run.tasks.items() if k != "mmlu_pro_math"}
        for i, subject in enumerate(SUBJECTS):
            samples = template.samples[i % 3: i % 3 + 15]
            acc = sum(s.scores["custom-extract"]["exact_match"] for s in samples) / len(samples)  # type: ignore[misc]
            tasks[f"mmlu_pro_{subject}"] = TaskResult(
                task=f"mmlu_pro_{subject}", metrics={"custom-extract": {"exact_match": acc}}, n_samples=15,
                samples=samples, protocol=TaskProtocol(version="3.1", num_fewshot=0, filters=["custom-extract"],
                                                       task_hash=f"h{i}"))
        groups = {"mmlu_pro": [f"mmlu_pro_{s}" for s in SUBJECTS]}
        runs.append(run.model_copy(update={"tasks": tasks, "groups": groups}))
    return runs[0], runs[1]


def _demo_like(tmp_path: Path) -> Path:
    base, cand = _group_runs()
    decision = f.decision(BADCASES)
    hard = GateVerdict(name="gsm8k/answer_parse_failure_rate", kind="hard",
                       metric="gsm8k/answer_parse_failure_rate/flexible-extract", verdict="pass",
                       outcome="hard_pass", effect="release", candidate=0.0, n=8, threshold={"max": 0.2},
                       reason="candidate 0.00% within max 20.00%")
    decision = decision.model_copy(update={"gates": [*decision.gates, hard]})
    written = write_reports(tmp_path / "demo", decision, contract=f.contract(tmp_path), baseline=base, candidate=cand,
                            step_summary=False)
    return written["html"]


def _check(html: Path, width: int, shot: Path | None = None) -> dict[str, Any]:
    seen = visit(html, shot, lambda page: page.evaluate(LAYOUT_JS), width=width, height=FIRST_SCREEN,
                 full_page=False)
    assert seen.page_errors == [] and seen.console_errors == [] and seen.violations == []
    return seen.checks


def _assert_readable(checks: dict[str, Any], width: int, gates: int) -> None:
    assert checks["docOverflow"] <= 0, checks["overflow"][:5]
    assert checks["overflow"] == [], checks["overflow"][:5]
    assert checks["labels"] >= 3 and checks["overlaps"] == [] and checks["clipped"] == [], checks
    assert checks["lines"] == gates
    assert checks["badge"] and max(checks["badge"]) <= FIRST_SCREEN
    # the deciding gates (all gates when every one passed and none decided) are on the first screen
    first = checks["deciding"] or checks["allLines"]
    assert first and max(first) <= FIRST_SCREEN, first
    assert checks["height"] < MAX_HEIGHT[width], checks["height"]


@pytest.mark.parametrize("width", [1400, 800])
def test_demo_like_report_reads_in_a_minute(tmp_path: Path, width: int) -> None:
    _require_browser()
    html = _demo_like(tmp_path)
    page = html.read_text(encoding="utf-8")
    assert "14 mmlu_pro subtasks" in page  # identical protocols grouped; subtasks in their own table
    checks = _check(html, width, tmp_path / "shot.png")
    _assert_readable(checks, width, gates=4)
    assert checks["labels"] <= 6, "one radar axis per task or group, not one per subject"


@pytest.mark.parametrize("width", [1400, 800])
def test_docs_example_reads_in_a_minute(tmp_path: Path, width: int) -> None:
    _require_browser()
    html = REPO / "docs" / "examples" / "mmlu_pro_report.html"
    checks = _check(html, width)
    _assert_readable(checks, width, gates=html.read_text(encoding="utf-8").count('<tbody class="gate'))
    if os.environ.get("RLGATE_SCREENSHOT_DIR"):
        target = Path(os.environ["RLGATE_SCREENSHOT_DIR"])
        target.mkdir(parents=True, exist_ok=True)
        visit(html, target / f"mmlu_pro_report_{width}.png", width=width, height=FIRST_SCREEN, full_page=False)
