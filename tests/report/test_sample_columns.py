"""Samples paired straight into columns: the aligned fast path pairs as pairing by id does, a run's columns
are the same with or without missing rows, and the text budget's shortcut (everything fits) matches the
ordered greedy pass."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rlgate.report.budget import apply_text_budget
from rlgate.report.model import CHANGES, TaskSection
from rlgate.report.samples import _aligned, _rows, _rows_by_id, _side_columns, pair_samples
from rlgate.results.models import SampleRecord, TaskResult

KEY = ("exact_match", "strict-match")


def _sample(doc_id: int | str, right: float | None, *, doc_hash: str | None = None, text: str = "",
            responses: int = 1) -> SampleRecord:
    scores = {"strict-match": {"exact_match": right}} if right is not None else {}
    return SampleRecord(doc_id=doc_id, doc_hash=f"h{doc_id}" if doc_hash is None else doc_hash,
                        prompt=f"Q{doc_id} {text}", target=str(doc_id),
                        responses=[f"answer {doc_id} {text}"] * responses, filtered={"strict-match": str(doc_id)},
                        scores=scores)  # type: ignore[arg-type]


def _task(samples: list[SampleRecord]) -> TaskResult:
    return TaskResult(task="t", samples=samples)


def _pair(n: int = 12, seed: int = 0) -> tuple[list[SampleRecord], list[SampleRecord]]:
    rnd = random.Random(seed)
    base = [_sample(i, rnd.choice([0.0, 1.0, None])) for i in range(n)]
    cand = [_sample(i, rnd.choice([0.0, 1.0, float("nan")])) for i in range(n)]
    return base, cand


def _variants() -> list[tuple[str, list[SampleRecord], list[SampleRecord]]]:
    base, cand = _pair()
    hashless = [s.model_copy(update={"doc_hash": ""}) for s in cand]
    return [
        ("aligned", base, cand),
        ("empty hashes pair", base, hashless),
        ("one hash differs", base, [*cand[:3], cand[3].model_copy(update={"doc_hash": "other"}), *cand[4:]]),
        ("other order", base, list(reversed(cand))),
        ("a duplicate id", base, [*cand[:-1], cand[0]]),
        ("a missing document", base, cand[:-1]),
        ("an extra document", base[:-1], cand),
        ("string ids", [_sample("b", 1.0), _sample("a", 0.0)], [_sample("b", 0.0), _sample("a", 0.0)]),
    ]


@pytest.mark.parametrize(("name", "base", "cand"), _variants(), ids=[v[0] for v in _variants()])
def test_the_aligned_shortcut_pairs_as_pairing_by_id(name: str, base: list[SampleRecord],
                                                     cand: list[SampleRecord]) -> None:
    b, c = _task(base), _task(cand)
    aligned = _aligned(b, c)
    if aligned is not None:
        assert aligned == _rows_by_id(b, c)
    assert (aligned is not None) == (name in ("aligned", "empty hashes pair"))
    assert _rows(b, c) == _rows_by_id(b, c)
    assert _aligned(None, c) is None and _aligned(b, None) is None


def test_a_runs_columns_are_the_same_with_or_without_missing_rows() -> None:
    samples: list[SampleRecord | None] = [_sample(0, 1.0), _sample(1, 0.0, responses=0), _sample(2, 1.0, responses=3)]
    dense = _side_columns("baseline", samples, [1.0, 0.0, 1.0], KEY)
    sparse = _side_columns("baseline", [None, *samples], [None, 1.0, 0.0, 1.0], KEY)
    assert {k: v[1:] for k, v in sparse.items()} == dense
    assert [v[0] for v in sparse.values()] == [None, -1, 0, None, None]
    assert dense["baseline_chars"] == [len("answer 0 "), 0, len("answer 2 ")]
    assert dense["baseline_n"] == [1, 0, 3] and dense["baseline_extracted"] == ["0", "1", "2"]
    unkeyed = _side_columns("baseline", samples, [None] * 3, None)
    assert unkeyed["baseline_extracted"] == [None] * 3


def test_scores_and_changes() -> None:
    base = _task([_sample(0, 1.0), _sample(1, 0.0), _sample(2, None), _sample(3, 1.0), _sample(4, float("inf"))])
    cand = _task([_sample(0, 1.0), _sample(1, 1.0), _sample(2, 1.0), _sample(3, 0.0), _sample(4, 1.0)])
    changes, table = pair_samples(base, cand, KEY, hib=True)
    assert changes == ["same", "improved", "unscored", "regressed", "unscored"]
    assert table["baseline_score"] == [1.0, 0.0, None, 1.0, None]
    assert pair_samples(base, cand, KEY, hib=False)[0][1:4] == ["regressed", "unscored", "improved"]
    only, empty = pair_samples(base, cand, KEY, hib=True, changes_only=True)
    assert only == changes and empty == {}


def _tables(n: int) -> tuple[list[TaskSection], list[dict[str, list[object]]]]:
    sections, tables = [], []
    for t in range(3):
        base, cand = _pair(n, seed=t)
        cand = [s.model_copy(update={"prompt": "shared few-shot context line\n" * 12 + (s.prompt or "")})
                for s in cand]
        sections.append(TaskSection(task=f"task{t}"))
        tables.append(pair_samples(_task(base), _task(cand), KEY, hib=True)[1])
    return sections, tables  # type: ignore[return-value]


def _text(table: dict[str, list[object]], i: int) -> tuple[object, ...]:
    return table["prompt"][i], table["baseline_response"][i], table["candidate_response"][i]


def test_the_budget_keeps_everything_when_it_fits_and_changed_pairs_first_when_not() -> None:
    sections, tables = _tables(20)
    full, left_out = apply_text_budget(sections, [dict(t) for t in tables], text_budget=10**9)
    assert left_out == 0 and all(s.prompt_prefixes for s in full)
    need = sum(len(p) for s in full for p in s.prompt_prefixes) + sum(
        len(x or "") for s in full for column in (s.samples.prompt, s.samples.baseline_response,
                                                  s.samples.candidate_response) for x in column)
    # exactly enough: the shortcut applies and nothing is left out
    exact, left_out = apply_text_budget(sections, [dict(t) for t in _tables(20)[1]], text_budget=need)
    assert left_out == 0 and exact == full
    # one byte short: the greedy pass leaves out documents, unchanged pairs before changed ones
    short, left_out = apply_text_budget(sections, [dict(t) for t in _tables(20)[1]], text_budget=need - 1)
    assert left_out >= 1
    rank = {c: i for i, c in enumerate(CHANGES)}
    dropped = [rank[s.samples.change[i]] for s in short for i in range(len(s.samples))
               if s.samples.prompt[i] is None]
    kept = [rank[s.samples.change[i]] for s in short for i in range(len(s.samples)) if s.samples.prompt[i]]
    assert dropped and min(dropped) >= min(kept)
    assert all(_text(s.samples.model_dump(), i) == (None, None, None) for s in short
               for i in range(len(s.samples)) if s.samples.prompt[i] is None)
    # a withheld task (no columns) keeps an empty table either way
    withheld, _ = apply_text_budget([TaskSection(task="private")], [{}], text_budget=10)
    assert len(withheld[0].samples) == 0 and withheld[0].prompt_prefixes == []


def test_the_budget_walks_documents_changed_first_then_by_row_then_by_table() -> None:
    from rlgate.report.budget import in_budget_order

    rng = random.Random(5)
    raw = [{"change": [rng.choice(CHANGES) for _ in range(n)]} for n in (40, 0, 25, 40)]
    rank = {c: i for i, c in enumerate(CHANGES)}
    want = [(i, t) for _, i, t in sorted((rank[c], i, t) for t, table in enumerate(raw)
                                          for i, c in enumerate(table["change"]))]
    assert list(in_budget_order([t["change"] for t in raw])) == want
    assert list(in_budget_order([raw[0]["change"]])) == [(i, 0) for i, _ in sorted(enumerate(raw[0]["change"]),
                                                                         key=lambda p: (rank[p[1]], p[0]))]


def test_a_sample_table_keeps_its_columns_and_refuses_ragged_ones() -> None:
    from rlgate.report.budget import _sample_table

    _, tables = _tables(3)
    columns = dict(tables[0])
    table = _sample_table(columns)
    assert table.doc_id is columns["doc_id"] and table == type(table).model_validate(columns)
    with pytest.raises(ValueError, match="one entry per document"):
        _sample_table({**columns, "prompt": columns["prompt"][:-1]})
    with pytest.raises(ValueError, match="the columns"):
        _sample_table({name: column for name, column in columns.items() if name != "target"})


def test_the_page_payload_takes_the_models_texts_as_they_are(tmp_path: Path) -> None:
    from rlgate.report.builder import build_report
    from rlgate.report.drilldown import drilldown_payload
    from tests.report import factories as f

    model = build_report(f.decision(), contract=f.contract(tmp_path), baseline=f.run("b", [True, False] * 6),
                         candidate=f.run("c", [False, True, True] * 4), text_budget=400)
    assert model.text_left_out  # some documents already lost their text in the model
    direct = drilldown_payload(model)
    # the payload rebuilt with a budget and cap too large to change anything: the same rows and texts
    assert direct == drilldown_payload(model, text_budget=10**12, field_cap=10**9)
    rows = [row for task in direct["tasks"] for row in task["rows"]]
    assert any(row[3] is None for row in rows) and any(row[6] for row in rows)
