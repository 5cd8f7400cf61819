"""The gate's column path (`classify_columns`, `RunOutcomes`, the index and explanations read from lists) gives
what the object path (`classify_run`, `build_index` over dicts) gives, on the mixed and random GSM8K / MMLU-Pro
runs of test_badcase_batch."""

from __future__ import annotations

import pytest
from reference_badcases import classify_each
from test_badcase_batch import OPTIONS, _random_run, _run

from rlgate.badcases.classify import classify_columns, classify_run
from rlgate.badcases.clusters import ClusterInputs, compute_clusters
from rlgate.badcases.columns import RunOutcomes, RunSamples
from rlgate.badcases.explain import explain_drops
from rlgate.badcases.index import build_index
from rlgate.badcases.report import build_badcase_report
from rlgate.badcases.taxonomy import ClassifyOptions
from rlgate.results.models import RunResult, SampleRecord, TaskResult

_COLUMN_TASKS = ("gsm8k", "gsm8k_platinum", "gsm8k_cot", "mmlu_pro_law", "mmlu_pro")


def _only_columns(run: RunResult, drop_every: int = 0) -> RunResult:
    """The run's GSM8K / MMLU-Pro tasks (doc ids made distinct), less every `drop_every`-th sample."""
    tasks = {}
    for name, result in run.tasks.items():
        if name not in _COLUMN_TASKS:
            continue
        samples = list({s.doc_id: s for s in result.samples}.values())
        if drop_every:
            samples = [s for i, s in enumerate(samples) if i % drop_every]
        tasks[name] = TaskResult.model_construct(task=name, samples=samples)
    return RunResult(provenance=run.provenance, tasks=tasks)


def _pairs(seed: int) -> tuple[RunResult, RunResult]:
    if seed == -3:  # a family whose only task has no samples, and a task only the candidate has
        cand, base = _only_columns(_run("cand", shift=1)), _only_columns(_run("base"))
        for name in ("gsm8k", "gsm8k_platinum"):
            cand.tasks.pop(name)
        cand.tasks["gsm8k"] = TaskResult(task="gsm8k")
        base.tasks.pop("mmlu_pro_law")
        return cand, base
    if seed == -2:  # the same documents in the same order, the same hashes: paired row by row
        return _only_columns(_run("cand")), _only_columns(_run("base"))
    if seed == -1:  # the same documents in the same order, some hashes differ
        return _only_columns(_run("cand", shift=1)), _only_columns(_run("base"))
    if seed == 0:
        return _only_columns(_run("cand", shift=1)), _only_columns(_run("base"), drop_every=7)
    return _only_columns(_random_run("cand", seed)), _only_columns(_random_run("base", seed + 100), drop_every=5)


@pytest.mark.parametrize("seed", [-3, -2, -1, 0, 1, 2, 3])
def test_columns_give_the_outcomes_the_index_and_the_report_of_the_object_path(seed: int) -> None:
    cand_run, base_run = _pairs(seed)
    for options in OPTIONS:
        objects = (classify_run(cand_run, options), classify_run(base_run, options))
        columns = (classify_columns(cand_run, options), classify_columns(base_run, options))
        assert isinstance(columns[0], RunOutcomes) and isinstance(columns[1], RunOutcomes)
        for got, want in zip(columns, objects, strict=True):
            assert list(got) == list(want) and len(got) == len(want)
            assert all(got[key] == outcome and got[key].answered == outcome.answered for key, outcome in want.items())
            assert ("nope", 1) not in got and next(iter(want)) in got
        for run, held in zip((cand_run, base_run), columns, strict=True):
            records = {(name, s.doc_id): s for name, result in run.tasks.items() for s in result.samples}
            looked_up = RunSamples(run, held)
            assert len(looked_up) == len(records) and all(looked_up[key] is record for key, record in records.items())
            assert looked_up.get(("nope", 1)) is None
        by_objects, by_columns = build_index(*objects), build_index(*columns)
        assert by_columns.paired == by_objects.paired and by_columns.kinds == by_objects.kinds
        assert by_columns.categories == by_objects.categories and by_columns.family_kinds == by_objects.family_kinds
        for a, b in zip(by_columns.runs, by_objects.runs, strict=True):
            assert a == b
        assert set(by_columns.counts) == set(by_objects.pairs) and not by_columns.pairs
        if seed == -2:  # the same documents: the runs' document sets of a family are one set (and the paired
            # set is it too where one family holds every task), not a copy each (fresh columns: their keys not
            # yet made, as in a gate, so the runs share them)
            fresh = build_index(classify_columns(cand_run, options), classify_columns(base_run, options))
            for family, docs in fresh.runs[0].docs.items():
                assert fresh.runs[1].docs[family] is docs and docs == by_objects.runs[0].docs[family]
            assert len(fresh.runs[0].docs) == 2 and fresh.paired == by_objects.paired
            assert all(fresh.paired is not docs for docs in fresh.runs[0].docs.values())
            mmlu = [RunResult(provenance=r.provenance, tasks={k: v for k, v in r.tasks.items() if k.startswith("mmlu")})
                    for r in (cand_run, base_run)]
            single = build_index(*(classify_columns(r, options) for r in mmlu))
            assert single.paired is single.runs[0].docs["mmlu_pro"] is single.runs[1].docs["mmlu_pro"]
            assert single.paired == build_index(*(classify_run(r, options) for r in mmlu)).paired
        assert explain_drops(*columns, counts_by_family=by_columns.counts, pairs_by_family=by_columns.pairs,
                             family_kinds=by_columns.family_kinds) == explain_drops(*objects)
        for data in (ClusterInputs(candidate=columns[0], baseline=columns[1], candidate_samples={},
                                   baseline_samples={}, private_tasks=frozenset({"gsm8k_cot"}), max_examples=2),):
            want_clusters = compute_clusters(ClusterInputs(candidate=objects[0], baseline=objects[1],
                                                           candidate_samples={}, baseline_samples={},
                                                           private_tasks=frozenset({"gsm8k_cot"}), max_examples=2))
            assert compute_clusters(data, by_columns) == want_clusters
    report = build_badcase_report(cand_run, base_run, options=OPTIONS[1])
    assert report.clusters and (report.explanations or seed)


