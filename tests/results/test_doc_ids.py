"""Document ids sort ints by value first, then strings, whichever way they are sorted."""

from __future__ import annotations

from rlgate.results.models import doc_order, sorted_ids


def test_sorted_ids_matches_doc_order() -> None:
    for ids in ([3, 1, 2], {10, 2, 33}, ["b", 2, "a", 1], [True, 0, 2], []):
        assert sorted_ids(ids) == sorted(ids, key=doc_order)
    assert sorted_ids(["b", 2, "a", 1]) == [1, 2, "a", "b"]
