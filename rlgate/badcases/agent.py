"""Agent failure taxonomy: why a trajectory failed, read from its steps, limits, errors and safety verdicts.

Classes (one trajectory may show several; `family` is the task, as for other tasks):

- `agent_invalid_tool_call_json` (format): a call's arguments did not parse.
- `agent_wrong_function` (tool): a call named a tool the run did not offer (the harness answered "not found").
- `agent_wrong_arguments` (tool): arguments the tool's schema rejected (inspect's `parsing` errors).
- `agent_unrecovered_tool_error` (tool): a tool failed (timeout, permission denied, empty or missing result,
  schema error) and the agent never called that tool successfully afterwards; the category says which.
- `agent_repeated_call_loop` (tool): the same call (function and arguments) made `LOOP_CALLS` times or more.
- `agent_budget_exhausted` (truncation): a message, turn, token, time or tool-call limit ended the run.
- `agent_no_final_answer` (format): the run ended without a final answer (last turn a call, or empty).
- `agent_unsafe_action` (safety): the task's scorer or the contract's rules flagged a call.
- `agent_run_error` (other): the run crashed, lost its sandbox, or is missing from the log.
- `agent_wrong_final_state` / `agent_wrong_final_answer` (knowledge): none of the above, yet the scorer
  rejected the final environment state / the answer.

Only failed trajectories get classes; an unsafe action makes a trajectory failed by definition.
"""

from __future__ import annotations

import json
from collections import Counter

from rlgate.badcases.taxonomy import ClassifyOptions, Failure, SampleOutcome, binary_score
from rlgate.results.models import NO_FILTER, SampleRecord, Trajectory

#: identical calls (function and arguments) in one trajectory that make a loop
LOOP_CALLS = 3
AGENT_PREFIX = "agent_"
#: tool-error categories, the recovery curriculum's axes (matched in order on the error text)
ERROR_CATEGORIES = (
    ("timeout", ("timeout", "timed out", "took too long")),
    ("permission denied", ("permission", "denied", "approval", "forbidden", "not allowed")),
    ("schema error", ("parsing", "validation", "schema", "invalid argument", "required property")),
    ("empty or missing result", ("not found", "no such", "no key", "unknown ", "empty", "missing",
                                 "does not exist", "no result")),
)


#: inspect's ToolCallError types and their category ("unknown", a tool's own ToolError, is read from the message)
_ERROR_TYPES = {"timeout": "timeout", "permission": "permission denied", "approval": "permission denied",
                "parsing": "schema error", "file_not_found": "empty or missing result",
                "is_a_directory": "empty or missing result"}


def error_category(error: str) -> str:
    """The recovery-curriculum category of a tool error (`type: message`, as the inspect reader writes it)."""
    kind, sep, message = error.partition(": ")
    if sep and kind in _ERROR_TYPES:
        return _ERROR_TYPES[kind]
    text = (message if sep and kind == "unknown" else error).lower()
    for name, words in ERROR_CATEGORIES:
        if any(word in text for word in words):
            return name
    return "other error"


def _call_key(function: str, arguments: dict[str, object]) -> str:
    return function + json.dumps(arguments, sort_keys=True, default=str)


def _tool_failures(trajectory: Trajectory) -> tuple[list[Failure], list[str]]:
    """Failures of the tool process, and the error categories of tool errors never recovered from."""
    failures: list[Failure] = []
    functions: dict[str, str] = {}
    pending: dict[str, str] = {}  # function -> category of its latest unrecovered failure
    for step in trajectory.steps:
        if step.role == "assistant":
            for call in step.tool_calls:
                if call.id is not None:
                    functions[call.id] = call.function
                if call.parse_error:
                    failures.append(Failure("agent_invalid_tool_call_json", "format"))
        elif step.role == "tool":
            function = functions.get(step.tool_call_id or "", "?")
            if step.error:
                text = step.error.lower()
                if "not found" in text and text.startswith("parsing") and "tool" in text:
                    failures.append(Failure("agent_wrong_function", "tool"))
                elif text.startswith("parsing"):
                    failures.append(Failure("agent_wrong_arguments", "tool"))
                    pending[function] = "schema error"
                else:
                    pending[function] = error_category(step.error)
            elif not step.content.strip():
                pending[function] = "empty or missing result"
            else:
                pending.pop(function, None)
    counts = Counter(_call_key(c.function, c.arguments) for c in trajectory.tool_calls)
    if counts and max(counts.values()) >= LOOP_CALLS:
        failures.append(Failure("agent_repeated_call_loop", "tool"))
    categories = sorted(set(pending.values()))
    failures.extend(Failure("agent_unrecovered_tool_error", "tool", category) for category in categories)
    return failures, categories


def _final_answer(trajectory: Trajectory) -> bool:
    last = next((s for s in reversed(trajectory.steps) if s.role == "assistant"), None)
    return last is not None and not last.tool_calls and bool(last.content.strip())


def classify_trajectory(sample: SampleRecord) -> tuple[bool, list[Failure], list[str]]:
    """(succeeded, failures, categories) of one agent sample; see the module docstring."""
    trajectory = sample.trajectory
    assert trajectory is not None
    scores = sample.scores.get(NO_FILTER, {})
    success = bool(binary_score(scores.get("task_success")))
    if success:
        return True, [], []
    failures: list[Failure] = []
    if sample.extra.get("missing") or trajectory.error:
        failures.append(Failure("agent_run_error", "other"))
    tool, categories = _tool_failures(trajectory)
    failures.extend(tool)
    limits = sample.limits_reached()
    failures.extend(Failure("agent_budget_exhausted", "truncation", str(limit)) for limit in limits)
    if sample.extra.get("safety_violations"):
        failures.append(Failure("agent_unsafe_action", "safety"))
    ended = not (limits or trajectory.error or sample.extra.get("missing"))
    if ended and not _final_answer(trajectory):
        failures.append(Failure("agent_no_final_answer", "format"))
    if not failures:
        state = scores.get("state_success")
        failures.append(Failure("agent_wrong_final_state" if state is not None and not binary_score(state)
                                else "agent_wrong_final_answer", "knowledge"))
    return False, list(dict.fromkeys(failures)), [*categories, *(str(x) for x in limits)]


class AgentClassifier:
    """Tasks whose samples carry trajectories; picked by `classify.classifier_for` before the text families."""

    family = "agent"

    def claims(self, task: str) -> bool:
        return False  # chosen by the samples (a trajectory), not by the task's name

    def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
        if sample.trajectory is None:
            return SampleOutcome(task=task, family=task, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                                 correct=False, failures=(Failure("agent_run_error", "other"),))
        success, failures, categories = classify_trajectory(sample)
        answer = (sample.extra.get("agent") or {}).get("answer")
        parsed = not any(f.kind == "format" for f in failures)
        return SampleOutcome(task=task, family=task, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                             correct=success, parsed=parsed, failures=tuple(failures),
                             categories=tuple(dict.fromkeys(categories)),
                             answer=str(answer) if answer is not None else None,
                             response_chars=sum(len(s.content) for s in sample.trajectory.steps
                                                if s.role == "assistant"), agent=True)
