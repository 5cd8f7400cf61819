"""Contamination check: which eval documents share a long n-gram with the training data.

The eval side is indexed (sorted unique uint64 n-gram hashes plus a 16 MiB bitmap prefilter); the
training files are streamed through it in chunks of about a megabyte of text, so memory stays
bounded by the eval index and one chunk whatever the training set's size. A document is
contaminated when any of its n-grams (default 13 normalised tokens, as in GPT-3 and lm-eval's
decontamination) occurs in a training line. Private (release_gate_only) documents are reported
by id only, never by text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate.contamination.ngrams import NgramHasher
from rlgate.contamination.sources import EvalDoc, LineStats, training_chunks
from rlgate.engine.models import GateVerdict
from rlgate.results.models import DocId

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

CONTAMINATION_SCHEMA_VERSION: Final = 1
_BITMAP_BITS = 24
_NO_LOCATION = 2**63 - 1
_LINE_BITS = 40
CHUNK_CHARS = 1 << 20


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContaminatedDoc(_Model):
    task: str
    doc_id: DocId
    leaf: str | None = Field(None, description="lm-eval subtask the doc_id belongs to, for groups")
    matched_ngrams: int
    total_ngrams: int
    overlap: float = Field(description="share of the document's n-grams found in the training data")
    train_file: str
    train_line: int
    ngram: str | None = Field(None, description="the first shared n-gram (withheld for private tasks)")


class TaskContamination(_Model):
    task: str
    private: bool = False
    n_docs: int
    n_checked: int = Field(description="documents with at least n tokens")
    n_contaminated: int = Field(description="documents whose overlap is >= min_overlap (and > 0)")
    n_partial: int = Field(0, description="documents sharing some n-gram, below min_overlap")
    rate: float = Field(description="contaminated documents / documents")
    documents: list[ContaminatedDoc] = Field(default_factory=list)
    documents_omitted: int = 0


class TrainFileStat(_Model):
    path: str
    lines: int
    texts: int
    malformed: int = 0
    first_malformed_line: int | None = None


class ContaminationReport(_Model):
    schema_version: Literal[1] = CONTAMINATION_SCHEMA_VERSION
    ngram: int
    min_overlap: float = 0.0
    train_files: list[TrainFileStat]
    train_ngrams: int
    tasks: list[TaskContamination]
    max_rate: float | None = None
    seconds: float = 0.0
    warnings: list[str] = Field(default_factory=list)


class EvalIndex:
    """The eval documents' n-gram hashes, and which of them the training data has shown so far."""

    def __init__(self, docs: Sequence[EvalDoc], n: int = 13) -> None:
        import numpy as np

        self.docs = list(docs)
        self.hasher = NgramHasher(n)
        hashes, owners = self.hasher.hash_texts([d.text for d in self.docs])
        order = np.lexsort((owners, hashes))
        hashes, owners = hashes[order], owners[order]
        keep = np.ones(len(hashes), dtype=bool)
        keep[1:] = (hashes[1:] != hashes[:-1]) | (owners[1:] != owners[:-1])
        pair_hash, self.pair_doc = hashes[keep], owners[keep]
        self.unique = np.unique(pair_hash)
        self.pair_pos = np.searchsorted(self.unique, pair_hash)
        self.total = np.bincount(self.pair_doc, minlength=len(self.docs))
        self.bitmap = np.zeros(1 << _BITMAP_BITS, dtype=bool)
        self.bitmap[self.unique >> np.uint64(64 - _BITMAP_BITS)] = True
        self.hits = np.zeros(len(self.unique), dtype=np.int64)
        self.first = np.full(len(self.unique), _NO_LOCATION, dtype=np.int64)
        self.train_ngrams = 0

    def scan(self, texts: list[str], lines: npt.NDArray[np.int64], file_index: int) -> None:
        """Match one chunk of training texts (line numbers `lines`) against the index."""
        import numpy as np

        hashes, owners = self.hasher.hash_texts(texts)
        self.train_ngrams += len(hashes)
        if len(self.unique) == 0 or len(hashes) == 0:
            return
        maybe = np.flatnonzero(self.bitmap[hashes >> np.uint64(64 - _BITMAP_BITS)])
        if len(maybe) == 0:
            return
        candidates = hashes[maybe]
        pos = np.minimum(np.searchsorted(self.unique, candidates), len(self.unique) - 1)
        hit = self.unique[pos] == candidates
        if not hit.any():
            return
        pos = pos[hit]
        where = (np.int64(file_index) << np.int64(_LINE_BITS)) | lines[owners[maybe][hit]]
        np.add.at(self.hits, pos, 1)
        np.minimum.at(self.first, pos, where)

    def first_ngram(self, doc_index: int) -> str | None:
        """The first n-gram of a document that the training data contains, as normalised tokens."""
        import numpy as np

        text = self.docs[doc_index].text
        hashes, _ = self.hasher.hash_texts([text])
        if len(hashes) == 0:
            return None
        pos = np.minimum(np.searchsorted(self.unique, hashes), len(self.unique) - 1)
        found = np.flatnonzero((self.unique[pos] == hashes) & (self.hits[pos] > 0))
        if len(found) == 0:
            return None
        tokens = self.hasher.tokens(text)
        start = int(found[0])
        return " ".join(tokens[start: start + self.hasher.n])


