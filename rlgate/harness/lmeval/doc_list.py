"""Doc hashes of an lm-eval task's split from a local copy of its dataset, for rlgate.results.expected.

lm-eval hashes each document as `sha256(json.dumps(doc, indent=2, ensure_ascii=False))` (evaluator.py,
`doc_hash`), so a task whose documents are its dataset's rows unchanged (gsm8k; not tasks with a
`process_docs` that reshapes them) has the same hashes from a JSON Lines copy of the split as from a run. The
hub is not needed: hand it the file (`.jsonl` or `.jsonl.gz`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.results.expected import DocumentList


def doc_hash(doc: dict[str, Any]) -> str:
    """lm-eval's doc_hash of one document."""
    return hashlib.sha256(json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8")).hexdigest()


def document_list(task: str, version: str, dataset: Path) -> DocumentList:
    """The list of a task version from its split's rows (one JSON object a line)."""
    opener = gzip.open if dataset.suffix == ".gz" else open
    hashes: list[str] = []
    try:
        with opener(dataset, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"not valid JSON: {exc.msg}", file=dataset, line=number,
                                     fix="give the split as JSON Lines, one document a line") from None
                if not isinstance(row, dict):
                    raise InputError("is not a JSON object", file=dataset, line=number,
                                     fix="give the split as JSON Lines, one document a line")
                hashes.append(doc_hash(row))
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=dataset) from None
    if not hashes:
        raise InputError("holds no document", file=dataset, fix="give the split's rows, one JSON object a line")
    return DocumentList(task=task, version=version, source=str(dataset), doc_hashes=hashes)
