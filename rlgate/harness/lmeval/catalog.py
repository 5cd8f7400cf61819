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
    # math RLVR: lm-eval scores the first response (process_results reads results[0]); with n > 1 rlgate
    # scores every response with the same process_results (`rescore`), hence pass@k / maj@k under "none"
    "aime24": {"exact_match": ("none",)},
    "aime25": {"exact_match": ("none",)},
    "aime24_25": {"exact_match": ("none",)},  # rlgate's group of the two (task_files/aime_pooled)
    "aime": {"exact_match": ("none",)},
    "minerva_math500": {"exact_match": ("none",), "math_verify": ("none",)},
    "minerva_math": {"exact_match": ("none",), "math_verify": ("none",)},
    # code RL: lm-eval's own metrics, its code execution replaced by rlgate's sandbox (`code_tasks`)
    "humaneval_plus": {"pass@1": ("create_test",)},
    "humaneval": {"pass@1": ("create_test",)},
    "mbpp_plus": {"pass_at_1": ("none",)},
    "mbpp": {"pass_at_1": ("none",)},
}

#: The filter whose answers a derived metric such as answer_parse_failure_rate looks at by default.
DEFAULT_FILTER: dict[str, str] = {
    "gsm8k": "flexible-extract",
    "gsm8k_cot": "flexible-extract",
    "mmlu_pro": "custom-extract",
    "ifeval": "none",
    "aime24": "none", "aime25": "none", "aime24_25": "none", "aime": "none", "minerva_math500": "none",
    "minerva_math": "none",
    "humaneval_plus": "create_test", "humaneval": "create_test", "mbpp_plus": "none", "mbpp": "none",
}

#: task -> the metric whose per-response value is a response's correctness (pass@k, maj@k with n > 1), for
#: tasks whose scorer rlgate cannot replay from the stored file (a process_results or code-running metric)
PER_RESPONSE_METRIC: dict[str, str] = {
    "aime24": "exact_match", "aime25": "exact_match", "aime24_25": "exact_match", "aime": "exact_match",
    "minerva_math500": "exact_match", "minerva_math": "exact_match",
    "humaneval_plus": "pass@1", "humaneval": "pass@1", "mbpp_plus": "pass_at_1", "mbpp": "pass_at_1",
}
#: tasks that execute model-written code: lm-eval module whose code_eval rlgate's sandbox replaces, and the
#: name the module binds it to (lm-eval 0.4.13's humaneval/utils.py and mbpp/utils.py)
CODE_TASKS: dict[str, tuple[str, str]] = {
    "humaneval_plus": ("humaneval", "compute_"), "humaneval": ("humaneval", "compute_"),
    "mbpp_plus": ("mbpp", "pass_at_k"), "mbpp": ("mbpp", "pass_at_k"),
}
#: k of the pass@k / maj@k gates rlgate derives per document (needs n >= k responses); maj@k only where
#: responses have an answer to vote on (math)
PER_RESPONSE_K = (1, 2, 4, 8, 16, 32, 64)
_VOTING = {"aime24", "aime25", "aime24_25", "aime", "minerva_math500", "minerva_math"}

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
    if known in PER_RESPONSE_METRIC:
        at_k = (filters for name, filters in KNOWN_TASK_METRICS[known].items() if name == PER_RESPONSE_METRIC[known])
        filters = next(at_k)
        kinds = ("pass", "maj") if known in _VOTING else ("pass",)
        for kind in kinds:
            for k in PER_RESPONSE_K:
                metrics.setdefault(f"{kind}@{k}", MetricInfo(filters=filters, kind="fraction"))
    return TaskVocabulary(harness="lm_eval", metrics=metrics, closed=True, default_filter=DEFAULT_FILTER[known],
                          samples_hint=SAMPLES_HINT, samples_option=SAMPLES_OPTION)


def runs_code(task: str) -> bool:
    """Whether the task executes model-written code (its suite needs `unsafe_code: sandboxed`)."""
    known = catalog_task(task)
    return known is not None and known in CODE_TASKS


def family(task: str) -> str:
    """The catalog family of a task name (its own name when the catalog does not know it)."""
    return catalog_task(task) or task
