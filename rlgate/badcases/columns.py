"""A run's classified samples held as per-task columns, for `rlgate gate` / `check`.

The gate classifies every sample of both runs, but only a handful of documents ever become a cluster
example. An object per sample (and a dict entry, and its teardown) was most of the badcase time and
memory, so the built-in right/wrong families (GSM8K, MMLU-Pro) classify a task into lists, the index
reads those lists (`index_columns`, `pair_columns`), and a `SampleOutcome` is made only for a document
someone asks for (`RunOutcomes[key]`). Runs with any other classifier keep the object path
(`classify.classify_run`), which gives the same outcomes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import eq

from rlgate.badcases.taxonomy import Failure, SampleOutcome, new_outcome
from rlgate.results.models import DocId, RunResult, SampleRecord

Key = tuple[str, DocId]
#: a yes/no column, one byte a row (a list of bools is 8 bytes a row: 8 MB a column at 10^6 documents)
Flags = bytearray


@dataclass
class TaskColumns:
    """One task's classified samples, row by row in the task's sample order, all of one family."""

    task: str
    family: str
    doc_ids: list[DocId]
    hashes: list[str]
    correct: Flags
    parsed: Flags
    failures: list[tuple[Failure, ...]]
    categories: list[tuple[str, ...]]
    answers: list[str | None]
    chars: list[int]
    answered: Flags
    _keys: list[Key] | None = field(default=None, repr=False)

    def keys(self) -> list[Key]:
        """(task, doc_id) of every row, made once."""
        if self._keys is None:
            self._keys = list(zip(repeat(self.task), self.doc_ids))
        return self._keys

    def outcome(self, row: int) -> SampleOutcome:
        """The row's `SampleOutcome`, made on demand: only documents someone asks for become objects."""
        return new_outcome(self.task, self.family, self.doc_ids[row], self.hashes[row], bool(self.correct[row]),
                           bool(self.parsed[row]), self.failures[row], self.categories[row], self.answers[row],
                           self.chars[row], bool(self.answered[row]))

    def outcomes(self) -> list[SampleOutcome]:
        """Every row's outcome, in row order: what `classify_many` returns (the object path's outcomes)."""
        task, family = self.task, self.family
        return [new_outcome(task, family, doc_id, doc_hash, bool(right), bool(parsed), failures, categories, answer,
                            chars, bool(answered)) for doc_id, doc_hash, right, parsed, failures, categories, answer,
                chars, answered in zip(self.doc_ids, self.hashes, self.correct, self.parsed, self.failures,
                                       self.categories, self.answers, self.chars, self.answered, strict=True)]


class KeySets:
    """Sets of the keys of task key lists, one set per distinct group of lists, never written once made.

    The runs of a gate hold the same key lists where they hold the same documents (`RunOutcomes.share_keys`),
    so the candidate's documents of a family, the baseline's and the paired documents are one set, not three
    (at 10^6 documents each was 33-67 MB, made at the bad-case step's peak). The lists are held here, so the
    ids that name a group stay theirs."""

    def __init__(self) -> None:
        self._made: dict[tuple[int, ...], tuple[list[list[Key]], set[Key]]] = {}

    def union(self, lists: list[list[Key]]) -> set[Key]:
        """Every key of the lists, as a set that the caller must not change."""
        name = tuple(map(id, lists))
        found = self._made.get(name)
        if found is None:
            found = self._made[name] = (lists, set(chain.from_iterable(lists)))
        return found[1]


class RunOutcomes(Mapping[Key, SampleOutcome]):
    """A run's outcomes by (task, doc_id), as `classify_run` gives them, held as task columns.

    Each task's doc_ids are distinct (`classify.classify_columns` falls back to objects otherwise), so the
    keys are the rows in order. Looking one up makes its outcome; walking them all makes every one.
    """

    def __init__(self, parts: list[TaskColumns]) -> None:
        self.parts = parts
        self._tasks = {part.task: part for part in parts}
        self._rows: dict[str, dict[DocId, int] | None] = {}  # task -> doc_id -> row; None: the ids are the rows

    def part(self, task: str) -> TaskColumns | None:
        """The task's columns, or None: the pairing (`pair_columns`) looks a candidate task up in the baseline."""
        return self._tasks.get(task)

    def row(self, key: Key) -> int | None:
        """The key's row in its task's columns (= its sample's index in the task's samples), or None.

        Only a handful of keys are ever looked up (the cluster examples), so a task whose doc_ids are its rows
        (lm-eval's numbering, read in order) is answered from the column itself; a dict of every row is built
        only for a task numbered otherwise (at 10^6 documents such a dict is ~70 MB a run)."""
        part = self._tasks.get(key[0])
        if part is None:
            return None
        if part.task not in self._rows:
            ids = part.doc_ids
            by_row = all(type(i) is int for i in ids) and all(map(eq, ids, range(len(ids))))
            self._rows[part.task] = None if by_row else dict(zip(ids, range(len(ids)), strict=True))
        rows, doc_id = self._rows[part.task], key[1]
        if rows is None:
            return doc_id if type(doc_id) is int and 0 <= doc_id < len(part.doc_ids) else None
        return rows.get(doc_id)

    def share_keys(self, other: RunOutcomes) -> None:
        """Give each task of `other` holding the same doc_ids in the same order this run's key tuples: one
        tuple per document for both runs (10^6 fewer tuples at 10^6 documents), and the sets of keys the index
        builds from both runs then compare equal keys by identity."""
        for part in self.parts:
            found = other.part(part.task)
            if found is not None and found._keys is None and found.doc_ids == part.doc_ids:
                found._keys = part.keys()

    def __getitem__(self, key: Key) -> SampleOutcome:
        row = self.row(key)
        if row is None:
            raise KeyError(key)
        return self._tasks[key[0]].outcome(row)

    def __iter__(self) -> Iterator[Key]:
        for part in self.parts:
            yield from part.keys()

    def __len__(self) -> int:
        return sum(len(part.doc_ids) for part in self.parts)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and self.row(key) is not None