def scan_training_files(index: EvalIndex, files: Sequence[Path], text_field: str | None = None,
                        chunk_chars: int = CHUNK_CHARS,
                        progress: Callable[[str, int], None] | None = None) -> list[LineStats]:
    """Stream every training file through the index in chunks; returns per-file line statistics."""
    import numpy as np

    stats: list[LineStats] = []
    for file_index, path in enumerate(files):
        file_stats = LineStats(path=str(path))
        stats.append(file_stats)
        for texts, numbers in training_chunks(Path(path), text_field, file_stats, chunk_chars):
            index.scan(texts, np.asarray(numbers, dtype=np.int64), file_index)
            file_stats.texts += len(texts)
            if progress is not None:
                progress(str(path), file_stats.lines)
    return stats


def build_report(index: EvalIndex, files: Sequence[Path], stats: Sequence[LineStats], *,
                 max_rate: float | None = None, min_overlap: float = 0.0, list_limit: int = 200,
                 seconds: float = 0.0, warnings: Sequence[str] = ()) -> ContaminationReport:
    """Per task: documents, contaminated documents and the first training line each shares an n-gram with.

    A document is contaminated when it shares at least one n-gram and at least `min_overlap` of its
    n-grams occur in training (0: any shared n-gram, the GPT-3 / lm-eval definition). Documents that
    share some n-grams below that share are counted as partial (template phrases, near-duplicates).
    """
    import numpy as np

    matched_pairs = index.hits[index.pair_pos] > 0
    matched = np.bincount(index.pair_doc[matched_pairs], minlength=len(index.docs))
    first = np.full(len(index.docs), _NO_LOCATION, dtype=np.int64)
    np.minimum.at(first, index.pair_doc[matched_pairs], index.first[index.pair_pos[matched_pairs]])
    by_task: dict[str, list[int]] = {}
    for i, doc in enumerate(index.docs):
        by_task.setdefault(doc.task, []).append(i)
    tasks: list[TaskContamination] = []
    overlap = matched / np.maximum(index.total, 1)
    for task, members in by_task.items():
        shared = [i for i in members if matched[i] > 0]
        hit = [i for i in shared if overlap[i] >= min_overlap]
        private = any(index.docs[i].private for i in members)
        listed: list[ContaminatedDoc] = []
        for i in hit[:list_limit]:
            location = int(first[i])
            listed.append(ContaminatedDoc(
                task=task, doc_id=index.docs[i].doc_id, leaf=index.docs[i].leaf, matched_ngrams=int(matched[i]),
                total_ngrams=int(index.total[i]), overlap=float(overlap[i]),
                train_file=str(files[location >> _LINE_BITS]), train_line=location & ((1 << _LINE_BITS) - 1),
                ngram=None if index.docs[i].private else index.first_ngram(i)))
        tasks.append(TaskContamination(
            task=task, private=private, n_docs=len(members), n_checked=int(sum(index.total[i] > 0 for i in members)),
            n_contaminated=len(hit), n_partial=len(shared) - len(hit), rate=len(hit) / len(members) if members else 0.0,
            documents=listed, documents_omitted=max(0, len(hit) - list_limit)))
    out_warnings = list(warnings)
    for s in stats:
        if s.texts == 0:
            out_warnings.append(f"{s.path}: no text read from {s.lines} lines (empty file, every line malformed, or "
                                "no text_field in any line): nothing was checked against it")
        if s.malformed:
            out_warnings.append(f"{s.path}: {s.malformed} malformed JSON lines skipped (first at line "
                                f"{s.first_malformed}); they were not checked")
    return ContaminationReport(
        ngram=index.hasher.n, min_overlap=min_overlap, train_ngrams=index.train_ngrams, tasks=tasks,
        max_rate=max_rate, seconds=seconds,
        train_files=[TrainFileStat(path=s.path, lines=s.lines, texts=s.texts, malformed=s.malformed,
                                   first_malformed_line=s.first_malformed) for s in stats],
        warnings=out_warnings)


