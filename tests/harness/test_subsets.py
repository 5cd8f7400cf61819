"""A sequential look runs a subset of documents with exactly the prompts a full run builds (random few-shot included),
under the true doc ids, with the rest of the seeded order recorded as not generated."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlgate.app.runs import evaluate, select_tasks
from rlgate.contract.models import Sequential
from rlgate.harness.vocabulary import load_contract

ContractFactory = Callable[..., Path]

pytest.importorskip("lm_eval")
DOCS = 40


def _prompts(folder: Path) -> dict[int, Any]:
    rows = [json.loads(line) for f in folder.rglob("samples_gsm8k_*.jsonl") for line in f.read_text().splitlines()]
    return {row["doc_id"]: row["arguments"] for row in rows}


def test_a_look_keeps_the_full_runs_prompts_and_doc_ids(write_contract: ContractFactory, shared_data: Path,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    contract = write_contract([{"task": "gsm8k", "split": "test_public", "num_fewshot": 3, "limit": DOCS,
                                "data_files": {"test": str(shared_data / "gsm8k/test.jsonl"),
                                               "train": str(shared_data / "gsm8k/train.jsonl.gz")}}],
                              protocol={"sequential": {"chunk": 10, "min_samples": 10}})
    resolved = load_contract(contract)
    tasks = select_tasks(resolved, ["test_public"], release_gate=False)
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps({"task": "gsm8k", "doc_id": i, "response": "#### 1"}) + "\n"
                                 for i in range(DOCS)))
    full = evaluate(resolved, tasks, tmp_path / "full", cache_dir=tmp_path / "cache", responses=responses)
    look = evaluate(resolved, tasks, tmp_path / "look", cache_dir=tmp_path / "cache", responses=responses,
                    sequential_look=2, order_seed=7)
    order = Sequential.order("gsm8k", DOCS, 7)
    everything, some = _prompts(tmp_path / "full"), _prompts(tmp_path / "look")
    assert sorted(some) == sorted(order[:20])  # looks 1 and 2 of the seeded order, logged under their true ids
    assert all(some[d] == everything[d] for d in some)  # the same prompt (and few-shot examples) as a full run
    (task,) = look.manifest.tasks
    assert task.documents == 20 and task.not_generated == order[20:] and task.sequential_look == 2
    assert task.expected_documents == DOCS and full.manifest.tasks[0].not_generated == []
    # without pinning, lm-eval's one few-shot generator would give the subset other examples (another prompt)
    monkeypatch.setattr("rlgate.harness.lmeval.subsets._pin_fewshot", lambda task, chosen: None)
    evaluate(resolved, tasks, tmp_path / "unpinned", cache_dir=tmp_path / "cache", responses=responses,
             sequential_look=2, order_seed=7)
    unpinned = _prompts(tmp_path / "unpinned")
    assert any(unpinned[d] != everything[d] for d in unpinned)
