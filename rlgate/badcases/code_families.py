"""Failure classifier of code answers (HumanEval+, MBPP+): what each program did in rlgate's sandbox.

Read from the per-response code checks the lm-eval runner stores (`extra["code"]`, the first response):
- `code_public_pass_hidden_fail`: the program passes the examples the prompt shows (HumanEval+'s docstring
  examples, MBPP+'s listed asserts) and fails the hidden tests: it fits the public examples, not the task
  (the next action: add hidden and variant tests to the reward). Counted even where lm-eval's own metric
  calls the answer right (MBPP+'s pass_at_1 runs only the listed asserts);
- `code_timeout`: the scored program ran past the sandbox's time limit (endless loop, too slow);
- `code_syntax_error`: the program does not parse;
- `code_wrong_output`: it ran and an assertion of the tests failed;
- `code_runtime_error`: it raised something else (or the jail refused it, e.g. a memory limit).
A sample without stored checks (a folder lm-eval wrote itself) is classified by its score alone.
"""

from __future__ import annotations

from typing import Any

from rlgate.badcases.models import FailureKind
from rlgate.badcases.taxonomy import ClassifyOptions, Failure, SampleOutcome, binary_score, first_response
from rlgate.harness.vocabulary import family_of
from rlgate.results.models import SampleRecord

#: the lm-eval metric that says a code answer is right, by family
_SCORE = {"humaneval": "pass@1", "humaneval_plus": "pass@1", "mbpp": "pass_at_1", "mbpp_plus": "pass_at_1"}
_STATUS: dict[str, tuple[str, FailureKind]] = {
    "timeout": ("code_timeout", "other"), "syntax_error": ("code_syntax_error", "format"),
    "error": ("code_runtime_error", "other"),
}


def _checks(sample: SampleRecord) -> tuple[str, dict[str, Any]] | None:
    found = sample.extra.get("code")
    if not isinstance(found, dict) or not found:
        return None
    filt, checks = next(iter(found.items()))
    return (filt, checks) if isinstance(checks, dict) and checks.get("outcomes") else None


class CodeClassifier:
    family = "code"

    def claims(self, task: str) -> bool:
        return family_of(task) in _SCORE

    def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
        family = family_of(task)
        metric = _SCORE.get(family, "pass@1")
        stored = _checks(sample)
        filt = stored[0] if stored else next(iter(sample.scores), "none")
        right = bool(binary_score(sample.score(metric, filt)))
        failures: list[Failure] = []
        if stored is not None:
            checks = stored[1]
            status = str(checks["outcomes"][0])
            public, hidden = checks.get("public", [None])[0], checks.get("hidden", [None])[0]
            if public is True and hidden is False:
                failures.append(Failure("code_public_pass_hidden_fail", "knowledge"))
            if not right:
                if status in _STATUS:
                    failures.append(Failure(*_STATUS[status]))
                elif status == "failed" and checks.get("wrong_output", [False])[0]:
                    failures.append(Failure("code_wrong_output", "knowledge"))
                elif status == "failed":
                    failures.append(Failure("code_runtime_error", "other"))
        elif not right:
            failures.append(Failure("code_wrong_output", "knowledge"))
        response = first_response(sample)
        return SampleOutcome(task=task, family=self.family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                             correct=right and not failures, parsed=not any(f.kind == "format" for f in failures),
                             failures=tuple(failures), answer=None, response_chars=len(response))


CODE_CLASSIFIERS = [CodeClassifier()]
