"""`rlgate watch`: follow a training run's folder and gate each checkpoint once it is completely written.

Per checkpoint, in step order: mark the step started (durable state), gate it (`rlgate.watch.gate`), run the
cross-checkpoint rules on the history that now holds it, write the step's report, update the control signal
(`control.json`, atomically; a stopping signal is kept until a person clears it), post the webhook when the
signal starts to stop the run, mark the step done. The watcher stops once the signal stops the run (and the
complete checkpoints present are handled), after `idle_timeout` seconds without a new checkpoint, once
`until_step` is handled, or (`once`) when the checkpoints present are handled.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedContract
from rlgate.engine.models import Decision
from rlgate.harness import ProgressSink
from rlgate.watch.control import CONTROL_FOLDER, STRENGTH, ControlSignal, read_control, write_control
from rlgate.watch.gate import gate_checkpoint, plan_private, watch_view
from rlgate.watch.layouts import Checkpoint, Completion, find_checkpoints
from rlgate.watch.report import WatchStepReport, write_step_report
from rlgate.watch.rules import StepVerdict, private_findings, step_verdict
from rlgate.watch.state import StepRecord, WatchState, load_state, save_state

if TYPE_CHECKING:
    from rlgate.store.protocol import HistoryStore

log = logging.getLogger("rlgate.watch")


class WatchObserver(ProgressSink, Protocol):
    """What the watcher reports as it goes (the CLI draws it live, or as one line per step)."""

    def step_started(self, step: int, checkpoint: str, splits: list[str]) -> None: ...

    def step_finished(self, record: StepRecord, signal: ControlSignal | None) -> None: ...

    def waiting(self, text: str) -> None: ...


@dataclass
class WatchOptions:
    """How to watch one run (the CLI's arguments)."""

    run_dir: Path
    contract: Path
    cache_dir: Path | None = None
    training_run: str | None = None
    poll_seconds: float = 5.0
    idle_timeout: float | None = None
    until_step: int | None = None
    once: bool = False
    seed: int = 0


@dataclass
class WatchSummary:
    """What one watch did: the state at the end and why it stopped."""

    state: WatchState
    stopped_because: str
    control: ControlSignal | None = None
    notes: list[str] = field(default_factory=list)


def training_run_name(resolved: ResolvedContract, run_dir: Path, explicit: str | None) -> str:
    """--training-run, the contract's monitor.training_run, else the run folder's name."""
    monitor = resolved.contract.monitor
    return explicit or (monitor.training_run if monitor and monitor.training_run else None) or run_dir.resolve().name


class Watcher:
    """One watched run under one contract."""

    def __init__(self, options: WatchOptions, observer: WatchObserver,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        from rlgate.harness.vocabulary import load_contract

        if not options.run_dir.is_dir():
            raise InputError(f"run folder {options.run_dir} does not exist", file=options.run_dir,
                             fix="pass the trainer's output folder (TRL output_dir, verl default_local_dir); "
                             "start the watcher once the trainer has created it")
        self.options, self.observer, self.clock, self.sleep = options, observer, clock, sleep
        self.run_dir = options.run_dir.resolve()
        self.resolved = load_contract(options.contract)
        self.training_run = training_run_name(self.resolved, self.run_dir, options.training_run)
        self.state = load_state(self.run_dir, self.resolved.name, self.training_run)
        spec = self.resolved.contract.watch
        self.completion = Completion(spec.stable_seconds if spec else 30.0, clock=clock)
        self.cache_dir = options.cache_dir or self.run_dir / CONTROL_FOLDER / "cache"
        self.notes: list[str] = []

    # ---------------------------------------------------------------------------------------- the loop
    def run(self) -> WatchSummary:
        last_change = self.clock()
        while True:
            found = find_checkpoints(self.run_dir)
            self._skip_vanished(found)
            pending = [c for c in found if not self.state.done(c.step)
                       and (self.options.until_step is None or c.step <= self.options.until_step)]
            ready = [c for c in pending if self.completion.complete(c)]
            for checkpoint in ready:
                self.handle(checkpoint)
                last_change = self.clock()
            signal = self._control() if ready else None
            if signal is not None and signal.stops and not any(
                    self.completion.complete(c) for c in find_checkpoints(self.run_dir) if not self.state.done(c.step)):
                return self._summary(f"the run was told to {signal.action} at step {signal.step}: restart the watcher "
                                     "when training resumes (after clearing RUN_DIR/rlgate/control.json)")
            if self.options.until_step is not None and any(
                    s >= self.options.until_step and self.state.done(s) for s in self.state.steps):
                return self._summary(f"step {self.options.until_step} is handled")
            idle = self.clock() - last_change
            if self.options.once and not ready:
                settling = [c for c in pending if not c.needs_marker]
                if not settling or idle > self.completion.stable_seconds + self.options.poll_seconds:
                    return self._summary("--once: every complete checkpoint present is handled" + (
                        f"; {len(pending)} still being written (not gated)" if pending else ""))
            if self.options.idle_timeout is not None and idle > self.options.idle_timeout:
                return self._summary(f"no new checkpoint for {self.options.idle_timeout:g} s")
            if not ready:
                self.observer.waiting(f"waiting for checkpoints in {self.run_dir} "
                                      f"({len(self.state.gated())} gated, {len(pending)} pending)")
                self.sleep(self.options.poll_seconds)

    def _summary(self, why: str) -> WatchSummary:
        return WatchSummary(self.state, why, self._control(), self.notes)

    def _control(self) -> ControlSignal | None:
        try:
            return read_control(self.run_dir)
        except InputError as error:
            self.notes.append(f"{error.message} ({error.file}); it is rewritten at the next gated step")
            return None

    def _skip_vanished(self, found: list[Checkpoint]) -> None:
        """A step seen (started) whose folder is gone, e.g. rotated away by save_total_limit: skipped."""
        present = {c.step for c in found}
        for step, record in list(self.state.steps.items()):
            if record.status == "started" and step not in present and not Path(record.checkpoint).exists():
                self._finish_record(record.model_copy(update={
                    "status": "skipped", "note": "the checkpoint was deleted before its gate finished "
                    "(save_total_limit?): not gated"}), None)

    # ---------------------------------------------------------------------------------------- one step
    def handle(self, checkpoint: Checkpoint) -> None:
        from rlgate.store.open import open_contract_history

        out = self.run_dir / CONTROL_FOLDER / f"step_{checkpoint.step}"
        history = open_contract_history(self.resolved)
        try:
            plan = plan_private(self.resolved, history, self.training_run, len(self.state.gated()))
            view = watch_view(self.resolved, checkpoint, self.training_run, private=plan.consult)
            splits = sorted({t.split for t in view.tasks})
            previous = self.state.steps.get(checkpoint.step)
            record = StepRecord(step=checkpoint.step, checkpoint=str(checkpoint.model), status="started",
                                private=plan.consult, note=plan.note)
            self.state.steps[checkpoint.step] = record
            save_state(self.run_dir, self.state)
            self.observer.step_started(checkpoint.step, str(checkpoint.model), splits)
            decision = self._recorded_decision(history, view, checkpoint, out) if previous is not None else None
            if decision is None:
                decision = self._gate(view, checkpoint, out, record)
                if decision is None:
                    return
            verdict = self._verdict(history, view, decision)
        finally:
            history.close()
        signal = self._signal(checkpoint, verdict)
        write_step_report(out, WatchStepReport(
            training_run=self.training_run, contract=self.resolved.name, step=checkpoint.step,
            checkpoint=str(checkpoint.model),
            decision=decision.decision, summary=decision.summary, splits=splits, private_note=plan.note,
            action=verdict.action, reasons=verdict.reasons, findings=verdict.findings,
            history_rules=verdict.statuses, control=signal))
        self._publish(signal)
        self._finish_record(record.model_copy(update={"status": "gated", "decision": decision.decision,
                                                      "action": verdict.action}), signal)

    def _gate(self, view: ResolvedContract, checkpoint: Checkpoint, out: Path, record: StepRecord) -> Decision | None:
        """The check; a checkpoint deleted under it is skipped, bad input is a failed step (both without traceback)."""
        try:
            result = gate_checkpoint(view, checkpoint, out, cache_dir=self.cache_dir, progress=self.observer,
                                     seed=self.options.seed)
        except Exception as error:  # a vanished checkpoint fails in any way
            if not checkpoint.model.exists():
                self._finish_record(record.model_copy(update={
                    "status": "skipped", "note": "the checkpoint was deleted while it was evaluated "
                    "(save_total_limit?): not gated"}), None)
                return None
            if isinstance(error, InputError):
                text = error.message + (f" ({error.file})" if error.file else "") + (f"; fix: {error.fix}"
                                                                                     if error.fix else "")
            else:  # a long-lived watcher records the failure and goes on; the run keeps its last signal
                log.error("rlgate watch: gating step %d failed", checkpoint.step, exc_info=error)
                text = f"{type(error).__name__}: {error}"
            self._finish_record(record.model_copy(update={"status": "failed", "note": text}), None)
            return None
        return result.decision

    def _recorded_decision(self, history: HistoryStore, view: ResolvedContract, checkpoint: Checkpoint,
                           out: Path) -> Decision | None:
        """A killed watcher's step whose history row and decision.json were both written: that decision."""
        from rlgate._core.text import stored_text
        from rlgate.store.records import of_contract

        name = stored_text(str(Path(str(checkpoint.model))))
        rows = [r for r in of_contract(history.history(self.training_run), view.name) if r.checkpoint == name]
        decision_file = out / "decision.json"
        if not rows or not decision_file.is_file():
            return None
        try:
            decision = Decision.model_validate_json(decision_file.read_text(encoding="utf-8"))
        except ValueError:
            return None
        self.notes.append(f"step {checkpoint.step}: gated before the watcher restarted; its recorded decision is used")
        return decision

    def _verdict(self, history: HistoryStore, view: ResolvedContract, decision: Decision) -> StepVerdict:
        from rlgate.monitor.api import contract_policy
        from rlgate.monitor.history_rules import evaluate_history_with_status, targets_from_contract
        from rlgate.store.records import of_contract

        records = of_contract(history.history(self.training_run), view.name)
        policy, _ = contract_policy(view)
        targets = targets_from_contract(self.resolved)
        findings, statuses = evaluate_history_with_status(records, targets, policy)
        findings += private_findings(records, targets, policy, findings)
        return step_verdict(decision, findings, statuses, records)

    def _signal(self, checkpoint: Checkpoint, verdict: StepVerdict) -> ControlSignal:
        """The new control signal: this step's, unless the run already holds a stronger (stopping) one."""
        previous = self._control()
        if previous is not None and STRENGTH[previous.action] >= STRENGTH[verdict.action] and previous.stops:
            return previous.model_copy(update={"last_gated_step": checkpoint.step, "updated_at": time.time()})
        rollback = verdict.rollback_to if verdict.action == "rollback" else None
        return ControlSignal(action=verdict.action, step=checkpoint.step, checkpoint=str(checkpoint.model),
                             rollback_to=rollback, rollback_to_step=verdict.rollback_to_step if rollback else None,
                             reasons=verdict.reasons, last_gated_step=checkpoint.step)

    def _publish(self, signal: ControlSignal) -> None:
        """Write control.json; post the webhook when the signal has just started to stop the run."""
        before = self._control()
        write_control(self.run_dir, signal)
        spec = self.resolved.contract.watch
        changed = signal.stops and (before is None or before.action != signal.action or before.step != signal.step)
        if changed and spec is not None and spec.webhook_url:
            from rlgate.watch.webhook import message, post

            problem = post(spec.webhook_url, message(signal, self.training_run))
            if problem:
                self.notes.append(f"step {signal.step}: the webhook was not delivered ({problem})")
                log.warning("rlgate watch: the webhook was not delivered (%s)", problem)

    def _finish_record(self, record: StepRecord, signal: ControlSignal | None) -> None:
        self.state.steps[record.step] = record
        save_state(self.run_dir, self.state)
        self.observer.step_finished(record, signal)


def watch(options: WatchOptions, observer: WatchObserver) -> WatchSummary:
    """Watch one run until it stops (see the module's docstring); the state and final signal."""
    return Watcher(options, observer).run()
