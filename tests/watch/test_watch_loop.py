"""The watcher's loop with the gate replaced by a recorder (no model): once per step, restart-safe, deletions,
half-written checkpoints, the stop conditions, the control signal and the webhook."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from rlgate._core.errors import InputError
from rlgate.engine.models import Decision
from rlgate.store.history import SQLiteHistory
from rlgate.watch import loop as watch_loop
from rlgate.watch.control import ControlSignal, read_control, write_control
from rlgate.watch.layouts import Checkpoint
from rlgate.watch.loop import Watcher, WatchOptions
from rlgate.watch.state import StepRecord
from tests.watch.helpers import write_contract


class Recorder:
    """A WatchObserver that keeps what it is told."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.finished: list[StepRecord] = []

    def step_started(self, step: int, checkpoint: str, splits: list[str]) -> None:
        self.started.append(step)

    def step_finished(self, record: StepRecord, signal: ControlSignal | None) -> None:
        self.finished.append(record)

    def waiting(self, text: str) -> None: ...
    def task_started(self, task: str, total: int, cached: int) -> None: ...
    def advanced(self, task: str, count: int) -> None: ...
    def task_finished(self, task: str) -> None: ...
    def message(self, text: str) -> None: ...


def trl_checkpoint(run: Path, step: int, *, state: bool = True) -> Path:
    folder = run / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    if state:
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": []}))
    return folder


class FakeGate:
    """Stands for `rlgate check`: records the history row (as check does) and writes decision.json.

    `metric`: step -> the hard metric's value; `hook(step)` runs after the record (to kill or delete)."""

    def __init__(self, metric: dict[int, float], hook: Any = None) -> None:
        self.metric, self.hook, self.calls = metric, hook, []

    def __call__(self, view: Any, checkpoint: Checkpoint, out: Path, **_: Any) -> Any:
        from rlgate.store.open import open_contract_history

        self.calls.append(checkpoint.step)
        if not checkpoint.model.exists():
            raise OSError(2, "No such file or directory")
        decision = Decision(decision="release", summary="release: fake", gates=[], contract=view.name, alpha=0.05,
                            seed=0)
        with open_contract_history(view) as history:
            history.record(view.contract.monitor.training_run, checkpoint.step, str(checkpoint.model),
                           {"gsm8k/answer_parse_failure_rate/flexible-extract": self.metric.get(checkpoint.step, 0.0),
                            "train/reward_mean": 0.1 * checkpoint.step}, "release", contract=view.name)
        out.mkdir(parents=True, exist_ok=True)
        (out / "decision.json").write_text(decision.model_dump_json())
        if self.hook:
            self.hook(checkpoint)

        class Result:
            pass
        result = Result()
        result.decision = decision  # type: ignore[attr-defined]
        return result


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    return write_contract(tmp_path / "contract", tmp_path / "baseline", documents=2,
                          extra="monitor:\n  overrides: {safety_worse: {tolerance: 0.2}}\n")


