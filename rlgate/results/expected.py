"""Cached document lists: the doc hashes of a task's evaluation split, keyed by task and version.

What a complete run of a task must hold belongs to the task, not to a run: its dataset's documents. Reading
the dataset at gate time would need the hub (often unreachable, and slow), so its doc hashes are computed once
(`rlgate.harness.lmeval.doc_list` for lm-eval tasks whose documents are the dataset's rows) and stored here as
`<dir>/<task>@<version>.json`. The engine judges coverage against them (rlgate.engine.coverage): a run
lacking any listed document, or holding one the list does not know, is not complete. Where no list is cached
the next sources stand (the harness's split size, both runs' documents). The folder is `$RLGATE_DOCLISTS`,
else `~/.cache/rlgate/doclists`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlgate._core.errors import InputError
from rlgate.results.models import RunResult

DOCLISTS_ENV = "RLGATE_DOCLISTS"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class DocumentList(BaseModel):
    """The documents of one task version's evaluation split, as the harness hashes them."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    task: str
    version: str
    source: str = Field(description="the dataset file (or split) the hashes were computed from")
    doc_hashes: list[str] = Field(min_length=1)


def doclists_dir() -> Path:
    return Path(os.environ.get(DOCLISTS_ENV) or Path.home() / ".cache" / "rlgate" / "doclists")


def list_path(root: Path, task: str, version: str) -> Path:
    return root / f"{_UNSAFE.sub('_', task)}@{_UNSAFE.sub('_', version)}.json"


def write_list(root: Path, found: DocumentList) -> Path:
    """Store a document list (written whole, then renamed: a reader never sees half of one)."""
    path = list_path(root, found.task, found.version)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(found.model_dump_json(indent=1) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def read_list(root: Path, task: str, version: str) -> DocumentList | None:
    """The cached list of a task version, None when none is cached; a broken one is a located error."""
    path = list_path(root, task, version)
    if not path.is_file():
        return None
    try:
        found = DocumentList.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError) as exc:
        raise InputError(f"not a document list ({str(exc).splitlines()[0][:160]})", file=path,
                         fix="delete it; coverage is then judged on the other sources until it is rebuilt") from None
    if found.task != task or found.version != version:
        raise InputError(f"holds the list of {found.task}@{found.version}, not {task}@{version}", file=path,
                         fix="delete it or rebuild it for this task version")
    return found


def cached_documents(runs: Iterable[RunResult | None], root: Path | None = None) -> dict[str, frozenset[str]]:
    """Leaf task -> doc hashes, for every leaf of the runs whose task version has a cached list."""
    folder = root or doclists_dir()
    out: dict[str, frozenset[str]] = {}
    if not folder.is_dir():
        return out
    for run in runs:
        for leaf, task in (run.tasks.items() if run is not None else []):
            version = task.protocol.version
            if leaf in out or version is None:
                continue
            found = read_list(folder, leaf, version)
            if found is not None:
                out[leaf] = frozenset(found.doc_hashes)
    return out
