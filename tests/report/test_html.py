"""report.html without a browser: self-contained, ordered sections, safe data embedding, size budget."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from rlgate.report import html as html_module
from rlgate.report.budget import TEXT_BUDGET, factor_prefixes
from rlgate.report.builder import build_report
from rlgate.report.drilldown import drilldown_payload
from rlgate.report.html import render_html
from rlgate.report.model import ReportModel
from tests.report import factories as f

BASE = [True, True, False, True, True, False, True, False]
CAND = [True, False, True, True, False, True, True, True]


def _model(tmp_path: Path, n: int | None = None, extensions: dict | None = None, **kwargs: int) -> ReportModel:
    return build_report(f.decision(extensions), contract=f.contract(tmp_path), baseline=f.run("b", BASE, n=n),
                        candidate=f.run("c", CAND, n=n), **kwargs)


def _data_block(html: str) -> str:
    match = re.search(r'<script type="application/json" id="rlgate-data">(.*?)</script>', html, re.S)
    assert match
    return match.group(1)


def test_page_is_self_contained_and_sections_are_in_order(tmp_path: Path) -> None:
    html = render_html(_model(tmp_path, extensions={"monitor": {"severity": None, "findings": []}}))
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "@import" not in html and "<link" not in html and "url(" not in html
    ids = ["decision", "gates", "capabilities", "tasks", "rollout", "ext-1"]
    positions = [html.index(f'id="{i}"') for i in ids]
    assert positions == sorted(positions)
    assert "Training monitor" in html and "@media print" in html


def test_csp_allows_exactly_the_page_own_script_and_style(tmp_path: Path) -> None:
    html = render_html(_model(tmp_path))
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert found
    policy = unescape(found.group(1))
    assert "default-src 'none'" in policy
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert len(scripts) == 1 and len(styles) == 1
    for kind, body in (("script-src", scripts[0]), ("style-src", styles[0])):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{kind} 'sha256-{digest}'" in policy
    assert "unsafe-inline" not in policy


def test_hostile_text_is_escaped_everywhere_outside_the_data_block(tmp_path: Path) -> None:
    html = render_html(_model(tmp_path))
    data = _data_block(html)
    outside = html.replace(data, "")
    assert "window.__pwned=9" in outside  # the hostile gate reason is shown ...
    assert "<script>window.__pwned" not in outside  # ... as text
    assert "&lt;script&gt;window.__pwned=9&lt;/script&gt;" in outside
    assert "<b>no drop</b>" not in outside
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in data
    payload = json.loads(data)
    rows = payload["tasks"][0]["rows"]
    assert rows[0][6].startswith("I think </script><script>window.__pwned=1")  # exact text, escaped only
    assert "\u202eevil" in rows[0][6] and "\x07bell" in rows[0][6]  # exact; the page shows them as \uXXXX


def test_private_task_has_no_drill_down(tmp_path: Path) -> None:
    html = render_html(_model(tmp_path))
    payload = json.loads(_data_block(html))
    assert {t["task"] for t in payload["tasks"]} == {"gsm8k", "mmlu_pro_math"}
    assert f.PRIVATE_MARKER not in html
    assert "Samples withheld: split &#39;private&#39; is release_gate_only" in html


def test_factor_prefixes_reconstructs_every_prompt() -> None:
    shots = "".join(f"Example {i}: some few-shot text that is long enough.\n" for i in range(12))
    other = "".join(f"Other {i}: a different few-shot context, also long enough.\n" for i in range(12))
    prompts = [shots + "Q1?", shots + "Q2?", shots + "Q3?", None, other + "Q4?", other + "Q5?", other + "Q6?",
               other + "Q7?", shots + "Q8?", "short"]
    prefixes, rows = factor_prefixes(prompts)
    assert prefixes == [shots, other]
    rebuilt = [None if rest is None else (prefixes[i] if i >= 0 else "") + rest for i, rest in rows]
    assert rebuilt == prompts
    assert rows[8] == (0, "Q8?") and rows[7] == (1, "Q7?")
    # two questions that merely start alike do not make a prefix
    alike = "Which of the following statements about the topic is correct and complete?\n" * 4
    assert factor_prefixes([alike + "A", alike + "B", shots + "C"])[0] == []


def test_text_budget_embeds_changed_pairs_first(tmp_path: Path) -> None:
    model = _model(tmp_path, n=400, text_budget=40_000)
    assert model.text_left_out > 0 and "text of" in model.sample_note
    payload = drilldown_payload(model)
    assert payload["text_left_out"] == model.text_left_out
    assert len(json.dumps(payload)) < 40_000 + 200 * 800  # text within budget, plus compact per-row fields
    for task in payload["tasks"]:
        changes = [payload["changes"][r[1]] for r in task["rows"]]
        embedded = [c for c, r in zip(changes, task["rows"], strict=True) if r[6] is not None]
        assert "regressed" in embedded and "improved" in embedded  # tasks share the budget
        assert "same" not in embedded  # changed pairs come first
        assert all(r[6] is not None for c, r in zip(changes, task["rows"], strict=True) if c == "regressed")


def test_field_cap_keeps_the_end_of_prompts_and_the_start_of_responses(tmp_path: Path) -> None:
    payload = drilldown_payload(_model(tmp_path, field_cap=50))
    row = payload["tasks"][0]["rows"][1]
    assert row[6] == f.LONG_RESPONSE[:50] and row[7] == len(f.LONG_RESPONSE)
    assert row[3] == f.HOSTILE_PROMPT[-50:] and row[4] == len(f.HOSTILE_PROMPT)


def test_page_never_exceeds_the_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model(tmp_path, n=200)
    full = render_html(model)
    limit = len(full.encode()) - 50_000
    monkeypatch.setattr(html_module, "HTML_LIMIT", limit)
    html = render_html(model)
    assert len(html.encode()) <= limit
    assert "was left out to keep this" in html and "was left out" not in full


def _budgets_asked(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The text budgets render_html builds a page payload for, in order (one per render)."""
    budgets: list[int | None] = []
    real = html_module.drilldown

    def counted(m: Any, text_budget: int | None = None, field_cap: int | None = None) -> Any:
        budgets.append(text_budget)
        return real(m, text_budget, field_cap)

    monkeypatch.setattr(html_module, "drilldown", counted)
    return budgets


