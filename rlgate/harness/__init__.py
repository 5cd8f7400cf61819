"""Harnesses turn a contract's suites into results, behind one port (`Harness`) and a lazy registry.

lm-eval is one adapter (`rlgate.harness.lmeval`): text and multimodal tasks on vLLM, HF transformers
or an OpenAI-compatible endpoint, or imported responses. Nothing heavy is imported until a harness
runs, so `import rlgate` never pulls in lm-eval, torch or vLLM.
"""

from __future__ import annotations

from rlgate.harness.base import Harness, ProgressSink, RunOutcome, RunPlan, SilentProgress
from rlgate.harness.registry import (
    DEFAULT_HARNESS,
    HARNESSES,
    get_harness,
    harness_for,
    read_results,
    register_harness,
    unregister_harness,
)

__all__ = ["DEFAULT_HARNESS", "HARNESSES", "Harness", "ProgressSink", "RunOutcome", "RunPlan", "SilentProgress",
           "get_harness", "harness_for", "read_results", "register_harness", "unregister_harness"]
