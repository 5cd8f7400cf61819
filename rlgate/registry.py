"""One generic registry: names -> lazily imported entries, plus plugins from the `rlgate.plugins` entry points.

Naming an entry imports nothing (`"module:attr"` strings are imported on first use), so `import rlgate`
stays light. A third-party package adds an entry without code in rlgate by declaring, in its
packaging metadata::

    [project.entry-points."rlgate.plugins"]
    "harness.mine" = "my_package.harness:MyHarness"

(`<kind>.<name>`; the kind is the registry's, e.g. `harness`). Entry points are listed on first
lookup and imported only when their entry is used; an entry registered in code wins over a plugin of
the same name.

Listing them scans every installed distribution's metadata (~30-100 ms with the extras installed, on every
`rlgate gate`: the badcase classifiers ask for plugins). The list is kept under
$XDG_CACHE_HOME/rlgate/plugins (`RLGATE_PLUGIN_CACHE=0` turns that off, any other value is the folder),
keyed by the import path and the modification times of its folders and of every distribution's
`entry_points.txt`, so installing, removing or editing a package reads the metadata again.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

from rlgate._core.errors import InputError

T = TypeVar("T")
PLUGIN_GROUP = "rlgate.plugins"
Target = str | Callable[[], object]


#: RLGATE_PLUGIN_CACHE=0 turns the cache of the entry-point list off; any other value is the folder to use
CACHE_ENV = "RLGATE_PLUGIN_CACHE"


class PluginPoint(NamedTuple):
    """One `rlgate.plugins` entry point: `<kind>.<name>` and its `module:attr`."""

    name: str
    value: str


def _cache_file() -> Path | None:
    chosen = os.environ.get(CACHE_ENV)
    if chosen == "0":
        return None
    base = Path(chosen) if chosen else \
        Path(os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")) / "rlgate" / "plugins"
    stamps: list[object] = [sys.version, sys.prefix]
    for entry in sys.path:
        folder = entry or os.getcwd()
        try:
            stamps.append((folder, os.stat(folder).st_mtime_ns))
            with os.scandir(folder) as found:
                infos = sorted(e.name for e in found if e.name.endswith((".dist-info", ".egg-info")))
        except OSError:
            stamps.append((folder, None))
            continue
        for name in infos:
            with contextlib.suppress(OSError):
                stamps.append((name, os.stat(os.path.join(folder, name, "entry_points.txt")).st_mtime_ns))
    return base / (hashlib.sha256(repr(stamps).encode()).hexdigest()[:32] + ".json")


def _read_points() -> tuple[PluginPoint, ...]:
    from importlib import metadata

    return tuple(PluginPoint(point.name, point.value) for point in metadata.entry_points(group=PLUGIN_GROUP))


@functools.cache
def _group_points() -> tuple[PluginPoint, ...]:
    """The `rlgate.plugins` entry points of every installed package, read once per process for all registries
    (from the cache when nothing installed changed since it was written)."""
    cache = _cache_file()
    if cache is not None:
        with contextlib.suppress(OSError, ValueError, TypeError):
            return tuple(PluginPoint(str(name), str(value)) for name, value in json.loads(cache.read_text("utf-8")))
    points = _read_points()
    if cache is not None:
        with contextlib.suppress(OSError):  # read-only home, full disk: read the metadata again next time
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f".{cache.name}.{os.getpid()}")
            tmp.write_text(json.dumps([list(point) for point in points]), encoding="utf-8")
            os.replace(tmp, cache)
    return points


@functools.cache
def resolve(target: str) -> object:
    """The object `"module:attr"` names, imported (once) and not called."""
    module_name, _, attr = target.partition(":")
    found: object = importlib.import_module(module_name)
    for part in attr.split(".") if attr else []:
        found = getattr(found, part)
    return found


def load_target(target: Target) -> object:
    """The object a target names: `"module:attr"` imported, then called when it is a class or factory."""
    found = resolve(target) if isinstance(target, str) else target
    return found() if callable(found) else found


class Registry(Generic[T]):
    """Named entries of one kind (harnesses, ...): built-in, registered in code, or from installed plugins."""

    def __init__(self, kind: str, builtins: dict[str, Target], *, field: str | None = None) -> None:
        self.kind = kind
        self.field = field or kind
        self.entries: dict[str, Target] = dict(builtins)
        self._builtins = frozenset(builtins)
        self._plugins: dict[str, Target] | None = None

    def register(self, name: str, target: Target) -> None:
        """Add (or replace) an entry: a `"module:attr"` string or a zero-argument factory / class."""
        self.entries[name] = target

    def unregister(self, name: str, *, keep: str | None = None) -> None:
        """Remove an entry added in code (`keep` names one that must stay)."""
        if name != keep:
            self.entries.pop(name, None)

    def plugins(self) -> dict[str, Target]:
        """Entries declared by installed packages in the `rlgate.plugins` group (read once, imported on use)."""
        if self._plugins is None:
            prefix = self.kind + "."
            self._plugins = {point.name[len(prefix):]: point.value
                             for point in _group_points() if point.name.startswith(prefix)}
        return self._plugins

    def refresh(self) -> None:
        """Read the entry points again (after installing a package in a running process, e.g. in tests)."""
        _group_points.cache_clear()
        resolve.cache_clear()
        self._plugins = None

    def names(self) -> list[str]:
        """Every known name: built-in and registered entries first, then plugins."""
        return list(dict.fromkeys([*self.entries, *self.plugins()]))

    def lazy_names(self) -> Iterator[str]:
        """`names()` one at a time, the plugins read only once the entries registered in code are used up
        (reading the installed packages' metadata costs ~0.1 s, which a search that stops early never pays)."""
        yield from list(self.entries)
        yield from (name for name in self.plugins() if name not in self.entries)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.entries or name in self.plugins())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        """The entry `name`, built on each call; an unknown name is an InputError listing the known ones."""
        target = self.entries.get(name)
        if target is None:
            target = self.plugins().get(name)
        if target is None:
            known = sorted(self.names())
            close = difflib.get_close_matches(name, known, n=1)
            raise InputError(f"unknown {self.kind} '{name}'" + (f" (did you mean '{close[0]}'?)" if close else ""),
                             field=self.field, fix=f"known {_plural(self.kind)}: {', '.join(known)}")
        found: T = load_target(target)  # type: ignore[assignment]
        return found


def _plural(kind: str) -> str:
    """harness -> harnesses, log_format -> log_formats (the registries' kinds are English nouns)."""
    return f"{kind}es" if kind.endswith(("s", "x", "sh", "ch")) else f"{kind}s"
