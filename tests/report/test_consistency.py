"""Every figure reads the same in HTML, Markdown, the terminal and decision.json; the Markdown renders as intended.

The Markdown is parsed with markdown-it-py (CommonMark plus GitHub's tables and strikethrough): the gate table
must come out as a table with one row per gate and cells whose text is what rlgate meant, hostile text included.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from rlgate.engine import fmt as engine_fmt
from rlgate.engine.summary import decision_table
from rlgate.report import fmt
from rlgate.report.html import render_html
from rlgate.report.io import write_reports
from rlgate.report.markdown import render_markdown
from tests.report import factories as f

BADCASES = {
    "badcase_explanations": ["mmlu_pro: accuracy 75.0% → 50.0%; the drop is not a format problem: 2 of 2 lost answers "
                             "were parsed but wrong"],
    "next_actions": [{"area": "data", "action": "add *hard* mmlu_pro_law items", "evidence": "x 1 -> 3 of 8"}],
    "badcases": {"private_tasks": [], "clusters": [
        {"cluster": "mmlu_pro_wrong_choice", "family": "mmlu_pro", "kind": "knowledge", "baseline_count": 2,
         "candidate_count": 4, "baseline_rate": 0.25, "candidate_rate": 0.5, "delta_rate": 0.25, "n_paired": 8,
         "new_in_candidate": 2, "fixed_in_candidate": 0, "p_value": 0.25, "p_adjusted": 0.5, "grew": False,
         "examples": [{"task": "mmlu_pro_math", "doc_id": 1, "prompt": "Q?", "candidate_response": "(B)"}]}]},
}


def _md(text: str) -> str:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)


def _cells(table_html: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", table_html, flags=re.S)
    return [[html_lib.unescape(re.sub(r"<[^>]+>", "", c)).strip()
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)] for row in rows]


@pytest.fixture
def written(tmp_path: Path) -> dict[str, Path]:
    base = f.run("base", [True, True, False, True, True, False, True, False])
    cand = f.run("cand", [True, False, True, True, False, True, True, True])
    return write_reports(tmp_path / "out", f.decision(BADCASES), contract=f.contract(tmp_path), baseline=base,
                         candidate=cand, step_summary=False)


def test_every_gate_figure_matches_across_formats(written: dict[str, Path]) -> None:
    from rlgate.report.io import load_model

    model = load_model(written["html"].parent)
    stored = json.loads(written["decision"].read_text(encoding="utf-8"))
    page = written["html"].read_text(encoding="utf-8")
    markdown = written["markdown"].read_text(encoding="utf-8")
    terminal = decision_table(model.decision)
    md_rows = {row[1]: row for row in _cells(_md(markdown).split("<h3>Gates</h3>")[1].split("</table>")[0])[1:]}
    for gate, raw in zip(model.decision.gates, stored["gates"], strict=True):
        p = fmt.gate_p(gate)
        # decision.json's floats give the same text every output shows
        assert engine_fmt.p_number(engine_fmt.deciding_p(raw["p_value"], raw["p_adjusted"])) == p
        row = next(line for line in terminal.splitlines() if gate.name in line)
        assert (p if p != "–" else "-") in row.split()
        assert md_rows[gate.metric][4] == p
        html_row = page.split(f"{gate.metric.replace('/', '/<wbr>')}</td>")[1].split("</tr>")[0]
        assert f">{html_lib.escape(p)}</td>" in html_row
        if gate.baseline is not None:
            values = f"{fmt.value(gate.baseline, True)} → {fmt.value(gate.candidate, True)}"
            assert values in html_row and md_rows[gate.metric][2] == values
            assert engine_fmt.value(gate.baseline, "exact_match").split(".")[0] in row
    # the Holm-adjusted p decides: 0.020, never the unadjusted 0.010 as the gate's p
    assert "0.020" in terminal and md_rows["mmlu_pro/exact_match/custom-extract"][4] == "0.020"


def test_markdown_renders_the_intended_tables_and_text(written: dict[str, Path]) -> None:
    markdown = written["markdown"].read_text(encoding="utf-8")
    rendered = _md(markdown)
    gates = _cells(rendered.split("<h3>Gates</h3>")[1].split("</table>")[0])
    assert gates[0] == ["Gate", "Metric", "Baseline → candidate", "Δ (CI)", "p", "n", "Verdict"]
    assert len(gates) == 1 + 3 and all(len(row) == 7 for row in gates)
    assert gates[2][0] == "mmlu_pro | <b>no drop</b>"  # the name as written: the pipe did not split the cell
    assert "dropped 25.0 pp > 1.0 pp <script>window.__pwned=9</script>" in html_lib.unescape(rendered)
    assert "<script>" not in rendered and "<b>" not in rendered
    clusters = _cells(rendered.split("<h3>Badcases</h3>")[1].split("</table>")[0])
    assert clusters[1][:5] == ["mmlu_pro: wrong choice", "wrong answer", "25.0% (2)", "50.0% (4)", "+25.0 pp"]
    assert "add *hard* mmlu_pro_law items" in html_lib.unescape(rendered) and "<em>" not in rendered
    # nothing GitHub shows literally is escaped
    for needless in ("\\+", "\\.", "\\:", "&gt;", "mmlu\\_pro"):
        assert needless not in markdown, needless


def test_html_badcases_are_designed_sections_with_one_nav_link_each(written: dict[str, Path]) -> None:
    page = written["html"].read_text(encoding="utf-8")
    nav = page.split('<nav class="toc">')[1].split("</nav>")[0]
    links = re.findall(r'href="#([^"]+)"', nav)
    assert len(links) == len(set(links))
    assert {"why", "badcases", "next-actions"} <= set(links)
    assert not any("badcase" in link and link.startswith("ext-") for link in links)
    assert "<th>Failure</th>" in page and "failure_class" not in page.split('id="rlgate-data"')[0]
    assert "50.0% (4)" in page and "0.008333" not in page
    assert 'id="cluster-1"' in page and "(B)" in page


def test_markdown_and_html_render_from_the_same_model(written: dict[str, Path]) -> None:
    from rlgate.report.io import load_model

    model = load_model(written["html"].parent)
    assert render_markdown(model) == written["markdown"].read_text(encoding="utf-8")
    assert render_html(model) == written["html"].read_text(encoding="utf-8")
