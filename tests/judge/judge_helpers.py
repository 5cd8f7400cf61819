"""The deterministic deepeval judge model of the judge tests."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

deepeval_api = pytest.importorskip("rlgate.judge.deepeval_api", reason="deepeval (extra 'judge') is not installed")
DeepEvalBaseLLM = deepeval_api.DeepEvalBaseLLM

PAIR_RE = re.compile(r"\[Response 1\]\n(?P<first>.*?)\n\n\[Response 2\]\n(?P<second>.*?) \n", re.S)
QUALITY_RE = re.compile(r"Q(\d)")


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
