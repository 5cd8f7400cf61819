"""The contamination check as a contract states it: every task's documents against its training files.

`rlgate contamination`, `rlgate gate` and `rlgate check` all call `contract_contamination(...)` and
feed `contamination_gates(...)` into `decide(extra_gates=...)`, so they judge alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rlgate._core.errors import InputError
from rlgate.contamination.index import ContaminationReport, check_contamination
from rlgate.contamination.sources import EvalDoc, data_file_for, doc_text, docs_from_data_file
from rlgate.harness.vocabulary import family_of

if TYPE_CHECKING:
    from rlgate.contract.loader import ResolvedContract
    from rlgate.results.models import RunResult


def eval_docs(resolved: ResolvedContract, results: RunResult | None = None) -> tuple[list[EvalDoc], list[str]]:
    """Every contract task's documents: from its local data files, else from a run's logged documents."""
    docs: list[EvalDoc] = []
    warnings: list[str] = []
    for task in resolved.tasks:
        family = family_of(task.name, task.harness)
        private = task.release_gate_only
        if task.data_files:
            docs.extend(docs_from_data_file(task.name, family, Path(data_file_for(task.data_files)), private))
            continue
        leaves = results.leaves(task.name) if results is not None else []
        logged = [(leaf, s) for leaf in leaves for s in results.tasks[leaf].samples if s.doc] if results else []
        if logged:
            docs.extend(EvalDoc(task.name, s.doc_id, doc_text(family, s.doc or {}), private,
                                leaf if leaf != task.name else None) for leaf, s in logged)
            continue
        warnings.append(f"{task.name}: no local data_files and no logged documents (--results): not checked")
    return docs, warnings


def train_files_for(resolved: ResolvedContract, override: Sequence[Path] = ()) -> list[Path]:
    """--train paths, else the contract's contamination.train_files (relative to the contract)."""
    if override:
        return list(override)
    spec = resolved.contract.contamination
    if spec is None or not spec.train_files:
        raise InputError("no training files to check against", file=str(resolved.path), field="contamination",
                         fix="pass --train FILE.jsonl (repeatable) or set contamination.train_files in the contract")
    return [resolved.resolve_path(p) for p in spec.train_files]


def contract_contamination(resolved: ResolvedContract, *, train: Sequence[Path] = (), results: RunResult | None = None,
                           ngram: int | None = None, min_overlap: float | None = None, text_field: str | None = None,
                           progress: Callable[[str, int], None] | None = None) -> ContaminationReport:
    """Check every task of the contract against the training files, with the contract's settings."""
    spec = resolved.contract.contamination
    docs, warnings = eval_docs(resolved, results)
    return check_contamination(
        docs, train_files_for(resolved, train),
        ngram=ngram or (spec.ngram if spec else 13),
        min_overlap=min_overlap if min_overlap is not None else (spec.min_overlap if spec else 0.0),
        text_field=text_field or (spec.text_field if spec else None),
        max_rate=spec.max_rate if spec else None, tasks=[t.name for t in resolved.tasks], warnings=warnings,
        progress=progress)
