"""Values shared between the runs of one gate: the candidate's document, prompt, target, hash, responses and
answers become the baseline's objects wherever their content is the same.

A gate holds both runs in memory, one record per document each, and the two runs of a gate are usually the
same documents under the same prompts: at 10^6 documents a run, each record's copies of them are ~0.7 KB
the other run already holds. `read_results(..., shared=SharedValues())` with one table for the runs of a
gate makes the second run's equal values the first run's objects.

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
- Agent tasks are left as they are (the agent rules write to their records after reading), as in
  `rlgate.results.shared_scores`.
"""

from __future__ import annotations

import math
from typing import Any

from rlgate.results.models import RunResult, SampleRecord, TaskResult
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
    become the reference's objects (`share_values`). The table holds only a reference to that first run,
    which the gate holds anyway."""

    def __init__(self) -> None:
        self.reference: RunResult | None = None

    def share(self, run: RunResult) -> RunResult:
        """`run` with its values shared with the first run given (in place; returns `run`)."""
        if self.reference is None:
            self.reference = run
        elif run is not self.reference:
            share_values(run, self.reference)
        return run


def share_values(run: RunResult, reference: RunResult) -> RunResult:
    """Make `run`'s values that equal those of `reference`'s record of the same task and document the
    reference's objects (in place; returns `run`). Records are paired by doc_id; the pairing only picks what
    to compare, so a wrong pair shares nothing."""
    for name, task in run.tasks.items():
        other = reference.tasks.get(name)
        if other is None or task.is_agent or other.is_agent:
            continue
        _share_task(task, other)
    return run


def _share_task(task: TaskResult, other: TaskResult) -> None:
    theirs = other.samples
    index: dict[Any, SampleRecord] | None = None
    for position, sample in enumerate(task.samples):
        pair = theirs[position] if position < len(theirs) else None
        if pair is None or pair.doc_id != sample.doc_id:  # the runs usually list their documents alike
            if index is None:
                index = {s.doc_id: s for s in theirs}
            pair = index.get(sample.doc_id)
            if pair is None:
                continue
        _share_record(sample.__dict__, pair.__dict__)


def _share_record(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Put `theirs`'s objects in `mine` (two records' instance dicts) where the content is the same."""
    doc_id, other = mine["doc_id"], theirs["doc_id"]
    if doc_id is not other and type(doc_id) is type(other) and doc_id == other:  # an int past 256 is 28 bytes
        mine["doc_id"] = other
    for name in _TEXTS:
        value, other = mine[name], theirs[name]
        if value is not other and type(value) is str and type(other) is str and value == other:
            mine[name] = other
    _share_strings(mine["responses"], theirs["responses"])
    _share_answers(mine, theirs)
    doc, their_doc = mine["doc"], theirs["doc"]
    if doc is their_doc or type(their_doc) not in (dict, FrozenDoc) or type(doc) is not dict:
        return
    if _flat_and_same(doc, their_doc):
        if type(their_doc) is not FrozenDoc:
            their_doc = theirs["doc"] = FrozenDoc(their_doc)
        mine["doc"] = their_doc
    elif len(doc) == len(their_doc):
        for key, value in doc.items():
            other = their_doc.get(key)
            if value is not other and type(value) is str and type(other) is str and value == other:
                doc[key] = other


def _share_answers(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    """The filtered answers: one `FrozenAnswers` when both records hold the same (filter, answer) pairs in the
    same order, else the equal answers' strings."""
    answers, their_answers = mine["filtered"], theirs["filtered"]
    if answers is their_answers or type(answers) is not dict or type(their_answers) not in (dict, FrozenAnswers):
        return
    if len(answers) == len(their_answers):
        for (filt, answer), (other_filt, other) in zip(answers.items(), their_answers.items(), strict=True):
            if filt != other_filt or type(answer) is not str or type(other) is not str or answer != other:
                break
        else:
            if type(their_answers) is not FrozenAnswers:
                their_answers = theirs["filtered"] = FrozenAnswers(their_answers)
            mine["filtered"] = their_answers
            return
    for filt, answer in answers.items():
        other = their_answers.get(filt)
        if answer is not other and type(answer) is str and type(other) is str and answer == other:
            answers[filt] = other


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