class RunSamples(Mapping[Key, SampleRecord]):
    """A run's samples by (task, doc_id) for the documents of a `RunOutcomes` (classified from these very
    samples, row i of a task being its i-th sample): looked up through the columns' row index, with no
    dict of every sample built (the cluster examples ask for a handful)."""

    def __init__(self, run: RunResult, outcomes: RunOutcomes) -> None:
        self._run, self._outcomes = run, outcomes

    def __getitem__(self, key: Key) -> SampleRecord:
        row = self._outcomes.row(key)
        if row is None:
            raise KeyError(key)
        return self._run.tasks[key[0]].samples[row]

    def __iter__(self) -> Iterator[Key]:
        return iter(self._outcomes)

    def __len__(self) -> int:
        return len(self._outcomes)


@dataclass
class PairCounts:
    """A right/wrong family's paired documents counted in one pass; `both`: the ones both runs answered
    in a parseable form, `worse` / `better`: among those, right in one run only."""

    lost: dict[str, int] = field(default_factory=lambda: {"format": 0, "truncation": 0, "wrong": 0})
    gained: int = 0
    base_right: int = 0
    cand_right: int = 0
    both: int = 0
    both_base_right: int = 0
    both_cand_right: int = 0
    worse: int = 0
    better: int = 0
    n: int = 0


def loss_kind(failures: tuple[Failure, ...], parsed: bool) -> str:
    """How a right answer was lost: cut off, unparseable (or misplaced), or wrong."""
    kinds = {f.kind for f in failures}
    if "truncation" in kinds:
        return "truncation"
    if "format" in kinds or not parsed:
        return "format"
    return "wrong"


def _paired_rows(cand: TaskColumns, base: TaskColumns) -> list[tuple[int, int]] | range:
    """(candidate row, baseline row) of the documents both runs have with the same hash, in the candidate's
    order; a range when both hold the same documents in the same order with the same hashes."""
    if cand.doc_ids == base.doc_ids:
        same = list(map(eq, cand.hashes, base.hashes))
        if all(same):
            return range(len(same))
        return [(row, row) for row in compress(range(len(same)), same)]
    rows = dict(zip(base.doc_ids, range(len(base.doc_ids)), strict=True))
    out = []
    for row, (doc_id, doc_hash) in enumerate(zip(cand.doc_ids, cand.hashes, strict=True)):
        other = rows.get(doc_id)
        if other is not None and base.hashes[other] == doc_hash:
            out.append((row, other))
    return out


def pair_columns(candidate: RunOutcomes, baseline: RunOutcomes, keysets: KeySets | None = None
                 ) -> tuple[set[Key], dict[str, PairCounts]]:
    """The paired documents' keys (read only: from `keysets` when every paired task is paired whole), and per
    family their counts (`count_rows` over the paired rows)."""
    whole: list[list[Key]] = []  # key lists of tasks paired row for row
    some: list[Key] = []  # keys of the tasks paired in part
    counts: dict[str, PairCounts] = {}
    for cand in candidate.parts:
        base = baseline.part(cand.task)
        if base is None:
            continue
        rows = _paired_rows(cand, base)
        if not rows:
            continue
        keys = cand.keys()
        found = counts.setdefault(cand.family, PairCounts())
        if isinstance(rows, range):
            whole.append(keys)
            count_rows(found, base.correct, cand.correct, base.answered, cand.answered, cand.failures, cand.parsed)
        else:
            some.extend(keys[c] for c, _ in rows)
            crow, brow = [c for c, _ in rows], [b for _, b in rows]
            count_rows(found, [base.correct[b] for b in brow], [cand.correct[c] for c in crow],
                       [base.answered[b] for b in brow], [cand.answered[c] for c in crow],
                       [cand.failures[c] for c in crow], [cand.parsed[c] for c in crow])
    if some:
        return set(chain(chain.from_iterable(whole), some)), counts
    return (keysets or KeySets()).union(whole), counts


def count_rows(out: PairCounts, base_right: Sequence[int], cand_right: Sequence[int], base_answered: Sequence[int],
               cand_answered: Sequence[int], failures: list[tuple[Failure, ...]], parsed: Sequence[int]) -> PairCounts:
    """Add these pairs (row i of each list: one paired document) to `out` and return it; the one counting
    rule for paired right/wrong documents, used for columns (`pair_columns`) and outcomes (`explain._count`)."""
    lost = out.lost
    out.n += len(base_right)
    for b, c, ba, ca, fails, p in zip(base_right, cand_right, base_answered, cand_answered, failures, parsed,
                                      strict=True):
        out.base_right += b
        out.cand_right += c
        if b and not c:
            lost[loss_kind(fails, p)] += 1
        elif c and not b:
            out.gained += 1
        if ba and ca:
            out.both += 1
            out.both_base_right += b
            out.both_cand_right += c
            if b and not c:
                out.worse += 1
            elif c and not b:
                out.better += 1
    return out
