"""How each harness logs per-sample results: the one place reasons and warnings take the fix from.

Keyed by the adapter's name (`RunProvenance.harness`); to be replaced by the harness vocabulary's samples
hint once every adapter declares its own.
"""

from __future__ import annotations

from rlgate.results.models import RunResult

_SAMPLES_HINT = {"lm_eval": "re-run lm_eval with --log_samples",
                 "inspect": "keep the samples in the log (run inspect eval without --no-log-samples)"}
_DEFAULT = "re-run the harness so that it writes per-sample results"


def samples_hint(*runs: RunResult | None) -> str:
    """How to get per-sample results from the harness that produced the first of `runs` that names one."""
    for run in runs:
        harness = run.provenance.harness if run is not None else None
        if harness:
            return _SAMPLES_HINT.get(harness, _DEFAULT)
    return _SAMPLES_HINT["lm_eval"]
