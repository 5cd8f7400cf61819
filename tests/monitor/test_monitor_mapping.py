"""Key mapping (contract `monitor.metrics`, CLI `--map`), tinker-cookbook keys, and the new root-cause shapes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fixtures.diagnosis_cases import CASES
from monitor_helpers import findings_of, make_log, noisy, ramp
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.cli.app import app
from rlgate.harness.vocabulary import load_contract
from rlgate.monitor.mapping import apply_mapping, parse_map_options
from rlgate.monitor.readers import read_log
from rlgate.results.models import RunProvenance, RunResult

runner = CliRunner()
N = 120


def _tinker_log(path: Path) -> Path:
    """A tinker-cookbook-style metrics.jsonl: proxy reward reward/g 0.22 -> 0.74, true reward reward/f <= 0.016."""
    rng = np.random.default_rng(0)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(N):
            g = 0.22 + 0.52 * i / (N - 1) + rng.normal(0, 0.02)
            f = min(abs(0.008 + rng.normal(0, 0.004)), 0.016)
            handle.write(json.dumps({"step": i, "progress/batch": i, "progress/done_frac": i / N, "optim/lr": 4e-5,
                                     "reward/mean": (g + f) / 2, "reward/g": g, "reward/f": f,
                                     "policy/entropy": 0.6 - 0.001 * i, "time/total": 3.0}) + "\n")
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["monitor", *args])
    return result.exit_code, result.stdout, result.stderr


def test_tinker_cookbook_keys_are_recognised_without_mapping(tmp_path: Path) -> None:
    log = read_log(_tinker_log(tmp_path / "metrics.jsonl"))
    assert log.aliases == {"reward_mean": "reward/mean", "entropy": "policy/entropy", "lr": "optim/lr"}
    assert log.unknown_keys == ["reward/f", "reward/g"]  # progress/* and time/* are known bookkeeping
    env = make_log({"env/all/reward/total": ramp(0, 1, 10), "env/all/ac_tokens_per_turn": ramp(100, 200, 10),
                    "optim/kl_sample_train_v1": ramp(0, 0.01, 10), "test/env/all/reward/total": ramp(0, 1, 10)})
    assert set(env.metrics) == {"reward_mean", "len_mean", "mismatch_kl", "val_score/all"}


def test_cli_map_turns_a_silent_run_into_reward_hacking(tmp_path: Path) -> None:
    log = _tinker_log(tmp_path / "metrics.jsonl")
    code, out, _ = invoke(str(log), "--out", str(tmp_path / "o1"))
    assert code == 0 and "no failure signals" in out
    assert "not run: reward_hacking, train_val_divergence: needs val_score" in out
    code, out, err = invoke(str(log), "--out", str(tmp_path / "o2"), "--map", "reward_mean=reward/g",
                            "--map", "val_score/true=reward/f")
    assert code == 1, out + err
    assert "reward_mean<-reward/g" in out and "val_score/true<-reward/f" in out
    assert "CRITICAL reward_hacking [reward]" in out and "diagnosis: reward fault (reward_hacking)" in out
    report = json.loads((tmp_path / "o2" / "monitor.json").read_text())
    assert report["diagnosis"]["candidates"][0]["domain"] == "reward" and report["diagnosis"]["evidence"]


def test_map_errors_exit_2_with_a_fix(tmp_path: Path) -> None:
    log = _tinker_log(tmp_path / "metrics.jsonl")
    code, _, err = invoke(str(log), "--out", str(tmp_path / "o"), "--map", "reward_man=reward/g")
    assert code == 2 and "unknown canonical metric 'reward_man'" in err and "did you mean 'reward_mean'?" in err
    assert "Traceback" not in err
    code, _, err = invoke(str(log), "--out", str(tmp_path / "o"), "--map", "reward_mean=reward/h")
    assert code == 2 and f"{log}" in err and "mapped key 'reward/h' (for reward_mean) is not in this log" in err
    assert "did you mean 'reward/g'?" in err and "keys in this log:" in err and "reward/f" in err
    code, _, err = invoke(str(log), "--out", str(tmp_path / "o"), "--map", "reward_mean")
    assert code == 2 and "is not canonical=key" in err


def test_parse_and_apply_mapping() -> None:
    assert parse_map_options(["reward_mean = reward/g", "val_score/true=reward/f"]) == {
        "reward_mean": "reward/g", "val_score/true": "reward/f"}
    with pytest.raises(InputError, match="unknown canonical metric 'val_scor'") as raised:
        parse_map_options(["val_scor=x"])
    assert "val_score/<dataset>" in (raised.value.fix or "")
    log = make_log({"critic/score/mean": ramp(0, 1, 5), "my_reward": ramp(1, 2, 5), "actor/lr(1e-4)": np.ones(5)})
    mapped = apply_mapping(log, {"reward_mean": "my_reward", "kl_ref": "critic/score/mean"})
    assert mapped.aliases["reward_mean"] == "my_reward" and mapped.aliases["kl_ref"] == "critic/score/mean"
    assert mapped.metrics["lr"].values[0] == pytest.approx(1e-4)
    relabelled = apply_mapping(log, {"grad_norm": "actor/lr(1e-4)"})  # a mapping reads the raw, unscaled values
    assert relabelled.metrics["grad_norm"].values[0] == 1.0 and "lr" not in relabelled.metrics


CONTRACT = """schema_version: 1
name: mapped
baseline: {checkpoint: base-model}
splits: {dev: {visibility: iteration}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: gsm8k, split: dev}]}
gates:
  primary: {metric: gsm8k/exact_match/flexible-extract}