def test_a_page_over_the_limit_at_any_budget_is_the_halvings_last_page_in_three_renders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows alone over the limit (10^6 documents): the page the halving would end in, without the dozen
    renders between."""
    model = _model(tmp_path, n=200)
    bare_size = len(render_html(model, text_budget=0).encode())
    full_size = len(render_html(model).encode())
    monkeypatch.setattr(html_module, "HTML_LIMIT", min(bare_size - 5_000, full_size // 2 - 1))  # no budget fits
    budgets = _budgets_asked(monkeypatch)
    page = render_html(model)
    last = TEXT_BUDGET
    while last >= 10_000:
        last //= 2
    assert last == html_module._last_budget()
    assert budgets == [None, 0, last]
    monkeypatch.undo()
    assert page == render_html(model, text_budget=last)


def test_a_page_whose_shortest_rows_pass_the_limit_renders_the_halvings_last_page_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model(tmp_path, n=200)
    rows = sum(len(t.samples.doc_id) for t in model.tasks if t.samples)
    monkeypatch.setattr(html_module, "HTML_LIMIT", rows * 36 - 1)
    budgets = _budgets_asked(monkeypatch)
    page = render_html(model)
    assert budgets == [html_module._last_budget()]
    assert len(page.encode()) > rows * 36 - 1  # indeed over the limit, as every budget would be


def test_user_template_overrides_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "report.css").write_text("body { color: #123456; }", encoding="utf-8")
    html = render_html(_model(tmp_path), template_dir=folder)
    assert "body { color: #123456; }" in html and "Capability radar" in html


def test_sequential_gating_is_shown_as_in_report_md(tmp_path: Path) -> None:
    """decision.json's sequential replay (the look the decision was reached at, and whether the full suite
    agrees) must be on the page, not only in the job summary."""
    from rlgate.engine.models import SequentialReplay
    from rlgate.report.markdown import render_markdown
    from rlgate.report.views import sequential_lines

    seq = SequentialReplay(method="betting", seed=0, looks_planned=10, stop_look=3, stopped_early=True,
                           stop_reason="every gate settled", decision_at_stop="release", full_decision="block",
                           matches_full=False, documents_used=30, documents_total=100, fraction_used=0.3)
    model = _model(tmp_path)
    model = model.model_copy(update={"decision": model.decision.model_copy(update={"sequential": seq})})
    line = sequential_lines(model)[0]
    assert "(the full suite decides block)" in line
    assert "Sequential gating" in render_markdown(model)
    html = render_html(model)
    assert 'id="sequential"' in html and 'href="#sequential"' in html
    assert line in unescape(re.sub(r"<[^>]+>", "", html))


def test_bidi_and_control_characters_outside_the_data_block_are_shown_escaped(tmp_path: Path) -> None:
    """A right-to-left override in a model name, a contract name or a document id would reorder the text after it
    (the decision line, "· target ..."): shown as \\u202e like the rest of the page does."""
    rlo = "\u202e"
    cluster = {"cluster": "gsm8k_wrong_answer", "family": "gsm8k", "kind": f"knowledge{rlo}", "baseline_count": 1,
               "candidate_count": 2, "baseline_rate": 0.1, "candidate_rate": 0.2, "delta_rate": 0.1, "n_paired": 8,
               "new_in_candidate": 1, "fixed_in_candidate": 0, "grew": True,
               "examples": [{"task": "gsm8k", "doc_id": f"doc{rlo}7", "prompt": "Q", "target": "4",
                             "candidate_response": "5"}]}
    model = _model(tmp_path, extensions={"badcases": {"clusters": [cluster], "private_tasks": []}})
    model = model.model_copy(update={"title": f"report_test: c{rlo}x vs b", "contract_name": f"report{rlo}_test"})
    html = render_html(model)
    outside = html.replace(_data_block(html), "")
    assert rlo not in outside
    assert "c\\u202ex vs b" in outside and "doc\\u202e7" in outside and "report\\u202e_test" in outside


def _budgeted_plainly(model: ReportModel, text_budget: int, field_cap: int) -> dict:
    """The text budget as defined: every row's texts, changed pairs first (by change code, then row number, the
    tasks interleaved), each capped, embedded while the budget holds."""
    from rlgate._core.text import truncate
    from rlgate.report.model import CHANGES

    code = {c: i for i, c in enumerate(CHANGES)}
    tasks, pending = [], []
    for index, section in enumerate(model.tasks):
        t = section.samples
        if not t:
            continue
        rows = [[t.doc_id[i], code[t.change[i]], -1 if t.prompt_prefix[i] is None else t.prompt_prefix[i], None,
                 t.prompt_chars[i], t.target[i], None, t.baseline_chars[i], t.baseline_extracted[i],
                 t.baseline_score[i], None, t.candidate_chars[i], t.candidate_extracted[i], t.candidate_score[i]]
                for i in range(len(t.doc_id))]
        tasks.append({"task": section.task, "section": index, "metric": section.drill_metric,
                      "prefixes": section.prompt_prefixes, "rows": rows})
        pending += [(rows[i][1], len(tasks) - 1, i, (t.prompt[i], t.baseline_response[i], t.candidate_response[i]))
                    for i in range(len(rows))]
    pending.sort(key=lambda item: (item[0], item[2]))
    used, left_out = sum(len(p.encode()) for t in tasks for p in t["prefixes"]), 0
    for _, t, r, text in pending:
        capped = [None if x is None else x[-field_cap:] if i == 0 else truncate(x, field_cap)[0]
                  for i, x in enumerate(text)]
        cost = sum(len(x.encode()) for x in capped if x)
        if used + cost > text_budget and cost:
            left_out += 1
            continue
        used += cost
        tasks[t]["rows"][r][3], tasks[t]["rows"][r][6], tasks[t]["rows"][r][10] = capped
    return {"changes": list(CHANGES), "tasks": tasks, "text_left_out": left_out + model.text_left_out}


@pytest.mark.parametrize(("text_budget", "field_cap"), [(0, 50), (3_000, 50), (20_000, 200), (60_000, 10_000),
                                                        (10**9, 10**9)])
def test_the_budget_is_spent_as_defined(tmp_path: Path, text_budget: int, field_cap: int) -> None:
    """The page's budgeted rows (read lazily by change, the tasks interleaved) are exactly the definition's."""
    model = _model(tmp_path, n=300)
    assert len([s for s in model.tasks if s.samples]) > 1
    got = drilldown_payload(model, text_budget, field_cap)
    assert got == _budgeted_plainly(model, text_budget, field_cap)
    if 0 < text_budget < 10**9:
        assert 0 < got["text_left_out"] - model.text_left_out < sum(len(t["rows"]) for t in got["tasks"])


def test_the_page_is_written_as_parts_with_the_data_never_copied_into_one_string(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch
                                                                                 ) -> None:
    """The data (tens of MB at 10^6 documents) is written as parts between the template's, its rows encoded a
    slice at a time, wherever and as often as the template prints it; the parts joined are the page, and
    write_model writes exactly that."""
    from rlgate._core.text import json_for_script
    from rlgate.report import drilldown as drilldown_module
    from rlgate.report.html import render_html_parts
    from rlgate.report.io import write_model

    monkeypatch.setattr(drilldown_module, "_SLICE", 7)  # several slices per task
    model = _model(tmp_path, n=40)
    parts = render_html_parts(model)
    data = json_for_script(drilldown_payload(model, None, None))
    head, tail = parts[0], parts[-1]
    assert len(parts) > 10 and "".join(parts[1:-1]) == data and data not in head + tail
    assert "".join(parts) == render_html(model) and _data_block("".join(parts)) == data
    written = write_model(tmp_path / "out", model, step_summary=False)
    assert written["html"].read_text(encoding="utf-8") == render_html(model)
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "report.html.j2").write_text("<a>{{ data }}</a>é<b>{{ data }}</b>", encoding="utf-8")
    twice = render_html_parts(model, template_dir=folder)
    first = twice.index("</a>é<b>")
    assert twice[0] == "<a>" and twice[-1] == "</b>" and "".join(twice[1:first]) == data
    assert all(a is b for a, b in zip(twice[1:first], twice[first + 1:-1], strict=True))  # encoded once
    (folder / "report.html.j2").write_text("<p>{{ m.decision.decision }}</p>", encoding="utf-8")
    assert render_html_parts(model, template_dir=folder) == [f"<p>{model.decision.decision}</p>"]
