"""The `rlgate.plugins` entry-point list is cached across processes, and the cache follows what is installed."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlgate import registry


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path holding one installed distribution with an rlgate plugin; the cache in tmp_path."""
    folder = tmp_path / "site"
    info = folder / "rlgate_cached-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rlgate-cached\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[rlgate.plugins]\nharness.cached = rlgate_cached:H\n")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv(registry.CACHE_ENV, str(tmp_path / "cache"))
    registry._group_points.cache_clear()
    yield folder
    monkeypatch.undo()
    registry._group_points.cache_clear()


def _points() -> set[registry.PluginPoint]:
    registry._group_points.cache_clear()
    return set(registry._group_points())


def test_the_list_is_read_once_and_then_served_from_the_cache(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry.PluginPoint("harness.cached", "rlgate_cached:H") in _points()
    assert len(list((site.parent / "cache").glob("*.json"))) == 1

    def no_metadata() -> tuple[registry.PluginPoint, ...]:
        raise AssertionError("the metadata was read again although nothing installed changed")

    monkeypatch.setattr(registry, "_read_points", no_metadata)
    assert registry.PluginPoint("harness.cached", "rlgate_cached:H") in _points()


def test_editing_installing_or_removing_a_package_reads_the_metadata_again(site: Path) -> None:
    assert registry.PluginPoint("harness.cached", "rlgate_cached:H") in _points()
    entry_points = site / "rlgate_cached-0.1.0.dist-info" / "entry_points.txt"
    entry_points.write_text("[rlgate.plugins]\nharness.cached = rlgate_cached:Other\n")
    stat = entry_points.stat()
    os.utime(entry_points, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a coarse clock
    assert registry.PluginPoint("harness.cached", "rlgate_cached:Other") in _points()
    other = site / "rlgate_more-0.1.0.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: rlgate-more\nVersion: 0.1.0\n")
    (other / "entry_points.txt").write_text("[rlgate.plugins]\nharness.more = rlgate_more:H\n")
    os.utime(site, ns=(site.stat().st_atime_ns, site.stat().st_mtime_ns + 2_000_000_000))
    assert registry.PluginPoint("harness.more", "rlgate_more:H") in _points()
    for file in other.iterdir():
        file.unlink()
    other.rmdir()
    os.utime(site, ns=(site.stat().st_atime_ns, site.stat().st_mtime_ns + 3_000_000_000))
    assert registry.PluginPoint("harness.more", "rlgate_more:H") not in _points()


def test_no_cache_when_turned_off_or_unwritable(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(registry.CACHE_ENV, "0")
    assert registry._cache_file() is None
    assert registry.PluginPoint("harness.cached", "rlgate_cached:H") in _points()
    blocked = site.parent / "blocked"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv(registry.CACHE_ENV, str(blocked))
    assert registry.PluginPoint("harness.cached", "rlgate_cached:H") in _points()
    assert blocked.read_text() == "a file where the cache folder would be"
    assert str(site) in sys.path


def test_an_unknown_name_lists_the_known_ones_under_their_plural() -> None:
    from rlgate._core.errors import InputError
    from rlgate.harness.registry import get_harness

    with pytest.raises(InputError) as caught:
        get_harness("lmeval")
    assert caught.value.fix is not None and caught.value.fix.startswith("known harnesses: ")
    assert "lm_eval" in caught.value.fix and "did you mean 'lm_eval'" in caught.value.message