monitor:
  logs: [metrics.jsonl]
  metrics:
    METRICS
"""


def test_contract_mapping_drives_monitor_and_the_gate_path(tmp_path: Path) -> None:
    _tinker_log(tmp_path / "metrics.jsonl")
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT.replace("METRICS", "reward_mean: reward/g\n    val_score/true: reward/f"))
    code, out, err = invoke("--contract", str(contract), "--out", str(tmp_path / "out"))
    assert code == 1 and "CRITICAL reward_hacking [reward]" in out, out + err
    # gate and check build their monitor verdicts through the same call
    from rlgate.monitor.report import MonitorReport
    from rlgate.pipeline.sources import MonitorSource, SourceInput

    resolved = load_contract(contract)
    given = SourceInput(resolved, None, RunResult(provenance=RunProvenance(source="-")), tmp_path)
    contribution = MonitorSource().contribute(given)
    report = contribution.report
    assert isinstance(report, MonitorReport)
    assert report.diagnosis is not None and report.diagnosis.domain == "reward"
    assert [g.effect for g in contribution.verdicts if g.name == "monitor:reward_hacking"] == ["block"]


def test_contract_mapping_errors_name_the_line(tmp_path: Path) -> None:
    _tinker_log(tmp_path / "metrics.jsonl")
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT.replace("METRICS", "reward_mean: reward/g\n    entropi: policy/entropy"))
    code, _, err = invoke("--contract", str(contract), "--out", str(tmp_path / "out"))
    assert code == 2 and f"{contract}:13:5: monitor.metrics.entropi" in err and "did you mean 'entropy'?" in err
    contract.write_text(CONTRACT.replace("METRICS", "reward_mean: reward/x"))
    code, _, err = invoke("--contract", str(contract), "--out", str(tmp_path / "out"))
    assert code == 2 and "monitor.metrics.reward_mean" in err and "keys in this log:" in err


def test_reward_pinned_rule() -> None:
    reward = noisy(ramp(0.2, 0.5), 0.02)
    lo, hi = reward - 0.2, reward + 0.3
    reward[100:], lo[100:], hi[100:] = -1.0, -1.0, -1.0
    found = findings_of(make_log({"critic/score/mean": reward, "critic/score/min": lo, "critic/score/max": hi}),
                        rule="reward_pinned")
    assert len(found) == 1 and found[0].severity == "warning" and found[0].step_start == 100
    assert "pinned at exactly -1" in found[0].message and "still at the end" in found[0].message
    recovered = reward.copy()
    recovered[150:] = noisy(ramp(0.3, 0.4, 50), 0.02, seed=3)
    lo2, hi2 = lo.copy(), hi.copy()
    lo2[150:], hi2[150:] = recovered[150:] - 0.2, recovered[150:] + 0.2
    note = findings_of(make_log({"critic/score/mean": recovered, "critic/score/min": lo2, "critic/score/max": hi2}),
                       rule="reward_pinned")
    assert [f.severity for f in note] == ["info"]
    # With only the spread logged: std 0 and the mean unchanged step to step.
    std = np.abs(noisy(np.full(200, 0.3), 0.02))
    std[100:] = 0.0
    assert findings_of(make_log({"reward": reward, "reward_std": std}), rule="reward_pinned")
    # A healthy reward never pins; a pin at exactly 0 with a spread is reward_stuck's to report.
    assert findings_of(make_log({"reward": noisy(ramp(0.2, 0.5), 0.02), "reward_std": std + 0.1}),
                       rule="reward_pinned") == []
    zero = reward.copy()
    zero[100:] = 0.0
    assert findings_of(make_log({"reward": zero, "reward_std": std}), rule="reward_pinned") == []


def test_cli_names_max_response_length_for_the_truncation_shape(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == "configuration_truncation_limit")
    data = case.build()
    steps, val = data.pop("val-core/math/acc/mean@1")
    with (tmp_path / "m.jsonl").open("w") as handle:
        for i in range(200):
            row = {k: float(v[i]) for k, v in data.items()}
            if i in steps:
                row["val-core/math/acc/mean@1"] = float(val[list(steps).index(i)])
            handle.write(json.dumps({"step": i, "data": row}) + "\n")
    code, out, _ = invoke(str(tmp_path / "m.jsonl"), "--out", str(tmp_path / "o"))
    assert code == 3
    assert "diagnosis: configuration fault (truncation_high)" in out and "max_response_length" in out
    assert "explains length_reward_correlation" in out
