"""A judge primary gate whose judge significantly prefers the baseline is a primary_regression (block)."""

from __future__ import annotations

from rlgate.contract.models import DecisionPolicy, PrimaryGate
from rlgate.judge.gate import _verdict
from rlgate.judge.report import TaskJudgeReport, WinRate
from rlgate.stats.paired_tests import mcnemar_exact


def _task(wins: int, losses: int) -> TaskJudgeReport:
    n = wins + losses
    return TaskJudgeReport(task="chat", policy={}, win_rate=WinRate(
        wins=wins, losses=losses, ties=0, errors=0, tie_policy="half", n=n, successes=float(wins),
        win_rate=wins / n, ci=None, ci_level=0.95, p_value=mcnemar_exact(wins, losses),
        p_greater=mcnemar_exact(wins, losses, "greater"), p_less=mcnemar_exact(wins, losses, "less"),
        sign_test_n=n))


def _primary(wins: int, losses: int, **settings: float) -> tuple[str, str, str]:
    gate = PrimaryGate(metric="chat/judge_win_rate", **settings)  # type: ignore[arg-type]
    v = _verdict("primary", gate, _task(wins, losses), "chat/judge_win_rate", 0.05, DecisionPolicy())
    return v.verdict, v.outcome, v.effect


def test_judge_preferring_the_baseline_significantly_blocks() -> None:
    assert _primary(10, 30, min_delta=0.05) == ("fail", "primary_regression", "block")
    assert _primary(10, 30, min_delta=0.05, max_drop=0.3) == ("fail", "primary_fail", "research_only")
    assert _primary(18, 22, min_delta=0.05) == ("fail", "primary_fail", "research_only")  # not significant
    assert _primary(32, 8, min_delta=0.05) == ("pass", "pass", "release")
