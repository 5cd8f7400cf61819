"""`rlgate history --html`: the trend report of five checkpoints gated from real lm-eval folders (MMLU-Pro,
Llama-3.1-8B base vs degraded Instruct outputs) through `rlgate gate` with RLGATE_HISTORY on a temporary SQLite
file; checked as text everywhere and in headless Chromium where it is installed (required in CI)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from fixtures.history_run import STEPS, build_checkpoints, write_repository
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()
DECISION_RGB = {"release": "rgb(26, 127, 55)", "research_only": "rgb(154, 103, 0)", "block": "rgb(207, 34, 46)"}


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("trend")
    contract = write_repository(root / "repo")
    base, checkpoints = build_checkpoints(tmp_path_factory.getbasetemp(), shared_data)
    env = {"RLGATE_HISTORY": str(root / "history.sqlite")}
    decisions = {}
    for step, folder in checkpoints.items():
        result = runner.invoke(app, ["gate", str(contract), "--candidate", str(folder), "--baseline", str(base),
                                     "--out", str(root / f"out{step}")], env=env)
        assert result.exit_code in (0, 1, 3), result.output
        decisions[step] = json.loads((root / f"out{step}" / "decision.json").read_text())["decision"]
    html = root / "history.html"
    result = runner.invoke(app, ["history", "--contract", str(contract), "--html", str(html)], env=env)
    assert result.exit_code == 0, result.output
    return {"contract": contract, "env": env, "html": html, "decisions": decisions, "output": result.output,
            "root": root}


def test_the_run_has_every_decision_and_a_rule_that_fired(gated: dict[str, Any]) -> None:
    # the fixture is what the trend must show: a best checkpoint, a fall after it, all three decisions
    assert set(gated["decisions"].values()) == {"release", "research_only", "block"}, gated["decisions"]
    assert gated["decisions"][150] == "release" and gated["decisions"][250] == "block"
    assert "rule WARNING primary_below_best -> pause" in gated["output"]
    # the answer format breaking at 250 is a hard (safety) metric worse than at 200, beyond the contract's 3 pp
    assert "rule CRITICAL safety_worse -> pause_manual_review" in gated["output"], gated["output"]
    assert f"wrote {gated['html']}" in gated["output"]


def test_trend_page_draws_every_gated_metric_against_step(gated: dict[str, Any]) -> None:
    html = gated["html"].read_text(encoding="utf-8")
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org", "")
    charts = html.split('<svg class="trend"')[1:]
    assert len(charts) == 4  # primary, hard, diagnostic, and the training reward the logs give
    order = re.findall(r'aria-label="([^ "]+) against training step', html)
    assert order == ["mmlu_pro/exact_match/custom-extract", "mmlu_pro/answer_parse_failure_rate/custom-extract",
                     "mmlu_pro/response_length_mean/custom-extract", "train/reward_mean"]
    charts = charts[:3]  # the gated metrics: one point per checkpoint with its interval
    for chart in charts:
        decisions = re.findall(r'class="point" data-decision="(\w+)"', chart)
        assert decisions == [gated["decisions"][s] for s in STEPS]
        assert chart.count("<path d=\"M") == len(STEPS)  # an interval whisker per checkpoint
        assert "⚑ primary_below_best" in chart and 'class="marker"' in chart
    primary = charts[0]
    assert "★ best" in primary and primary.count('class="gate-fail"') == 4  # the primary failed but at step 150
    assert "whiskers: baseline + the paired 95% interval of the change" in html
    assert "whiskers: 95% interval of the value" in html  # the hard gate
    assert html.count('class="d-badge d-block"') >= 2  # latest, and its table row


def test_history_html_bad_paths_are_exit_2(gated: dict[str, Any], tmp_path: Path) -> None:
    folder = runner.invoke(app, ["history", "--contract", str(gated["contract"]), "--html", str(tmp_path)],
                           env=gated["env"])
    assert folder.exit_code == 2 and "is a folder" in folder.output and "Traceback" not in folder.output
    both = runner.invoke(app, ["history", "--html", str(tmp_path / "h.html"), "--export", str(tmp_path / "x.json")],
                         env=gated["env"])
    assert both.exit_code == 2 and "--html" in both.output
    as_json = runner.invoke(app, ["history", "--contract", str(gated["contract"]), "--json", "--html",
                                  str(tmp_path / "j.html")], env=gated["env"])
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["runs"][0]["run"] == "grpo-mmlu"
    assert (tmp_path / "j.html").is_file()


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
  const box = (e) => { const r = e.getBoundingClientRect();
    return {l: r.left, r: r.right, t: r.top, b: r.bottom, w: r.width, h: r.height}; };
  const charts = [...document.querySelectorAll('svg.trend')].map(svg => {
    const s = box(svg);
    const inside = (b) => b.w > 0 && b.h > 0 && b.l >= s.l - 0.5 && b.r <= s.r + 0.5
      && b.t >= s.t - 0.5 && b.b <= s.b + 0.5;
    const texts = (sel) => [...svg.querySelectorAll(sel)].map(t => ({text: t.textContent, ...box(t)}));
    const labels = [...texts('text.value-label'), ...texts('text.marker-label')];
    const overlaps = [];
    for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i], b = labels[j];
      if (a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b) overlaps.push(a.text + ' / ' + b.text);
    }
    const points = [...svg.querySelectorAll('circle.point')];
    return {width: s.w, points: points.length, pointsInside: points.filter(p => inside(box(p))).length,
            fills: points.map(p => getComputedStyle(p).fill),
            labels: labels.map(l => l.text),
            clipped: [...labels, ...texts('text.tick')].filter(l => !inside(l)).map(l => l.text),
            overlaps, markers: svg.querySelectorAll('rect.marker').length};
  });
  return {docOverflow: document.documentElement.scrollWidth - vw, overflow, charts,
          findings: document.querySelectorAll('ul.findings li').length,
          rows: document.querySelectorAll('table.checkpoints tbody tr').length};
}"""


