"""The issue's two textbook failures, end to end: log file -> findings -> diagnosis -> gate -> decision."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from monitor_helpers import noisy, ramp

from rlgate.contract.models import DecisionPolicy, GateConfig, HardGate, MonitorSpec
from rlgate.engine.decision import decide
from rlgate.monitor.api import resolve_policy, run_monitor
from rlgate.monitor.gate import attach_monitor, monitor_gates
from rlgate.monitor.report import MonitorReport
from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult

N = 300


def _write_jsonl(path: Path, columns: dict[str, np.ndarray], val: dict[int, float], val_key: str) -> Path:
    import json

    with path.open("w", encoding="utf-8") as handle:
        for i in range(N):
            data = {k: float(v[i]) for k, v in columns.items()}
            if i in val:
                data[val_key] = val[i]
            handle.write(json.dumps({"step": i, "data": data}) + "\n")
    return path


def _candidate() -> RunResult:
    # per-sample results for all 100 documents (60 right): a gate without them is nodata, whatever the monitor says
    samples = [SampleRecord(doc_id=i, doc_hash=f"h{i}", scores={"flexible-extract": {"exact_match": float(i < 60)}})
               for i in range(100)]
    task = TaskResult(task="gsm8k", metrics={"flexible-extract": {"exact_match": 0.6}}, n_samples=100,
                      samples=samples)
    return RunResult(provenance=RunProvenance(source="synthetic"), tasks={"gsm8k": task})


def _decision(report: MonitorReport) -> str:
    config = GateConfig(hard=[HardGate(metric="gsm8k/exact_match/flexible-extract", min=0.1)])
    decision = decide(config, None, _candidate(), seed=0, contract_name="textbook",
                      extra_gates=monitor_gates(report, config.decision))
    return decision.decision


def test_case_1_reward_beyond_range_with_truncation_and_length_blowup_is_reward_domain_and_blocks(
        tmp_path: Path) -> None:
    """Reward +0.82 -> +3.84 beyond its range, truncation 0.8 % -> 82.5 %, length 4.1k -> 15.3k tokens,
    accuracy 29 % -> 8 %."""
    columns = {
        "critic/score/mean": noisy(ramp(0.82, 3.84, N), 0.05, seed=1),
        "response_length/clip_ratio": np.clip(noisy(ramp(0.008, 0.825, N), 0.01, seed=2), 0, 1),
        "response_length/mean": noisy(ramp(4100, 15300, N), 100, seed=3),
        "actor/entropy": noisy(np.full(N, 0.4), 0.01, seed=4),
        "critic/kl": np.abs(noisy(ramp(0.0, 0.08, N), 0.002, seed=5)),
    }
    accuracy = dict(zip(range(0, N, 30), np.linspace(0.29, 0.08, 10).tolist(), strict=True))
    log = _write_jsonl(tmp_path / "metrics.jsonl", columns, accuracy, "val-core/math/acc/mean@1")
    policy, name = resolve_policy(MonitorSpec(overrides={"reward_out_of_range": {"min": -1.0, "max": 3.0}}))
    report = run_monitor([log], policy=policy, policy_name=name)

    assert report.logs[0].format == "verl_jsonl"
    rules = {f.rule: f for f in report.findings}
    expected = {"reward_hacking", "reward_out_of_range", "length_blowup", "truncation_high", "truncation_rising"}
    assert expected <= set(rules)
    assert rules["reward_hacking"].severity == "critical"
    assert "declared range" in rules["reward_hacking"].message
    assert report.diagnosis is not None and report.diagnosis.domain == "reward"
    assert report.severity == "critical" and report.exit_code() == 1
    assert [g.effect for g in monitor_gates(report) if g.name == "monitor:reward_hacking"] == ["block"]
    assert _decision(report) == "block"
    # Plots mark the finding windows on the reward and held-out curves.
    reward_plot = next(p for p in report.plots if p.metric == "reward_mean")
    assert "<rect" in reward_plot.svg and "reward hacking" in reward_plot.svg


def test_case_2_training_reward_up_validation_below_start_is_data_domain(tmp_path: Path) -> None:
    """Training reward 0.008 -> 0.15 while validation accuracy ends at 0.038, below its start."""
    columns = {
        "critic/score/mean": np.clip(noisy(ramp(0.008, 0.15, N), 0.004, seed=7), 0, 1),
        "response_length/mean": noisy(np.full(N, 420.0), 8, seed=8),
        "response_length/clip_ratio": np.clip(noisy(np.full(N, 0.01), 0.002, seed=9), 0, 1),
    }
    accuracy = dict(zip(range(0, N, 30), [0.052, 0.06, 0.058, 0.055, 0.05, 0.047, 0.045, 0.043, 0.04, 0.038],
                        strict=True))
    log = _write_jsonl(tmp_path / "metrics.jsonl", columns, accuracy, "val/test_score/openai/gsm8k")
    report = run_monitor([log])

    assert [f.rule for f in report.findings if f.severity != "info"] == ["train_val_divergence"]
    finding = report.findings[0]
    assert finding.domain == "data" and finding.values["heldout_end"] == 0.038
    assert report.diagnosis is not None and report.diagnosis.domain == "data"
    assert report.exit_code() == 3
    assert _decision(report) == "research_only"


def test_policy_maps_monitor_severities_to_decisions(tmp_path: Path) -> None:
    columns = {"critic/score/mean": np.clip(noisy(ramp(0.008, 0.15, N), 0.004, seed=7), 0, 1)}
    accuracy = {0: 0.05, 150: 0.045, 290: 0.03}
    report = run_monitor([_write_jsonl(tmp_path / "m.jsonl", columns, accuracy, "val/test_score/x")])
    strict = DecisionPolicy(monitor_warning="block")
    assert {g.effect for g in monitor_gates(report, strict) if g.verdict == "fail"} == {"block"}


def test_attach_monitor_puts_the_report_json_into_decision_extensions(tmp_path: Path) -> None:
    # a reward mean alone (no range declared, no std) is judged by no rule: the entropy makes the log checked
    columns = {"critic/score/mean": np.clip(noisy(ramp(0.2, 0.6, N), 0.01), 0, 1),
               "actor/entropy": noisy(ramp(1.0, 0.9, N), 0.01, seed=3)}
    report = run_monitor([_write_jsonl(tmp_path / "m.jsonl", columns, {}, "val/test_score/x")])
    config = GateConfig(hard=[HardGate(metric="gsm8k/exact_match/flexible-extract", min=0.1)])
    decision = decide(config, None, _candidate(), seed=0, contract_name="t", extra_gates=monitor_gates(report))
    attached = attach_monitor(decision, report)
    section = attached.extensions["monitor"]
    assert section["schema_version"] == 1 and section["logs"][0]["format"] == "verl_jsonl"
    assert MonitorReport.model_validate(section) == report
    assert "monitor" not in decision.extensions  # the original is not modified
    assert decision.decision == "release"
    assert [g.name for g in decision.gates if g.kind == "monitor"] == ["monitor"]
