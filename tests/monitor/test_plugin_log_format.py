"""A training-log format from another package, registered only through the `rlgate.plugins` entry point
(`log_format.<name>`), is detected by its own sniff and read by `rlgate monitor` with no code in rlgate."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.plugins import installed
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.cli.app import app
from rlgate.monitor.readers import FORMATS, LOG_FORMATS, detect_format, read_log

PLUGIN = '''
"""`#steps` logs: one `step <n> <key> <value> ...` line per logged step."""
from rlgate.monitor.readers import LogReader
from rlgate.monitor.series import SeriesBuilder


def sniff(probe):
    return not probe.is_dir and probe.text.startswith("#steps")


def read(path):
    builder = SeriesBuilder()
    for line in path.read_text().splitlines()[1:]:
        words = line.split()
        builder.add_many(int(words[1]), dict(zip(words[2::2], words[3::2])))
    return builder.build(path, "steps", [])


STEPS = LogReader("steps", sniff, read)
'''


@pytest.fixture
def steps_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with installed(tmp_path / "site", "rlgate_steps", PLUGIN, {"log_format.steps": "rlgate_steps:STEPS"},
                   monkeypatch, LOG_FORMATS):
        yield tmp_path


def _log(path: Path, rewards: list[float]) -> Path:
    path.write_text("#steps\n" + "".join(f"step {i} reward {r} kl 0.01\n" for i, r in enumerate(rewards)))
    return path


def test_the_entry_point_format_is_detected_and_read(steps_format: Path) -> None:
    assert "steps" not in FORMATS and "steps" in LOG_FORMATS.names()  # only through the entry point
    log_file = _log(steps_format / "run.log", [0.1 * i for i in range(30)])
    assert detect_format(log_file) == "steps"
    log = read_log(log_file)
    assert log.format == "steps" and log.metrics["reward_mean"].steps.tolist() == list(range(30))
    result = CliRunner().invoke(app, ["monitor", str(log_file), "--out", str(steps_format / "out")])
    assert result.exit_code in (0, 3), result.output
    assert f"{log_file}: steps, 30 logged steps" in result.output


def test_without_the_package_the_log_is_not_recognised(tmp_path: Path) -> None:
    assert "steps" not in LOG_FORMATS.names()
    with pytest.raises(InputError, match="cannot tell which trainer wrote this log"):
        detect_format(_log(tmp_path / "run.log", [0.1, 0.2]))
