"""Where the history lives, and opening it: a file path, a `sqlite:///` URL or (with the `postgres` extra)
a `postgresql://` URL, from the contract's `monitor.history`, else `$RLGATE_HISTORY`, else the project's
`.rlgate/history.sqlite`.

Opening never tests a path for existence to decide whether there is a history: a new store starts empty.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from rlgate._core.errors import InputError
from rlgate.store.location import SCHEMES, SETTING, redact, scheme_of, sqlite_path
from rlgate.store.protocol import HistoryStore

if TYPE_CHECKING:
    from rlgate.contract.loader import ResolvedContract


def history_url(resolved: ResolvedContract | None = None) -> str:
    """The history location for a contract: `monitor.history` (paths relative to the contract), else
    `$RLGATE_HISTORY`, else `.rlgate/history.sqlite` in the contract's project."""
    from rlgate.store.history import default_history_path

    spec = resolved.contract.monitor if resolved is not None else None
    if resolved is not None and spec is not None and spec.history:
        scheme = scheme_of(spec.history)
        if scheme is None:
            return str(resolved.resolve_path(spec.history))
        if scheme == "sqlite" and not sqlite_path(spec.history).is_absolute():
            return str(resolved.resolve_path(str(sqlite_path(spec.history))))
        return spec.history
    override = os.environ.get("RLGATE_HISTORY")
    if override:
        return override
    return str(default_history_path(resolved.path if resolved is not None else None))


def open_history(location: str | Path, setting: str = SETTING) -> HistoryStore:
    """The store at a path or URL. Unknown schemes are bad input naming `setting` (where the location came
    from: the environment and contract by default, a command-line flag when given) and the fix."""
    from rlgate.store.history import SQLiteHistory

    text = str(location)
    scheme = scheme_of(text)
    if scheme is None:
        return SQLiteHistory(Path(text))
    if scheme == "sqlite":
        return SQLiteHistory(sqlite_path(text, setting))
    if scheme in ("postgresql", "postgres"):
        from rlgate.store.postgres import PostgresHistory

        return PostgresHistory(text)
    raise InputError(f"the history location {redact(text)!r} has the unknown scheme '{scheme}://'",
                     field=setting,
                     fix="use a file path, sqlite:///relative/path.sqlite, sqlite:////absolute/path.sqlite or "
                     "postgresql://user:password@host:5432/database (pip install 'rl-release-gate[postgres]')")


def open_contract_history(resolved: ResolvedContract | None = None) -> HistoryStore:
    """`open_history(history_url(resolved))`."""
    return open_history(history_url(resolved))


def describe(location: str | Path) -> str:
    """A printable description: the redacted location and its backend."""
    scheme = scheme_of(location)
    kind = "PostgreSQL" if scheme in ("postgresql", "postgres") else "SQLite"
    return f"{redact(location)} ({kind})"


__all__ = ["SCHEMES", "SETTING", "describe", "history_url", "open_contract_history", "open_history", "redact",
           "scheme_of", "sqlite_path"]
