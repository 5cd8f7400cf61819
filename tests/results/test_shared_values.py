"""The candidate's values equal to the baseline's become the baseline's objects; anything that differs,
even only in type, stays its own; shared containers refuse writes."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import pytest

from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult, Trajectory
from rlgate.results.shared_values import FrozenAnswers, FrozenDoc, SharedValues, share_values

_BIG = 10**6  # ints past 256 are separate objects per parse


def _record(i: int, **given: Any) -> SampleRecord:
    values: dict[str, Any] = {"doc_id": int(str(_BIG + i)), "doc_hash": f"hash{i}", "prompt": f"Question {i}?",
                              "target": f"It is {i}", "responses": [f"The value is {i}"],
                              "filtered": {"strict": str(i), "flexible": str(i)},
                              "doc": {"question": f"What is {i}?", "answer": f"It is {i}", "n": i, "ok": True}}
    values.update(given)
    return SampleRecord.model_construct(**copy.deepcopy(values))


def _run(samples: list[SampleRecord], agent: bool = False) -> RunResult:
    if agent:
        for sample in samples:
            sample.trajectory = Trajectory()
    return RunResult(provenance=RunProvenance(source="x"), tasks={"t": TaskResult(task="t", samples=samples)})


def _pair(base: list[SampleRecord], cand: list[SampleRecord]) -> tuple[list[SampleRecord], list[SampleRecord]]:
    table = SharedValues()
    base_run, cand_run = table.share(_run(base)), table.share(_run(cand))
    return base_run.tasks["t"].samples, cand_run.tasks["t"].samples


def test_equal_values_become_the_baselines_objects_and_keep_their_content() -> None:
    expected = [_record(i).model_dump() for i in range(3)]
    base, cand = _pair([_record(i) for i in range(3)], [_record(i) for i in range(3)])
    for b, c, want in zip(base, cand, expected, strict=True):
        assert c.model_dump() == want == b.model_dump()
        for name in ("doc_id", "doc_hash", "prompt", "target", "doc", "filtered"):
            assert getattr(c, name) is getattr(b, name), name
        assert c.responses is not b.responses and c.responses[0] is b.responses[0]  # the list stays its own
        assert type(c.doc) is FrozenDoc and type(c.filtered) is FrozenAnswers


def test_documents_in_another_order_are_paired_by_id() -> None:
    base, cand = _pair([_record(i) for i in range(4)], [_record(i) for i in (3, 1, 0, 2)])
    assert [c.doc is base[c.doc_id - _BIG].doc for c in cand] == [True] * 4


def test_a_changed_document_with_the_same_hash_keeps_its_own_objects() -> None:
    changed = _record(0, doc={"question": "What is 0?", "answer": "It is 7", "n": 0, "ok": True})
    base, cand = _pair([_record(0)], [changed])
    assert cand[0].doc_hash is base[0].doc_hash  # the same hash text, shared as text only
    assert cand[0].doc is not base[0].doc and type(cand[0].doc) is dict and type(base[0].doc) is dict
    assert cand[0].doc["answer"] == "It is 7" and base[0].doc["answer"] == "It is 0"
    assert cand[0].doc["question"] == base[0].doc["question"]


@pytest.mark.parametrize(("mine", "theirs"), [
    ({"a": 1}, {"a": True}), ({"a": 1}, {"a": 1.0}), ({"a": 0.0}, {"a": -0.0}),
    ({"a": float("nan")}, {"a": float("nan")}),
    ({"a": "x", "b": "y"}, {"b": "y", "a": "x"}), ({"a": "x"}, {"a": "x", "b": None}), ({"a": "x"}, {"b": "x"})])
def test_documents_equal_only_loosely_are_not_shared(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    base, cand = _pair([_record(0, doc=theirs)], [_record(0, doc=mine)])
    assert cand[0].doc is not base[0].doc and type(cand[0].doc) is dict
    assert [(k, type(v)) for k, v in cand[0].doc.items()] == [(k, type(v)) for k, v in mine.items()]
    assert repr(cand[0].doc) == repr(mine)


def test_a_document_holding_containers_keeps_them_and_shares_its_strings() -> None:
    doc = {"question": "Pick one", "choices": ["a", "b"], "meta": {"k": "v"}}
    base, cand = _pair([_record(0, doc=doc)], [_record(0, doc=doc)])
    assert cand[0].doc == base[0].doc == doc and type(cand[0].doc) is dict
    assert cand[0].doc is not base[0].doc and cand[0].doc["choices"] is not base[0].doc["choices"]
    assert cand[0].doc["question"] is base[0].doc["question"]


def test_differing_texts_and_answers_stay_apart() -> None:
    other = _record(0, prompt="Other?", target=None, responses=["The value is 1"],
                    filtered={"strict": "0", "flexible": "1"}, doc_id=_BIG + 0)
    base, cand = _pair([_record(0)], [other])
    assert (cand[0].prompt, cand[0].target, cand[0].responses) == ("Other?", None, ["The value is 1"])
    assert cand[0].filtered == {"strict": "0", "flexible": "1"} and type(cand[0].filtered) is dict
    assert cand[0].filtered["strict"] is base[0].filtered["strict"]  # the equal answer's text is shared
    assert cand[0].responses[0] is not base[0].responses[0]


def test_answers_of_another_type_or_order_are_not_one_table() -> None:
    for answers in ({"flexible": "0", "strict": "0"}, {"strict": "0"}):
        _, cand = _pair([_record(0)], [_record(0, filtered=answers)])
        assert type(cand[0].filtered) is dict and list(cand[0].filtered) == list(answers)


def test_shared_containers_refuse_writes_and_copy_to_plain_dicts() -> None:
    base, cand = _pair([_record(0)], [_record(0)])
    doc, answers = cand[0].doc, cand[0].filtered
    assert doc is not None
    for table, key in ((doc, "question"), (answers, "strict")):
        for write in (lambda t=table, k=key: t.__setitem__(k, "x"), lambda t=table, k=key: t.pop(k),
                      lambda t=table: t.update({}), lambda t=table: t.setdefault("z", "x"), lambda t=table: t.clear(),
                      lambda t=table, k=key: t.__delitem__(k)):
            with pytest.raises(TypeError, match="read-only"):
                write()
        for duplicate in (copy.copy(table), copy.deepcopy(table), pickle.loads(pickle.dumps(table)), dict(table)):
            assert type(duplicate) is dict and duplicate == table
            duplicate["z"] = "x"
    assert cand[0].model_copy(deep=True).doc == base[0].doc
    assert SampleRecord.model_validate(cand[0].model_dump()).doc == base[0].doc


def test_agent_tasks_and_the_first_run_are_left_as_they_are() -> None:
    base, cand = _run([_record(0)], agent=True), _run([_record(0)], agent=True)
    share_values(cand, base)
    assert cand.tasks["t"].samples[0].doc is not base.tasks["t"].samples[0].doc
    table = SharedValues()
    first = _run([_record(0)])
    assert table.share(first) is first and type(first.tasks["t"].samples[0].doc) is dict
    assert table.share(first) is first and type(first.tasks["t"].samples[0].doc) is dict  # not with itself


def test_read_results_shares_a_gates_runs(tmp_path: Path) -> None:
    from fixtures.lmeval_builders import build_synthetic_folder

    from rlgate.harness import read_results

    folders = [build_synthetic_folder(tmp_path / name, f"org/{name}", {"gsm8k": correct})
               for name, correct in (("base", [True, False, True]), ("cand", [True, True, True]))]
    alone = [read_results(folder) for folder in folders]
    table = SharedValues()
    base, cand = (read_results(folder, shared=table) for folder in folders)
    assert cand.model_dump() == alone[1].model_dump() and base.model_dump() == alone[0].model_dump()
    pairs = list(zip(base.tasks["gsm8k"].samples, cand.tasks["gsm8k"].samples, strict=True))
    assert all(c.doc is b.doc and c.prompt is b.prompt and c.target is b.target for b, c in pairs)
    assert [c.filtered is b.filtered for b, c in pairs] == [True, False, True]  # document 1's answer changed


@pytest.mark.parametrize("read_along", [0, 1, 3])
def test_inputs_shared_while_reading_are_not_compared_again(read_along: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task whose every record's inputs a reader shared as it read has only its answers left to share; a task
    the reader shared only in part (or not at all) is compared whole after reading. Either way all is shared."""
    import rlgate.results.shared_values as shared_values

    calls: list[Any] = []
    compare = shared_values._share_inputs
    monkeypatch.setattr(shared_values, "_share_inputs", lambda mine, theirs: calls.append(1) or compare(mine, theirs))
    table = SharedValues()
    base = table.share(_run([_record(i) for i in range(3)])).tasks["t"].samples
    cand_run = _run([_record(i) for i in range(3)])
    with table.reading():
        pairing = shared_values.reference_pairing("t")
        assert pairing is not None
        for sample in cand_run.tasks["t"].samples[:read_along]:
            pairing.share_inputs(sample, pairing.find(sample.doc_id))
    cand = table.share(cand_run).tasks["t"].samples
    assert len(calls) == (3 if read_along == 3 else read_along + 3)
    assert all(c.doc is b.doc and c.prompt is b.prompt and c.filtered is b.filtered and c.responses[0] is b.responses[0]
               for b, c in zip(base, cand, strict=True))