def check_contamination(docs: Sequence[EvalDoc], train_files: Sequence[Path], *, ngram: int = 13,
                        text_field: str | None = None, max_rate: float | None = None, min_overlap: float = 0.0,
                        tasks: Sequence[str] = (), warnings: Sequence[str] = (),
                        progress: Callable[[str, int], None] | None = None) -> ContaminationReport:
    """Index the eval documents, stream the training files, report per task (`tasks` without docs: n_docs 0)."""
    started = time.perf_counter()
    index = EvalIndex(docs, ngram)
    stats = scan_training_files(index, train_files, text_field, progress=progress)
    report = build_report(index, train_files, stats, max_rate=max_rate, min_overlap=min_overlap,
                          warnings=warnings, seconds=time.perf_counter() - started)
    present = {t.task for t in report.tasks}
    report.tasks.extend(TaskContamination(task=t, n_docs=0, n_checked=0, n_contaminated=0, rate=0.0)
                        for t in tasks if t not in present)
    return report


def unread_train_files(report: ContaminationReport) -> list[str]:
    """Training files that gave no text to check (empty, every line malformed, no `text_field` in any line),
    or, when the whole training data gave no n-gram, all of them: "clean" against these proves nothing."""
    unread = [f.path for f in report.train_files if f.texts == 0]
    return unread or ([f.path for f in report.train_files] if report.train_ngrams == 0 else [])


def contamination_gates(report: ContaminationReport) -> list[GateVerdict]:
    """Hard gates (kind contamination) for `decide(extra_gates=...)`. Fails closed: a task is nodata, never pass,
    when it has no documents, none long enough for one n-gram, or a training file gave no text to match."""
    if report.max_rate is None:
        return []
    limit = report.max_rate
    unread = unread_train_files(report)
    share = f"at least {100 * report.min_overlap:g}% of their " if report.min_overlap > 0 else "a "
    out: list[GateVerdict] = []
    for task in report.tasks:
        common = {"name": f"{task.task} contamination", "kind": "contamination",
                  "metric": f"{task.task}/contamination_rate", "threshold": {"max": limit},
                  "higher_is_better": False, "n": task.n_docs}
        if task.n_docs == 0:
            out.append(GateVerdict(**common, verdict="nodata", outcome="nodata", effect="block",
                                   reason=f"nodata: no documents of {task.task} could be checked for contamination"))
            continue
        failed = task.rate > limit
        partial = (f"; {task.n_partial} more share some below min_overlap {100 * report.min_overlap:g}%"
                   if task.n_partial else "")
        blind = None if failed else (
            f"none of the {task.n_docs} documents of {task.task} has {report.ngram} tokens" if task.n_checked == 0
            else f"training data {', '.join(unread)} yielded no {report.ngram}-gram" if unread else None)
        if blind is not None:
            out.append(GateVerdict(**common, verdict="nodata", outcome="nodata", effect="block",
                                   reason=f"nodata: {blind}, so {task.task} could not be checked for contamination"))
            continue
        out.append(GateVerdict(
            **common, verdict="fail" if failed else "pass", outcome="hard_fail" if failed else "pass",
            effect="block" if failed else "release", candidate=task.rate,
            reason=(f"{task.n_contaminated} of {task.n_docs} documents share {share}{report.ngram}-gram"
                    f"{'s' if report.min_overlap > 0 else ''} with the training data ({100 * task.rate:.2f}% "
                    f"{'>' if failed else '<='} max {100 * limit:.2f}%)" + partial)))
    return out
