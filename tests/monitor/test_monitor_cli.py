"""`rlgate monitor`: output, monitor.json, exit codes by severity, contract settings and history."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from monitor_helpers import healthy_rows, write_verl_jsonl
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.monitor.rules import RULES
from rlgate.store.history import CheckpointHistory

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["monitor", *args])
    return result.exit_code, result.stdout, result.stderr


def test_healthy_log_exits_0_and_writes_monitor_json(tmp_path: Path) -> None:
    log = write_verl_jsonl(tmp_path / "m.jsonl", healthy_rows(120))
    code, out, _ = invoke(str(log), "--out", str(tmp_path / "out"))
    assert code == 0, out
    assert "verl_jsonl, 120 logged steps" in out and "reward_mean<-critic/score/mean" in out
    assert "other keys kept: timing_s/step" in out
    data = json.loads((tmp_path / "out" / "monitor.json").read_text())
    assert data["schema_version"] == 1 and data["severity"] in (None, "info")


def test_warning_exits_3_and_critical_exits_1(tmp_path: Path) -> None:
    rows = healthy_rows(120)
    for i, row in enumerate(rows):
        row["response_length/clip_ratio"] = 0.3
        row["response_length/mean"] = 300.0 + i
    code, out, _ = invoke(str(write_verl_jsonl(tmp_path / "w.jsonl", rows)), "--out", str(tmp_path / "o1"))
    assert code == 3 and "WARNING  truncation_high [configuration]" in out
    rows[60]["actor/grad_norm"] = float("nan")
    code, out, _ = invoke(str(write_verl_jsonl(tmp_path / "c.jsonl", rows)), "--out", str(tmp_path / "o2"))
    assert code == 1 and "CRITICAL non_finite [infrastructure] steps 61-61" in out
    assert "diagnosis: infrastructure fault (non_finite)" in out


def test_truncated_log_exits_2_names_the_line_and_keeps_the_work(tmp_path: Path) -> None:
    log = write_verl_jsonl(tmp_path / "m.jsonl", healthy_rows(60))
    with log.open("a") as handle:
        handle.write('{"step": 61, "data": {"critic/sco')
    code, out, err = invoke(str(log), "--out", str(tmp_path / "out"))
    assert code == 2
    assert f"error: {log}:61:" in err and "truncated JSON line" in err
    assert "60 logged steps" in out
    assert json.loads((tmp_path / "out" / "monitor.json").read_text())["logs"][0]["problems"][0]["line"] == 61


def test_a_log_nothing_could_be_checked_in_exits_2_not_healthy(tmp_path: Path) -> None:
    log = tmp_path / "trainer_state.json"
    log.write_text(json.dumps({"log_history": [{"step": i, "rewards/acc/mean": 0.5} for i in range(1, 30)]}))
    code, out, err = invoke(str(log), "--out", str(tmp_path / "out"))
    assert code == 2, out
    assert "1 log(s) could not be checked at all" in out and "\nno failure signals\n" not in out
    assert f"error: {log}: nothing could be checked" in err and "--map" in err


def test_bad_input_exits_2_without_traceback(tmp_path: Path) -> None:
    code, _, err = invoke(str(tmp_path / "nope.log"), "--out", str(tmp_path / "out"))
    assert code == 2 and "log not found" in err and "Traceback" not in err
    code, _, err = invoke("--out", str(tmp_path / "out"))
    assert code == 2 and "no training logs given" in err


def test_contract_monitor_section_sets_logs_overrides_and_history(tmp_path: Path) -> None:
    rows = healthy_rows(120)
    for row in rows:
        row["critic/score/mean"] *= 2.0  # up to ~1.4: outside the declared [0, 1]
    write_verl_jsonl(tmp_path / "metrics.jsonl", rows)
    db = CheckpointHistory(tmp_path / "history.sqlite")
    db.record("run-1", 100, "ckpt-100", {"gsm8k/answer_parse_failure_rate/flexible-extract": 0.01}, "release")
    db.record("run-1", 200, "ckpt-200", {"gsm8k/answer_parse_failure_rate/flexible-extract": 0.04}, "release")
    contract = tmp_path / "contract.yaml"
    contract.write_text("""schema_version: 1
name: monitored
baseline: {checkpoint: base-model}
splits: {dev: {visibility: iteration}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: gsm8k, split: dev}]}
gates:
  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.0}
  hard: [{metric: gsm8k/answer_parse_failure_rate, max: 0.05}]
monitor:
  logs: [metrics.jsonl]
  overrides: {reward_out_of_range: {min: 0.0, max: 1.0}}
  training_run: run-1
  history: history.sqlite
