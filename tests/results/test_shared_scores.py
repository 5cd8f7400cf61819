"""Equal score tables of a read run become one shared, read-only table; the decision is unchanged."""

from __future__ import annotations

import copy
import pickle

import pytest

from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult, Trajectory
from rlgate.results.shared_scores import FrozenScores, share_scores


def _run(scores: list[dict[str, dict[str, float | list[float]]]], agent: bool = False) -> RunResult:
    samples = [SampleRecord(doc_id=i, doc_hash=str(i), scores=s, trajectory=Trajectory() if agent else None)
               for i, s in enumerate(scores)]
    return RunResult(provenance=RunProvenance(source="x"), tasks={"t": TaskResult(task="t", samples=samples)})


def test_equal_tables_are_one_object_and_values_are_kept() -> None:
    given = [{"a": {"em": 1.0, "len": 3.0}, "b": {"em": 1.0, "len": 3.0}},
             {"a": {"em": 1.0, "len": 3.0}, "b": {"em": 1.0, "len": 3.0}},
             {"a": {"em": 0.0, "len": 3.0}, "b": {"em": 1.0, "len": 3.0}}]
    samples = share_scores(_run(copy.deepcopy(given))).tasks["t"].samples
    assert [s.scores for s in samples] == given
    assert samples[0].scores is samples[1].scores
    assert samples[0].scores["a"] is samples[0].scores["b"] is samples[2].scores["b"]
    assert samples[2].scores is not samples[0].scores


def test_values_equal_as_keys_but_not_as_scores_stay_apart() -> None:
    run = _run([{"a": {"em": 1.0}}] * 4)
    for sample, value in zip(run.tasks["t"].samples, (1.0, 1, True, [1.0]), strict=True):
        sample.__dict__["scores"] = {"a": {"em": value}}  # as a reader that builds records unvalidated may leave them
    samples = share_scores(run).tasks["t"].samples
    assert [type(s.scores["a"]["em"]) for s in samples] == [float, int, bool, list]


def test_writes_are_refused_and_copies_are_plain_dicts() -> None:
    samples = share_scores(_run([{"a": {"em": 1.0}}, {"a": {"em": 1.0}}])).tasks["t"].samples
    table = samples[0].scores
    assert isinstance(table, FrozenScores)
    for write in (lambda: table.__setitem__("b", {}), lambda: table["a"].pop("em"), lambda: table.update({}),
                  lambda: table.setdefault("c", {}), lambda: table["a"].clear()):
        with pytest.raises(TypeError, match="read-only"):
            write()
    for duplicate in (copy.copy(table), copy.deepcopy(table), pickle.loads(pickle.dumps(table))):
        assert type(duplicate) is dict and duplicate == {"a": {"em": 1.0}}
        duplicate["b"] = {}
    assert samples[0].model_dump()["scores"] == {"a": {"em": 1.0}}
    assert samples[1].model_copy(deep=True).scores == {"a": {"em": 1.0}}


def test_agent_tasks_keep_their_own_tables() -> None:
    samples = share_scores(_run([{"none": {"ok": 1.0}}, {"none": {"ok": 1.0}}], agent=True)).tasks["t"].samples
    assert samples[0].scores is not samples[1].scores
    samples[0].scores["none"]["calls"] = 2.0  # the agent rules add their metrics after reading
