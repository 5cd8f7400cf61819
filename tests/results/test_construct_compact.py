"""`construct_compact` builds what `model_construct` builds, in inline values with shared fields-sets."""

from __future__ import annotations

import subprocess
import sys

from rlgate.results.models import SampleRecord, compact_record, construct_compact

_GIVEN = frozenset(("doc_id", "doc_hash", "prompt", "target", "responses", "filtered", "scores", "doc", "extra"))


def _state(doc_id: int) -> dict[str, object]:
    return {"doc_id": doc_id, "doc_hash": f"h{doc_id}", "prompt": "Q?", "target": "4", "responses": ["4"],
            "filtered": {"strict-match": "4"}, "scores": {"strict-match": {"exact_match": 1.0}},
            "doc": {"question": "Q?"}, "response_tokens": None, "truncated": None, "extra": {}, "trajectory": None}


def test_a_compact_record_is_the_record_model_construct_builds() -> None:
    compact = construct_compact(SampleRecord, _state(3), _GIVEN)
    plain = SampleRecord.model_construct(**{k: v for k, v in _state(3).items() if k in _GIVEN})
    assert compact == plain and compact.model_dump() == plain.model_dump()
    assert compact.model_fields_set == plain.model_fields_set == set(_GIVEN)
    assert SampleRecord.model_validate(compact.model_dump()) == compact  # every field of its declared type
    copied = compact.model_copy(update={"target": "5"})
    assert copied.target == "5" and compact.target == "4"


def test_records_share_their_keys_and_fields_set_and_stay_apart_in_their_values() -> None:
    one, two = (construct_compact(SampleRecord, _state(i), _GIVEN) for i in (1, 2))
    assert one.__pydantic_fields_set__ is two.__pydantic_fields_set__
    one.scores["strict-match"]["exact_match"] = 0.0  # containers are the record's own
    assert two.scores["strict-match"]["exact_match"] == 1.0
    other = construct_compact(SampleRecord, _state(4), _GIVEN | {"response_tokens"})
    assert other.model_fields_set == set(_GIVEN) | {"response_tokens"}
    assert one.model_fields_set == set(_GIVEN)


def test_the_readers_record_maker_is_construct_compact_field_for_field() -> None:
    state = _state(5)
    made = compact_record(*state.values(), given=_GIVEN)  # type: ignore[arg-type, misc]
    assert made == construct_compact(SampleRecord, state, _GIVEN)
    assert list(made.__dict__) == list(SampleRecord.model_fields)  # set in declaration order: the shared keys
    assert made.model_fields_set == set(_GIVEN)


_FRESH = """
import sys, tracemalloc
from rlgate.results.models import SampleRecord, compact_record, construct_compact
state = {"doc_id": 1, "doc_hash": "h", "prompt": "Q?", "target": "4", "responses": ["4"], "filtered": {},
         "scores": {}, "doc": None, "response_tokens": None, "truncated": None, "extra": {}, "trajectory": None}
given = frozenset(state)
tracemalloc.start()
start = tracemalloc.get_traced_memory()[0]
records = [construct_compact(SampleRecord, dict(state, doc_id=i), given) for i in range(5_000)]
records += [compact_record(*dict(state, doc_id=i).values(), given=given) for i in range(5_000)]
compact = (tracemalloc.get_traced_memory()[0] - start) / len(records)
dicts = [record.__dict__ for record in records]  # what pydantic's dump, copy and equality ask for
materialized = (tracemalloc.get_traced_memory()[0] - start) / len(records)
print(round(compact), round(materialized), sys.getsizeof(dicts[2]), sys.getsizeof(dict(state)))
"""


def test_in_a_fresh_process_the_records_hold_their_fields_without_an_instance_dict() -> None:
    """What a `rlgate gate` process gets: the fields in the instance's inline values, laid out by the class's
    shared keys, and no dict until one is asked for; asked for, it is a key-sharing dict. (In a process where
    some instance of the class was given an attribute out of order, CPython drops the class's shared keys for
    good: a long pytest session is such a process, so this is checked in a new one.)"""
    done = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, check=True)
    compact, materialized, shared, own = map(int, done.stdout.split())
    assert materialized - compact >= 40, f"no instance dict until asked for ({compact} vs {materialized} bytes)"
    assert shared < own * 0.75, f"a key-sharing dict should be well under a plain one ({shared} vs {own} bytes)"
