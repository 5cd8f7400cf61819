"""A judge model that is the candidate itself (self-preference bias) is not evidence: on_bias decides."""

from __future__ import annotations

from pathlib import Path

from judge_contracts import run, sample, write_contract
from judge_helpers import QualityJudge

from rlgate.harness.vocabulary import load_contract
from rlgate.judge.api import judge_for_decision

STEPS = "  evaluation_steps: [Compare the two responses, Prefer the more correct one]\n"
HARD = "  hard:\n    - {metric: chat/judge_win_rate, min: 0.6}"


def _runs(model_args: object) -> tuple:
    # the better answer is the longer one on half the documents only: no length bias to trip over
    candidate = run("chat", [sample(d, "Q3 a careful answer" if d % 2 else "Q3 terse") for d in range(12)], "cand")
    baseline = run("chat", [sample(d, "Q1 short" if d % 2 else "Q1 a long rambling answer") for d in range(12)],
                   "base")
    candidate.provenance.model_args = model_args  # type: ignore[assignment]
    return candidate, baseline


def test_a_local_judge_that_is_the_candidate_checkpoint_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "ckpt").mkdir()
    judge = "judge:\n  type: llm\n  model: {path: ckpt}\n" + STEPS
    rc = load_contract(write_contract(tmp_path, judge, HARD))
    candidate, baseline = _runs({"pretrained": str(tmp_path / "ckpt" / "."), "dtype": "float32"})
    wired = judge_for_decision(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge())
    [verdict] = wired.extra_gates
    assert (verdict.verdict, verdict.effect) == ("error", "block")
    assert "the judge model is the candidate itself (checkpoint" in verdict.reason
    assert wired.report is not None and wired.report.tasks["chat"].trust is not None
    assert wired.report.tasks["chat"].trust.self_judging == f"checkpoint {tmp_path / 'ckpt' / '.'}"
    # on_bias: warn keeps the verdict and says so
    rc = load_contract(write_contract(tmp_path, judge + "  on_bias: warn\n", HARD))
    [kept] = judge_for_decision(rc, candidate, baseline, tmp_path / "run2", llm=QualityJudge()).extra_gates
    assert kept.verdict == "pass" and "WARNING: judge NOT TRUSTED: the judge model is the candidate" in kept.reason


def test_a_served_judge_that_is_the_served_candidate_fails_closed(tmp_path: Path) -> None:
    judge = "judge:\n  type: llm\n  model: {base_url: 'http://127.0.0.1:8000/v1/', model: policy}\n" + STEPS
    rc = load_contract(write_contract(tmp_path, judge, HARD))
    same = "model=policy,base_url=http://127.0.0.1:8000/v1/chat/completions,num_concurrent=4"
    candidate, baseline = _runs(same)
    [verdict] = judge_for_decision(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge()).extra_gates
    assert verdict.verdict == "error" and "served model policy at http://127.0.0.1:8000/v1" in verdict.reason
    for other in ("model=judge-70b,base_url=http://127.0.0.1:8000/v1/chat/completions",
                  "model=policy,base_url=http://127.0.0.1:8001/v1/completions", {"pretrained": "policy"}, None):
        candidate, baseline = _runs(other)
        [verdict] = judge_for_decision(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge()).extra_gates
        assert verdict.verdict == "pass", (other, verdict.reason)
