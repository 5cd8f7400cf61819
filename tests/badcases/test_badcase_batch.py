"""Classifying a whole task at once (classify_many) and indexing both runs once give what the per-sample,
per-consumer paths gave, on mixed inputs: checked against independent references (`reference_badcases`:
the pre-change per-sample classifiers, and cluster counts from plain loops over the outcomes)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from reference_badcases import ClusterCounts, answered, classify_each, cluster_counts, filter_for

from rlgate.badcases.classify import classifier_for, classify_run
from rlgate.badcases.clusters import ClusterInputs, compute_clusters
from rlgate.badcases.explain import explain_drops
from rlgate.badcases.families import Gsm8kClassifier
from rlgate.badcases.index import build_index
from rlgate.badcases.models import ClusterStat
from rlgate.badcases.taxonomy import ClassifyOptions, Failure, SampleOutcome
from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult


def _gsm8k(doc_id: int, *, right: bool, answer: str, response: str, filters: tuple[str, ...] = ("strict-match",),
           truncated: bool | None = None, doc_hash: str | None = None) -> SampleRecord:
    return SampleRecord(doc_id=doc_id, doc_hash=doc_hash or f"h{doc_id}", target=f"so\n#### {doc_id + 10}",
                        responses=[response], filtered=dict.fromkeys(filters, answer),
                        scores={f: {"exact_match": 1.0 if right else 0.0} for f in filters},
                        truncated=[truncated] if truncated is not None else None)


def _mixed_gsm8k(shift: int = 0) -> list[SampleRecord]:
    """Right, wrong, unparseable, misplaced and truncated answers; some samples lack the gate's filter."""
    out = []
    for i in range(40):
        gold = str(i + 10)
        kind = (i + shift) % 5
        filters = ("strict-match", "flexible-extract") if i % 3 else ("flexible-extract",)
        if kind == 0:
            out.append(_gsm8k(i, right=True, answer=gold, response=f"so #### {gold}", filters=filters))
        elif kind == 1:
            out.append(_gsm8k(i, right=False, answer="7", response="so #### 7", filters=filters))
        elif kind == 2:
            out.append(_gsm8k(i, right=False, answer="[invalid]", response="no idea", filters=filters))
        elif kind == 3:
            out.append(_gsm8k(i, right=False, answer="3", response=f"3, and the answer is {gold}", filters=filters))
        else:
            out.append(_gsm8k(i, right=False, answer="3", response="cut", filters=filters, truncated=True,
                              doc_hash="other" if shift else None))
    return out


def _mmlu(doc_id: int, *, right: bool, answer: str, category: str | None) -> SampleRecord:
    return SampleRecord(doc_id=doc_id, doc_hash=f"m{doc_id}", responses=["The answer is (B)"],
                        filtered={"custom-extract": answer}, scores={"custom-extract": {"exact_match": float(right)}},
                        doc={"category": category} if category else None)


def _ifeval(doc_id: int, followed: list[bool]) -> SampleRecord:
    ids = ["keywords:existence", "punctuation:no_comma", "length_constraints:number_words"][:len(followed)]
    return SampleRecord(doc_id=doc_id, doc_hash=f"i{doc_id}", responses=["" if doc_id == 3 else "text"],
                        scores={"none": {"prompt_level_strict_acc": float(all(followed)),
                                         "inst_level_strict_acc": followed}},  # type: ignore[dict-item]
                        doc={"instruction_id_list": ids})


def _generic(doc_id: int) -> SampleRecord:
    return SampleRecord(doc_id=doc_id, doc_hash=f"g{doc_id}", responses=["x"], filtered={"none": "x"},
                        scores={"none": {"acc": float(doc_id % 2)}})


def _run(model: str, shift: int = 0) -> RunResult:
    tasks: dict[str, list[SampleRecord]] = {
        "gsm8k": _mixed_gsm8k(shift),
        "gsm8k_platinum": _mixed_gsm8k(shift + 2),
        "mmlu_pro_law": [_mmlu(i, right=(i + shift) % 2 == 0, answer="[invalid]" if i % 4 == 1 else "B",
                               category="law" if i % 3 else None) for i in range(12)],
        "ifeval": [_ifeval(i, [(i + shift) % 2 == 0, i % 4 != 0, True][: 1 + i % 3]) for i in range(9)],
        "arc_easy": [_generic(i + shift) for i in range(6)],
    }
    return RunResult(provenance=RunProvenance(source=f"memory:{model}", model=model),
                     tasks={name: TaskResult(task=name, samples=samples) for name, samples in tasks.items()})


