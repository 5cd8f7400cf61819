"""lm-eval's task catalog: the metrics, filters and ranges of the built-in tasks rlgate ships suites for.

Only the lm-eval adapter reads this table (`LmEvalHarness.vocabulary`); the rest of rlgate asks the
task's harness. A task is found by name or by prefix (`mmlu_pro_math` is an `mmlu_pro` subtask).
"""

from __future__ import annotations

from rlgate.contract.vocabulary import MetricInfo, TaskVocabulary, ValueKind, neutral_metric, open_vocabulary

#: lm-eval metric names (and their filters) for the built-in tasks rlgate ships suites for.
KNOWN_TASK_METRICS: dict[str, dict[str, tuple[str, ...]]] = {
    "gsm8k": {"exact_match": ("strict-match", "flexible-extract")},
    "gsm8k_cot": {"exact_match": ("strict-match", "flexible-extract")},
    "mmlu_pro": {"exact_match": ("custom-extract",)},
    "ifeval": {
        "prompt_level_strict_acc": ("none",),
        "inst_level_strict_acc": ("none",),
        "prompt_level_loose_acc": ("none",),
        "inst_level_loose_acc": ("none",),
    },
}

#: The filter whose answers a derived metric such as answer_parse_failure_rate looks at by default.
DEFAULT_FILTER: dict[str, str] = {
    "gsm8k": "flexible-extract",
    "gsm8k_cot": "flexible-extract",
    "mmlu_pro": "custom-extract",
    "ifeval": "none",
}

#: lm-eval metrics whose per-sample values are not fractions in [0, 1] (lm-eval's own names).
_KINDS: dict[str, ValueKind] = {"perplexity": "unbounded", "word_perplexity": "unbounded",
                                "byte_perplexity": "unbounded", "bits_per_byte": "unbounded", "bleu": "unbounded",
                                "ter": "unbounded", "chrf": "unbounded"}
SAMPLES_HINT = "re-run lm_eval with --log_samples"
SAMPLES_OPTION = "--log_samples"


def catalog_task(task: str) -> str | None:
    """The catalog entry for a task name (`mmlu_pro_math` → `mmlu_pro`), or None if unknown."""
    if task in KNOWN_TASK_METRICS:
        return task
    for known in KNOWN_TASK_METRICS:
        if task.startswith(known + "_"):
            return known
    return None


def task_vocabulary(task: str, *, local: bool = False) -> TaskVocabulary:
    """The vocabulary of an lm-eval task; `local`: the suite's own task folder, which the catalog does not describe."""
    known = None if local else catalog_task(task)
    if known is None:
        return open_vocabulary("lm_eval", samples_hint=SAMPLES_HINT, samples_option=SAMPLES_OPTION)
    metrics = {name: MetricInfo(filters=filters, higher_is_better=neutral_metric(name).higher_is_better,
                                kind=_KINDS.get(name, "fraction"))
               for name, filters in KNOWN_TASK_METRICS[known].items()}
    return TaskVocabulary(harness="lm_eval", metrics=metrics, closed=True, default_filter=DEFAULT_FILTER[known],
                          samples_hint=SAMPLES_HINT, samples_option=SAMPLES_OPTION)


def family(task: str) -> str:
    """The catalog family of a task name (its own name when the catalog does not know it)."""
    return catalog_task(task) or task
