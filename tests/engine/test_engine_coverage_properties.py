"""Property (issue 31): however the documents of a real regressed candidate are removed, renamed, duplicated or
re-hashed, with its own counts made to agree, the decision is never `release`.

The candidate is Abel-13B's GSM8K run with a fifth of its answers broken (blocked when complete: about 13 points
down); the baseline is the complete Abel-13B run. Every example edits the candidate in memory, as a reader
would have produced it from edited files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.lmeval_builders import cached_folder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlgate.engine import decide
from rlgate.harness.lmeval.folder import read_lmeval_folder
from rlgate.harness.vocabulary import load_contract
from rlgate.results.models import RunResult

pytest.importorskip("lm_eval")
CONTRACT = Path(__file__).resolve().parents[1] / "fixtures" / "contracts" / "abel_gsm8k.yaml"
N = 1319


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[RunResult, RunResult, set[int]]:
    root = tmp_path_factory.getbasetemp()
    base = read_lmeval_folder(cached_folder(root, "gsm8k_abel", shared_data, "13b"))
    cand = read_lmeval_folder(cached_folder(root, "gsm8k_abel", shared_data, "13b", broken=0.2))
    score = {s.doc_id: s.score("exact_match", "flexible-extract") for s in base.tasks["gsm8k"].samples}
    lost = {int(s.doc_id) for s in cand.tasks["gsm8k"].samples
            if float(s.score("exact_match", "flexible-extract") or 0) < float(score[s.doc_id] or 0)}
    assert len(lost) > 150
    return base, cand, lost


def _edited(cand: RunResult, op: str, chosen: set[int]) -> RunResult:
    run = cand.model_copy(deep=True)
    task = run.tasks["gsm8k"]
    samples = task.samples
    if op == "remove":
        samples = [s for s in samples if s.doc_id not in chosen]
    elif op == "rename":
        for s in samples:
            if s.doc_id in chosen:
                s.doc_id = int(s.doc_id) + 100_000
    elif op == "duplicate":  # the chosen documents' records replaced by copies of other documents' records
        donors = [s for s in samples if s.doc_id not in chosen] or samples
        samples = [s if s.doc_id not in chosen else donors[int(s.doc_id) % len(donors)].model_copy(
            update={"doc_id": s.doc_id}) for s in samples]
    else:  # rehash: the document's text changed in this run
        for s in samples:
            if s.doc_id in chosen:
                s.doc_hash = "edited-" + s.doc_hash
    task.samples = samples
    task.n_samples = task.n_expected = len(samples)  # the run's own account agrees with what it holds
    return run


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from(["remove", "rename", "duplicate", "rehash"]),
                              st.sets(st.integers(0, N - 1), min_size=1, max_size=400), st.booleans()),
                    min_size=1, max_size=3))
def test_no_edit_of_the_documents_releases_a_regressed_candidate(pair: tuple[RunResult, RunResult, set[int]],
                                                                 ops: list[tuple[str, set[int], bool]]) -> None:
    """`losses`: the subset also holds every document the candidate lost (the edit that hides the regression)."""
    base, cand, lost = pair
    gates = load_contract(CONTRACT).gates.model_copy(update={"bootstrap_resamples": 1000})
    for op, chosen, losses in ops:
        cand = _edited(cand, op, chosen | lost if losses else chosen)
    decision = decide(gates, base, cand, seed=0, contract_name="abel")
    assert decision.decision != "release", (ops, decision.summary)
