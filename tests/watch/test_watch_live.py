"""Done-when: a real TRL GRPO run on CPU, gated live by `rlgate watch` in a second process, is paused.

The run is built to degrade (tests/watch/degrading_trainer.py: its reward pays for answers without digits, so
the training reward rises while the held dev metric, GSM8K answers lm-eval can parse, gets worse). The trainer
carries rlgate's TRL control callback and waits at each save for the watcher's verdict on that checkpoint, so
the test does not depend on which process is faster. The watcher gates each checkpoint on the dev split,
records the history, runs the cross-checkpoint rules; `safety_worse` on the hard parse-failure gate pauses the
run, the control file and the step's report say why, and the trainer's log shows it stopped at that step.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.watch.helpers import write_contract

REPO = Path(__file__).resolve().parents[2]
CLI = "import sys; from rlgate.cli.app import main; sys.argv[0] = 'rlgate'; sys.exit(main())"


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TQDM_DISABLE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    return env


def watcher(run: Path, contract: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", CLI, "watch", str(run), "--contract", str(contract), "--poll", "0.5", *extra]


@pytest.mark.slow
def test_a_degrading_grpo_run_is_paused_by_rlgate_watch_at_the_step_that_degraded(
        tmp_path: Path, tiny_checkpoint: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("lm_eval")
    contract = write_contract(tmp_path / "contract", tiny_checkpoint, documents=6,
                              extra="monitor:\n  overrides: {safety_worse: {tolerance: 0.2}}\n",
                              sequential="{looks: 2, min_samples: 3}")
    run = tmp_path / "run"
    run.mkdir()
    env = environment()
    started = time.monotonic()
    with open(tmp_path / "watch.log", "w") as watch_log, open(tmp_path / "trainer.log", "w") as train_log:
        watch = subprocess.Popen(watcher(run, contract, "--idle-timeout", "400"), stdout=watch_log,
                                 stderr=subprocess.STDOUT, env=env)
        trainer = subprocess.Popen([sys.executable, str(REPO / "tests" / "watch" / "degrading_trainer.py"),
                                    str(tiny_checkpoint), str(run), "--steps", "12", "--save-steps", "2",
                                    "--wait", "300", "--lr", "1e-3"], stdout=train_log, stderr=subprocess.STDOUT,
                                   env=env)
        try:
            trainer_rc = trainer.wait(timeout=600)
            watch_rc = watch.wait(timeout=120)
        finally:
            for proc in (trainer, watch):
                if proc.poll() is None:
                    proc.kill()
    trainer_out = (tmp_path / "trainer.log").read_text()
    watch_out = (tmp_path / "watch.log").read_text()
    print(f"took {time.monotonic() - started:.0f} s\n--- trainer\n{trainer_out[-3000:]}\n--- watcher\n{watch_out}")
    assert trainer_rc == 0 and watch_rc == 0
    assert "Traceback" not in watch_out
    control = json.loads((run / "rlgate" / "control.json").read_text())
    assert control["action"] == "pause", control
    step = control["step"]
    assert any("safety_worse" in r and "answer_parse_failure_rate" in r and "training reward rose" in r
               for r in control["reasons"]), control["reasons"]
    # the trainer stopped at the step whose gate paused it, and said why
    assert f"stopping training at step {step}:" in trainer_out and "safety_worse" in trainer_out
    assert f"trainer: finished at step {step}" in trainer_out
    assert not any(int(p.name.split("-")[1]) > step for p in run.glob("checkpoint-*"))
    report = json.loads((run / "rlgate" / f"step_{step}" / "watch.json").read_text())
    assert report["action"] == "pause" and report["reasons"] == control["reasons"]
    assert (run / "rlgate" / f"step_{step}" / "decision.json").is_file()
    assert "pause" in (run / "rlgate" / f"step_{step}" / "watch.md").read_text()
    state = json.loads((run / "rlgate" / "watch_state.json").read_text())
    assert [int(s) for s, r in state["steps"].items() if r["status"] == "gated"] == list(range(2, step + 1, 2))
    assert f"the run was told to pause at step {step}" in watch_out


def _wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_a_watcher_killed_with_sigkill_mid_evaluation_gates_every_checkpoint_once_after_restart(
        tmp_path: Path, tiny_checkpoint: Path) -> None:
    import shutil
    import signal

    from rlgate.store.history import SQLiteHistory

    pytest.importorskip("lm_eval")
    contract = write_contract(tmp_path / "contract", tiny_checkpoint, documents=4,
                              sequential="{looks: 1, min_samples: 4}")
    run = tmp_path / "run"
    for step in (1, 2):
        folder = run / f"checkpoint-{step}"
        shutil.copytree(tiny_checkpoint, folder)
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": [
            {"step": s, "reward": 0.1 * s, "loss": 0.0} for s in range(1, step + 1)]}))
    env = environment()
    state_file = run / "rlgate" / "watch_state.json"
    with open(tmp_path / "first.log", "w") as first_log:
        first = subprocess.Popen(watcher(run, contract, "--idle-timeout", "300"), stdout=first_log,
                                 stderr=subprocess.STDOUT, env=env)
        try:  # mid-evaluation: step 1 is started and its baseline run has begun
            _wait_for(lambda: (run / "rlgate" / "step_1" / "baseline").exists() or first.poll() is not None,
                      300, "the first evaluation to start")
            time.sleep(2.0)
            assert first.poll() is None, (tmp_path / "first.log").read_text()
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
        finally:
            if first.poll() is None:
                first.kill()
    assert json.loads(state_file.read_text())["steps"]["1"]["status"] == "started"
    second = subprocess.run(watcher(run, contract, "--once"), capture_output=True, text=True, env=env,
                            timeout=600)
    assert second.returncode == 0, second.stderr + second.stdout
    assert "Traceback" not in second.stderr
    steps = json.loads(state_file.read_text())["steps"]
    assert {s: r["status"] for s, r in steps.items()} == {"1": "gated", "2": "gated"}
    with SQLiteHistory(os.environ["RLGATE_HISTORY"]) as history:
        records = history.history("run")
    assert sorted((r.step, Path(r.checkpoint).name) for r in records) == [(1, "checkpoint-1"), (2, "checkpoint-2")]
    for step in (1, 2):
        assert (run / "rlgate" / f"step_{step}" / "watch.json").is_file()
    # and a third start gates nothing
    third = subprocess.run(watcher(run, contract, "--once"), capture_output=True, text=True, env=env, timeout=300)
    assert third.returncode == 0 and "gating step" not in third.stderr
    with SQLiteHistory(os.environ["RLGATE_HISTORY"]) as history:
        assert len(history.history("run")) == 2