@pytest.mark.slow
@pytest.mark.parametrize("width", [1400, 800])
def test_trend_page_in_headless_chromium(gated: dict[str, Any], width: int, tmp_path: Path) -> None:
    from tests.report.browser import visit
    from tests.report.test_browser import _require_browser

    _require_browser()
    shot = tmp_path / "history.png"
    seen = visit(gated["html"], shot, lambda page: page.evaluate(LAYOUT_JS), width=width, height=900)
    assert seen.requests == [] and seen.violations == [] and seen.dialogs == []
    assert seen.page_errors == [] and seen.console_errors == []
    assert seen.title.startswith("Checkpoint history · grpo_mmlu_pro")
    checks = seen.checks
    assert checks["docOverflow"] <= 0 and checks["overflow"] == [], checks["overflow"][:5]
    assert checks["findings"] == 2 and checks["rows"] == len(STEPS)  # primary_below_best and safety_worse
    assert len(checks["charts"]) == 4  # three gated metrics and the training reward
    colours = {gated["decisions"][s] for s in STEPS}
    for chart in checks["charts"]:
        assert chart["points"] == chart["pointsInside"] == len(STEPS), chart
        assert {DECISION_RGB[d] for d in colours} <= set(chart["fills"]), chart["fills"]
        assert sum("primary_below_best" in label for label in chart["labels"]) == 1
        assert sum("safety_worse" in label for label in chart["labels"]) == 1 and chart["markers"] == 2
        assert len(chart["labels"]) == len(STEPS) + 2
        assert chart["clipped"] == [] and chart["overlaps"] == [], chart
    assert shot.stat().st_size > 20_000
    if os.environ.get("RLGATE_SCREENSHOT_DIR") and width == 1400:
        target = Path(os.environ["RLGATE_SCREENSHOT_DIR"])
        target.mkdir(parents=True, exist_ok=True)
        (target / "history_trend.png").write_bytes(shot.read_bytes())
