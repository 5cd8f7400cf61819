"""Judge gates fail closed like the contract's other gates: a run that answered too few documents
(min_coverage) is nodata, and items no one decided are named, not silently dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from judge_contracts import run, sample, write_contract
from judge_helpers import QualityJudge

from rlgate.engine.decision import decide
from rlgate.harness.vocabulary import load_contract
from rlgate.judge.api import judge_for_decision

JUDGE = ("judge:\n  type: llm\n  model: {base_url: 'http://127.0.0.1:9/v1', model: j}\n  samples: 2\n"
         "  evaluation_steps: [Compare the two responses, Prefer the more correct one]\n")
HARD = "  hard:\n    - {metric: chat/judge_win_rate, min: 0.6}"


def _runs(n_cand: int, n: int = 12) -> tuple:
    cand = [sample(d, "Q3 a careful answer") for d in range(n_cand)]
    base = [sample(d, "Q1 short") for d in range(n)]
    candidate, baseline = run("chat", cand, "cand"), run("chat", base, "base")
    candidate.tasks["chat"].n_samples = n  # the harness evaluated n documents; the samples file holds fewer
    return candidate, baseline


def test_a_killed_candidate_run_is_nodata_not_judged_on_the_documents_it_reached(tmp_path: Path) -> None:
    rc = load_contract(write_contract(tmp_path, JUDGE, HARD))
    candidate, baseline = _runs(3)
    wired = judge_for_decision(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge())
    [verdict] = wired.extra_gates
    assert (verdict.verdict, verdict.outcome, verdict.effect) == ("nodata", "nodata", "block")
    assert "answered 3 of 12 documents of chat" in verdict.reason and "min_coverage" in verdict.reason
    decision = decide(wired.gates, baseline, candidate, seed=0, contract_name=rc.name, extra_gates=wired.extra_gates)
    assert decision.decision == "block"


def test_min_coverage_of_the_contract_lets_a_short_run_through(tmp_path: Path) -> None:
    rc = load_contract(write_contract(tmp_path, JUDGE, "  min_coverage: 0.5\n" + HARD))
    candidate, baseline = _runs(9)
    [verdict] = judge_for_decision(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge()).extra_gates
    assert verdict.verdict == "pass" and verdict.candidate == pytest.approx(1.0)
    assert verdict.details["coverage"] == {"candidate": "9/12"}
    assert "coverage candidate 9/12 documents" in verdict.reason


def test_a_killed_baseline_run_is_nodata_too(tmp_path: Path) -> None:
    """The win rate compares both runs' answers: the baseline's coverage counts even for a hard gate."""
    rc = load_contract(write_contract(tmp_path, JUDGE, HARD))
    candidate, baseline = _runs(12)
    baseline.tasks["chat"].samples = baseline.tasks["chat"].samples[:4]
    [verdict] = judge_for_decision(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge()).extra_gates
    assert verdict.verdict == "nodata" and "the baseline run answered 4 of 12 documents of chat" in verdict.reason


def test_items_the_rule_could_not_decide_are_named_in_the_verdict(tmp_path: Path) -> None:
    rule = "judge:\n  type: rule\n  rule_metric: exact_match/flexible-extract\n"
    rc = load_contract(write_contract(tmp_path, rule, "  hard:\n    - {metric: chat/judge_win_rate, min: 0.5}"))
    cand = [sample(0, "42", score=1.0), sample(1, "7", score=1.0),
            sample(2, "rambling", score=0.0, filtered="[invalid]"), sample(3, "more rambling", score=0.0,
                                                                          filtered="[invalid]")]
    base = [sample(d, "1", score=0.0) for d in range(4)]
    [verdict] = judge_for_decision(rc, run("chat", cand), run("chat", base), tmp_path / "run").extra_gates
    assert verdict.n == 2 and "2 of 4 documents undecided by the rule, not counted" in verdict.reason
