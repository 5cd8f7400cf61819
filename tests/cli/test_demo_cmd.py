"""`rlgate demo` refuses an unusable --out before generating or training anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize("which", [[], ["--agent"], ["--vlm"], ["--real"], ["--capability"]])
def test_an_out_that_is_a_file_exits_2_before_any_work(tmp_path: Path, which: list[str]) -> None:
    taken = tmp_path / "taken"
    taken.write_text("keep me", encoding="utf-8")
    result = runner.invoke(app, ["demo", *which, "--out", str(taken / "demo")])
    assert result.exit_code == 2, result.output
    assert f"{taken}: --out: is a file" in result.output and "fix:" in result.output
    assert "Traceback" not in result.output and taken.read_text(encoding="utf-8") == "keep me"