""")
    code, out, err = invoke("--contract", str(contract), "--out", str(tmp_path / "out"))
    assert code == 1, out + err
    assert "CRITICAL reward_out_of_range [reward]" in out
    assert "CRITICAL safety_worse [algorithm] steps 100-200 -> pause_manual_review" in out
    report = json.loads((tmp_path / "out" / "monitor.json").read_text())
    assert report["training_run"] == "run-1" and report["policy"].endswith("+ contract overrides")
    assert np.isclose(report["findings"][0]["threshold"]["max"], 1.0)


def test_misspelled_override_in_the_contract_names_its_line(tmp_path: Path) -> None:
    write_verl_jsonl(tmp_path / "metrics.jsonl", healthy_rows(20))
    contract = tmp_path / "contract.yaml"
    contract.write_text("""schema_version: 1
name: monitored
baseline: {checkpoint: base-model}
splits: {dev: {visibility: iteration}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: gsm8k, split: dev}]}
gates:
  primary: {metric: gsm8k/exact_match/flexible-extract}
monitor:
  logs: [metrics.jsonl]
  overrides:
    truncation_high:
      maximum: 0.2
""")
    code, _, err = invoke("--contract", str(contract), "--out", str(tmp_path / "out"))
    assert code == 2
    assert f"{contract}:13:7: monitor.overrides.truncation_high.maximum" in err and "did you mean 'max'?" in err


def _history_only_contract(tmp_path: Path, monitor: str) -> Path:
    contract = tmp_path / "contract.yaml"
    contract.write_text(f"""schema_version: 1
name: history_only
baseline: {{checkpoint: base-model}}
splits: {{dev: {{visibility: iteration}}}}
suites:
  - {{schema_version: 1, name: s, tasks: [{{task: gsm8k, split: dev}}]}}
gates:
  primary: {{metric: gsm8k/exact_match/flexible-extract, min_delta: 0.0}}
  hard: [{{metric: gsm8k/answer_parse_failure_rate, max: 0.05}}]
{monitor}""")
    return contract


def test_contract_with_a_training_run_but_no_logs_checks_the_history(tmp_path: Path) -> None:
    db = CheckpointHistory(tmp_path / "history.sqlite")
    db.record("run-1", 100, "ckpt-100", {"gsm8k/answer_parse_failure_rate/flexible-extract": 0.01}, "release")
    db.record("run-1", 200, "ckpt-200", {"gsm8k/answer_parse_failure_rate/flexible-extract": 0.04}, "release")
    contract = _history_only_contract(tmp_path, "monitor: {training_run: run-1, history: history.sqlite}\n")
    code, out, err = invoke("--contract", str(contract), "--out", str(tmp_path / "out"))
    assert code == 1, out + err
    assert f"no training logs: {len(RULES)} log rules not run (no training logs given (monitor.logs is not set))" in out
    assert "history of training run 'run-1': 2 gated checkpoint(s)" in out
    assert "CRITICAL safety_worse [algorithm] steps 100-200 -> pause_manual_review" in out
    report = json.loads((tmp_path / "out" / "monitor.json").read_text())
    assert report["logs"] == [] and len(report["rules_not_run"]) == len(RULES) and report["history_checkpoints"] == 2


def test_contract_without_logs_or_training_run_names_both_settings(tmp_path: Path) -> None:
    contract = _history_only_contract(tmp_path, "monitor: {format: auto}\n")
    code, out, err = invoke("--contract", str(contract), "--out", str(tmp_path / "out"))
    assert code == 2 and "no training logs given" in err and "monitor.training_run" in err, out + err
    assert "Traceback" not in out + err


def test_out_that_is_a_file_exits_2_and_leaves_it_alone(tmp_path: Path) -> None:
    log = write_verl_jsonl(tmp_path / "m.jsonl", healthy_rows(20))
    before = log.read_bytes()
    code, out, err = invoke(str(log), "--out", str(log))
    assert code == 2, out + err
    assert f"{log}: --out: is a file" in err and "fix:" in err and "Traceback" not in out + err
    assert log.read_bytes() == before


def test_a_log_of_many_corrupt_lines_prints_a_few_and_keeps_all_in_monitor_json(tmp_path: Path) -> None:
    log = write_verl_jsonl(tmp_path / "m.jsonl", healthy_rows(30))
    with log.open("a") as handle:
        handle.writelines(f"garbage line {i}\n" for i in range(500))
    code, _, err = invoke(str(log), "--out", str(tmp_path / "out"))
    assert code == 2
    assert f"error: {log}:31:" in err and err.count("error: ") <= 11 and err.count("\n") <= 25
    assert "and 490 more problems in this log" in err and str(tmp_path / "out" / "monitor.json") in err
    assert len(json.loads((tmp_path / "out" / "monitor.json").read_text())["logs"][0]["problems"]) == 500
