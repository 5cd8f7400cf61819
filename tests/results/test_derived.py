"""Derived per-sample metrics: the values, their means to the bit, and the order the task's metrics come in."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from rlgate.results.derived import LENGTH, PARSE_FAILURE, TRUNCATION, add_derived_metrics
from rlgate.results.integrity import quarantine, quarantine_out_of_range
from rlgate.results.models import INVALID_ANSWER, RunProvenance, RunResult, SampleRecord, TaskResult
from rlgate.results.shared_scores import EMPTY_SCORES, FrozenScores, ScoreTables


def _reference(task: TaskResult, max_tokens: int | None) -> dict[str, dict[str, float]]:
    """The definition, written plainly: per sample and filter, then means summed in sample order."""
    sums: dict[tuple[str, str], list[float]] = {}
    for s in task.samples:
        length = (sum(s.response_tokens) / len(s.response_tokens) if s.response_tokens else
                  sum(len(r) for r in s.responses) / len(s.responses) if s.responses else None)
        truncation = (sum(1.0 for t in s.truncated if t) / len(s.truncated) if s.truncated else
                      sum(1.0 for t in s.response_tokens if t >= max_tokens) / len(s.response_tokens)
                      if s.response_tokens and max_tokens else None)
        for filt in list(s.scores) or list(s.filtered) or ["none"]:
            values = {PARSE_FAILURE: (1.0 if s.filtered[filt].strip() == INVALID_ANSWER else 0.0)
                      if filt != "none" and filt in s.filtered else None, LENGTH: length, TRUNCATION: truncation}
            for metric, value in values.items():
                if value is not None:
                    acc = sums.setdefault((filt, metric), [0.0, 0.0])
                    acc[0] += value
                    acc[1] += 1
    out: dict[str, dict[str, float]] = {}
    for (filt, metric), (total, count) in sums.items():
        out.setdefault(filt, {})[metric] = total / count
    return out


def _samples(seed: int) -> list[SampleRecord]:
    rng = random.Random(seed)
    filters = ["strict-match", "flexible-extract", "none"]
    out = []
    for i in range(300):
        chosen = rng.sample(filters, rng.randint(0, 3))  # any subset, in any order
        responses = [" " * rng.randint(0, 9) + "x" * rng.randint(0, 400) for _ in range(rng.randint(0, 3))]
        tokens = [rng.randint(1, 120) for _ in responses] if responses and rng.random() < 0.3 else None
        truncated = [rng.random() < 0.5 for _ in responses] if responses and rng.random() < 0.2 else None
        filtered = {f: rng.choice([INVALID_ANSWER, f" {INVALID_ANSWER} ", "7", ""]) for f in chosen
                    if rng.random() < 0.8}
        scores: dict[str, Any] = {f: {"exact_match": float(rng.random() < 0.5)} for f in chosen if rng.random() < 0.9}
        out.append(SampleRecord(doc_id=i, doc_hash=str(i), responses=responses, filtered=filtered, scores=scores,
                                response_tokens=tokens, truncated=truncated))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("max_tokens", [None, 100])
def test_means_and_their_order_match_the_definition(seed: int, max_tokens: int | None) -> None:
    task = TaskResult(task="t", samples=_samples(seed))
    want = _reference(TaskResult(task="t", samples=_samples(seed)), max_tokens)
    add_derived_metrics(task, {"generation_kwargs": {"max_gen_toks": max_tokens}})
    assert [(f, list(m.items())) for f, m in task.metrics.items()] == [(f, list(m.items())) for f, m in want.items()]
    assert all(list(s.scores) for s in task.samples)  # a sample without scores gets its filters' (or "none")


def test_per_sample_values_and_key_order() -> None:
    sample = SampleRecord(doc_id=0, doc_hash="0", responses=["abcd", "ab"], filtered={"strict": f" {INVALID_ANSWER}"},
                          scores={"strict": {"exact_match": 0.0}, "none": {"exact_match": 1.0}})
    task = TaskResult(task="t", samples=[sample])
    add_derived_metrics(task, {})
    assert list(sample.scores["strict"].items()) == [("exact_match", 0.0), (PARSE_FAILURE, 1.0), (LENGTH, 3.0)]
    assert list(sample.scores["none"].items()) == [("exact_match", 1.0), (LENGTH, 3.0)]
    add_derived_metrics(loglik := TaskResult(task="l", samples=[sample.model_copy(deep=True)]),
                        {"output_type": "multiple_choice"})
    assert loglik.metrics == {"strict": {PARSE_FAILURE: 1.0}}  # no length for log-likelihood tasks


def test_quarantine_keeps_huge_finite_scores_and_takes_out_nan() -> None:
    """A task whose finite scores overflow a plain sum is checked value by value, and nothing is taken out."""
    huge = [SampleRecord(doc_id=i, doc_hash=str(i), scores={"none": {"a": 1e308, "b": 1e308}}) for i in range(3)]
    mixed = [SampleRecord(doc_id=0, doc_hash="0", scores={"none": {"a": 0.5, "b": [1.0, 0.0]}}),
             SampleRecord.model_construct(doc_id=1, doc_hash="1",  # as an importer may leave it: not validated
                                          scores={"none": {"a": math.nan, "b": "x"}, "f": {"a": 1.0}})]
    floats = [SampleRecord(doc_id=i, doc_hash=str(i), scores={"none": {"a": v}})
              for i, v in enumerate([1.0, -math.inf])]
    tasks = {"huge": huge, "mixed": mixed, "floats": floats}
    run = RunResult(provenance=RunProvenance(source="x"),
                    tasks={name: TaskResult(task=name, samples=samples) for name, samples in tasks.items()})
    quarantine(run)
    assert [(c.doc_id, c.value) for c in run.tasks["floats"].corrupt] == [(1, "-Infinity")]
    assert run.tasks["huge"].corrupt == [] and all(s.scores["none"] == {"a": 1e308, "b": 1e308} for s in huge)
    assert [(c.doc_id, c.metric, c.problem) for c in run.tasks["mixed"].corrupt] == [(1, "a", "non_finite"),
                                                                                  (1, "b", "wrong_type")]
    assert mixed[0].scores["none"] == {"a": 0.5, "b": [1.0, 0.0]} and mixed[1].scores == {"none": {}, "f": {"a": 1.0}}


def _frozen(samples: list[SampleRecord]) -> list[SampleRecord]:
    """The samples with the shared read-only tables the lm-eval reader builds (`ScoreTables`), line by line."""
    tables = ScoreTables()
    for sample in samples:
        shared = EMPTY_SCORES
        for filt, metrics in sample.scores.items():
            shared = tables.added(shared, filt, tables.scores(list(metrics.items())))
        sample.__dict__["scores"] = shared
    return samples


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("max_tokens", [None, 100])
def test_shared_tables_get_the_same_values_in_the_same_order(seed: int, max_tokens: int | None) -> None:
    """A reader's shared tables are replaced by shared tables holding what the in-place writes give, key order
    included; equal outcomes are one object, and no table is writable."""
    plain, frozen = TaskResult(task="t", samples=_samples(seed)), TaskResult(task="t", samples=_frozen(_samples(seed)))
    config = {"generation_kwargs": {"max_gen_toks": max_tokens}}
    add_derived_metrics(plain, config)
    add_derived_metrics(frozen, config)
    assert frozen.metrics == plain.metrics
    for want, got in zip(plain.samples, frozen.samples, strict=True):
        assert [(f, list(m.items())) for f, m in got.scores.items()] == [(f, list(m.items()))
                                                                         for f, m in want.scores.items()]
        assert isinstance(got.scores, FrozenScores) and all(isinstance(m, FrozenScores) for m in got.scores.values())
    by_content: dict[str, list[dict[str, Any]]] = {}
    for sample in frozen.samples:
        by_content.setdefault(repr(list(sample.scores.items())), []).append(sample.scores)
    assert any(len(tables) > 1 for tables in by_content.values())
    assert all(all(t is tables[0] for t in tables) for tables in by_content.values())


def test_quarantine_copies_only_the_shared_table_it_changes() -> None:
    """Each sample of a shared table out of range is listed (a table in range is checked once, one out of range
    for every sample), and only those samples get their own copy."""
    samples = _frozen([SampleRecord(doc_id=i, doc_hash=str(i), scores={"none": {"a": v, "b": 1.0}})
                       for i, v in enumerate([0.5, 2.0, 0.5, 2.0])])
    assert samples[0].scores is samples[2].scores and samples[1].scores is samples[3].scores
    run = RunResult(provenance=RunProvenance(source="x"), tasks={"t": TaskResult(task="t", samples=samples)})
    quarantine_out_of_range(run, lambda task: {"a": (0.0, 1.0)})
    assert [(c.doc_id, c.metric, c.problem) for c in run.tasks["t"].corrupt] == [(1, "a", "out_of_range"),
                                                                              (3, "a", "out_of_range")]
    assert all(s.scores == {"none": {"b": 1.0}} and type(s.scores) is dict for s in (samples[1], samples[3]))
    assert samples[0].scores is samples[2].scores and samples[0].scores == {"none": {"a": 0.5, "b": 1.0}}
