"""Judge trust: a judge that follows the position or the length of the answers is caught and is not evidence.

Scripted deepeval judges: one always prefers the answer shown first, one always the longer answer; the
quality judge of the other tests is the honest control. The data make quality independent of length, so
an honest judge sits near 0.5 on both bias rates.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from judge_contracts import run, sample, write_contract
from judge_helpers import PAIR_RE, QualityJudge

from rlgate.app.decide import decide_and_report
from rlgate.contract.judge_policy import (
    MAX_LENGTH_FOLLOW_RATE,
    MAX_POSITION_FLIP_RATE,
    MIN_BIAS_ITEMS,
    JudgeSpec,
)
from rlgate.harness.vocabulary import load_contract
from rlgate.judge.geval import GEvalJudge
from rlgate.judge.runner import judge_task

ROOT = Path(__file__).resolve().parents[2]


class FirstShownJudge(QualityJudge):
    """Always prefers Response 1, whatever it says."""

    def generate(self, prompt: str, schema: Any = None) -> str:
        if "Evaluation Steps" in prompt and PAIR_RE.search(prompt):
            return json.dumps({"reason": "the first one", "score": 10})
        return super().generate(prompt, schema)


class LongerJudge(QualityJudge):
    """Always prefers the longer response (a tie when equally long)."""

    def generate(self, prompt: str, schema: Any = None) -> str:
        pair = PAIR_RE.search(prompt) if "Evaluation Steps" in prompt else None
        if pair is None:
            return super().generate(prompt, schema)
        first, second = len(pair["first"]), len(pair["second"])
        return json.dumps({"reason": "longer", "score": 10 if first > second else 0 if first < second else 5})


def _runs(n: int = 30) -> tuple[Any, Any]:
    """Candidate better on 2 of 3 documents, longer on every other one: length says nothing about quality."""
    cand, base = [], []
    for d in range(n):
        quality = 3 if d % 3 else 1
        pad = " with many more words" if d % 2 == 0 else ""
        cand.append(sample(d, f"Q{quality} answer{pad}"))
        base.append(sample(d, "Q2 answer" + ("" if pad else " with many more words")))
    return run("chat", cand, "cand"), run("chat", base, "base")


def _spec(**kw: object) -> JudgeSpec:
    data = {"type": "llm", "model": {"base_url": "http://127.0.0.1:9/v1", "model": "unused"},
            "evaluation_steps": ["Compare the two responses.", "Prefer the more correct one."]}
    return JudgeSpec.model_validate({**data, **kw})


def _report(spec: JudgeSpec, llm: QualityJudge):  # type: ignore[no-untyped-def]
    cand, base = _runs()
    return judge_task("chat", spec, cand.tasks["chat"], base.tasks["chat"], lambda: GEvalJudge(spec, llm, None))


def test_honest_judge_is_trusted() -> None:
    report = _report(_spec(samples=2), QualityJudge())
    trust = report.trust
    assert trust is not None and trust.trusted, trust
    assert trust.position is not None and trust.position.rate == 0.0 and trust.position.enforced
    assert trust.length is not None and trust.length.rate == pytest.approx(0.5) and trust.length.n == 30


@pytest.mark.parametrize("samples", [1, 2])
def test_a_judge_that_always_prefers_the_first_answer_is_caught(samples: int) -> None:
    report = _report(_spec(samples=samples), FirstShownJudge())
    trust = report.trust
    assert trust is not None and not trust.trusted
    assert trust.position is not None and trust.position.exceeded and trust.position.rate == pytest.approx(1.0)
    # both orders: every item flips; one order: the first-shown answer wins every call
    assert ("flips between" if samples == 2 else "estimated from the first-shown") in trust.position.basis
    assert "position flip rate" in trust.message and "NOT TRUSTED" in trust.message


def test_a_judge_that_always_prefers_the_longer_answer_is_caught() -> None:
    report = _report(_spec(samples=2), LongerJudge())
    trust = report.trust
    assert trust is not None and not trust.trusted
    assert trust.position is not None and not trust.position.exceeded  # consistent across orders
    assert trust.length is not None and trust.length.exceeded and trust.length.rate == 1.0
    assert "length-follow rate" in trust.message


def test_too_few_items_are_reported_not_enforced() -> None:
    cand, base = _runs(6)
    spec = _spec(samples=2)
    report = judge_task("chat", spec, cand.tasks["chat"], base.tasks["chat"],
                        lambda: GEvalJudge(spec, FirstShownJudge(), None))
    assert report.trust is not None and report.trust.trusted
    assert report.trust.position is not None and report.trust.position.rate == 1.0
    assert not report.trust.position.enforced and "not enforced" in report.trust.position.basis


GATES = "  hard:\n    - {metric: chat/judge_win_rate, min: 0.0}"


def _contract(tmp_path: Path, extra: str = "") -> Path:
    judge = ("judge:\n  type: llm\n  model: {base_url: 'http://127.0.0.1:9/v1', model: j}\n  samples: 2\n"
             f"  evaluation_steps: [Compare]\n{extra}")
    return write_contract(tmp_path, judge, GATES)


def test_a_biased_judge_fails_its_gates_closed_and_every_report_shows_the_figures(tmp_path: Path) -> None:
    rc = load_contract(_contract(tmp_path))
    cand, base = _runs()
    honest = decide_and_report(rc, base, cand, tmp_path / "ok", judge_llm=QualityJudge(), record=False)
    assert honest.decision.decision == "release"

    out = tmp_path / "biased"
    outcome = decide_and_report(rc, base, cand, out, judge_llm=LongerJudge(), record=False)
    decision = outcome.decision
    gate = next(g for g in decision.gates if g.metric == "chat/judge_win_rate")
    assert gate.verdict == "error" and gate.effect == "block" and decision.decision == "block"
    assert "NOT TRUSTED" in gate.reason and "length-follow rate" in gate.reason
    assert any("NOT TRUSTED" in w for w in decision.warnings)
    written = json.loads((out / "decision.json").read_text())
    trust = next(g for g in written["gates"] if g["metric"] == "chat/judge_win_rate")["details"]["judge_trust"]
    assert trust["length_follow_rate"] == 1.0 and trust["max_length_follow_rate"] == MAX_LENGTH_FOLLOW_RATE
    assert trust["position_flip_rate"] == 0.0 and trust["trusted"] is False
    assert written["extensions"]["judge"]["tasks"]["chat"]["trust"]["trusted"] is False
    texts = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir() if p.suffix in (".md", ".html", ".xml")}
    assert texts, list(out.iterdir())
    for name, text in texts.items():
        assert "length-follow 1.00 (max 0.8" in text, name


def test_on_bias_warn_keeps_the_verdict_with_a_prominent_warning(tmp_path: Path) -> None:
    rc = load_contract(_contract(tmp_path, "  on_bias: warn\n"))
    cand, base = _runs()
    outcome = decide_and_report(rc, base, cand, tmp_path / "warn", judge_llm=FirstShownJudge(), record=False)
    gate = next(g for g in outcome.decision.gates if g.metric == "chat/judge_win_rate")
    assert gate.verdict == "pass" and "WARNING: judge NOT TRUSTED" in gate.reason
    assert outcome.decision.decision == "release"
    assert any("position flip rate" in w for w in outcome.decision.warnings)


def test_defaults_are_the_ones_cited_in_the_release_policy() -> None:
    text = (ROOT / "gates" / "release_default.yaml").read_text(encoding="utf-8")
    stated = {m[1]: float(m[2]) for m in re.finditer(r"^# judge\.(\w+): ([0-9.]+)$", text, re.M)}
    assert stated == {"max_position_flip_rate": MAX_POSITION_FLIP_RATE,
                      "max_length_follow_rate": MAX_LENGTH_FOLLOW_RATE, "min_bias_items": MIN_BIAS_ITEMS}
    spec = _spec()
    assert (spec.max_position_flip_rate, spec.max_length_follow_rate, spec.min_bias_items, spec.on_bias) == (
        MAX_POSITION_FLIP_RATE, MAX_LENGTH_FOLLOW_RATE, MIN_BIAS_ITEMS, "error")
    assert "Zheng et al. 2023" in text and "arXiv:2306.05685" in text
