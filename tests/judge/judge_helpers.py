"""Shared pieces of the judge tests: runs built from answer texts, a deterministic deepeval judge."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult

deepeval_api = pytest.importorskip("rlgate.judge.deepeval_api", reason="deepeval (extra 'judge') is not installed")
DeepEvalBaseLLM = deepeval_api.DeepEvalBaseLLM

PAIR_RE = re.compile(r"\[Response 1\]\n(?P<first>.*?)\n\n\[Response 2\]\n(?P<second>.*?) \n", re.S)
QUALITY_RE = re.compile(r"Q(\d)")


def sample(doc_id: int, answer: str, *, score: float | None = None, filtered: str | None = None,
           question: str | None = None) -> SampleRecord:
    """A sample with one response and, optionally, a rule score under gsm8k-like metric/filter names."""
    scores = {"flexible-extract": {"exact_match": score}} if score is not None else {}
    return SampleRecord(doc_id=doc_id, doc_hash=f"h{doc_id}", prompt=question or f"question {doc_id}",
                        responses=[answer], filtered={"flexible-extract": filtered or answer}, scores=scores)


def run(task: str, samples: list[SampleRecord], source: str = "run") -> RunResult:
    return RunResult(provenance=RunProvenance(source=source),
                     tasks={task: TaskResult(task=task, n_samples=len(samples), samples=samples)})


class QualityJudge(DeepEvalBaseLLM):
    """A deterministic judge speaking deepeval's model interface.

    It reads the two responses out of G-Eval's prompt and prefers the higher `Q<digit>`; equal
    qualities are a tie; when either answer says BIASED it always prefers Response 1 (a pure position
    bias); when either says GARBAGE it answers with text that is not JSON. Pointwise prompts (one
    answer) get score Q*2. Every evaluation call is recorded as (first, second).
    """

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.points: list[str] = []
        self.generate_calls = 0
        super().__init__("quality-judge")

    def load_model(self, *args: Any, **kwargs: Any) -> QualityJudge:
        return self

    def get_model_name(self, *args: Any, **kwargs: Any) -> str:
        return "quality-judge"

    def generate(self, prompt: str, schema: Any = None) -> str:
        self.generate_calls += 1
        if "Evaluation Steps" not in prompt:
            return json.dumps({"steps": ["Compare the two responses.", "Decide which is better."]})
        pair = PAIR_RE.search(prompt)
        if pair is None:
            answer = prompt.split("Actual Output:\n", 1)[1].split(" \n", 1)[0]
            self.points.append(answer)
            if "GARBAGE" in answer:
                return "I think it is fine."
            quality = int(QUALITY_RE.search(answer).group(1))  # type: ignore[union-attr]
            return json.dumps({"reason": "scored by quality", "score": quality * 2})
        first, second = pair["first"], pair["second"]
        self.seen.append((first, second))
        if "GARBAGE" in first + second:
            return "Response 1, definitely."
        if "BIASED" in first + second:
            return json.dumps({"reason": "the first one", "score": 10})
        q1, q2 = (int(QUALITY_RE.search(t).group(1)) for t in (first, second))  # type: ignore[union-attr]
        return json.dumps({"reason": "compared qualities", "score": 10 if q1 > q2 else 0 if q1 < q2 else 5})

    async def a_generate(self, prompt: str, schema: Any = None) -> str:
        return self.generate(prompt, schema)


def write_contract(folder: Path, judge_yaml: str, gates_yaml: str, task_judge: str = "",
                   extra_tasks: str = "") -> Path:
    """A contract with one open-ended task `chat` (and optional others) and the given judge section."""
    text = f"""schema_version: 1
name: judged
baseline: {{results: baseline_results}}
splits:
  test_private: {{visibility: release_gate_only}}
suites:
  - schema_version: 1
    name: open_ended
    tasks:
      - task: chat
        split: test_private
{task_judge}{extra_tasks}gates:
{gates_yaml}
{judge_yaml}
"""
    (folder / "baseline_results").mkdir(exist_ok=True)
    path = folder / "contract.yaml"
    path.write_text(text, encoding="utf-8")
    return path
