"""Pairwise judging through deepeval's G-Eval with a deterministic judge model: order randomisation,
ties, position and length bias, and the win-rate arithmetic against hand-computed values."""

from __future__ import annotations

from pathlib import Path

import pytest
from judge_contracts import run, sample, write_contract
from judge_helpers import QualityJudge

from rlgate.contract.judge_policy import JudgeSpec
from rlgate.engine.decision import decide
from rlgate.harness.vocabulary import load_contract
from rlgate.judge.api import judge_for_decision, run_judge
from rlgate.judge.gate import judge_gate_verdicts, without_judge_gates
from rlgate.judge.geval import GEvalJudge
from rlgate.judge.runner import judge_task

STEPS = "evaluation_steps: [Compare the two responses, Prefer the more correct one]"


def _answers(garbage: bool = False) -> tuple[list, list]:
    """10 documents: 6 candidate wins, 2 losses, 1 real tie, 1 item the judge decides by position.

    Lengths: the candidate is longer on docs 0-5 and 9, the baseline on docs 6-7, equal on doc 8.
    """
    cand, base = [], []
    for d in range(6):
        cand.append(sample(d, "Q3 a long and careful answer"))
        base.append(sample(d, "Q1 short"))
    for d in (6, 7):
        cand.append(sample(d, "Q1 short"))
        base.append(sample(d, "Q3 a long and careful answer"))
    cand.append(sample(8, "Q2 same"))
    base.append(sample(8, "Q2 same"))
    cand.append(sample(9, ("GARBAGE" if garbage else "BIASED") + " Q2 the longest answer of them all"))
    base.append(sample(9, "Q2 x"))
    return cand, base


def _spec(**kw: object) -> JudgeSpec:
    data = {"type": "llm", "model": {"base_url": "http://127.0.0.1:9/v1", "model": "unused"}, "samples": 2,
            "evaluation_steps": ["Compare the two responses.", "Prefer the more correct one."]}
    return JudgeSpec.model_validate({**data, **kw})


def _judge(spec: JudgeSpec, judge: QualityJudge, tie_policy: str = "count_as_half", garbage: bool = False):
    cand, base = _answers(garbage)
    spec = spec.model_copy(update={"tie_policy": tie_policy})
    return judge_task("chat", spec, run("chat", cand).tasks["chat"], run("chat", base).tasks["chat"],
                      lambda: GEvalJudge(spec, judge, None))


def test_orders_are_seeded_recorded_and_both_orders_are_judged() -> None:
    judge = QualityJudge()
    report = _judge(_spec(seed=0), judge)
    texts = {s.doc_id: (s.responses[0], b.responses[0]) for s, b in zip(*_answers(), strict=True)}
    seen = iter(judge.seen)
    for item in report.items:
        orders = [c.order for c in item.calls]
        assert sorted(orders) == ["baseline_first", "candidate_first"]  # samples=2: both orders
        for call in item.calls:  # the recorded order is the order the judge really saw
            cand_text, base_text = texts[item.doc_id]
            expected = (cand_text, base_text) if call.order == "candidate_first" else (base_text, cand_text)
            assert next(seen) == expected
    first = [item.calls[0].order for item in report.items]
    assert set(first) == {"candidate_first", "baseline_first"}  # randomised across items
    assert first == [i.calls[0].order for i in _judge(_spec(seed=0), QualityJudge()).items]  # seeded
    assert first != [i.calls[0].order for i in _judge(_spec(seed=1), QualityJudge()).items]
    fixed = _judge(_spec(order_randomization=False, samples=1), QualityJudge())
    assert [i.calls[0].order for i in fixed.items] == ["candidate_first"] * 10


def test_win_rate_ties_position_and_length_bias_match_hand_computation() -> None:
    report = _judge(_spec(), QualityJudge())
    assert [i.outcome for i in report.items] == ["win"] * 6 + ["loss"] * 2 + ["tie", "tie"]
    assert report.decided_by == {"rule": 0, "llm": 10, "undecided": 0}
    wr = report.win_rate
    assert wr is not None and (wr.wins, wr.losses, wr.ties, wr.errors) == (6, 2, 2, 0)
    # count_as_half: (6 + 2/2) / 10 = 0.7; Wilson 95 %: z = 1.959964, (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²))
    # / (1 + z²/n) = (0.892073 ± 0.342876) / 1.384146 = [0.396778, 0.892209]
    assert wr.win_rate == pytest.approx(0.7)
    assert wr.ci == pytest.approx((0.396778, 0.892209), abs=1e-6)
    # sign test on the 8 decisive items: P(X >= 6 | 8, 1/2) = (28 + 8 + 1) / 256; two-sided doubles it
    assert wr.sign_test_n == 8
    assert wr.p_greater == pytest.approx(37 / 256)
    assert wr.p_value == pytest.approx(74 / 256)
    # position: doc 9's verdict follows the position (win shown first, loss shown second) -> 1 flip in 10;
    # decisive calls: 16 on docs 0-7 (8 won by the first shown) + 2 on doc 9 (both first) = 10 / 18
    pb = report.position_bias
    assert pb is not None and (pb.items_both_orders, pb.flips, pb.flip_rate) == (10, 1, 0.1)
    assert (pb.decisive_calls, pb.first_position_wins) == (18, 10)
    # length: candidate longer on 0-5 (wins) and 9 (tie) -> 6.5/7; baseline longer on 6-7 (losses) -> 0;
    # equal on 8 (tie) -> 0.5; all 8 decisive unequal-length items were won by the longer answer
    lb = report.length_bias
    assert lb is not None
    assert (lb.candidate_longer.n, lb.candidate_longer.win_rate) == (7, pytest.approx(6.5 / 7))
    assert (lb.baseline_longer.n, lb.baseline_longer.win_rate) == (2, 0.0)
    assert (lb.same_length.n, lb.same_length.win_rate) == (1, 0.5)
    assert (lb.decisive_unequal, lb.longer_wins, lb.longer_win_rate) == (8, 8, 1.0)


