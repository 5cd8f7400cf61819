"""The contract as a watched step gates it: dev splits always, private ones at `watch.private_every` within
their consult budget; gates of splits not consulted left out; the monitor on the checkpoint's own log;
sequential stopping on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.vocabulary import load_contract
from rlgate.store.history import SQLiteHistory
from rlgate.watch.gate import plan_private, watch_view
from rlgate.watch.layouts import find_checkpoints
from tests.watch.helpers import write_contract


@pytest.fixture
def checkpoint(tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "run" / "checkpoint-3"
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 3}))
    [found] = find_checkpoints(tmp_path / "run")
    return found


def test_a_step_gates_the_dev_split_and_its_gates_only(tmp_path: Path, checkpoint) -> None:  # type: ignore[no-untyped-def]
    resolved = load_contract(write_contract(tmp_path / "c", tmp_path / "base", documents=2, private=True,
                                            extra="watch: {private_every: 2}\n"))
    view = watch_view(resolved, checkpoint, "run-a", private=False)
    assert [t.name for t in view.tasks] == ["gsm8k"] and view.gates.regression == []
    assert view.gates.primary is not None and [g.metric for g in view.gates.hard] == ["gsm8k/answer_parse_failure_rate"]
    assert view.contract.protocol.sequential is not None  # sequential stopping on (lm-eval generates in looks)
    assert view.contract.monitor is not None and view.contract.monitor.training_run == "run-a"
    assert view.contract.monitor.logs == [str(checkpoint.root / "trainer_state.json")]
    assert view.private_tasks == []
    full = watch_view(resolved, checkpoint, "run-a", private=True)
    assert sorted(t.name for t in full.tasks) == ["gsm8k", "mmlu_pro"] and len(full.gates.regression) == 1
    assert full.private_tasks == ["mmlu_pro"]
    assert resolved.contract.monitor is None and len(resolved.tasks) == 2  # the loaded contract is not changed


def test_private_splits_at_their_cadence_and_never_past_the_consult_budget(tmp_path: Path) -> None:
    import os

    resolved = load_contract(write_contract(tmp_path / "c", tmp_path / "base", documents=2, private=True,
                                            extra="watch: {private_every: 2}\n"))
    with SQLiteHistory(os.environ["RLGATE_HISTORY"]) as history:
        assert not plan_private(resolved, history, "run-a", 0).consult
        assert plan_private(resolved, history, "run-a", 1).consult
        assert not plan_private(resolved, history, "run-a", 2).consult
        history.record_consultations("run-a", ["mmlu_pro", "mmlu_pro"])
        history.record_consultations("run-a", ["mmlu_pro"])
        plan = plan_private(resolved, history, "run-a", 3)
    assert not plan.consult and "used its consult_budget of 2" in plan.note
    unset = load_contract(write_contract(tmp_path / "d", tmp_path / "base", documents=2, private=True))
    with SQLiteHistory(os.environ["RLGATE_HISTORY"]) as history:
        plan = plan_private(unset, history, "run-b", 1)
    assert not plan.consult and "watch.private_every is unset" in plan.note


@pytest.mark.parametrize(("text", "message"), [
    ("watch: {private_every: 0}\n", "greater than or equal to 1"),
    ("watch: {webhook_url: hooks.slack.com/x}\n", "http:// or https:// URL"),
    ("watch: {every: 2}\n", "every"),
])
def test_a_bad_watch_section_is_one_located_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as err:
        load_contract(write_contract(tmp_path / "c", tmp_path / "base", documents=2, extra=text))
    assert err.value.line is not None and "watch" in (err.value.field or "")


def test_history_targets_name_metrics_as_the_history_stores_them(tmp_path: Path) -> None:
    """A hard gate written without a filter is stored under the verdict's name (with the harness's default
    filter); the cross-checkpoint rules must look it up under that name, or safety_worse never fires."""
    from rlgate.monitor.history_rules import targets_from_contract

    targets = targets_from_contract(load_contract(write_contract(tmp_path / "c", tmp_path / "base", documents=2,
                                                                 private=True)))
    assert targets.hard == {"gsm8k/answer_parse_failure_rate/flexible-extract": False}
    assert targets.primary == "gsm8k/exact_match/flexible-extract"
    assert targets.private == {"mmlu_pro/exact_match/custom-extract": True}