def watcher(run: Path, contract: Path, gate: FakeGate, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Watcher:
    monkeypatch.setattr(watch_loop, "gate_checkpoint", gate)
    options.setdefault("poll_seconds", 0.01)
    return Watcher(WatchOptions(run_dir=run, contract=contract, **options), Recorder(), sleep=lambda s: None)


def rows(run_name: str) -> list[tuple[int, str]]:
    import os

    with SQLiteHistory(os.environ["RLGATE_HISTORY"]) as history:
        return [(r.step, r.checkpoint) for r in history.history(run_name)]


def test_each_complete_checkpoint_is_gated_once_and_a_worse_hard_metric_pauses_the_run(
        tmp_path: Path, contract: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    for step in (2, 4):
        trl_checkpoint(run, step)
    gate = FakeGate({2: 0.1, 4: 0.7})
    summary = watcher(run, contract, gate, monkeypatch, once=True).run()
    assert gate.calls == [2, 4]
    signal = read_control(run)
    assert signal is not None and signal.action == "pause" and signal.step == 4
    assert any("safety_worse" in r and "training reward rose 0.2 -> 0.4" in r for r in signal.reasons)
    assert "told to pause at step 4" in summary.stopped_because
    report = json.loads((run / "rlgate" / "step_4" / "watch.json").read_text())
    assert report["action"] == "pause" and report["control"]["action"] == "pause"
    # a second watcher gates nothing again, and the history holds one row per checkpoint
    again = FakeGate({})
    watcher(run, contract, again, monkeypatch, once=True).run()
    assert again.calls == [] and [s for s, _ in rows("run")] == [2, 4]


def test_a_watcher_killed_after_the_history_row_takes_that_decision_on_restart(
        tmp_path: Path, contract: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    trl_checkpoint(run, 1)

    def killed(checkpoint: Checkpoint) -> None:
        raise KeyboardInterrupt  # stands for SIGKILL between the record and the step's report
    with pytest.raises(KeyboardInterrupt):
        watcher(run, contract, FakeGate({}, hook=killed), monkeypatch, once=True).run()
    state = json.loads((run / "rlgate" / "watch_state.json").read_text())
    assert state["steps"]["1"]["status"] == "started"
    again = FakeGate({})
    summary = watcher(run, contract, again, monkeypatch, once=True).run()
    assert again.calls == [] and any("gated before the watcher restarted" in n for n in summary.notes)
    assert rows("run") == [(1, str(run.resolve() / "checkpoint-1"))]
    assert json.loads((run / "rlgate" / "watch_state.json").read_text())["steps"]["1"]["status"] == "gated"


def test_a_checkpoint_deleted_while_it_is_evaluated_is_skipped_without_a_traceback(
        tmp_path: Path, contract: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    run = tmp_path / "run"
    trl_checkpoint(run, 1)
    trl_checkpoint(run, 2)

    class Rotating(FakeGate):
        def __call__(self, view: Any, checkpoint: Checkpoint, out: Path, **kw: Any) -> Any:
            if checkpoint.step == 1:
                shutil.rmtree(checkpoint.root)  # save_total_limit rotates it away mid-evaluation
                raise RuntimeError("safetensors: cannot open file")
            return super().__call__(view, checkpoint, out, **kw)
    w = watcher(run, contract, Rotating({}), monkeypatch, once=True)
    w.run()
    assert w.state.steps[1].status == "skipped" and "deleted while it was evaluated" in w.state.steps[1].note
    assert w.state.steps[2].status == "gated"
    assert [s for s, _ in rows("run")] == [2]


def test_a_half_written_checkpoint_is_not_gated_until_its_marker_is_written(
        tmp_path: Path, contract: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    folder = trl_checkpoint(run, 3, state=False)
    (folder / "trainer_state.json").write_text('{"global_step": 3, "log_hist')  # being written
    gate = FakeGate({})
    w = watcher(run, contract, gate, monkeypatch, once=True)
    summary = w.run()
    assert gate.calls == [] and "1 still being written" in summary.stopped_because
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 3}))
    watcher(run, contract, gate, monkeypatch, once=True).run()
    assert gate.calls == [3]


def test_a_folder_without_a_marker_is_gated_once_its_sizes_stay_put(
        tmp_path: Path, contract: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlgate.watch.layouts import Completion, find_checkpoints

    run = tmp_path / "run"
    (run / "step_5").mkdir(parents=True)
    (run / "step_5" / "model.safetensors").write_bytes(b"x")
    now = [0.0]
    completion = Completion(stable_seconds=30.0, clock=lambda: now[0])
    [found] = find_checkpoints(run)
    assert found.layout == "plain" and not completion.complete(found)
    now[0] = 20.0
    (run / "step_5" / "model.safetensors").write_bytes(b"xx")  # still growing
    assert not completion.complete(found)
    now[0] = 45.0
    assert not completion.complete(found)
    now[0] = 51.0
    assert completion.complete(found)


def test_verl_layout_is_complete_on_its_tracker(tmp_path: Path) -> None:
    from rlgate.watch.layouts import VERL_TRACKER, find_checkpoints

    for step in (10, 20):
        (tmp_path / f"global_step_{step}" / "actor" / "huggingface").mkdir(parents=True)
    (tmp_path / "global_step_30" / "actor").mkdir(parents=True)  # no Hugging Face copy: not a gateable checkpoint
    (tmp_path / VERL_TRACKER).write_text("10\n")
    found = find_checkpoints(tmp_path)
    assert [(c.step, c.marker, c.model.name) for c in found] == [(10, True, "huggingface"), (20, False, "huggingface")]


def test_stop_conditions_until_step_and_idle_timeout(tmp_path: Path, contract: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    for step in (1, 2, 3):
        trl_checkpoint(run, step)
    gate = FakeGate({})
    summary = watcher(run, contract, gate, monkeypatch, until_step=2).run()
    assert gate.calls == [1, 2] and "step 2 is handled" in summary.stopped_because
    now = [0.0]
    monkeypatch.setattr(watch_loop, "gate_checkpoint", gate)
    w = Watcher(WatchOptions(run_dir=run, contract=contract, poll_seconds=5, idle_timeout=12), Recorder(),
                clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    summary = w.run()
    assert gate.calls == [1, 2, 3] and "no new checkpoint for 12 s" in summary.stopped_because


def test_a_run_folder_watched_under_another_contract_is_refused(tmp_path: Path, contract: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    trl_checkpoint(run, 1)
    watcher(run, contract, FakeGate({}), monkeypatch, once=True).run()
    with pytest.raises(InputError, match="watched under contract 'watch_e2e' and training run 'run'"):
        watcher(run, contract, FakeGate({}), monkeypatch, once=True, training_run="other")


def test_the_webhook_gets_a_slack_message_when_the_run_is_paused(tmp_path: Path, contract: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    received: list[dict[str, str]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None: ...

    server = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hooks/T000"
        hooked = write_contract(tmp_path / "hooked", tmp_path / "baseline", documents=2,
                                extra=f"monitor:\n  overrides: {{safety_worse: {{tolerance: 0.2}}}}\n"
                                f"watch:\n  webhook_url: {url}\n")
        run = tmp_path / "run"
        for step in (2, 4):
            trl_checkpoint(run, step)
        watcher(run, hooked, FakeGate({2: 0.0, 4: 0.9}), monkeypatch, once=True).run()
    finally:
        server.shutdown()
    assert len(received) == 1  # the continue at step 2 posts nothing
    assert "-> *pause* after gating step 4" in received[0]["text"] and "safety_worse" in received[0]["text"]


def test_a_stopping_signal_is_kept_by_later_steps(tmp_path: Path, contract: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    trl_checkpoint(run, 7)
    write_control(run, ControlSignal(action="rollback", step=5, rollback_to_step=3, rollback_to="x",
                                     reasons=["earlier"]))
    watcher(run, contract, FakeGate({}), monkeypatch, once=True).run()
    signal = read_control(run)
    assert signal is not None and (signal.action, signal.step, signal.last_gated_step) == ("rollback", 5, 7)


def test_a_checkpoint_the_gate_refuses_is_a_failed_step_and_the_watch_goes_on(
        tmp_path: Path, contract: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    trl_checkpoint(run, 1)
    trl_checkpoint(run, 2)

    class Refusing(FakeGate):
        def __call__(self, view: Any, checkpoint: Checkpoint, out: Path, **kw: Any) -> Any:
            if checkpoint.step == 1:
                raise InputError("holds no weights", file=checkpoint.model, fix="save the model")
            return super().__call__(view, checkpoint, out, **kw)
    w = watcher(run, contract, Refusing({}), monkeypatch, once=True)
    w.run()
    assert w.state.steps[1].status == "failed" and "holds no weights" in w.state.steps[1].note
    assert "fix: save the model" in w.state.steps[1].note and w.state.steps[2].status == "gated"
