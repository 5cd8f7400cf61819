"""Typed results and the adapters that read foreign formats into them."""

from rlgate.results.models import MetricKey, RunProvenance, RunResult, SampleRecord, TaskProtocol, TaskResult

__all__ = ["MetricKey", "RunProvenance", "RunResult", "SampleRecord", "TaskProtocol", "TaskResult"]
