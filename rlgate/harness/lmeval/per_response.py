"""Per-response answers and exact-match correctness for documents with n > 1 responses.

lm-eval logs all n responses of a repeated request but scores only the filtered (usually first or
majority) answer, while pass@k and maj@k need every response judged. For the filter pipelines
lm-eval's generative tasks use (regex extraction, case changes, then take_first / take_first_k /
majority_vote selection) and the `exact_match` metric, this re-applies the same steps to each
response. The code follows lm-eval 0.4.13's RegexFilter and exact_match_hf_evaluate; the tests
check it against lm-eval's own classes. Pipelines with other steps are skipped (pass@k is then
`nodata`, never guessed).
"""

from __future__ import annotations

import re
import string
from operator import attrgetter
from typing import Any

from rlgate.results.models import INVALID_ANSWER, TaskResult
from rlgate.results.shared_scores import writable_extra

_SELECTION = {"take_first", "take_first_k", "majority_vote"}
_PUNCT = str.maketrans("", "", string.punctuation)
_DIGITS = str.maketrans("", "", string.digits)


def regex_extract(text: str, pattern: re.Pattern[str], group_select: int = 0, fallback: str = INVALID_ANSWER) -> str:
    """lm-eval's RegexFilter on one response."""
    matches = pattern.findall(text if isinstance(text, str) else "")
    if not matches:
        return fallback
    try:
        match = matches[group_select]
    except IndexError:
        return fallback
    if isinstance(match, tuple):
        parts = [m for m in match if m]
        match = parts[0] if parts else fallback
    return match.strip()


def exact_match(prediction: str, reference: str, regexes_to_ignore: list[str] | None = None,
                ignore_case: bool = False, ignore_punctuation: bool = False, ignore_numbers: bool = False) -> bool:
    """lm-eval's exact_match_hf_evaluate for one prediction."""
    for pattern in regexes_to_ignore or []:
        prediction = re.sub(pattern, "", prediction)
        reference = re.sub(pattern, "", reference)
    if ignore_case:
        prediction, reference = prediction.lower(), reference.lower()
    if ignore_punctuation:
        prediction, reference = prediction.translate(_PUNCT), reference.translate(_PUNCT)
    if ignore_numbers:
        prediction, reference = prediction.translate(_DIGITS), reference.translate(_DIGITS)
    return prediction == reference


def _pipeline(steps: list[dict[str, Any]]) -> list[tuple[str, Any]] | None:
    """The per-response part of a filter pipeline, or None when it has steps rlgate cannot replay."""
    out: list[tuple[str, Any]] = []
    for step in steps:
        name = step.get("function")
        if name == "regex":
            out.append(("regex", (re.compile(step.get("regex_pattern", r"#### (\-?[0-9\.\,]+)")),
                                  int(step.get("group_select", 0)), step.get("fallback", INVALID_ANSWER))))
        elif name in ("lowercase", "uppercase"):
            out.append((name, None))
        elif name in _SELECTION:
            continue
        else:
            return None
    return out


def _apply(pipeline: list[tuple[str, Any]], text: str) -> str:
    for name, arg in pipeline:
        if name == "regex":
            text = regex_extract(text, *arg)
        elif name == "lowercase":
            text = text.lower()
        else:
            text = text.upper()
    return text


_RESPONSES = attrgetter("responses")


def add_per_response(task: TaskResult, config: dict[str, Any]) -> None:
    """Fill `extra["per_response"][filter] = {"answers", "correct"}` where n > 1 and replayable."""
    if max(map(len, map(_RESPONSES, task.samples)), default=0) <= 1:  # n = 1: nothing to replay
        return
    metric = next((m for m in config.get("metric_list") or [] if m.get("metric") == "exact_match"), None)
    if metric is None or config.get("process_results"):
        return  # a task scored in Python (aime, minerva_math) is not exact_match on the text: the runner rescores it
    kwargs = {k: metric[k] for k in ("regexes_to_ignore", "ignore_case", "ignore_punctuation", "ignore_numbers")
              if k in metric}
    filter_list = config.get("filter_list") or [{"name": "none", "filter": [{"function": "take_first"}]}]
    for filter_config in filter_list:
        pipeline = _pipeline(filter_config.get("filter") or [])
        if pipeline is None:
            continue
        name = filter_config.get("name", "none")
        for sample in task.samples:
            if sample.target is None or not sample.responses:
                continue
            answers = [_apply(pipeline, r) for r in sample.responses]
            correct = [1.0 if exact_match(a, sample.target, **kwargs) else 0.0 for a in answers]
            writable_extra(sample).setdefault("per_response", {})[name] = {"answers": answers, "correct": correct}
