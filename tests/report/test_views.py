"""Gate lines in words: thresholds read with the sign they have."""

from __future__ import annotations

from rlgate.engine.models import GateVerdict
from rlgate.report.views import gate_line


def _primary(min_delta: float) -> GateVerdict:
    return GateVerdict(name="p", kind="primary", metric="gsm8k/exact_match/flexible-extract", verdict="pass",
                       outcome="pass", effect="release", baseline=0.5, candidate=0.6, delta=0.1, n=60,
                       threshold={"min_delta": min_delta, "max_drop": 0.0}, reason="pass")


def test_min_delta_is_written_with_its_own_sign() -> None:
    assert "needs +2.0 pp" in gate_line(_primary(0.02))
    assert "needs -50.0 pp" in gate_line(_primary(-0.5))  # not "+-50.0 pp"
    assert "+-" not in gate_line(_primary(-0.5))


def test_subtask_table_shows_an_unbounded_metric_as_it_is_not_in_percent() -> None:
    from rlgate.engine.models import Decision
    from rlgate.report.model import MetricValue, ReportModel, TaskSection
    from rlgate.report.views import subtask_groups

    sections = [TaskSection(task=f"wmt_{pair}", suite_task="wmt", drill_metric="bleu/none", n_baseline=10,
                            n_candidate=10, metrics=[MetricValue(ref=f"wmt_{pair}/bleu/none", task=f"wmt_{pair}",
                                                                 metric="bleu", baseline=b, candidate=c,
                                                                 bounded=False)])
                for pair, b, c in (("de_en", 25.3, 27.1), ("fr_en", 30.0, 29.5))]
    model = ReportModel(generated_at="2026-01-01T00:00:00Z", rlgate_version="0", title="t", contract_name="c",
                        decision=Decision(decision="release", summary="s", gates=[], contract="c", alpha=0.05,
                                          seed=0),
                        tasks=sections)
    [group] = subtask_groups(model)
    assert group.rows[0][1:4] == ("25.3", "27.1", "+1.8")  # not "2530.0%" → "2710.0%"
