"""Values shared between the runs of one gate: the candidate's document, prompt, target, hash, responses and
answers become the baseline's objects wherever their content is the same.

A gate holds both runs in memory, one record per document each, and the two runs of a gate are usually the
same documents under the same prompts: a candidate record's copies of them are ~0.8 KB the baseline
already holds (GSM8K: 1,257 bytes a baseline record, 424 a candidate record once shared).
`read_results(..., shared=SharedValues())` with one table for the runs of a gate makes the second run's
equal values the first run's objects.

Why this is sound (fail closed: nothing is shared on trust):

- Equal means equal content, compared here: a string with a string (`type(...) is str` on both sides, so
  never a subclass), a document key by key in order, every value of the same type and equal (a float's
  sign too; NaN is never equal, so never shared). No hash from the results files is relied on: a
  document whose `doc_hash` matches but whose content differs keeps its own objects (and its own hash).
- Strings and numbers are immutable, so a shared one cannot change under anyone. A record's lists of
  responses and its `extra` stay its own; only the strings inside are shared.
- The filtered answers (filter -> answer) are shared whole when the same pairs in the same order, as a
  `FrozenAnswers` (a write raises TypeError); else their equal strings are.
- A whole document is shared only when its values are all strings, numbers, booleans or None (a flat
  mapping such as GSM8K's question and answer), and then as a `FrozenDoc`: a write raises TypeError
  instead of changing the document of both runs. A document holding lists or mappings keeps its own
  containers and shares its equal top-level strings.
- Nothing writes these fields once a run is read (the engine, reports, bad cases, contamination and the
  judge only read them); the read-only containers make a writer added later fail loudly (TypeError)
  instead of changing the document or answers of both runs.
- Agent tasks are left as they are (the agent rules write to their records after reading), as in
  `rlgate.results.shared_scores`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from rlgate.results.models import RunResult, SampleRecord, set_field
from rlgate.results.shared_scores import ReadOnlyDict

_SCALARS = (str, int, float, bool, type(None))
_TEXTS = ("doc_hash", "prompt", "target")


class FrozenDoc(ReadOnlyDict):
    """A source document shared by the records of two runs; read-only (a copy, `dict(doc)`, is free to change)."""

    __slots__ = ()
    refusal = ("a read run's document is shared with the other run of the gate and read-only: copy it "
               "(dict(sample.doc)) and assign the copy")


class FrozenAnswers(ReadOnlyDict):
    """Filtered answers (filter -> answer) shared by the records of two runs; read-only."""

    __slots__ = ()
    refusal = ("a read run's filtered answers are shared with the other run of the gate and read-only: copy "
               "them (dict(sample.filtered)) and assign the copy")


class SharedValues:
    """The values the runs of one gate share: pass one table to every `read_results` of the gate.

    The first run read is kept as it is (its records are the reference); each later run's equal values
    become the reference's objects. A reader may share as it reads (`reading`, `reference_pairing`): the
    copies it would make are then freed at once, a batch at a time, and their memory serves the next batch
    (freed after the whole run is read, they stay in the allocator's pools: the reading peak is not lowered).
    Whatever a reader did not share is shared after reading (`share_values`). The table holds only a
    reference to that first run, which the gate holds anyway."""

    def __init__(self) -> None:
        self.reference: RunResult | None = None
        self._reading: _Reading | None = None

    @contextmanager
    def reading(self) -> Iterator[None]:
        """The scope of one run's reading: inside it `reference_pairing` finds the reference's records."""
        self._reading = _Reading(self.reference)
        token = _READING.set(self._reading)
        try:
            yield
        finally:
            _READING.reset(token)

    def share(self, run: RunResult) -> RunResult:
        """`run` with its values shared with the first run given (in place; returns `run`)."""
        read_along, self._reading = (self._reading.pairings if self._reading is not None else {}), None
        if self.reference is None:
            self.reference = run
        elif run is not self.reference:
            share_values(run, self.reference, read_along)
        return run


class Pairing:
    """The reference's record of each document of a task, found by doc_id: at the position after the last
    one found first (runs usually list their documents alike), else through an index made on first need.
    The pairing only picks what to compare: a wrong pair shares nothing."""

    def __init__(self, samples: list[SampleRecord]) -> None:
        self._samples = samples
        self._next = 0
        self._index: dict[Any, int] | None = None
        #: records whose inputs `share_inputs` was given (all of a task's: nothing is left for `share_values`)
        self.inputs_given = 0
        #: doc_id -> how many of the reference's answers a record sharing them has matched (`add_answer`)
        self._matched: dict[Any, int] = {}

    def find(self, doc_id: Any) -> SampleRecord | None:
        """The reference's record of `doc_id` (None: the reference lacks it)."""
        samples, position = self._samples, self._next
        if position < len(samples):
            record = samples[position]
            if record.doc_id == doc_id:
                self._next = position + 1
                return record
        if self._index is None:
            self._index = {s.doc_id: i for i, s in enumerate(samples)}
        found = self._index.get(doc_id)
        if found is None:
            return None
        self._next = found + 1
        return samples[found]

    def share_inputs(self, record: SampleRecord, theirs: SampleRecord | None) -> None:
        """Share what a record holds from its document's first line on (id, hash, prompt, target, responses,
        document) with `theirs`, the reference's record of its document (`find`): what a reader can share as
        it reads (once its first line is merged and its texts decoded: nothing changes these fields after)."""
        self.inputs_given += 1
        if theirs is not None:
            _share_inputs(record, theirs)

    def start_answers(self, record: SampleRecord, theirs: SampleRecord | None) -> None:
        """Give a record made at its document's first line the reference's filtered answers (`theirs`'s) to
        hold while its own, line by line, equal them (`add_answer`).

        Sharing them after reading freed a dict, its key table and the equal answers per document (~250 MB at
        10^6 documents), long after they were made: freed among records that stay, they were memory the
        process kept. Made only when they differ, an answers dict lives as long as its record."""
        if theirs is None or not theirs.filtered:
            return
        for answer in theirs.filtered.values():
            if type(answer) is not str:
                return
        answers = _frozen_answers(theirs)
        if answers is None:
            return
        set_field(record, "filtered", answers)
        self._matched[record.doc_id] = 0

    def add_answer(self, record: SampleRecord, filter_name: str, answer: str) -> bool:
        """Whether the record's next answer is the one its shared answers hold next (it stays shared). Else the
        record gets its own dict of the answers matched so far, and the caller adds this one to it."""
        matched = self._matched.get(record.doc_id)
        if matched is None:  # the record holds its own answers (only those it shares are counted)
            return False
        answers = record.filtered
        if matched < len(answers):
            filt, theirs = next(islice(answers.items(), matched, None))
            if filt == filter_name and theirs == answer:
                self._matched[record.doc_id] = matched + 1
                return True
        del self._matched[record.doc_id]
        set_field(record, "filtered", dict(islice(answers.items(), matched)))
        return False

    def finish_answers(self, records: Mapping[Any, SampleRecord]) -> None:
        """Once the run's lines are all read: a record that matched fewer answers than it shares (its lines
        lacked some filter) gets its own dict of those it matched."""
        for doc_id, matched in self._matched.items():
            record = records[doc_id]
            if matched != len(record.filtered):
                set_field(record, "filtered", dict(islice(record.filtered.items(), matched)))
        self._matched.clear()


@dataclass
class _Reading:
    """One run's reading inside `SharedValues.reading`: the reference, and the pairings its reader was given."""

    reference: RunResult | None
    pairings: dict[str, Pairing] = field(default_factory=dict)


#: the `SharedValues.reading` under way (a context variable: no reader sees another's)
_READING: ContextVar[_Reading | None] = ContextVar("rlgate_shared_values_reading", default=None)


def reference_pairing(task: str) -> Pairing | None:
    """For a reader inside `SharedValues.reading`: the pairing with the reference run's records of `task`
    (None outside one, for the first run, and when the reference lacks the task or it is an agent task)."""
    reading = _READING.get()
    run = reading.reference if reading is not None else None
    other = run.tasks.get(task) if run is not None else None
    if reading is None or other is None or other.is_agent:
        return None
    pairing = reading.pairings[task] = Pairing(other.samples)
    return pairing


def share_values(run: RunResult, reference: RunResult, read_along: Mapping[str, Pairing] | None = None
                 ) -> RunResult:
    """Make `run`'s values that equal those of `reference`'s record of the same task and document the
    reference's objects (in place; returns `run`). `read_along`: the pairings a reader shared inputs through
    as it read (task -> pairing); a task whose every record went through one has only its answers left."""
    for name, task in run.tasks.items():
        other = reference.tasks.get(name)
        if other is None or task.is_agent or other.is_agent:
            continue
        given = (read_along or {}).get(name)
        inputs = given is None or given.inputs_given != len(task.samples)
        pairing = Pairing(other.samples)
        for sample in task.samples:
            theirs = pairing.find(sample.doc_id)
            if theirs is not None:
                if inputs:
                    _share_inputs(sample, theirs)
                _share_answers(sample, theirs)
    return run


def _share_inputs(mine: SampleRecord, theirs: SampleRecord) -> None:
    """Put `theirs`'s objects in `mine` (two records of one document) where the content is the same."""
    doc_id, other = mine.doc_id, theirs.doc_id
    if doc_id is not other and type(doc_id) is type(other) and doc_id == other:  # an int past 256 is 28 bytes
        set_field(mine, "doc_id", other)
    for name in _TEXTS:
        value, other = getattr(mine, name), getattr(theirs, name)
        if value is not other and type(value) is str and type(other) is str and value == other:
            set_field(mine, name, other)
    _share_strings(mine.responses, theirs.responses)
    doc: Any = mine.doc  # checked here: a dict, or left alone
    their_doc: Any = theirs.doc
    if doc is their_doc or type(their_doc) not in (dict, FrozenDoc) or type(doc) is not dict:
        return
    if _flat_and_same(doc, their_doc):
        if type(their_doc) is not FrozenDoc:
            their_doc = FrozenDoc(their_doc)
            set_field(theirs, "doc", their_doc)
        set_field(mine, "doc", their_doc)
    elif len(doc) == len(their_doc):
        for key, value in doc.items():
            other = their_doc.get(key)
            if value is not other and type(value) is str and type(other) is str and value == other:
                doc[key] = other


def _share_answers(mine: SampleRecord, theirs: SampleRecord) -> None:
    """The filtered answers: one `FrozenAnswers` when both records hold the same (filter, answer) pairs in the
    same order, else the equal answers' strings."""
    answers, their_answers = mine.filtered, theirs.filtered
    if answers is their_answers or type(answers) is not dict or type(their_answers) not in (dict, FrozenAnswers):
        return
    if len(answers) == len(their_answers):
        for (filt, answer), (other_filt, other) in zip(answers.items(), their_answers.items(), strict=True):
            if filt != other_filt or type(answer) is not str or type(other) is not str or answer != other:
                break
        else:
            set_field(mine, "filtered", _frozen_answers(theirs))
            return
    for filt, answer in answers.items():
        theirs_too = their_answers.get(filt)
        if answer is not theirs_too and type(answer) is str and type(theirs_too) is str and answer == theirs_too:
            answers[filt] = theirs_too


def _frozen_answers(theirs: SampleRecord) -> FrozenAnswers | None:
    """The reference record's answers as the read-only `FrozenAnswers` another record may hold (made once, in
    its place); None when they are not a dict."""
    answers = theirs.filtered
    if type(answers) is FrozenAnswers:
        return answers
    if type(answers) is not dict:
        return None
    frozen = FrozenAnswers(answers)
    set_field(theirs, "filtered", frozen)
    return frozen


def _share_strings(mine: Any, theirs: Any) -> None:
    """The equal strings of two lists of strings, position by position, become `theirs`'s (mine keeps its list)."""
    if type(mine) is not list or type(theirs) is not list or len(mine) != len(theirs):
        return
    for position, (value, other) in enumerate(zip(mine, theirs, strict=True)):
        if value is not other and type(value) is str and type(other) is str and value == other:
            mine[position] = other


def _flat_and_same(doc: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether two documents hold the same keys in the same order, each with a value of the same type (a
    string, number, boolean or None: nothing mutable) that is equal, floats to their sign."""
    if len(doc) != len(other):
        return False
    for (key, value), (other_key, other_value) in zip(doc.items(), other.items(), strict=True):
        kind = type(value)
        if kind is not type(other_value) or (kind is not str and kind not in _SCALARS):
            return False
        if key != other_key or value != other_value:
            return False
        if kind is float and value == 0.0 and math.copysign(1.0, value) != math.copysign(1.0, other_value):
            return False  # 0.0 and -0.0: equal, not the same value
    return True
