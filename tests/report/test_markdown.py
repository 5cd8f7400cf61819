"""report.md structure: every list item on its own line, so GitHub renders what the model says."""

from __future__ import annotations

from pathlib import Path

from rlgate.report.builder import build_report
from rlgate.report.markdown import render_markdown
from tests.report import factories as f
from tests.report.test_junit import passing_gate_that_decides

BASE = [True, True, False, True, True, False, True, False]
CAND = [True, False, True, True, False, True, True, True]


def _markdown(tmp_path: Path, extensions: dict) -> str:
    model = build_report(f.decision(extensions), contract=f.contract(tmp_path), baseline=f.run("b", BASE),
                         candidate=f.run("c", CAND))
    return render_markdown(model)


def test_next_actions_are_one_numbered_line_each_and_end_the_list(tmp_path: Path) -> None:
    actions = [{"area": "reward", "action": "add a format reward", "evidence": "format grew"},
               {"area": "data", "action": "more long problems"}, "check the verifier"]
    text = _markdown(tmp_path, {"next_actions": actions, "monitor": {"severity": "warning", "findings": []}})
    lines = text.splitlines()
    start = lines.index("### Next actions")
    assert lines[start + 2:start + 6] == ["1. [reward] add a format reward — evidence: format grew",
                                          "2. [data] more long problems", "3. check the verifier", ""]
    assert "### Training monitor" in lines[start + 6:]


def test_markdown_says_why_a_passing_gate_decided() -> None:
    text = render_markdown(build_report(passing_gate_that_decides()))
    line = next(x for x in text.splitlines() if x.startswith("- ") and "monitor:kl" in x.replace("\\", ""))
    assert "(deciding)" in line and "(monitor info → research_only)" in line


def test_each_warning_is_its_own_paragraph(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    model = build_report(f.decision({}), contract=f.contract(tmp_path), baseline=f.run("b", BASE),
                         candidate=f.run("c", CAND))
    model.decision.warnings[:] = ["first warning", "second warning", "third warning"]
    html = MarkdownIt("commonmark").render(render_markdown(model))
    for text in ("first", "second", "third"):
        assert f"<p>⚠️ {text} warning</p>" in html  # not run together into one paragraph
