"""The compiled-template cache: reused between environments, never stale, keyed by settings, never fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate.report import template_cache
from rlgate.report.html import environment


def _finalize(value: object) -> object:
    return "<none>" if value is None else value


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(template_cache.ENV_VAR, str(folder))
    return folder


def test_compiled_templates_are_stored_and_reused(cache: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "x.j2").write_text("{{ a }}!")
    assert environment(tmp_path / "t").get_template("x.j2").render(a="<b>") == "&lt;b&gt;!"
    stored = sorted(cache.iterdir())
    assert len(stored) == 1
    compiled: list[str] = []
    monkeypatch.setattr("jinja2.Environment._compile", lambda *a: compiled.append("x"))  # must not be needed
    assert environment(tmp_path / "t").get_template("x.j2").render(a="<b>") == "&lt;b&gt;!"
    assert compiled == []


def test_an_edited_template_is_compiled_again(cache: Path, tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "x.j2").write_text("one {{ a }}")
    assert environment(tmp_path / "t").get_template("x.j2").render(a=1) == "one 1"
    (tmp_path / "t" / "x.j2").write_text("two {{ a }}")
    assert environment(tmp_path / "t").get_template("x.j2").render(a=1) == "two 1"


def test_settings_the_source_does_not_show_get_their_own_entry(cache: Path, tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "x.j2").write_text("{{ a }}")
    assert environment(tmp_path / "t").get_template("x.j2").render(a="<") == "&lt;"
    assert environment(tmp_path / "t", autoescape=False).get_template("x.j2").render(a="<") == "<"
    finalized = environment(tmp_path / "t", autoescape=False, finalize=_finalize)
    assert finalized.get_template("x.j2").render(a=None) == "<none>"
    assert environment(tmp_path / "t", autoescape=False).get_template("x.j2").render(a=None) == "None"
    assert len(list(cache.iterdir())) == 3


def test_an_unwritable_cache_only_costs_a_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(template_cache.ENV_VAR, str(blocker / "cache"))
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "x.j2").write_text("{{ a }}")
    assert environment(tmp_path / "t").get_template("x.j2").render(a=2) == "2"


def test_the_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(template_cache.ENV_VAR, "0")
    assert environment().bytecode_cache is None
