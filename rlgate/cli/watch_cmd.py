"""`rlgate watch`: gate a training run's checkpoints as they are saved and signal pause/rollback back to it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate.cli.common import app, handles_input_errors


@app.command("watch")
@handles_input_errors
def watch_command(
    run_dir: Annotated[Path, typer.Argument(
        help="the trainer's output folder (TRL output_dir, verl default_local_dir)")],
    contract: Annotated[Path, typer.Option(help="contract YAML file")],
    cache: Annotated[Path | None, typer.Option(help="generation cache folder (default RUN_DIR/rlgate/cache)")] = None,
    training_run: Annotated[str | None, typer.Option(
        help="history name of the run (default monitor.training_run, else the run folder's name)")] = None,
    poll: Annotated[float, typer.Option(help="seconds between looks at the run folder", min=0.1)] = 5.0,
    idle_timeout: Annotated[float | None, typer.Option(
        help="stop after this many seconds without a new checkpoint (default: run until stopped)", min=0.0)] = None,
    until_step: Annotated[int | None, typer.Option(help="stop once this step (or a later one) is handled",
                                                   min=0)] = None,
    once: Annotated[bool, typer.Option(help="gate the complete checkpoints present now, then stop")] = False,
    seed: Annotated[int, typer.Option(help="seed of the statistics and the sequential order")] = 0,
) -> None:
    """Follow RUN_DIR and gate each complete checkpoint on the contract's dev splits; writes
    RUN_DIR/rlgate/control.json, which the TRL callback and the verl hook obey (pause, rollback)."""
    from rlgate.cli.progress import quiet_environment
    from rlgate.cli.watch_progress import WatchStatus
    from rlgate.watch.loop import Watcher, WatchOptions

    quiet_environment()
    options = WatchOptions(run_dir=run_dir, contract=contract, cache_dir=cache, training_run=training_run,
                           poll_seconds=poll, idle_timeout=idle_timeout, until_step=until_step, once=once, seed=seed)
    status = WatchStatus(run_dir.name)
    watcher = Watcher(options, status)
    status.run = watcher.training_run
    with status:
        summary = watcher.run()
    for note in summary.notes:
        typer.echo(f"note: {note}", err=True)
    counts: dict[str, int] = {}
    for record in summary.state.steps.values():
        counts[record.status] = counts.get(record.status, 0) + 1
    signal = summary.control
    typer.echo(f"rlgate watch stopped: {summary.stopped_because}; steps "
               + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none")
               + f"; run signal: {signal.action if signal else 'none written'}"
               + (f" (set at step {signal.step})" if signal and signal.stops else ""))
