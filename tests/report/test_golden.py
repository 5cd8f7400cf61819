"""Golden files for report.md and junit.xml (regenerate with RLGATE_UPDATE_GOLDEN=1), and JUnit structure."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rlgate.report.builder import build_report
from rlgate.report.junit import render_junit
from rlgate.report.markdown import render_markdown
from rlgate.report.model import ReportModel
from tests.report import factories as f

GOLDEN = Path(__file__).parent / "golden"
SVG = "<svg xmlns='http://www.w3.org/2000/svg' width='40' height='20'><script>alert(1)</script></svg>"
EXTENSIONS = {
    "monitor": {"severity": "critical", "diagnosis": {"domain": "reward", "rule": "reward_hacking",
                                                      "severity": "critical", "summary": "reward up, accuracy down"},
                "findings": [{"rule": "reward_hacking", "domain": "reward", "severity": "critical",
                              "message": "reward +0.82 → +3.84 while accuracy 29% → 8% <img src=x onerror=alert(1)>",
                              "step_start": 100, "step_end": 400, "values": {"reward": 3.84, "acc": 0.08}}],
                "plots": [{"log": "train.jsonl", "metric": "reward", "title": "reward", "svg": SVG}],
                "logs": [{"path": "train.jsonl", "format": "jsonl", "steps": 400, "first_step": 1, "last_step": 400,
                          "metrics": []}], "policy": "default"},
    "badcase_top": ["gsm8k_final_answer_format_error: 19", "mmlu_pro | `wrong_choice`: 7"],
    "next_actions": [{"action": "add a format-verifier reward term", "because": "[format](javascript:alert(1)) grew"}],
    "badcases": {"clusters": [{"cluster": "x", "count": 1}]},
}


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReportModel:
    for key in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(key, raising=False)
    base = f.run("base-model", [True, True, False, True, True, False, True, False])
    cand = f.run("cand-model", [True, False, True, True, False, True, True, True])
    return build_report(f.decision(EXTENSIONS), contract=f.contract(tmp_path), baseline=base, candidate=cand,
                        generated_at="2026-01-02T03:04:05+00:00")


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("RLGATE_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with RLGATE_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; if intended, run with RLGATE_UPDATE_GOLDEN=1"


def test_markdown_golden(model: ReportModel) -> None:
    text = render_markdown(model)
    _check_golden("report.md", text)
    assert "<" not in text.replace("(<report.html>)", "")  # no raw HTML at all, only the link's own brackets
    assert "\\[format\\](javascript" in text and "](<javascript" not in text  # brackets escaped: no link
    assert "mmlu_pro \\| &lt;b>no drop&lt;/b>" in text
    assert "Badcases" not in text  # a cluster list without counts draws nothing, and is never dumped raw


def test_markdown_renders_inert_in_a_commonmark_renderer_with_raw_html_on(model: ReportModel) -> None:
    """markdown-it-py (rich's dependency) with raw HTML enabled, like GitHub before its sanitiser."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(render_markdown(model))
    for tag in ("<script", "<img", "<b>", "<svg", "<a href=\"javascript", "<code>"):
        assert tag not in html, tag
    assert html.count("<a href=") == 1  # only the link to report.html
    assert "&lt;script&gt;window.__pwned=9&lt;/script&gt;" in html
    gate_table = html.split("<table>")[1]
    assert gate_table.count("<tr>") == 1 + len(model.decision.gates)


def test_markdown_links_to_a_published_html_and_the_run(model: ReportModel) -> None:
    text = render_markdown(model, html_url="https://ci.example/a b/report.html",
                           run_url="https://github.com/o/r/actions/runs/1")
    assert "[report.html](<https://ci.example/a%20b/report.html>)" in text
    assert "[this run's artifacts](<https://github.com/o/r/actions/runs/1>)" in text
    unsafe = render_markdown(model, html_url="javascript:alert(1)")
    assert "](<javascript" not in unsafe and "report.html (javascript:alert(1))" in unsafe


def test_junit_golden_and_structure(model: ReportModel) -> None:
    text = render_junit(model)
    _check_golden("junit.xml", text)
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    cases = suite.findall("testcase")
    gates = model.decision.gates
    assert [c.get("name") for c in cases] == [g.name for g in gates]
    assert suite.get("tests") == root.get("tests") == str(len(gates))
    assert suite.get("failures") == str(sum(g.verdict == "fail" for g in gates)) == "1"
    assert suite.get("errors") == str(sum(g.verdict in ("nodata", "error") for g in gates)) == "1"
    for case, gate in zip(cases, gates, strict=True):
        children = [child.tag for child in case]
        assert case.get("classname") == f"rlgate.{gate.kind}"
        if gate.verdict == "fail":
            assert children == ["failure"] and case[0].get("type") == "regression_fail"
            assert case[0].get("message") == gate.reason
        elif gate.verdict in ("nodata", "error"):
            assert children == ["error"] and case[0].get("type") == gate.verdict
        else:
            assert children == ["system-out"]
    props = {p.get("name"): p.get("value") for p in suite.find("properties") or []}
    assert props["decision"] == "block"


def test_junit_survives_control_characters(model: ReportModel) -> None:
    gate = model.decision.gates[1].model_copy(update={"reason": "bad \x00\x1b[31m byte", "name": "g\x07"})
    decision = model.decision.model_copy(update={"gates": [gate]})
    root = ET.fromstring(render_junit(model.model_copy(update={"decision": decision})).encode("utf-8"))
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("name") == "g\\u0007"
    assert case[0].get("message") == "bad \\u0000\\u001b[31m byte"
