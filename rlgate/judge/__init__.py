"""The judge layer: rule-first verification, then an LLM judge through deepeval, with bias and drift checks.

Importing this package is cheap: deepeval, torch and transformers load only when a judge runs.
"""

from rlgate.contract.judge_policy import CalibrationSpec, JudgeModelSpec, JudgeSpec, resolve_judge

__all__ = ["CalibrationSpec", "JudgeModelSpec", "JudgeSpec", "resolve_judge"]
