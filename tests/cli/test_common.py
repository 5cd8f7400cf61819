"""The CLI's shared plumbing: pydantic plugins stay off while a command runs, unless the user chose otherwise."""

from __future__ import annotations

import os

import pytest

from rlgate.cli.common import pydantic_plugins_off


def test_plugins_off_inside_and_the_variable_gone_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    with pydantic_plugins_off():
        # pydantic's documented switch (its plugin list itself is only reachable through a private module)
        assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ  # nothing started later inherits it


def test_restored_after_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    with pytest.raises(ValueError), pydantic_plugins_off():
        raise ValueError("boom")
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ


@pytest.mark.parametrize("chosen", ["", "logfire"])
def test_the_users_choice_is_kept(monkeypatch: pytest.MonkeyPatch, chosen: str) -> None:
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", chosen)
    with pydantic_plugins_off():
        assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == chosen
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == chosen
