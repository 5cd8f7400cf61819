"""The deepeval names rlgate uses, imported only after rlgate has set deepeval's environment.

Every judge module imports deepeval through here, so telemetry and `.env` loading are off and
deepeval's folder is set whichever module is imported first. Import lazily: this imports deepeval.
"""

from __future__ import annotations

from rlgate.judge.deepeval_env import set_deepeval_env

set_deepeval_env()

from deepeval.metrics import GEval  # noqa: E402
from deepeval.metrics.g_eval.utils import Rubric  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase, SingleTurnParams  # noqa: E402

__all__ = ["DeepEvalBaseLLM", "GEval", "LLMTestCase", "Rubric", "SingleTurnParams"]
