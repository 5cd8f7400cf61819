"""No log can drive a monitor reader into a traceback by size or nesting: too deep, too long or too wide
input is a problem naming its file and line (exit 2 for `rlgate monitor`), and the rest is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.cli.app import app
from rlgate.monitor.readers import _bounds, _records, read_log

runner = CliRunner()
DEEP = "[" * 100_000 + "]" * 100_000


def _lines(*rows: str) -> str:
    return "".join(row + "\n" for row in rows)


def test_a_json_line_nested_100000_deep_is_a_located_problem(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text(_lines('{"step": 1, "reward": 0.1}', '{"step": 2, "x": ' + DEEP + "}",
                           '{"step": 3, "reward": 0.3}'))
    log = read_log(path)
    assert [(p.line, p.message) for p in log.problems] == [(2, _bounds.TOO_DEEP)]
    assert log.get("reward_mean") is not None and log.get("reward_mean").steps.tolist() == [1, 3]
    result = runner.invoke(app, ["monitor", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{path}:2:" in result.output


def test_a_deep_verl_record_and_a_deep_trainer_state_entry_are_located(tmp_path: Path) -> None:
    verl = tmp_path / "verl.jsonl"
    verl.write_text(_lines('{"step": 1, "data": {"critic/score/mean": 0.1}}', '{"step": 2, "data": ' + DEEP + "}"))
    assert [p.line for p in read_log(verl).problems] == [2]
    state = tmp_path / "trainer_state.json"
    state.write_text('{"log_history": [\n{"step": 1, "reward": 0.1},\n{"step": 2, "x": ' + DEEP + "}]}")
    log = read_log(state)
    assert [(p.line, "log_history entry 2" in p.message) for p in log.problems] == [(3, True)]
    assert log.get("reward_mean") is not None


def test_a_csv_cell_over_the_csv_limit_ends_the_read_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("step,reward_mean\n1,0.1\n2," + "9" * (_bounds.CSV_FIELD_LIMIT + 10) + "\n3,0.3\n")
    log = read_log(path)
    assert len(log.problems) == 1 and log.problems[0].line == 3 and "KiB" in log.problems[0].message
    assert log.get("reward_mean") is not None and log.get("reward_mean").steps.tolist() == [1]


def test_an_overlong_line_is_skipped_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bounds, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(_records, "BLOCK_BYTES", 1024)
    path = tmp_path / "metrics.jsonl"
    path.write_text(_lines('{"step": 1, "reward": 0.1}', '{"step": 2, "note": "' + "x" * 10_000 + '"}',
                           '{"step": 3, "reward": 0.3}'))
    log = read_log(path)
    assert [(p.line, p.message) for p in log.problems] == [(2, _bounds.too_long())]
    assert log.get("reward_mean").steps.tolist() == [1, 3]
    console = tmp_path / "console.log"
    console.write_text(_lines("step:1 - critic/score/mean:0.1", "step:2 - critic/score/mean:" + "1" * 10_000,
                              "step:3 - critic/score/mean:0.3", "a model print " + "y" * 10_000))
    log = read_log(console, "verl_console")
    assert [p.line for p in log.problems] == [2]  # the long print is output, not a metrics line
    assert log.get("reward_mean").steps.tolist() == [1, 3]


def _record(depth: int, width: int, length: int) -> str:
    nested = '{"k": ' * depth + "0.5" + "}" * depth  # written as text: json.dumps itself cannot nest this deep
    fields = json.dumps({f"key{i}": float(i) for i in range(width)})[1:-1]
    return '{"step": 1, "reward": 0.2, "deep": ' + nested + ', "text": "' + "x" * length + '"' + \
        (", " + fields if fields else "") + "}"


SHAPES = st.tuples(st.integers(0, 3000), st.integers(0, 2000), st.integers(0, 300_000))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=SHAPES, fmt=st.sampled_from(["jsonl", "verl_jsonl", "openrlhf", "trl", "csv", "wandb_csv",
                                          "verl_console", "tensorboard", "auto"]))
def test_every_reader_survives_deep_long_and_wide_input(tmp_path: Path, shape: tuple[int, int, int],
                                                        fmt: str) -> None:
    depth, width, length = shape
    record = _record(depth, width, length)
    body = {
        "verl_jsonl": lambda: _lines('{"step": 0, "data": {"critic/score/mean": 0.1}}',
                                     '{"step": 1, "data": ' + record + "}"),
        "trl": lambda: '{"log_history": [' + record + "]}",
        "csv": lambda: "step," + ",".join(f"c{i}" for i in range(width)) + ",text\n1," + ",".join(
            "0.5" for _ in range(width)) + "," + "x" * length + "\n",
        "verl_console": lambda: "step:1 - " + " - ".join(f"k{i}:{i}" for i in range(width)) + " - t:" + "[" * depth
        + "x" * length + "\n",
    }.get(fmt.replace("wandb_", ""), lambda: _lines(record, "[" * depth + "]" * depth))()
    path = tmp_path / ("events.out.tfevents.x" if fmt == "tensorboard" else
                       "trainer_state.json" if fmt == "trl" else "log.csv" if "csv" in fmt else "log.jsonl")
    path.write_text(body, encoding="utf-8")
    try:
        log = read_log(path, fmt)
    except InputError as error:  # refused as a whole: one located message, never a traceback
        assert error.file is not None
        return
    for problem in log.problems:
        assert problem.file and (problem.line is not None or problem.record is not None or fmt == "tensorboard")
