"""`construct_compact` builds what `model_construct` builds, in key-sharing instance dicts with shared fields-sets."""

from __future__ import annotations

import sys

from rlgate.results.models import SampleRecord, construct_compact

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
    own_dict = sys.getsizeof(dict(_state(1)))
    assert sys.getsizeof(one.__dict__) < own_dict * 0.75, "the instance dict should share the class's keys"
    other = construct_compact(SampleRecord, _state(4), _GIVEN | {"response_tokens"})
    assert other.model_fields_set == set(_GIVEN) | {"response_tokens"}
    assert one.model_fields_set == set(_GIVEN)