@pytest.mark.parametrize(("policy", "rate", "n", "test_n", "p_two_sided"), [
    ("exclude", 6 / 8, 8, 8, 74 / 256),              # ties leave the denominator
    ("count_as_loss", 6 / 10, 10, 10, 772 / 1024),   # 1 - P(X = 5 | 10) = 1 - 252/1024
])
def test_tie_policies(policy: str, rate: float, n: int, test_n: int, p_two_sided: float) -> None:
    wr = _judge(_spec(), QualityJudge(), tie_policy=policy).win_rate
    assert wr is not None
    assert (wr.win_rate, wr.n, wr.sign_test_n) == (pytest.approx(rate), n, test_n)
    assert wr.p_value == pytest.approx(p_two_sided)


def test_unparseable_judgements_are_errors_never_wins() -> None:
    report = _judge(_spec(), QualityJudge(), garbage=True)
    item = report.items[9]
    assert item.outcome == "error" and all(c.error and "invalid JSON" in c.error for c in item.calls)
    assert report.errors == 1 and report.error_rate == pytest.approx(0.1)
    wr = report.win_rate
    assert wr is not None and (wr.wins, wr.losses, wr.ties, wr.errors) == (6, 2, 1, 1)
    # a tolerated error counts as a loss: (6 + 1/2) / 10, sign test 6 of 9
    assert wr.win_rate == pytest.approx(0.65) and wr.p_value == pytest.approx(260 / 512)


def _contract(tmp_path: Path, judge_extra: str = "", gates: str = "") -> Path:
    gates = gates or ("  alpha: 0.05\n  primary: {metric: chat/judge_win_rate, min_delta: 0.1}\n"
                      "  hard:\n    - {metric: chat/judge_win_rate, min: 0.6}")
    judge = (f"judge:\n  type: llm\n  model: {{base_url: 'http://127.0.0.1:9/v1', model: j}}\n  samples: 2\n"
             f"  {STEPS}\n{judge_extra}")
    return write_contract(tmp_path, judge, gates)


def test_gate_verdicts_and_decision_through_the_engine(tmp_path: Path) -> None:
    rc = load_contract(_contract(tmp_path))
    cand, base = _answers()
    candidate, baseline = run("chat", cand, "cand"), run("chat", base, "base")
    report = run_judge(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge())
    verdicts = {v.kind: v for v in judge_gate_verdicts(report, rc.gates)}
    primary, hard = verdicts["primary"], verdicts["hard"]
    assert hard.verdict == "pass" and hard.candidate == pytest.approx(0.7)
    # 0.7 - 0.5 >= 0.1, but the one-sided sign test p = 37/256 = 0.145 is not < 0.05
    assert primary.verdict == "fail" and primary.p_value == pytest.approx(37 / 256)
    assert primary.effect == "research_only"
    wired = judge_for_decision(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge())
    assert wired.gates.primary is None and wired.gates.hard == []  # the engine does not gate them twice
    assert wired.extra_gates == list(verdicts.values())
    decision = decide(wired.gates, baseline, candidate, seed=0, contract_name=rc.name, extra_gates=wired.extra_gates)
    decision.extensions["judge"] = wired.extension
    assert decision.decision == "research_only" and decision.deciding_gates == [primary.name]
    assert decision.extensions["judge"]["schema_version"] == 1
    assert decision.extensions["judge"]["tasks"]["chat"]["win_rate"]["wins"] == 6


def test_judge_errors_fail_the_gate_closed(tmp_path: Path) -> None:
    rc = load_contract(_contract(tmp_path))
    cand, base = _answers(garbage=True)
    candidate, baseline = run("chat", cand, "cand"), run("chat", base, "base")
    report = run_judge(rc, candidate, baseline, tmp_path / "run", llm=QualityJudge())
    verdicts = judge_gate_verdicts(report, rc.gates)
    assert {v.verdict for v in verdicts} == {"error"} and {v.effect for v in verdicts} == {"block"}
    assert "1 judge error(s)" in verdicts[0].reason
    decision = decide(without_judge_gates(rc.gates), baseline, candidate, seed=0, contract_name=rc.name,
                      extra_gates=verdicts)
    assert decision.decision == "block"
    # with a tolerance the error counts as a loss instead of blocking outright
    rc2 = load_contract(_contract(tmp_path, "  max_error_rate: 0.2\n"))
    report2 = run_judge(rc2, candidate, baseline, tmp_path / "run2", llm=QualityJudge())
    hard = next(v for v in judge_gate_verdicts(report2, rc2.gates) if v.kind == "hard")
    assert hard.verdict == "pass" and hard.candidate == pytest.approx(0.65)


def test_judge_answers_are_cached_by_fingerprint_and_prompt(tmp_path: Path) -> None:
    rc = load_contract(_contract(tmp_path))
    cand, base = _answers()
    candidate, baseline = run("chat", cand), run("chat", base)
    first = QualityJudge()
    report = run_judge(rc, candidate, baseline, tmp_path / "run", llm=first)
    assert first.generate_calls == 20 and report.tasks["chat"].llm_calls == 20
    assert report.cache and Path(report.cache).is_relative_to(tmp_path / "run")
    again = QualityJudge()
    report2 = run_judge(rc, candidate, baseline, tmp_path / "run", llm=again)
    assert again.generate_calls == 0 and report2.tasks["chat"].cache_hits == 20
    assert report2.tasks["chat"].win_rate == report.tasks["chat"].win_rate