def test_a_run_with_another_family_or_a_document_twice_keeps_the_object_path() -> None:
    assert classify_columns(_run("cand")) is None  # IFEval and a generic task
    twice = SampleRecord(doc_id=0, doc_hash="h0", target="#### 1", responses=["#### 2"], filtered={"strict-match": "2"},
                         scores={"strict-match": {"exact_match": 0.0}})
    run = RunResult(provenance=_run("x").provenance,
                    tasks={"gsm8k": TaskResult(task="gsm8k", samples=[twice, twice])})
    assert classify_columns(run) is None
    assert classify_columns(_only_columns(_run("cand"))) is not None


def _g(doc_id: int, answer: str, response: str, *, right: bool = False, truncated: bool | None = None) -> SampleRecord:
    """A GSM8K sample whose gold number is doc_id."""
    return SampleRecord(doc_id=doc_id, doc_hash=f"h{doc_id}", target=f"work\n#### {doc_id}", responses=[response],
                        filtered={"strict-match": answer}, scores={"strict-match": {"exact_match": float(right)}},
                        truncated=[truncated] if truncated is not None else None)


def _m(doc_id: int, answer: str, *, right: bool = False, tokens: int | None = None) -> SampleRecord:
    return SampleRecord(doc_id=doc_id, doc_hash=f"m{doc_id}", responses=["The answer is (B)"],
                        filtered={"custom-extract": answer}, scores={"custom-extract": {"exact_match": float(right)}},
                        doc={"category": "law"}, response_tokens=[tokens] if tokens is not None else None)


#: (task, sample, expected failure classes, expected categories), written out by hand from the taxonomy
_EXPECTED: list[tuple[str, SampleRecord, tuple[str, ...], tuple[str, ...]]] = [
    ("gsm8k", _g(42, "42", "so #### 42", right=True), (), ()),
    ("gsm8k", _g(43, "7", "so #### 7"), ("gsm8k_wrong_answer",), ()),
    ("gsm8k", _g(44, "3", "3 apples, and the answer is 44"), ("gsm8k_answer_misplaced",), ()),
    ("gsm8k", _g(45, "[invalid]", "no idea"), ("gsm8k_final_answer_format_error",), ()),
    ("gsm8k", _g(46, "3", "cut off at 3", truncated=True), ("gsm8k_truncated_at_max_tokens",), ()),
    ("gsm8k", _g(47, "5", "the answer is\x00 47"), ("gsm8k_answer_misplaced",), ()),  # a NUL of its own
    ("gsm8k", _g(48, "5", "the answer is\x00 5"), ("gsm8k_wrong_answer",), ()),
    # the joined path (no NUL in the task): "the answer is" ending one response, the gold 50 starting the next
    ("gsm8k_cot", _g(50, "3", "so the answer is"), ("gsm8k_wrong_answer",), ()),
    ("gsm8k_cot", _g(51, "7", "50 apples; #### 7"), ("gsm8k_wrong_answer",), ()),
    ("gsm8k_cot", _g(52, "1", "#### 1, the answer is 52"), ("gsm8k_answer_misplaced",), ()),
    ("mmlu_pro_law", _m(1, "B", right=True), (), ("law",)),
    ("mmlu_pro_law", _m(2, "C"), ("mmlu_pro_wrong_choice",), ("law",)),
    ("mmlu_pro_law", _m(3, "[invalid]"), ("mmlu_pro_no_parseable_choice",), ("law",)),
    ("mmlu_pro_law", _m(4, "[invalid]", tokens=64), ("mmlu_pro_truncated_at_max_tokens",), ("law",)),
]


