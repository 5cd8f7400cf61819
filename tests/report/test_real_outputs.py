"""Reports on real MMLU-Pro outputs (Llama-3.1-8B base vs Instruct), and the docs example's generator."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from rlgate.report.io import write_reports
from tests.report.test_browser import _require_browser

pytest.importorskip("lm_eval")


def _generator(repo_root: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("docs_examples_generate", repo_root / "docs/examples/generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_real_mmlu_pro_report(shared_data: Path, repo_root: Path, tmp_path: Path) -> None:
    from rlgate.engine.decision import decide
    from rlgate.harness.lmeval.folder import read_lmeval_folder
    from rlgate.harness.vocabulary import load_contract
    from tests.fixtures.lmeval_builders import build_mmlu_pro_llama_folder

    contract = load_contract(repo_root / "docs/examples/mmlu_pro_contract.yaml")
    base = read_lmeval_folder(build_mmlu_pro_llama_folder(shared_data, "base", tmp_path / "b", 60))
    cand = read_lmeval_folder(build_mmlu_pro_llama_folder(shared_data, "instruct", tmp_path / "c", 60))
    decision = decide(contract.gates, base, cand, seed=0, contract_name=contract.name)
    written = write_reports(tmp_path / "out", decision, contract=contract, baseline=base, candidate=cand,
                            step_summary=False)
    model = json.loads(written["model"].read_text(encoding="utf-8"))
    assert model["decision"]["decision"] == decision.decision
    assert len(model["tasks"]) == 14
    for task in model["tasks"]:
        assert sum(task["counts"].values()) == task["samples_total"] == 60
        assert len(task["samples"]["doc_id"]) == 60 and task["drill_metric"] == "exact_match/custom-extract"
        assert set(task["samples"]["candidate_score"]) <= {0.0, 1.0}
        assert task["samples"]["change"].count("regressed") == task["counts"]["regressed"]
    axes = [a["ref"] for a in model["radar"]]
    assert "mmlu_pro/exact_match/custom-extract" in axes and len(axes) >= 3
    assert all(a.startswith("mmlu_pro/") for a in axes), "subtasks get their own table, not radar axes"
    html = written["html"].read_text(encoding="utf-8")
    assert html.count('class="drill"') == 14
    markdown = written["markdown"].read_text(encoding="utf-8")
    assert "mmlu_pro/exact_match/custom-extract" in markdown


def test_docs_example_generator(shared_data: Path, repo_root: Path, tmp_path: Path) -> None:
    _generator(repo_root).main(["--shared-data", str(shared_data), "--out", str(tmp_path), "--limit", "40"])
    html = (tmp_path / "mmlu_pro_report.html").read_text(encoding="utf-8")
    markdown = (tmp_path / "mmlu_pro_report.md").read_text(encoding="utf-8")
    assert "[mmlu_pro_report.html](<mmlu_pro_report.html>)" in markdown
    data = json.loads(html.split('id="rlgate-data">')[1].split("</script>")[0])
    rows = [row for task in data["tasks"] for row in task["rows"]]
    assert 0 < len(rows) <= 14 * 3
    assert not any(row[6].startswith("The answer is (") for row in rows)  # real generated text only
    assert "40 per category" not in html and "3 per category" in html


def test_committed_docs_example_is_a_real_report(repo_root: Path) -> None:
    html = (repo_root / "docs/examples/mmlu_pro_report.html").read_text(encoding="utf-8")
    markdown = (repo_root / "docs/examples/mmlu_pro_report.md").read_text(encoding="utf-8")
    assert "Meta-Llama-3.1-8B-Instruct" in html and "12,032" in html
    assert "**RELEASE**" in markdown
    assert len(html.encode()) < 400_000


def test_committed_docs_example_opens_cleanly(repo_root: Path, tmp_path: Path) -> None:
    _require_browser()
    from tests.report.browser import visit

    seen = visit(repo_root / "docs/examples/mmlu_pro_report.html", tmp_path / "example.png", full_page=False)
    assert seen.title.startswith("RELEASE · ")
    assert seen.requests == [] and seen.violations == [] and seen.page_errors == [] and seen.dialogs == []
