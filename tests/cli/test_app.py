"""The executable builds only the command it runs; usage, help and errors read as with the whole app."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app, app_for

runner = CliRunner()


def test_only_the_named_command() -> None:
    single = app_for(["gate", "contract.yaml", "--candidate", "run"])
    assert [info.callback.__name__ for info in single.registered_commands if info.callback] == ["gate"]
    assert app_for(["eval"]).registered_commands[0].name == "eval"
    assert len(app.registered_commands) == 13  # the app itself is left whole


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["gat"], ["contract.yaml", "gate"]])
def test_anything_else_gets_the_whole_app(args: list[str]) -> None:
    assert app_for(args) is app


@pytest.mark.parametrize("args", [["gate", "--help"], ["gate"], ["gate", "missing.yaml", "--candidate", "x"],
                                  ["gate", "c.yaml", "--candidate", "x", "--bogus"], ["schema", "--kind", "nope"],
                                  ["validate", "--help"]])
def test_same_output_and_exit_code(args: list[str]) -> None:
    whole = runner.invoke(app, args)
    single = runner.invoke(app_for(args), args)
    assert (single.exit_code, single.output) == (whole.exit_code, whole.output)
    assert whole.exit_code in (0, 2)
