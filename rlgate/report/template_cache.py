"""Compiled report templates kept between runs (jinja2's bytecode cache), so a gate does not recompile them.

Compiling the report templates costs about as much as reading a 2,000-question pair; the compiled code is
kept under $XDG_CACHE_HOME/rlgate/templates (else ~/.cache/...). jinja2 checks each entry against the
template's source, so an edited template (or a user's override) is compiled afresh. The key also carries what
the source does not: the environment's settings (autoescape, finalize) and the jinja2 version. A cache that
cannot be written is skipped: the templates are then compiled each time, as without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket, FileSystemBytecodeCache

#: RLGATE_TEMPLATE_CACHE=0 turns the cache off; any other value is the folder to use
ENV_VAR = "RLGATE_TEMPLATE_CACHE"


def cache_dir() -> Path | None:
    chosen = os.environ.get(ENV_VAR)
    if chosen == "0":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rlgate" / "templates"


class TemplateCache(FileSystemBytecodeCache):
    """jinja2's file cache keyed also by the environment's settings (`tag`); never fails a report."""

    def __init__(self, directory: Path, tag: str) -> None:
        super().__init__(os.fspath(directory), "rlgate-%s.cache")
        self.tag = f"{jinja2.__version__}|{tag}"

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return hashlib.sha1(f"{self.tag}|{name}|{filename or ''}".encode()).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):  # not a folder, unreadable: compile
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):  # read-only home, full disk: compile again next time
            Path(self.directory).mkdir(parents=True, exist_ok=True)
            super().dump_bytecode(bucket)


def template_cache(tag: str) -> TemplateCache | None:
    folder = cache_dir()
    return TemplateCache(folder, tag) if folder is not None else None
