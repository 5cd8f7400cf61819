"""Gate checkpoints while the run trains (`rlgate watch`) and send the run a pause/rollback signal.

`loop` follows the run folder, `layouts` finds complete checkpoints, `gate` narrows the contract to the
splits of a step and calls `rlgate check`, `rules` turns the history into an action, `control` is the file
the trainer reads (`rlgate.ci.hooks`), `state` makes the watcher restart-safe.
"""
