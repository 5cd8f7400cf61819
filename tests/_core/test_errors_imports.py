"""An optional package that is installed but fails to import is reported as what it is, never as missing."""

from __future__ import annotations

import sys
import types

import pytest

from rlgate._core.errors import MissingExtraError, install_hint


def test_a_missing_package_is_not_installed_with_the_install_line() -> None:
    try:
        import rlgate_no_such_package  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        error = MissingExtraError.for_extra("the thing", "hf", "rlgate_no_such_package")
    assert "which is not installed" in error.message
    assert error.fix == install_hint("hf") and "rl-release-gate[hf]" in error.fix and "-e '.[hf]'" in error.fix


def test_a_name_missing_inside_an_installed_package_names_package_version_name_and_range(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """transformers 5.24 lost transformers.integrations.ggml.GGUF_TO_FAST_CONVERTERS: that is what is said."""
    import rlgate._core.errors as errors

    fake = types.ModuleType("yaml.fake_submodule")
    monkeypatch.setitem(sys.modules, "yaml.fake_submodule", fake)
    monkeypatch.setattr(errors, "supported_range", lambda dist: ">=6.0,<7" if dist.lower() == "pyyaml" else None)
    try:
        from yaml.fake_submodule import GGUF_TO_FAST_CONVERTERS  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        error = MissingExtraError.for_extra("a GGUF checkpoint", "hf", "yaml")
    assert "not installed" not in error.message
    from importlib import metadata

    version = metadata.version("PyYAML")
    assert f"PyYAML {version} is installed but does not work with rlgate" in error.message
    assert "GGUF_TO_FAST_CONVERTERS" in error.message and "rlgate supports PyYAML>=6.0,<7" in error.message
    assert error.fix is not None and error.fix.startswith("pip install 'PyYAML>=6.0,<7'")


def test_the_supported_range_comes_from_the_installed_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    import rlgate._core.errors as errors

    monkeypatch.setattr(metadata, "requires", lambda name: ['transformers<5.18,>=4.45; extra == "hf"', "rich>=13"]
                        if name == errors.DISTRIBUTION else None)
    assert errors.supported_range("transformers") == "<5.18,>=4.45"
    assert errors.supported_range("rich") == ">=13" and errors.supported_range("torch") is None
