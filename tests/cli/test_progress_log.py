"""Progress in a log (stderr not a terminal): plain lines for a task's start, its tenths and its end."""

from __future__ import annotations

import pytest

from rlgate.cli.progress import RichProgress


def test_log_mode_prints_one_line_per_step(capsys: pytest.CaptureFixture[str]) -> None:
    with RichProgress() as progress:
        assert not progress.live
        progress.message("loading the model")
        progress.task_started("gsm8k", 20, 4)
        for _ in range(16):
            progress.advanced("gsm8k", 1)
        progress.task_finished("gsm8k")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "loading the model" and lines[1] == "gsm8k: 20 request(s), 4 cached"
    assert [line.split(" (")[0] for line in lines[2:-1]] == [f"gsm8k: {n}/20" for n in (6, 8, 10, 12, 14, 16, 18)]
    assert lines[-1].startswith("gsm8k: done, 20/20")
