"""Naming a history location: its scheme, its printable (password-free) form, a `sqlite:///` URL's path.

Its own module so that the backends (rlgate.store.postgres) and the opener (rlgate.store.open) both read it
without importing each other.
"""

from __future__ import annotations

import re
from pathlib import Path

from rlgate._core.errors import InputError

SETTING = "RLGATE_HISTORY / monitor.history"
SCHEMES = ("sqlite", "postgresql", "postgres")
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def scheme_of(location: str | Path) -> str | None:
    """The URL scheme of a history location (None for a plain path)."""
    found = _SCHEME_RE.match(str(location))
    return found.group(1).lower() if found else None


def redact(location: str | Path) -> str:
    """The location with any password replaced by `***` (URL userinfo and `password=` query or keyword)."""
    text = str(location)
    text = re.sub(r"(://[^/@:\s]*:)[^@/\s]*@", r"\1***@", text)
    return re.sub(r"(?i)(password=)[^&\s]*", r"\1***", text)


def sqlite_path(url: str, setting: str = SETTING) -> Path:
    """`sqlite:///relative.db` or `sqlite:////absolute.db` (SQLAlchemy's convention) as a path."""
    rest = url.split("://", 1)[1]
    if not rest.startswith("/") or rest == "/":
        raise InputError(f"the SQLite history URL {url!r} has no file path", field=setting,
                         fix="write sqlite:///relative/history.sqlite or sqlite:////absolute/history.sqlite")
    return Path(rest[1:])
