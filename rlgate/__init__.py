"""rlgate: decide whether an RL-post-trained LLM checkpoint may ship.

The public API is re-exported lazily so `import rlgate` stays fast and never imports torch,
transformers, lm_eval, vllm or deepeval.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_contract": "rlgate.contract.loader",
    "ResolvedContract": "rlgate.contract.loader",
    "Contract": "rlgate.contract.models",
    "InputError": "rlgate.errors",
    "MetricRef": "rlgate.metrics",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rlgate' has no attribute {name!r}")
    return getattr(import_module(module), name)
