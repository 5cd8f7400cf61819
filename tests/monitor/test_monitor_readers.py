"""Readers: every format into the canonical model, autodetection, and damaged files kept partially."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from monitor_helpers import healthy_rows, write_verl_jsonl

from rlgate._core.errors import InputError
from rlgate.monitor.readers import detect_format, read_log
from rlgate.monitor.series import LogReadError


def _tb_write(folder: Path, steps: int, tensor_tags: tuple[str, ...] = ()) -> Path:
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(folder))
    for step in range(steps):
        values = [summary_pb2.Summary.Value(tag="train/reward", simple_value=0.1 + step * 0.01),
                  summary_pb2.Summary.Value(tag="train/completions/mean_length", simple_value=200.0)]
        for tag in tensor_tags:
            tensor = tensor_pb2.TensorProto(dtype=2, tensor_shape=tensor_shape_pb2.TensorShapeProto(),
                                            double_val=[step * 0.001])
            meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
                plugin_name="scalars"))
            values.append(summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=meta))
        writer.add_event(event_pb2.Event(step=step, wall_time=1.0 + step, summary=summary_pb2.Summary(value=values)))
    writer.close()
    return next(folder.glob("events.out.tfevents.*"))


def test_verl_jsonl_maps_aliases_and_keeps_unknown_keys(tmp_path: Path) -> None:
    path = write_verl_jsonl(tmp_path / "m.jsonl", healthy_rows(50))
    log = read_log(path)
    assert log.format == "verl_jsonl" and not log.problems
    assert log.aliases["reward_mean"] == "critic/score/mean"
    assert log.aliases["trunc_ratio"] == "response_length/clip_ratio"
    assert log.get("reward_mean").steps.tolist() == list(range(1, 51))
    assert log.unknown_keys == ["timing_s/step"]


def test_verl_jsonl_corrupt_line_is_named_and_the_rest_is_kept(tmp_path: Path) -> None:
    path = write_verl_jsonl(tmp_path / "m.jsonl", healthy_rows(30))
    lines = path.read_text().splitlines(keepends=True)
    lines[9] = '{"step": 10, "data": {"critic/score/mean": 0.5,,}\n'
    path.write_text("".join(lines) + '{"step": 31, "data": {"critic/sc')
    log = read_log(path)
    assert [(p.line, "corrupt" in p.message or "truncated" in p.message) for p in log.problems] == [(10, True),
                                                                                                    (31, True)]
    assert "truncated" in log.problems[1].message
    assert len(log.get("reward_mean")) == 29  # every readable line, before and after the damage
    with pytest.raises(LogReadError) as raised:
        log.raise_for_problems()
    assert raised.value.line == 10 and raised.value.partial is log
    assert str(raised.value).startswith(f"{path}:10:")


def test_verl_console_reads_real_style_lines_with_ansi_and_noise(tmp_path: Path) -> None:
    text = (
        "\x1b[36m(main_task pid=1)\x1b[0m {'actor': {'clip_ratio': 0.2}}\n"
        "\x1b[36m(main_task pid=1)\x1b[0m \"Initial validation metrics: {'test_score/openai/gsm8k': 0.05}\"\n"
        "\x1b[36m(main_task pid=1)\x1b[0m step:0 - critic/kl:-0.000 - actor/entropy_loss:0.526 - "
        "actor/lr(1e-4):0.010 - critic/score/mean:0.012 - response_length/mean:313.8\n"
        "\x1b[36m(main_task pid=1)\x1b[0m Let's start with the first step:\n"
        "\x1b[2m\x1b[36m(main_task pid=1)\x1b[0m step:1 - critic/kl:0.001 - val/test_score/openai/gsm8k:0.08 - "
        "actor/entropy_loss:np.float64(0.5) - critic/score/mean:0.02 - response_length/mean:300.0\n"
        "\x1b[36m(main_task pid=1)\x1b[0m \"Final validation metrics: {'test_score/openai/gsm8k': 0.3}\"\n"
    )
    path = tmp_path / "run.log"
    path.write_text(text)
    assert detect_format(path) == "verl_console"
    log = read_log(path)
    assert not log.problems
    assert log.get("entropy").values.tolist() == [0.526, 0.5]
    assert log.get("lr").values[0] == pytest.approx(1e-6)  # actor/lr(1e-4) is logged x 1e4
    # Initial validation lands on step 0; the final print falls on the last step (1), where the step line's own
    # value (0.08) was already logged and wins.
    val = log.val_scores()["openai/gsm8k"]
    assert (val.steps.tolist(), val.values.tolist()) == ([0, 1], [0.05, 0.08])


def test_verl_console_truncated_last_line_keeps_earlier_pairs(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    path.write_text("step:0 - critic/score/mean:0.1 - actor/entropy:0.5\n"
                    "step:1 - critic/score/mean:0.2 - actor/entropy:0.4 - response_len")
    log = read_log(path)
    [problem] = log.problems
    assert problem.line == 2 and "truncated" in problem.message and problem.column is not None
    assert log.get("reward_mean").values.tolist() == [0.1, 0.2]


def test_trl_trainer_state_and_truncated_file(tmp_path: Path) -> None:
    history = [{"step": i, "reward": 0.1 * i, "reward_std": 0.5, "kl": 0.01, "completions/mean_length": 100.0,
                "completion_length": 90.0, "eval_reward": 0.3, "epoch": 0.1} for i in range(1, 21)]
    path = tmp_path / "trainer_state.json"
    text = json.dumps({"global_step": 20, "log_history": history}, indent=2)
    path.write_text(text)
    log = read_log(tmp_path)  # a checkpoint folder works too
    assert log.format == "trl" and not log.problems
    assert log.aliases["len_mean"] == "completions/mean_length"  # preferred over the older name
    assert "completion_length" in log.extra
    assert "val_score/reward" in log.metrics
    cut = text[: text.index('"step": 15')]
    path.write_text(cut)
    partial = read_log(path)
    assert len(partial.get("reward_mean")) == 14
    [problem] = partial.problems
    assert problem.line is not None and "entry 15" in problem.message


def test_tensorboard_simple_values_and_tensor_scalars(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    file = _tb_write(tmp_path, 30, tensor_tags=("train/kl",))
    assert detect_format(tmp_path) == "tensorboard" and detect_format(file) == "tensorboard"
    log = read_log(tmp_path)
    assert not log.problems
    assert log.aliases == {"reward_mean": "train/reward", "len_mean": "train/completions/mean_length",
                           "kl_ref": "train/kl"}
    assert log.get("kl_ref").values[-1] == pytest.approx(0.029)
    assert len(log.get("reward_mean")) == 30


def test_tensorboard_truncated_file_reports_record_and_keeps_the_rest(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    file = _tb_write(tmp_path, 40)
    data = file.read_bytes()
    file.write_bytes(data[:-30])
    log = read_log(file)
    [problem] = log.problems
    assert problem.record == 41 and "truncated or corrupt record" in problem.message  # record 1 is the header
    assert len(log.get("reward_mean")) == 39


def test_openrlhf_jsonl_train_and_eval_keys(tmp_path: Path) -> None:
    path = tmp_path / "openrlhf.jsonl"
    rows = [{"train/global_step": i, "train/reward": 0.1 * i, "train/kl": 0.01, "train/response_length": 300,
             "train/truncated": 0.01, "train/policy_loss": 0.1} for i in range(1, 11)]
    rows.append({"eval/global_step": 10, "eval/gsm8k_pass1": 0.4})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert detect_format(path) == "openrlhf"
    log = read_log(path)
    assert set(log.metrics) == {"reward_mean", "kl_ref", "len_mean", "trunc_ratio", "val_score/gsm8k_pass1"}
    assert log.unknown_keys == ["train/policy_loss"]


def test_generic_csv_and_jsonl(tmp_path: Path) -> None:
    csv_path = tmp_path / "log.csv"
    csv_path.write_text("step,reward_mean,entropy,note\n1,0.1,0.5,\n2,0.2,,\n3,oops,0.4,\n4,0.4,0.3,\n")
    log = read_log(csv_path)
    assert log.format == "csv"
    assert log.get("reward_mean").values.tolist() == [0.1, 0.2, 0.4]
    assert log.get("entropy").steps.tolist() == [1, 3, 4]
    [problem] = log.problems
    assert (problem.line, problem.column) == (4, 2)
    jsonl = tmp_path / "log.jsonl"
    jsonl.write_text('{"step": 1, "kl": 0.1, "mystery": 3}\n{"step": 2, "kl": "nan", "mystery": 4}\n')
    log2 = read_log(jsonl)
    assert log2.format == "jsonl" and np.isnan(log2.get("kl_ref").values[1])
    assert log2.unknown_keys == ["mystery"]


def test_duplicate_steps_keep_the_last_value(tmp_path: Path) -> None:
    path = tmp_path / "resumed.jsonl"
    path.write_text("\n".join(json.dumps({"step": s, "data": {"critic/score/mean": v}})
                              for s, v in [(1, 0.1), (2, 0.2), (3, 0.3), (2, 0.25), (3, 0.35), (4, 0.4)]) + "\n")
    series = read_log(path).get("reward_mean")
    assert series.steps.tolist() == [1, 2, 3, 4] and series.values.tolist() == [0.1, 0.25, 0.35, 0.4]


def test_bad_inputs_raise_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="log not found"):
        read_log(tmp_path / "missing.log")
    empty = tmp_path / "empty.log"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_log(empty)
    prose = tmp_path / "notes.txt"
    prose.write_text("nothing to see here\n")
    with pytest.raises(InputError, match="cannot tell") as raised:
        read_log(prose)
    assert "--format" in (raised.value.fix or "")
    with pytest.raises(InputError, match="unknown log format"):
        read_log(prose, "comet")
