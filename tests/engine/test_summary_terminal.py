"""The terminal's decision view: a monitor finding shows what it measured, and the summary reads one clause per line."""

from __future__ import annotations

import gzip
from pathlib import Path

from rlgate.engine.summary import decision_table, summary_clauses
from rlgate.report.model import ReportModel

REAL = Path(__file__).resolve().parents[1] / "report" / "demo_models" / "real" / "report_model.json.gz"


def _real_decision():  # type: ignore[no-untyped-def]
    return ReportModel.model_validate_json(gzip.decompress(REAL.read_bytes())).decision


def test_clauses_cut_only_at_top_level_semicolons() -> None:
    text = "gate a fail (x; y (z; w)); gate b inconclusive [k; l] (m)"
    assert summary_clauses(text) == ["gate a fail (x; y (z; w))", "gate b inconclusive [k; l] (m)"]
    assert summary_clauses("all gates passed") == ["all gates passed"]


def test_real_demo_terminal_names_the_monitor_value_and_one_reason_per_line() -> None:
    table = decision_table(_real_decision())
    monitor = next(line for line in table.splitlines() if line.startswith("monitor"))
    assert "trunc_ratio 0.25 (steps 28–32)" in monitor and monitor.rstrip().endswith("FAIL")
    tail = table.split("decision: RESEARCH_ONLY\n", 1)[1].splitlines()
    assert len(tail) == 3 and all(line.startswith("  - ") for line in tail)
    assert tail[0].startswith("  - regression gate mmlu_pro/exact_match/custom-extract inconclusive")
    assert tail[2].startswith("  - monitor gate monitor:truncation_high fail")


def test_real_demo_summary_md_lists_one_reason_per_bullet_and_the_monitor_value() -> None:
    from rlgate.engine.summary import decision_markdown

    text = decision_markdown(_real_decision())
    head = text.split("\n\nContract", 1)[0].splitlines()
    assert head[2] == "research\\_only:" and [line[:2] for line in head[4:]] == ["- "] * 3
    assert "| trunc_ratio 0.25 (steps 28–32) |" in text
