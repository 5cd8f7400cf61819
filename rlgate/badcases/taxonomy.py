"""Per-sample failure taxonomy: the types every classifier shares, and the generic fallback.

A classifier turns one `SampleRecord` into a `SampleOutcome`: whether the sample is right and which
failure classes it shows. Family classifiers live in `families`; the registry that picks one per
task (`register_classifier`, `classify_run`) lives in `classify`, so neither module imports the other's
importer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from rlgate.badcases.models import FailureKind
from rlgate.harness.vocabulary import family_of, vocabulary_of
from rlgate.results.models import INVALID_ANSWER, DocId, SampleRecord, SampleValue

#: Failure kinds that leave a sample without a usable answer (see `SampleOutcome.answered`).
_UNANSWERED = ("format", "truncation")
_set = object.__setattr__  # how a frozen dataclass sets its own attributes
#: Metrics the fallback classifier looks at, best first.
_GENERIC_METRICS = ("exact_match", "acc", "acc_norm", "prompt_level_strict_acc", "pass@1", "em", "f1")


@dataclass(frozen=True)
class Failure:
    """One failure class a sample shows; `category` places it (MMLU-Pro subject, IFEval instruction)."""

    cls: str
    kind: FailureKind
    category: str | None = None


@dataclass(frozen=True, init=False)
class SampleOutcome:
    """A classified sample: correctness, failures, and what an export or example needs.

    One is made per sample of both runs, so `__init__` is written out: the frozen dataclass's generated one
    sets each field through `object.__setattr__`, twice the cost (the fields and defaults are the same).
    """

    task: str
    family: str
    doc_id: DocId
    doc_hash: str
    correct: bool
    parsed: bool = True
    failures: tuple[Failure, ...] = ()
    categories: tuple[str, ...] = field(default=())
    answer: str | None = None
    response_chars: int = 0
    agent: bool = False  # classified from an agent trajectory (`badcases.agent`)

    def __init__(self, task: str, family: str, doc_id: DocId, doc_hash: str, correct: bool, parsed: bool = True,
                 failures: tuple[Failure, ...] = (), categories: tuple[str, ...] = (), answer: str | None = None,
                 response_chars: int = 0, agent: bool = False) -> None:
        answered = parsed and not (failures and any(f.kind in _UNANSWERED for f in failures))
        # one dict, set in one step (as the frozen dataclass's own __init__ would, through object.__setattr__)
        _set(self, "__dict__", {"task": task, "family": family, "doc_id": doc_id, "doc_hash": doc_hash,
                                "correct": correct, "parsed": parsed, "failures": failures,
                                "categories": categories, "answer": answer, "response_chars": response_chars,
                                "agent": agent, "answered": answered})

    @property
    def key(self) -> tuple[str, DocId]:
        return (self.task, self.doc_id)

    @property
    def classes(self) -> frozenset[str]:
        return frozenset(f.cls for f in self.failures)

    @cached_property
    def answered(self) -> bool:
        """A parseable answer in the right place and not cut off: what a knowledge comparison may use.

        Worked out once, when the outcome is made, and kept in the instance's own `__dict__`, so reading it
        (clusters and explanations do for every sample) is a plain attribute lookup, not a call."""
        return self.parsed and not any(f.kind in _UNANSWERED for f in self.failures)


_new = object.__new__


def new_outcome(task: str, family: str, doc_id: DocId, doc_hash: str, correct: bool, parsed: bool,
                failures: tuple[Failure, ...], categories: tuple[str, ...], answer: str | None, response_chars: int,
                answered: bool) -> SampleOutcome:
    """A SampleOutcome from a batch classifier that already knows `answered` (as `SampleOutcome.__init__`
    would work it out): made without the constructor call, a third of the cost for every sample of a run."""
    outcome: SampleOutcome = _new(SampleOutcome)
    _set(outcome, "__dict__", {"task": task, "family": family, "doc_id": doc_id, "doc_hash": doc_hash,
                               "correct": correct, "parsed": parsed, "failures": failures, "categories": categories,
                               "answer": answer, "response_chars": response_chars, "agent": False,
                               "answered": answered})
    return outcome


@dataclass(frozen=True)
class ClassifyOptions:
    """What a classifier needs beyond the sample: which filter the gates read, the token budget."""

    filters: dict[str, str] = field(default_factory=dict)
    max_tokens: int | None = None

    def filter_for(self, task: str, family: str, sample: SampleRecord) -> str:
        """The filter whose answers count: a gate's, else the family default, else the first one."""
        return pick_filter(self.filter_choices(task, family), sample.scores)

    def filter_choices(self, task: str, family: str) -> tuple[str, ...]:
        """The filters `filter_for` tries, in order, before a sample's first one: worked out once per task."""
        known = vocabulary_of(family)
        named = (self.filters.get(task), self.filters.get(family), known.default_filter if known.closed else None)
        return tuple(dict.fromkeys(name for name in named if name))