def test_answers_shared_while_reading_end_as_after_reading(tmp_path: Path) -> None:
    """The reader gives a candidate record the baseline's answers while its lines match them one by one
    (`Pairing.start_answers`): whatever the lines do, each record ends with the answers, in the order, that
    reading it alone gives, shared exactly when they are the same pairs in the same order."""
    import json

    from fixtures.lmeval_builders import build_synthetic_folder

    from rlgate.harness import read_results

    base_folder, cand_folder = (build_synthetic_folder(tmp_path / name, f"org/{name}", {"gsm8k": [True] * 7})
                                for name in ("base", "cand"))
    (samples,) = cand_folder.glob("samples_gsm8k_*.jsonl")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]

    def line(doc_id: int, filt: str) -> dict[str, Any]:
        return next(r for r in rows if r["doc_id"] == doc_id and r["filter"] == filt)

    line(1, "strict-match")["filtered_resps"] = ["99"]  # the first answer differs
    line(2, "flexible-extract")["filtered_resps"] = ["99"]  # the second differs
    rows.remove(line(3, "flexible-extract"))  # a filter's line is missing
    moved = line(4, "flexible-extract")  # the filters in another order
    rows.remove(moved)
    rows.insert(0, moved)
    line(5, "strict-match")["filtered_resps"] = [["7", "8"]]  # an answer of another shape
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (base_samples,) = base_folder.glob("samples_gsm8k_*.jsonl")
    base_rows = [json.loads(text) for text in base_samples.read_text().splitlines()]
    base_rows = [r for r in base_rows if not (r["doc_id"] == 6 and r["filter"] == "flexible-extract")]
    base_samples.write_text("".join(json.dumps(r) + "\n" for r in base_rows))  # the candidate has one more

    alone = read_results(cand_folder).tasks["gsm8k"].samples
    table = SharedValues()
    base = read_results(base_folder, shared=table).tasks["gsm8k"].samples
    cand = read_results(cand_folder, shared=table).tasks["gsm8k"].samples
    assert [list(c.filtered.items()) for c in cand] == [list(a.filtered.items()) for a in alone]
    assert [c.model_dump() for c in cand] == [a.model_dump() for a in alone]
    base_of = {b.doc_id: b for b in base}
    shared = {c.doc_id: c.filtered is base_of[c.doc_id].filtered for c in cand}
    assert shared == {0: True, 1: False, 2: False, 3: False, 4: False, 5: False, 6: False}  # 4's lines come first
    assert type(base_of[0].filtered) is FrozenAnswers
    assert [type(c.filtered) for c in cand if c.doc_id != 0] == [dict] * 6
    two = next(c for c in cand if c.doc_id == 2)
    assert two.filtered["strict-match"] is base_of[2].filtered["strict-match"]  # equal answers still one string
