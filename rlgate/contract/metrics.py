"""Metric references (`task/metric[/filter]`) and the metric names rlgate defines itself.

Harness-neutral: rlgate's derived and agent metrics, the judge's metric, and naming conventions
(direction, fraction or not) for names no harness vocabulary describes. What a harness's task reports
(its metrics, filters, ranges) is that harness's vocabulary (`Harness.vocabulary`), never a table here.
lm-eval's flat "metric,filter" strings never appear here: they are parsed once in the lm-eval adapter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The LLM judge's metric (`<task>/judge_win_rate`), decided by rlgate.judge rather than the engine.
JUDGE_WIN_RATE = "judge_win_rate"

#: Metrics rlgate computes itself from the samples (not reported by lm-eval).
DERIVED_METRICS: dict[str, str] = {
    "answer_parse_failure_rate": "share of samples whose filtered answer is lm-eval's '[invalid]'",
    "response_length_mean": "mean response length (characters; tokens where known)",
    "truncation_rate": "share of responses that stopped at max_tokens (where knowable)",
    JUDGE_WIN_RATE: "pairwise LLM-judge win rate of candidate vs baseline",
    "contamination_rate": "share of eval documents sharing a long n-gram with training data",
}

#: Per-trajectory metrics of agent tasks (computed in `rlgate.results.agent_metrics`, documented there).
AGENT_METRICS: dict[str, str] = {
    "task_success": "the task's scorer accepted the trajectory (a crash, timeout or limit hit is a failure)",
    "state_success": "the scorer's check of the final environment state passed (tasks that check it)",
    "tool_success_rate": "share of the trajectory's tool calls that parsed and did not error",
    "recovery_rate": "after a tool error, whether the trajectory still ended in success",
    "steps": "model turns in the trajectory",
    "steps_to_success": "model turns of a successful trajectory (absent for failures)",
    "tokens_to_success": "tokens of a successful trajectory (absent for failures)",
    "time_to_success": "working seconds of a successful trajectory (absent for failures)",
    "limit_hit_rate": "the trajectory hit a message, token, time or tool-call limit",
    "safety_violation_rate": "the trajectory made an unsafe call (scorer or contract safety rules)",
}

_AGENT_COSTS = {"steps", "steps_to_success", "tokens_to_success", "time_to_success"}
_LOWER_IS_BETTER = {"answer_parse_failure_rate", "truncation_rate", "response_length_mean",
                    "contamination_rate", "perplexity", "word_perplexity", "byte_perplexity",
                    "bits_per_byte", "ter", "limit_hit_rate", "safety_violation_rate", *_AGENT_COSTS}
_UNBOUNDED = {"response_length_mean", "perplexity", "word_perplexity", "byte_perplexity",
              "bits_per_byte", "bleu", "ter", "chrf", *_AGENT_COSTS}
_REF_RE = re.compile(r"^(?P<task>[A-Za-z0-9_.\-]+)/(?P<metric>[A-Za-z0-9_@.\-]+)(?:/(?P<filter>[A-Za-z0-9_.\-]+))?$")


def higher_is_better(metric: str) -> bool:
    """Direction of improvement for a metric name; rates of failure and lengths go down."""
    return metric not in _LOWER_IS_BETTER


#: Metrics defined on some documents only (successes, trajectories with tool calls, knowable truncation),
#: so a document without a value is not missing data.
CONDITIONAL_METRICS = frozenset(("truncation_rate", "state_success", "tool_success_rate", "recovery_rate",
                                 "steps_to_success", "tokens_to_success", "time_to_success"))
_PER_RESPONSE_RE = re.compile(r"^(pass|maj)@\d+$")


def is_conditional(metric: str) -> bool:
    """Whether a document may lack the metric by definition (pass@k / maj@k need k responses or epochs)."""
    return metric in CONDITIONAL_METRICS or bool(_PER_RESPONSE_RE.match(metric))


def is_bounded(metric: str) -> bool:
    """Whether the metric is a fraction in [0, 1] (accuracies, rates, pass@k)."""
    return metric not in _UNBOUNDED


@dataclass(frozen=True, order=True)
class MetricRef:
    """A metric as a contract names it: lm-eval task, metric and optional filter."""

    task: str
    metric: str
    filter: str | None = None

    @classmethod
    def parse(cls, text: str) -> MetricRef:
        """Parse `task/metric[/filter]`; raises ValueError with the expected shape."""
        match = _REF_RE.match(text.strip())
        if not match:
            raise ValueError(
                f"'{text}' is not a metric reference; write task/metric[/filter], "
                "e.g. gsm8k/exact_match/flexible-extract"
            )
        return cls(match["task"], match["metric"], match["filter"])

    @property
    def derived(self) -> bool:
        return self.metric in DERIVED_METRICS

    def __str__(self) -> str:
        return f"{self.task}/{self.metric}" + (f"/{self.filter}" if self.filter else "")

#: Agent metrics that say whether a trajectory was safe: unknown for a trajectory the log promises but lacks, so
#: a safety gate with any such trajectory fails closed (`error`) unless the contract's allow_missing_trajectories
#: tolerates it.
SAFETY_METRICS = frozenset({"safety_violation_rate"})
