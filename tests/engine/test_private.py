"""Private splits: their leaves through groups, consultations counted per training run, the budget warned."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.private_contract import private_contract
from fixtures.synthetic_runs import make_run

from rlgate.app.record import record_consultations
from rlgate.contract.loader import ResolvedContract
from rlgate.engine.private import private_leaf_tasks, training_run_of
from rlgate.store.history import CheckpointHistory


@pytest.fixture()
def resolved(tmp_path: Path) -> ResolvedContract:
    return private_contract(tmp_path)


def test_private_leaves_expand_groups(resolved: ResolvedContract) -> None:
    run = make_run({"mmlu_pro_law": {"acc": [1.0, 0.0]}}, groups={"mmlu_pro": ["mmlu_pro_law"]})
    private = private_leaf_tasks(resolved, [run])
    assert private == {"mmlu_pro", "mmlu_pro_law"}
    assert private_leaf_tasks(None, [run], visibility={"mmlu_pro": "release_gate_only"}) == private


def test_consultations_are_counted_per_training_run_and_warned_past_budget(resolved: ResolvedContract,
                                                                           tmp_path: Path) -> None:
    history = CheckpointHistory(tmp_path / "history.sqlite")
    for expected in (1, 2):
        counts, warnings = record_consultations(history, resolved, "grpo-run-7")
        assert counts == {"mmlu_pro": expected} and warnings == []
    counts, warnings = record_consultations(history, resolved, "grpo-run-7")
    assert counts == {"mmlu_pro": 3}
    [warning] = warnings
    assert "consulted 3 times in training run 'grpo-run-7', over its consult_budget of 2" in warning
    assert record_consultations(history, resolved, "other-run")[0] == {"mmlu_pro": 1}
    assert record_consultations(history, resolved, "grpo-run-7", tasks=["gsm8k"])[0] == {}
    assert history.consultations("grpo-run-7") == {"mmlu_pro": 3}


def test_the_training_run_counted_against(resolved: ResolvedContract) -> None:
    assert training_run_of(resolved) == "default" and training_run_of(resolved, "grpo-7") == "grpo-7"
