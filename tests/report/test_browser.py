"""report.html in a real headless Chromium: visible, offline, and hostile model text executes nothing.

Needs Debian's `chromium` and playwright-python. Skips when they are missing, except where
RLGATE_REQUIRE_BROWSER=1 (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rlgate.report.io import write_reports
from tests.report import factories as f
from tests.report.browser import chromium_path, visit

pytestmark = pytest.mark.slow

SVG_PLOT = ("<svg xmlns='http://www.w3.org/2000/svg' width='300' height='80' onload='window.__pwned=20'>"
            "<script>window.__pwned=21</script><image href='http://127.0.0.1:9/x.png'/>"
            "<line x1='0' y1='70' x2='300' y2='10' stroke='#0969da' stroke-width='2'/></svg>")
EXTENSIONS = {
    "monitor": {"severity": "warning", "findings": [{"rule": "entropy_collapse", "severity": "warning",
                                                     "message": "<img src=x onerror='window.__pwned=22'>"}],
                "plots": [{"log": "train.jsonl", "metric": "reward", "title": "reward <b>mean</b>", "svg": SVG_PLOT}]},
    "next_actions": ["<a href='javascript:window.__pwned=23'>click</a>"],
}


def _require_browser() -> None:
    missing = []
    if chromium_path() is None:
        missing.append("chromium (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install playwright)")
    if missing:
        if os.environ.get("RLGATE_REQUIRE_BROWSER") == "1":
            pytest.fail("browser test required but missing: " + ", ".join(missing))
        pytest.skip("needs " + ", ".join(missing))


def _interact(page: Any) -> dict[str, Any]:
    """Open everything a reviewer would open, including the hostile sample and its 'show all'."""
    checks: dict[str, Any] = {"title_before": page.title()}
    checks["decision_visible"] = page.locator("#decision-badge").is_visible()
    checks["decision_text"] = page.locator("#decision-badge").inner_text()
    checks["gate_rows"] = page.locator("#gate-table tbody.gate").count()
    checks["gate_table_visible"] = page.locator("#gate-table").is_visible()
    page.click("#task-0 > summary")
    page.select_option("#drill-0 select", "all")
    cards = page.locator("#drill-0 details.sample > summary")
    checks["cards"] = cards.count()
    cards.nth(0).click()
    cards.nth(1).click()
    page.locator("#drill-0 details.sample button.link", has_text="show all").first.click()
    checks["long_shown"] = page.locator("#drill-0 pre.txt", has_text="END-OF-LONG-RESPONSE").count()
    checks["hostile_text_shown"] = page.locator("#drill-0 pre.txt", has_text="<img src=x onerror=").count()
    checks["invisible_shown"] = page.locator("#drill-0 pre.txt", has_text="\\u202eevil\\u202c \\u0007bell").count()
    page.select_option("#drill-0 select", "regressed")
    checks["regressed_info"] = page.locator("#drill-0 .pageinfo").inner_text()
    page.fill("#drill-0 input[type=search]", "zzz-no-such-text")
    checks["no_match"] = page.locator("#drill-0 >> text=No documents match.").count()
    for link in page.locator("a").all():
        href = link.get_attribute("href") or ""
        checks.setdefault("hrefs", []).append(href)
    page.emulate_media(media="print")
    checks["controls_hidden_in_print"] = not page.locator("#drill-0 .controls").is_visible()
    page.emulate_media(media="screen")
    checks["pwned"] = page.evaluate("window.__pwned === undefined ? null : window.__pwned")
    checks["injected_nodes"] = page.evaluate(
        "document.querySelectorAll('main img:not(.plot), main script, main iframe, svg script').length")
    return checks


def test_report_in_headless_chromium(tmp_path: Path) -> None:
    _require_browser()
    base = f.run("base", [True, True, False, True, True, False, True, False], n=60)
    cand = f.run("cand", [True, False, True, True, False, True, True, True], n=60)
    written = write_reports(tmp_path / "out", f.decision(EXTENSIONS), contract=f.contract(tmp_path),
                            baseline=base, candidate=cand, step_summary=False)
    shot = tmp_path / "report.png"
    seen = visit(written["html"], shot, _interact)
    checks = seen.checks
    assert checks["decision_visible"] and checks["decision_text"] == "BLOCK"
    assert checks["gate_table_visible"] and checks["gate_rows"] == 3
    assert checks["cards"] == 25  # first page of 60 documents
    assert checks["long_shown"] == 1 and checks["hostile_text_shown"] >= 1 and checks["invisible_shown"] >= 1
    assert checks["regressed_info"].startswith("1–15 of 15")
    assert checks["no_match"] == 1
    assert all(h.startswith("#") for h in checks["hrefs"]), checks["hrefs"]
    assert checks["controls_hidden_in_print"]
    # nothing ran: no marker, no dialog, the title unchanged, no request, no blocked attempt
    assert checks["pwned"] is None
    assert checks["injected_nodes"] == 0
    assert seen.title == checks["title_before"] and seen.title.startswith("BLOCK · ")
    assert seen.dialogs == []
    assert seen.requests == []
    assert seen.violations == []
    assert seen.page_errors == [] and seen.console_errors == []
    assert shot.stat().st_size > 20_000
    if os.environ.get("RLGATE_SCREENSHOT_DIR"):
        target = Path(os.environ["RLGATE_SCREENSHOT_DIR"])
        target.mkdir(parents=True, exist_ok=True)
        (target / "report.png").write_bytes(shot.read_bytes())


def _open_trajectory(page: Any) -> dict[str, Any]:
    """Open the first task, then its first trajectory, as a reviewer would, and read it step by step."""
    page.click("#task-0 > summary")
    checks: dict[str, Any] = {"closed_steps_visible": page.locator("#traj-0-0 li.step").first.is_visible()}
    page.click("#traj-0-0 > summary")
    steps = page.locator("#traj-0-0 li.step")
    checks["steps"] = steps.count()
    checks["step_heads"] = [steps.nth(i).locator(".step-head").inner_text() for i in range(steps.count())]
    checks["all_visible"] = all(steps.nth(i).is_visible() for i in range(steps.count()))
    checks["hostile_result"] = page.locator("#traj-0-0 pre.step-text", has_text="<script>window.__pwned=32").count()
    checks["call"] = page.locator("#traj-0-0 .call").first.inner_text()
    checks["outcome"] = page.locator("#traj-0-0 .traj-outcome").inner_text()
    page.click("#drop-list > summary") if not page.locator("#drop-list").get_attribute("open") else None
    checks["drop_rows"] = page.locator("#drop-list tbody tr").count()
    checks["pwned"] = page.evaluate("window.__pwned === undefined ? null : window.__pwned")
    checks["injected_nodes"] = page.evaluate("document.querySelectorAll('main img, main script, main iframe').length")
    return checks


def test_trajectories_open_step_by_step_and_stay_inert(tmp_path: Path) -> None:
    _require_browser()
    base = f.agent_run("base", [True, True, False, True, True, False, True, False])
    cand = f.agent_run("cand", [True, False, True, False, False, True, True, True])
    written = write_reports(tmp_path / "out", f.decision(), contract=f.contract(tmp_path), baseline=base,
                            candidate=cand, step_summary=False)
    seen = visit(written["html"], tmp_path / "traj.png", _open_trajectory)
    checks = seen.checks
    assert checks["closed_steps_visible"] is False
    assert checks["steps"] == 7 and checks["all_visible"], checks
    assert [h.split()[1] for h in checks["step_heads"]] == ["instruction", "observation", "action", "tool", "action",
                                                           "tool", "final"]
    assert "retry" in checks["step_heads"][4] and "tool error" in checks["step_heads"][3]
    assert checks["hostile_result"] == 1
    assert "search" in checks["call"] and "<b>two plus two</b>" in checks["call"]
    assert "final state" in checks["outcome"] and "task_success = 0" in checks["outcome"]
    assert checks["drop_rows"] > 0
    assert checks["pwned"] is None and checks["injected_nodes"] == 0
    assert seen.violations == [] and seen.requests == [] and seen.dialogs == []
    assert seen.page_errors == [] and seen.console_errors == []
