"""The lm-eval runner's implementation. These modules import lm_eval at the top: they are imported
only from inside `rlgate.runners.registry`'s factories and the runner's `run()`, never by
`import rlgate`."""