def _random_run(model: str, seed: int) -> RunResult:
    """Odd mixes the hand-made runs miss: int / bool / missing scores, filters absent or several, documents
    with and without a subject or instructions, targets with and without a gold number, token counts."""
    rng = random.Random(seed)

    def sample(i: int, task: str) -> SampleRecord:
        filters = rng.choice([("strict-match",), ("flexible-extract",), ("strict-match", "flexible-extract"),
                              ("custom-extract",), ("none",), ()])
        value = rng.choice([1.0, 0.0, 1, 0, True, False, 0.7, 0.3, None])
        scores: dict[str, dict[str, Any]] = {}
        for f in filters:
            metrics: dict[str, Any] = {} if value is None else {"exact_match": value}
            if rng.random() < 0.3:
                metrics["acc"] = 0.0
            if rng.random() < (0.9 if task == "ifeval" else 0.3):
                metrics |= {"prompt_level_strict_acc": float(rng.random() < 0.5),
                            "inst_level_strict_acc": rng.choice([[1.0, 0.0], [0.0, 1.0], [1.0], []])}
            scores[f] = metrics
        doc = rng.choice([None, {"category": rng.choice(["law", "math"])}, {"answer": f"#### {i}"},
                          {"instruction_id_list": ["keywords:existence", "punctuation:no_comma"]},
                          {"instruction_id_list": ["keywords:existence", "keywords:forbidden_words"]}])
        return SampleRecord.model_construct(
            doc_id=i, doc_hash=rng.choice(["", "h", f"h{i}"]), prompt=None,
            target=rng.choice([None, f"#### {i}", "x"]),
            responses=rng.choice([[], ["#### 5"], [f"the answer is {i} and #### 3"], ["(B)", "x"], ["  "]]),
            filtered={f: rng.choice(["[invalid]", "5", str(i), "B"]) for f in filters}, scores=scores,
            doc=doc, extra={}, truncated=rng.choice([None, [True], [False]]),
            response_tokens=rng.choice([None, [10], [100]]), trajectory=None)

    names = ["gsm8k", "gsm8k_cot", "mmlu_pro_law", "mmlu_pro", "ifeval", "arc_easy", "hellaswag"]
    return RunResult(provenance=RunProvenance(source=f"memory:{model}", model=model),
                     tasks={t: TaskResult.model_construct(task=t, samples=[sample(i, t) for i in range(40)])
                            for t in names})


OPTIONS = (ClassifyOptions(), ClassifyOptions(filters={"gsm8k": "strict-match"}, max_tokens=64),
           ClassifyOptions(filters={"gsm8k": "flexible-extract", "mmlu_pro": "custom-extract"}),
           ClassifyOptions(filters={"gsm8k_platinum": "flexible-extract", "gsm8k": "strict-match"}, max_tokens=50),
           ClassifyOptions(filters={"ifeval": "flexible-extract", "arc_easy": "flexible-extract",
                                    "mmlu_pro_law": "strict-match", "gsm8k_cot": "flexible-extract"}))


@pytest.mark.parametrize("run", [_run("cand"), _run("base", shift=3), _random_run("r1", 1), _random_run("r2", 2)],
                         ids=["mixed", "mixed-shifted", "random-1", "random-2"])
