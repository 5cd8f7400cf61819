"""Suite health, pure: which references vouch for a task, the band's direction, and unchecked anchor sets."""

from __future__ import annotations

from fixtures.synthetic_runs import make_run

from rlgate.contract.models import GateConfig, HardGate, RegressionGate, SuiteHealth
from rlgate.engine.health import suite_health


def _run(values: list[float], source: str, metric: str = "acc") -> object:
    return make_run({"t": {metric: values}}, source=source)


def test_a_reference_without_the_task_cannot_vouch_that_it_is_saturated() -> None:
    config = GateConfig(regression=[RegressionGate(metric="t/acc", max_drop=0.05)])
    aced = _run([1.0] * 50, "a")
    lacking = make_run({"other": {"acc": [1.0] * 50}}, source="b")
    report = suite_health(config, SuiteHealth(), {"a": aced, "b": lacking}, _run([0.6] * 50, "c"))
    assert report.findings == [] and report.tasks[0].references == {"a": 1.0, "b": None}
    report = suite_health(config, SuiteHealth(), {"a": aced, "b": _run([0.02] * 50, "b")}, _run([0.6] * 50, "c"))
    assert report.findings == []  # one at the ceiling, one at the floor: the task still separates them


def test_floor_warns_and_the_band_applies_to_higher_is_better_only() -> None:
    config = GateConfig(regression=[RegressionGate(metric="t/acc", max_drop=0.05)])
    low = _run([0.0] * 50, "a")
    report = suite_health(config, SuiteHealth(), {"a": low, "b": low}, _run([0.1] * 50, "c"))
    assert [(f.kind, f.severity) for f in report.findings] == [("cannot_discriminate", "warning"),
                                                              ("outside_band", "note")]
    assert "at or below 5.0 %" in report.findings[0].message
    lower = GateConfig(regression=[RegressionGate(metric="t/acc", max_drop=0.05, higher_is_better=False)])
    report = suite_health(lower, SuiteHealth(), {"a": _run([0.5] * 50, "a")}, _run([0.1] * 50, "c"))
    assert report.findings == []  # a rate that should be low is not "outside the band" when it is low


def test_hard_and_diagnostic_gates_are_not_read() -> None:
    config = GateConfig(hard=[HardGate(metric="t/acc", min=0.5)])
    report = suite_health(config, SuiteHealth(), {"a": _run([1.0] * 50, "a")}, _run([1.0] * 50, "c"))
    assert report.tasks == [] and report.findings == []
