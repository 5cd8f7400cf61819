"""rlgate: decide whether an RL-post-trained LLM checkpoint may ship.

The public API is re-exported lazily so `import rlgate` stays fast and never imports torch,
transformers, lm_eval, vllm or deepeval.
"""

from __future__ import annotations

from rlgate._core.lazy import lazy_getattr

__version__ = "0.1.0"

_EXPORTS = {
    "load_contract": "rlgate.harness.vocabulary",
    "ResolvedContract": "rlgate.contract.loader",
    "Contract": "rlgate.contract.models",
    "InputError": "rlgate._core.errors",
    "MetricRef": "rlgate.contract.metrics",
}

__all__ = ["__version__", *_EXPORTS]


__getattr__ = lazy_getattr(__name__, _EXPORTS)