@pytest.mark.parametrize("match_batch", [1, 3, 1 << 14])
def test_classify_many_equals_the_per_sample_classifiers_before_batching(run: RunResult, match_batch: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference is the pre-change per-sample code (copied into `reference_badcases`), not the library's
    own `classify`, which now calls `classify_many` itself. The misplaced-answer search reads its matches
    `match_batch` at a time: a response's matches split between batches count it once."""
    from rlgate.badcases import families

    monkeypatch.setattr(families, "_MATCH_BATCH", match_batch)
    for options in OPTIONS:
        batched = classify_run(run, options)
        reference = classify_each(run, options)
        assert list(batched) == list(reference)
        for key, want in reference.items():
            got = batched[key]
            assert got == want, key
            assert got.answered == answered(want)
            name = key[0]
            classifier = classifier_for(name, run.tasks[name])
            sample = next(s for s in run.tasks[name].samples if s.doc_id == key[1])
            assert classifier.classify(name, sample, options) == want  # asked alone, too
            assert options.filter_for(name, classifier.family, sample) == \
                filter_for(options, name, classifier.family, sample)
    if run.provenance.model == "cand":
        classes = {f.cls for o in classify_run(run, OPTIONS[1]).values() for f in o.failures}
        assert {"gsm8k_wrong_answer", "gsm8k_final_answer_format_error", "gsm8k_answer_misplaced",
                "gsm8k_truncated_at_max_tokens", "mmlu_pro_no_parseable_choice", "mmlu_pro_wrong_choice",
                "ifeval_punctuation_violation", "ifeval_empty_response", "arc_easy_wrong"} <= classes


def test_a_subclass_overriding_classify_is_asked_per_sample() -> None:
    from rlgate.badcases import classify as registry

    class Strict(Gsm8kClassifier):
        family = "strict_gsm8k"

        def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
            return SampleOutcome(task, self.family, sample.doc_id, sample.doc_hash, False,
                                 failures=(Failure("strict_fail", "other"),))

    registry.register_classifier(Strict())
    try:
        outcomes = classify_run(_run("cand"), ClassifyOptions(), tasks=["gsm8k"])
    finally:
        registry._REGISTRY.pop(0)
    assert outcomes and all(o.family == "strict_gsm8k" and o.classes == {"strict_fail"} for o in outcomes.values())


def test_a_user_task_batch_classifier_gets_whole_tasks() -> None:
    """A registered TaskBatchClassifier is handed each task once (classify_many), not sample by sample."""
    from rlgate.badcases import classify as registry
    from rlgate.badcases.taxonomy import TaskBatchClassifier

    calls: list[int] = []

    class Counting(TaskBatchClassifier):
        family = "counting"

        def claims(self, task: str) -> bool:
            return task == "gsm8k"

        def classify_many(self, task: str, samples: Any, options: ClassifyOptions) -> list[SampleOutcome]:
            batch = list(samples)
            calls.append(len(batch))
            return [SampleOutcome(task, self.family, s.doc_id, s.doc_hash, True) for s in batch]

    registry.register_classifier(Counting())
    try:
        outcomes = classify_run(_run("cand"), ClassifyOptions(), tasks=["gsm8k"])
    finally:
        registry._REGISTRY.pop(0)
    assert calls == [len(outcomes)] and len(outcomes) > 1
    assert Counting().classify("gsm8k", _run("cand").tasks["gsm8k"].samples[0], ClassifyOptions()).family == "counting"


def test_the_shared_index_pairs_and_counts_as_each_consumer_did() -> None:
    options = ClassifyOptions(filters={"gsm8k": "strict-match"}, max_tokens=64)
    cand = classify_run(_run("cand", shift=1), options)
    base = classify_run(_run("base"), options)
    base.pop(("gsm8k", 5))  # a document only the candidate has
    index = build_index(cand, base)
    # pairs: same document hash only (shift=1 gives the candidate's truncated GSM8K answers another hash)
    expected = {k for k, c in cand.items() if k in base and base[k].doc_hash == c.doc_hash}
    assert index.paired == expected and ("gsm8k", 3) not in index.paired
    assert sum(len(p) for p in index.pairs.values()) == len(expected)
    assert index.runs[0].unanswered == {k for k, o in cand.items() if not answered(o)}
    assert index.runs[1].unanswered == {k for k, o in base.items() if not answered(o)}
    assert index.runs[0].unanswered and index.runs[0].unanswered & index.paired  # both paths of the clusters
    for run, outcomes in ((0, cand), (1, base)):
        families = {o.family for o in outcomes.values()}
        for family in families:
            members = [o for o in outcomes.values() if o.family == family]
            assert index.mean_lengths(run)[family] == sum(o.response_chars for o in members) / len(members)
    # the explanations read the shared pairs exactly as they read their own pairing
    assert explain_drops(cand, base, pairs_by_family=index.pairs) == explain_drops(cand, base)
    assert explain_drops(cand, base, pairs_by_family=index.pairs, family_kinds=index.family_kinds) \
        == explain_drops(cand, base)
    data = ClusterInputs(candidate=cand, baseline=base, candidate_samples={}, baseline_samples={},
                         private_tasks=frozenset(), max_examples=0)
    _assert_clusters_match(compute_clusters(data, index), cluster_counts(cand, base))
    _assert_clusters_match(compute_clusters(data), cluster_counts(cand, base))
    top, by_category = compute_clusters(data)
    law = next(c for c in by_category if c.failure_class == "mmlu_pro_wrong_choice")
    assert law.category == "law" and law.candidate_n == sum(1 for o in cand.values() if "law" in o.categories)
    assert any(c.n_paired for c in top)


def _assert_clusters_match(found: tuple[list[ClusterStat], list[ClusterStat]], want: ClusterCounts) -> None:
    """Every cluster (class level, then class x category) against the counts worked out by plain loops."""
    top, by_category = found
    assert all(s.category is None for s in top) and all(s.category for s in by_category)
    got = {(s.family, s.failure_class, s.category): s for s in top + by_category}
    assert len(got) == len(top) + len(by_category) and set(got) == set(want)
    for key, row in want.items():
        stat = got[key]
        for name, value in row.items():
            assert getattr(stat, name) == value, (key, name)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_clusters_count_what_plain_loops_over_the_outcomes_count(seed: int) -> None:
    """Random runs (documents missing on one side, other hashes, knowledge and format failures by subject)."""
    options = ClassifyOptions(max_tokens=50)
    cand = classify_run(_random_run("cand", seed), options)
    base = classify_run(_random_run("base", seed + 100), options)
    for key in list(base)[::7]:
        base.pop(key)
    want = cluster_counts(cand, base)
    assert any(row["n_paired"] for row in want.values()) and any(key[2] for key in want)
    assert any(row["kind"] == "knowledge" and row["n_paired"] for row in want.values())
    data = ClusterInputs(candidate=cand, baseline=base, candidate_samples={}, baseline_samples={},
                         private_tasks=frozenset(), max_examples=0)
    _assert_clusters_match(compute_clusters(data), want)
    _assert_clusters_match(compute_clusters(data, build_index(cand, base)), want)
    alone = ClusterInputs(candidate=cand, baseline=None, candidate_samples={}, baseline_samples={},
                          private_tasks=frozenset(), max_examples=0)
    _assert_clusters_match(compute_clusters(alone), cluster_counts(cand, None))


def test_index_without_a_baseline() -> None:
    cand = classify_run(_run("cand"), ClassifyOptions())
    index = build_index(cand, None)
    assert index.pairs == {} and index.paired == set() and index.mean_lengths(1) == {}
    data = ClusterInputs(candidate=cand, baseline=None, candidate_samples={}, baseline_samples={},
                         private_tasks=frozenset(), max_examples=0)
    top, _ = compute_clusters(data)
    assert top and all(c.baseline_count is None and c.p_value is None for c in top)


def _outcome(family: str, doc: int, correct: bool, *failures: Failure, doc_hash: str = "") -> SampleOutcome:
    return SampleOutcome(f"{family}_t", family, doc, doc_hash or f"h{doc}", correct, failures=failures)


def test_the_instruction_hint_never_skips_a_per_instruction_family() -> None:
    broke = Failure("custom_instruction_broken", "instruction", "rule:1")
    wrong = Failure("custom_wrong", "knowledge")
    cand = {("custom_t", i): _outcome("custom", i, i % 2 == 0, *(() if i % 2 == 0 else (broke,))) for i in range(6)}
    base = {("custom_t", i): _outcome("custom", i, True) for i in range(6)}
    # instruction failures only on a document whose hashes differ (unpaired): the family is explained as right/wrong
    cand2 = {**{k: _outcome("other", k[1], False, wrong) for k in [("other_t", i) for i in range(4)]},
             ("other_t", 9): _outcome("other", 9, False, broke, doc_hash="changed")}
    base2 = {("other_t", i): _outcome("other", i, True) for i in [0, 1, 2, 3, 9]}
    for c, b in ((cand, base), (cand2, base2)):
        index = build_index(c, b)
        hinted = explain_drops(c, b, pairs_by_family=index.pairs, family_kinds=index.family_kinds)
        assert hinted == explain_drops(c, b)
    [custom] = explain_drops(cand, base, family_kinds=build_index(cand, base).family_kinds)
    assert custom.driver == "instructions" and custom.instruction_losses == {"custom_instruction_broken": 3}
    [other] = explain_drops(cand2, base2, family_kinds=build_index(cand2, base2).family_kinds)
    assert other.instruction_losses == {} and other.lost_to_wrong_answer == 4