def test_columns_give_the_hand_written_categories_and_the_per_sample_reference() -> None:
    """An independent check of the shared classification code (classify_run goes through it too): expected
    classes written by hand, and the pre-change per-sample classifiers (`reference_badcases.classify_each`)."""
    tasks: dict[str, list[SampleRecord]] = {}
    for task, sample, _, _ in _EXPECTED:
        tasks.setdefault(task, []).append(sample)
    run = RunResult(provenance=_run("cand").provenance,
                    tasks={t: TaskResult.model_construct(task=t, samples=s) for t, s in tasks.items()})
    options = ClassifyOptions(max_tokens=64)
    columns = classify_columns(run, options)
    assert isinstance(columns, RunOutcomes)
    objects, reference = classify_run(run, options), classify_each(run, options)
    for task, sample, classes, categories in _EXPECTED:
        key = (task, sample.doc_id)
        got = columns[key]
        assert tuple(f.cls for f in got.failures) == classes, key
        assert got.categories == categories and got.correct == (not classes), key
        assert got == objects[key] == reference[key], key


def _numbered(ids: list[int | str]) -> RunResult:
    samples = [_g(i, "1", "#### 1", right=False) if isinstance(i, int) else
               SampleRecord(doc_id=i, doc_hash=f"h{i}", target="#### 1", responses=["#### 2"],
                            filtered={"strict-match": "2"}, scores={"strict-match": {"exact_match": 0.0}})
               for i in ids]
    return RunResult(provenance=_run("x").provenance,
                     tasks={"gsm8k": TaskResult.model_construct(task="gsm8k", samples=samples)})


@pytest.mark.parametrize("ids", [[0, 1, 2, 3, 4], [0, 1, 4, 3, 2], [3, 4, 5], ["0", "1", 2], [0, 2, 1, 5, "x"]])
def test_rows_are_found_with_or_without_a_dict_of_every_row(ids: list[int | str]) -> None:
    """A task numbered by row (lm-eval's doc_ids, in order) is looked up without a dict of its rows; any other
    numbering through one; either way every key finds its own sample and no other key finds one."""
    run = _numbered(ids)
    held = classify_columns(run)
    assert isinstance(held, RunOutcomes)
    samples = RunSamples(run, held)
    for row, doc_id in enumerate(ids):
        assert held.row(("gsm8k", doc_id)) == row and samples[("gsm8k", doc_id)] is run.tasks["gsm8k"].samples[row]
    for missing in [m for m in (-1, len(ids), 99, "2", 2, "y", True, 1.0) if m not in ids]:
        assert held.row(("gsm8k", missing)) is None and ("gsm8k", missing) not in held
    by_row = all(type(i) is int and i == row for row, i in enumerate(ids))
    assert (held._rows["gsm8k"] is None) is by_row  # a dict of every row only where the ids are not the rows


def test_runs_numbered_alike_share_their_key_tuples() -> None:
    cand, base, other = (classify_columns(_numbered(ids)) for ids in ([0, 1, 2], [0, 1, 2], [0, 2, 1]))
    assert isinstance(cand, RunOutcomes) and isinstance(base, RunOutcomes) and isinstance(other, RunOutcomes)
    index = build_index(cand, base)
    assert base.parts[0].keys() is cand.parts[0].keys() and index.paired == set(cand)
    build_index(cand, other)
    assert other.parts[0].keys() is not cand.parts[0].keys() and list(other) == [("gsm8k", i) for i in (0, 2, 1)]


def test_gold_numbers_of_many_documents_are_looked_up_not_read_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """More targets than the memo holds, half of them already remembered (the baseline's, when the candidate
    is classified), and one without a number: every gold is right, and only that one sample is read alone
    (before, reading it emptied the full memo and every later sample was read alone)."""
    import rlgate.badcases.families as families

    monkeypatch.setattr(families, "_GOLD_MEMO_SIZE", 8)
    monkeypatch.setattr(families, "_GOLD_MEMO", {})
    samples = [_g(i, "1", "x") for i in range(12)]
    samples[5] = samples[5].model_copy(update={"target": "no number here", "doc": {"answer": "#### 5"}})
    assert families._golds(samples[:6]) == [float(i) for i in range(6)]
    alone: list[int] = []
    real = families.gsm8k_gold

    def one_by_one(sample: SampleRecord) -> float | None:
        alone.append(int(sample.doc_id))
        return real(sample)

    monkeypatch.setattr(families, "gsm8k_gold", one_by_one)
    assert families._golds(samples) == [float(i) for i in range(12)]
    assert alone == [5]
