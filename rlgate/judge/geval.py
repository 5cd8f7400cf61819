"""The LLM judge through deepeval's G-Eval: pairwise (which of two answers is better) and pointwise scores.

Pairwise runs as one G-Eval metric over a test case holding both answers as [Response 1] and
[Response 2], with a rubric that maps scores to verdicts, so rlgate (not deepeval) chooses and
records the order. Anything deepeval cannot parse raises, and the runner records an error item.
Import lazily: this module imports deepeval.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlgate.contract.judge_policy import JudgeSpec
from rlgate.judge.cache import JudgeCache
from rlgate.judge.deepeval_api import DeepEvalBaseLLM, GEval, LLMTestCase, Rubric, SingleTurnParams
from rlgate.judge.llms import CachingLLM

FIRST_MIN, SECOND_MAX = 7.0, 3.0
PAIRWISE_RUBRIC = [
    Rubric(score_range=(0, 3), expected_outcome="Response 2 is better than Response 1."),
    Rubric(score_range=(4, 6), expected_outcome="Both responses are equally good (a tie)."),
    Rubric(score_range=(7, 10), expected_outcome="Response 1 is better than Response 2."),
]


@dataclass(frozen=True)
class PairJudgement:
    verdict: str  # first | second | tie
    score: float
    reason: str
    cached: bool


@dataclass(frozen=True)
class PointJudgement:
    score: float
    reason: str
    cached: bool


def pair_text(first: str, second: str) -> str:
    """How the two answers are shown to the judge; the order is rlgate's choice."""
    return f"[Response 1]\n{first}\n\n[Response 2]\n{second}"


class GEvalJudge:
    """Judges items with deepeval G-Eval metrics and the contract's judge model (cached)."""

    def __init__(self, spec: JudgeSpec, llm: DeepEvalBaseLLM, cache: JudgeCache | None) -> None:
        self.spec = spec
        self.llm = CachingLLM(llm, cache)
        criteria = spec.criteria + (f"\n{spec.rubric}" if spec.rubric else "")
        params = [SingleTurnParams.INPUT, SingleTurnParams.ACTUAL_OUTPUT]
        self._pair = GEval(
            name="rlgate pairwise judge", evaluation_params=params, model=self.llm, async_mode=False,
            criteria=None if spec.evaluation_steps else (
                criteria + "\nThe actual output holds two responses to the input, [Response 1] and "
                "[Response 2]. Score 10 when Response 1 is clearly better, 0 when Response 2 is clearly "
                "better, 5 when they are equally good."),
            evaluation_steps=spec.evaluation_steps, rubric=PAIRWISE_RUBRIC)
        self._point = GEval(
            name="rlgate pointwise judge", evaluation_params=params, model=self.llm, async_mode=False,
            criteria=None if spec.evaluation_steps else criteria, evaluation_steps=spec.evaluation_steps)

    @property
    def model_name(self) -> str:
        return self.llm.get_model_name()

    @property
    def fingerprint(self) -> str:
        return self.llm.fingerprint

    @property
    def last_cached(self) -> bool:
        """Whether the last model answer came from the cache (also set when that answer was unusable)."""
        return self.llm.last_cached

    def compare(self, question: str, first: str, second: str, sample: int) -> PairJudgement:
        """Which of two answers (in the order shown) is better; raises when the judge's output is unusable."""
        self.llm.salt = f"sample={sample}"
        score = self._pair.measure(LLMTestCase(input=question, actual_output=pair_text(first, second)),
                                   _show_indicator=False)
        raw = float(score) * 10.0
        if not 0.0 <= raw <= 10.0:
            raise ValueError(f"judge score {raw:g} is outside the rubric's 0-10 range")
        verdict = "first" if raw >= FIRST_MIN else "second" if raw <= SECOND_MAX else "tie"
        return PairJudgement(verdict, float(score), str(self._pair.reason or ""), self.llm.last_cached)

    def score(self, question: str, answer: str, sample: int) -> PointJudgement:
        """A G-Eval score in [0, 1] for one answer."""
        self.llm.salt = f"sample={sample}"
        score = float(self._point.measure(LLMTestCase(input=question, actual_output=answer),
                                          _show_indicator=False))
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"judge score {score:g} is outside [0, 1]")
        return PointJudgement(score, str(self._point.reason or ""), self.llm.last_cached)
