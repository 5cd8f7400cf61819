"""Real public training logs (../shared/data/training_logs): parsed completely, no serious finding.

Healthy verl PPO (Qwen2.5-0.5B, gemma-2-2b) and TRL GRPO (Llama-3.1-8B) runs on GSM8K. The only
findings allowed are the informational notes each justified below.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.real_data import require_by_reference

from rlgate.monitor.api import run_monitor
from rlgate.monitor.readers import read_log

#: rule -> why a note is justified on a healthy run.
JUSTIFIED_NOTES = {
    "kl_above_target": "KL drifts past verl's adaptive-controller target 0.1 under a fixed coefficient 0.001",
    "entropy_collapse": "entropy falls to ~12 % of its start as the policy sharpens, but stays above the floor",
    "grad_norm_explosion": "one early gradient-norm spike (step 16) that settles at once",
    "kl_spike": "one isolated KL spike in a tiny-batch GRPO run",
}

CASES = [
    ("verl_gsm8k/Qwen2.5-0.5B-bsz256_2-prompt1024-resp512-0.567.log", "verl_console", 435, (0, 434)),
    ("verl_gsm8k/gemma-2-2b-it-ppo-bsz512_4-prompt1024-resp-512-0.640.log", "verl_console", 106, (0, 105)),
    ("trl_grpo/unsloth_llama31_8b_gsm8k/trainer_state.json", "trl", 250, (1, 250)),
]


@pytest.mark.parametrize(("relative", "fmt", "steps", "span"), CASES)
def test_real_log_parses_completely(shared_data: Path, relative: str, fmt: str, steps: int,
                                    span: tuple[int, int]) -> None:
    log = read_log(require_by_reference(shared_data / "training_logs" / relative))
    assert log.format == fmt
    assert log.problems == []
    assert log.n_steps() == steps and log.step_range() == span
    assert {"reward_mean", "kl_ref", "len_mean", "grad_norm", "lr"} <= set(log.metrics)
    for series in log.metrics.values():
        assert series.steps.size > 0


def test_verl_validation_curve_is_complete(shared_data: Path) -> None:
    log = read_log(require_by_reference(shared_data / "training_logs" / CASES[0][0]))
    val = log.val_scores()["openai/gsm8k"]
    # Initial validation (step 0), every 10 steps from step 9, and the final validation at the last step.
    assert val.steps[0] == 0 and val.values[0] == pytest.approx(0.000762, abs=1e-5)
    assert val.steps[-1] == 434 and val.values[-1] == pytest.approx(0.5686, abs=1e-4)
    assert len(val) == 45
    assert log.get("entropy").source_key == "actor/entropy_loss"


@pytest.mark.parametrize(("relative", "fmt", "steps", "span"), CASES)
def test_real_healthy_runs_raise_no_serious_finding(shared_data: Path, relative: str, fmt: str, steps: int,
                                                    span: tuple[int, int]) -> None:
    report = run_monitor([require_by_reference(shared_data / "training_logs" / relative)])
    assert [f for f in report.findings if f.severity != "info"] == []
    assert {f.rule for f in report.findings} <= set(JUSTIFIED_NOTES)
    assert report.exit_code() == 0 and report.diagnosis is None
