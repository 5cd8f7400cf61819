"""Runners turn a contract's suites into results: a live backend through lm-eval, or imported responses.

The registry is lazy: naming a runner imports nothing heavy until `get_runner` is called, so
`import rlgate` never pulls in lm-eval, torch or vLLM.
"""

from __future__ import annotations

import importlib

from rlgate.errors import MissingExtraError
from rlgate.runners.base import ProgressSink, Runner, RunOutcome, RunPlan, SilentProgress

#: runner name -> "module:Class"; imported on first use.
RUNNERS: dict[str, str] = {"lm_eval": "rlgate.runners.lmeval.runner:LmEvalRunner"}


def get_runner(name: str = "lm_eval") -> Runner:
    """The runner registered under `name`; a missing optional dependency becomes an install hint."""
    target = RUNNERS.get(name)
    if target is None:
        raise KeyError(f"unknown runner '{name}'; known: {', '.join(RUNNERS)}")
    module_name, _, cls_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("lm_eval", "torch", "transformers", "datasets"):
            raise MissingExtraError.for_extra("evaluating with lm-eval", "hf", exc.name.split(".")[0]) from None
        raise
    runner: Runner = getattr(module, cls_name)()
    return runner


__all__ = ["RUNNERS", "ProgressSink", "RunOutcome", "RunPlan", "Runner", "SilentProgress", "get_runner"]
