"""The trend model built from history records, and its page: intervals on the value axis, series order,
findings as step markers, hostile names escaped, nothing but the page's own style allowed."""

from __future__ import annotations

import pytest

from rlgate.report.svg import nice_ticks, trend_chart
from rlgate.report.trend import TrendMarker, TrendReport, trend_run, trend_series
from rlgate.report.trend_html import render_trend_html
from rlgate.store.records import CheckpointRecord

PRIMARY = "gsm8k/exact_match/flexible-extract"
HARD = "gsm8k/answer_parse_failure_rate/flexible-extract"


def _record(step: int, value: float, decision: str, *, checkpoint: str | None = None,
            deciding: list[str] | None = None) -> CheckpointRecord:
    gates = {PRIMARY: {"kind": "primary", "verdict": "pass" if decision == "release" else "fail",
                       "ci": [value - 0.55, value - 0.45], "on": "delta", "baseline": 0.5, "ci_level": 0.95},
             HARD: {"kind": "hard", "verdict": "pass", "ci": [0.0, 0.02], "on": "value", "baseline": None,
                    "ci_level": 0.95}}
    return CheckpointRecord(run="r", checkpoint=checkpoint or f"ckpt-{step}", step=step, decision=decision,
                            metrics={PRIMARY: value, HARD: 0.01, "train/reward_mean": step / 1000},
                            extra={"gates": gates, "deciding_gates": deciding or []}, recorded_at=1.7e9 + step)


def test_series_put_intervals_on_the_value_axis_and_gated_metrics_first() -> None:
    records = [_record(200, 0.6, "release"), _record(100, 0.4, "research_only", deciding=["gsm8k/exact_match"])]
    series = trend_series(records)
    assert [s.metric for s in series] == [PRIMARY, HARD, "train/reward_mean"]
    primary, hard, reward = series
    assert [p.step for p in primary.points] == [100, 200]  # by step, whatever the stored order
    first = primary.points[0]
    # the paired interval of the change (-0.15, -0.05) drawn around the baseline's value 0.5
    assert (first.low, first.high) == pytest.approx((0.35, 0.45)) and first.baseline == 0.5
    assert first.deciding and not primary.points[1].deciding  # named by the gate's short name
    assert primary.interval_on == "baseline + change" and primary.bounded and primary.higher_is_better
    assert hard.interval_on == "value" and (hard.points[0].low, hard.points[0].high) == (0.0, 0.02)
    assert not hard.higher_is_better
    assert reward.kind is None and reward.interval_on == "none" and reward.points[0].verdict is None


def test_run_keeps_checkpoints_in_step_order_and_names_the_primary() -> None:
    run = trend_run("r", [_record(300, 0.5, "block"), _record(100, 0.7, "release")], best="ckpt-100")
    assert run.steps == [100, 300] and run.primary == PRIMARY and run.best == "ckpt-100"


def test_nice_ticks() -> None:
    assert nice_ticks(0.0, 1.0) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert nice_ticks(13.0, 87.0) == [20.0, 40.0, 60.0, 80.0]
    assert nice_ticks(1.0, 1.0) == [1.0]


def test_chart_marks_findings_in_their_step_window() -> None:
    run = trend_run("r", [_record(s, v, d) for s, v, d in ((100, 0.6, "release"), (200, 0.4, "research_only"),
                                                           (300, 0.3, "block"))])
    marker = TrendMarker(rule="primary_below_best", severity="warning", message="below best", step_start=200,
                         step_end=300, metrics=[PRIMARY])
    nowhere = TrendMarker(rule="consult_budget", severity="critical", message="no window")
    svg = str(trend_chart(run.series[0], run.steps, [marker, nowhere]))
    assert svg.count('class="marker"') == 1 and "⚑ primary_below_best" in svg and "consult_budget" not in svg
    assert 'fill-opacity="0.14"' in svg  # full strength on the metric it is about
    assert 'fill-opacity="0.06"' in str(trend_chart(run.series[1], run.steps, [marker]))  # faint elsewhere
    assert [d for d in ("release", "research_only", "block") if f'data-decision="{d}"' in svg] == [
        "release", "research_only", "block"]


def test_page_escapes_names_and_runs_nothing() -> None:
    hostile = "<img src=x onerror=alert(1)>"
    run = trend_run(f"run {hostile}", [_record(100, 0.6, "release", checkpoint=f"ck{hostile}"),
                                       _record(200, 0.4, "block")],
                    markers=[TrendMarker(rule="primary_below_best", severity="warning", message=hostile,
                                         step_start=200, step_end=200, action="pause")], best=f"ck{hostile}")
    html = render_trend_html(TrendReport(history=f"/h/{hostile}.sqlite", contract=hostile, runs=[run]))
    assert hostile not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script" not in html and "script-src" not in html and "default-src &#39;none&#39;" in html
    assert html.count('class="point"') == 2 * 3  # three series, two checkpoints each
    assert "→ <b>pause</b>" in html and 'class="checkpoints"' in html


def test_empty_history_says_how_checkpoints_get_there() -> None:
    html = render_trend_html(TrendReport(history="h.sqlite", runs=[]))
    assert 'id="empty"' in html and "monitor.training_run" in html


def test_a_training_reward_is_not_drawn_in_percent() -> None:
    """`train/reward_mean` parses like a fraction; a reward of 0.2 is not 20 % and 1.33 is not 133 %."""
    records = [_record(100, 0.4, "release"), _record(200, 0.6, "release")]
    assert not next(s for s in trend_series(records) if s.metric == "train/reward_mean").bounded
    for record in records:
        record.metrics[HARD] = 1.5  # a name rlgate takes for a fraction, with values outside [0, 1]
    assert not next(s for s in trend_series(records) if s.metric == HARD).bounded