def pick_filter(choices: tuple[str, ...], scores: dict[str, dict[str, SampleValue]]) -> str:
    """The first of `choices` the sample has scores under, else its first filter, else "none"."""
    for name in choices:
        if name in scores:
            return name
    return next(iter(scores), "none")


class FailureClassifier(Protocol):
    """Claims the tasks of one family and classifies their samples."""

    family: str

    def claims(self, task: str) -> bool: ...

    def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome: ...


def first_response(sample: SampleRecord) -> str:
    return sample.responses[0] if sample.responses else ""


def is_truncated(sample: SampleRecord, options: ClassifyOptions) -> bool:
    """The first response stopped at max_tokens: recorded by the runner, or inferred from token counts."""
    if sample.truncated:
        return bool(sample.truncated[0])
    if sample.response_tokens and options.max_tokens:
        return sample.response_tokens[0] >= options.max_tokens
    return False


def binary_score(value: object) -> bool | None:
    """A per-sample score read as right/wrong (scores >= 0.5 count as right); None when not a number."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value) >= 0.5
    return None


class TaskBatchClassifier:
    """A classifier that classifies a whole task in one call, its per-task work (filter choices, shared
    failure tuples) done once; one sample is a batch of one. `classify_run` hands it whole tasks unless a
    subclass overrides `classify` itself (then it is asked sample by sample, as that subclass expects)."""

    family: str

    def claims(self, task: str) -> bool:
        raise NotImplementedError

    def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
        return self.classify_many(task, [sample], options)[0]

    def classify_many(self, task: str, samples: Iterable[SampleRecord],
                      options: ClassifyOptions) -> list[SampleOutcome]:
        raise NotImplementedError

    def batches(self) -> bool:
        """Whether `classify_many` speaks for `classify` (no subclass replaced the per-sample call)."""
        return type(self).classify is TaskBatchClassifier.classify


class GenericClassifier(TaskBatchClassifier):
    """Fallback for tasks no family claims: right, wrong, or invalid (unparseable answer)."""

    family = "generic"

    def claims(self, task: str) -> bool:
        return True

    def classify_many(self, task: str, samples: Iterable[SampleRecord],
                      options: ClassifyOptions) -> list[SampleOutcome]:
        """Every sample of a task: its family and filter choices worked out once."""
        family = family_of(task)
        choices = options.filter_choices(task, family)
        out: list[SampleOutcome] = []
        for sample in samples:
            filt = pick_filter(choices, sample.scores)
            metrics = sample.scores.get(filt, {})
            metric = next((m for m in _GENERIC_METRICS if m in metrics), next(iter(metrics), None))
            right = binary_score(metrics.get(metric)) if metric else None
            answer = sample.filtered.get(filt)
            parsed = answer != INVALID_ANSWER
            failures: tuple[Failure, ...] = ()
            if not right:
                if not parsed:
                    failures = (Failure(f"{family}_invalid", "format"),)
                elif is_truncated(sample, options):
                    failures = (Failure(f"{family}_truncated", "truncation"),)
                else:
                    failures = (Failure(f"{family}_wrong", "knowledge"),)
            out.append(SampleOutcome(task=task, family=family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                                     correct=bool(right), parsed=parsed, failures=failures, answer=answer,
                                     response_chars=len(first_response(sample))))
        return out
