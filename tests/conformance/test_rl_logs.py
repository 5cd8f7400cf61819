"""Training logs of the conformance corpus: real files trainers wrote, read to the numbers they logged.

One test per `rl_log` artifact of ../shared/data/conformance/MANIFEST.json (parametrized over the manifest,
so a new artifact without an expectation here fails rather than being skipped): the monitor's readers
read it to the artifact's `own_numbers`, or refuse it with one located problem naming the format and the
fix (restarted runs that re-log steps with other values are refused by default; `duplicate_steps: last`
then reads them to the numbers of the latest launch).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlgate._core.errors import MissingExtraError
from rlgate.monitor.api import run_monitor
from rlgate.monitor.duplicates import resolve
from rlgate.monitor.readers import read_log, tensorboard
from rlgate.monitor.series import Series, TrainingLog

REPO = Path(__file__).resolve().parents[2]


def _corpus() -> Path | None:
    env = os.environ.get("RLGATE_SHARED_DATA")
    folder = (Path(env) if env else REPO.parent / "shared" / "data") / "conformance"
    return folder if (folder / "MANIFEST.json").is_file() else None


CORPUS = _corpus()
ABSENT = ("the conformance corpus (../shared/data/conformance/MANIFEST.json) is absent from this checkout; point "
          "RLGATE_SHARED_DATA at a copy of the shared data to run it")
RL_LOGS: list[dict[str, Any]] = ([a for a in json.loads((CORPUS / "MANIFEST.json").read_text(encoding="utf-8"))
                                  if a["kind"] == "rl_log"] if CORPUS else [])


def _at(series: Series, step: int) -> float:
    hits = [float(v) for s, v in zip(series.steps.tolist(), series.values.tolist(), strict=True) if s == step]
    assert hits, f"{series.source_key} has no value at step {step}"
    return hits[0]


def _refused_by_default(path: Path, fmt: str, line: int | None) -> TrainingLog:
    """Read with the default policy: one located problem naming the format and the duplicate_steps fix;
    through the monitor it makes the report exit 2 (the gate's `error`). Returns the log under `last`."""
    log = resolve(read_log(path), "refuse")
    assert len(log.problems) == 1, [p.describe() for p in log.problems]
    problem = log.problems[0]
    assert problem.line == line and problem.file.startswith(str(path))  # a TensorBoard folder names the event file
    assert f"{fmt} log" in problem.message and "logged twice with different values" in problem.message
    assert problem.fix is not None and "duplicate_steps" in problem.fix and "'last'" in problem.fix
    assert run_monitor([path], plots=False).exit_code() == 2
    return resolve(read_log(path), "last")


def check_verl_gsm8k(root: Path, own: dict[str, Any]) -> None:
    log = read_log(root / "gsm8k_qwen2_7b_base")
    assert log.format == "tensorboard" and log.problems == [] and log.repeats == {}
    reward, val, entropy = log.metrics["reward_mean"], log.metrics["val_score/openai/gsm8k"], log.metrics["entropy"]
    assert reward.source_key == "critic/score/mean" and val.source_key == "val-core/openai/gsm8k/reward/mean@1"
    assert _at(val, 0) == own["val-core/openai/gsm8k/reward/mean@1 first (step 0)"]
    assert _at(val, 105) == own["val-core/openai/gsm8k/reward/mean@1 last (step 105)"]
    assert len(val) == own["val points"]
    assert _at(reward, 1) == own["critic/score/mean first (step 1)"]
    assert _at(reward, 105) == own["critic/score/mean last (step 105)"]
    assert len(reward) == own["training steps"]
    assert float(entropy.values[0]) == own["actor/entropy first"]
    assert float(entropy.values[-1]) == own["actor/entropy last"]
    assert len(log.metrics) + len(log.extra) == own["scalar tags"]
    report = run_monitor([root / "gsm8k_qwen2_7b_base"], plots=False)
    assert report.exit_code() == 0 and report.diagnosis is None  # a healthy run raises nothing serious


def check_verl_dapo_restarts(root: Path, own: dict[str, Any]) -> None:
    folder = root / "DAPO-Qwen2-7B-Test"
    assert len(tensorboard.event_files(folder)) == own["event files"]
    log = _refused_by_default(folder, "tensorboard", None)
    assert "tfevents" in resolve(read_log(folder)).problems[0].file  # the restart that re-logs step 1
    reward, val = log.metrics["reward_mean"], log.metrics["val_score/math_dapo"]
    assert _at(reward, 1) == own["longest file (…1007027.0) critic/score/mean first (step 1)"]
    assert _at(reward, 31) == own["longest file critic/score/mean last (step 31)"]
    assert _at(val, 0) == own["longest file val-core/math_dapo/acc/mean@32 first (step 0)"]
    assert _at(val, 30) == own["longest file val-core/math_dapo/acc/mean@32 last (step 30)"]
    assert _at(log.extra["val-aux/math_dapo/reward/mean@32"], 0) == \
        own["val-aux/math_dapo/reward/mean@32 step 0 (every restart)"]
    assert "kept the last logging" in log.warnings[-1]


def check_tinker_codeforces(root: Path, own: dict[str, Any]) -> None:
    path = root / "bash_codeforces" / "metrics.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == own["metrics.jsonl lines"]
    assert [json.loads(line)["step"] for line in lines] == own["metrics.jsonl steps"]
    log = _refused_by_default(path, "jsonl", 2)  # the second launch re-logs step 0
    assert _at(log.metrics["reward_mean"], 0) == own["metrics.jsonl env/all/reward/total (last line, step 0)"]
    assert log.metrics["reward_mean"].source_key == "env/all/reward/total"
    assert _at(log.extra["env/all/total_episodes"], 0) == own["metrics.jsonl env/all/total_episodes (last line)"]
    first = resolve(read_log(path), "first")
    assert _at(first.extra["env/all/total_episodes"], 0) == json.loads(lines[0])["env/all/total_episodes"]
    # The groups with all rewards equal (by_group all good + all bad) are the zero-variance groups, so the
    # zero_std rule runs on tinker-cookbook logs.
    record = json.loads(lines[-1])
    for chosen, row in ((log, record), (first, json.loads(lines[0]))):
        assert _at(chosen.metrics["zero_std_frac"], 0) == \
            row["env/all/by_group/frac_all_good"] + row["env/all/by_group/frac_all_bad"]
    rules = run_monitor([path], plots=False, duplicates="last").logs[0].rules
    assert {"zero_std", "entropy_collapse", "train_inference_mismatch"} <= {r.rule for r in rules if r.evaluated}


def check_tinker_rl_loop(root: Path, own: dict[str, Any]) -> None:
    path = root / "rl_loop_e.log" / "metrics.jsonl"
    log = read_log(path)
    assert log.problems == [] and log.repeats == {}
    reward = log.metrics["reward_mean"]
    assert reward.source_key == "reward/total" and len(reward) == own["metrics.jsonl rows"]
    assert own["steps"] == f"{reward.first_step}..{reward.last_step}"
    assert float(reward.values[0]) == own["reward/total first (step 0)"]
    assert float(reward.values[-1]) == own["reward/total last (step 57)"]
    assert float(reward.values.max()) == own["reward/total max"]
    assert {"grad_norm", "lr"} <= set(log.metrics)  # SkyRL's skyrl.ai/* keys
    report = run_monitor([path], plots=False)
    assert report.logs[0].checked and report.exit_code() == 0
    last = json.loads((path.parent / "checkpoints.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert own["checkpoints.jsonl last"] == f"{last['name']} (batch {last['batch']})"


def check_trl_kto(root: Path, own: dict[str, Any]) -> None:
    folder = root / "kto_anthropic_hh" / "checkpoint-1000"
    log = read_log(folder)
    assert log.format == "trl" and log.problems == [] and log.repeats == {}
    state = json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
    assert state["global_step"] == own["global_step"] and state["max_steps"] == own["max_steps"]
    assert len(state["log_history"]) == own["log_history entries"] == log.n_steps()
    assert state["log_history"][-1]["epoch"] == own["epoch last"]
    margins, loss = log.extra["rewards/margins"], log.extra["loss"]
    assert _at(margins, 1) == own["rewards/margins first (step 1)"]
    assert _at(margins, 1000) == own["rewards/margins last (step 1000)"]
    assert _at(log.extra["rewards/chosen"], 1000) == own["rewards/chosen last"]
    assert _at(log.extra["rewards/rejected"], 1000) == own["rewards/rejected last"]
    assert _at(loss, 1) == own["loss first"] and _at(loss, 1000) == own["loss last"]
    # KTO's implicit rewards are not an RL reward: never read as reward_mean, and not suggested as one.
    assert "reward_mean" not in log.metrics
    assert not any("reward_mean" in w for w in run_monitor([folder], plots=False).logs[0].warnings)


def check_wandb_offline(root: Path, own: dict[str, Any]) -> None:
    folder = root / "wandb" / "offline-run-20230413_033614-x199n1yz"
    try:
        log = read_log(folder)
    except MissingExtraError as error:
        pytest.skip(f"the W&B SDK's reader is not installed here: {error}")
    assert log.format == "wandb" and log.problems == [] and log.repeats == {}
    loss, lr = log.extra["loss"], log.metrics["lr"]
    assert log.n_steps() == own["history rows"]
    assert _at(loss, 0) == own["loss first (_step 0)"]
    assert float(lr.values[0]) == own["lr first"] and float(lr.values[-1]) == own["lr last"]
    # The summary record W&B keeps for the run holds the last logged loss at the last _step.
    assert loss.last_step == own[".wandb summary record _step"]
    assert float(loss.values[-1]) == own[".wandb summary record loss"]


CHECKS: dict[str, Callable[[Path, dict[str, Any]], None]] = {
    "rl_logs/verl_tb_gsm8k_qwen2_7b_base": check_verl_gsm8k,
    "rl_logs/verl_tb_dapo_qwen2_7b_restarts": check_verl_dapo_restarts,
    "rl_logs/tinker_cookbook_gptoss20b_bash_codeforces": check_tinker_codeforces,
    "rl_logs/tinker_rl_loop_qwen3_0.6b_skyrl": check_tinker_rl_loop,
    "rl_logs/trl_kto_anthropic_hh_trainer_state": check_trl_kto,
    "rl_logs/wandb_offline_coati_sft_gpt2_0.14.2": check_wandb_offline,
}


def _params() -> list[Any]:
    if not RL_LOGS:
        return [pytest.param(None, marks=pytest.mark.skip(reason=ABSENT), id="corpus-absent")]
    return [pytest.param(a, id=a["path"]) for a in RL_LOGS]


@pytest.mark.parametrize("artifact", _params())
def test_rl_log_reads_to_its_own_numbers(artifact: dict[str, Any]) -> None:
    check = CHECKS.get(artifact["path"])
    assert check is not None, f"no conformance check for {artifact['path']}: add one to CHECKS"
    assert CORPUS is not None
    check(CORPUS / artifact["path"], artifact["own_numbers"])
