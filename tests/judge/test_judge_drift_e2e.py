"""Judge drift end to end: the decision path hands the project history to the judge, so the second
decision sees the first one's calibration and reports the drift (issue 12: it was never passed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from judge_contracts import run, sample, write_contract
from judge_helpers import QualityJudge

from rlgate.app.decide import decide_and_report
from rlgate.harness.vocabulary import load_contract
from rlgate.store.open import open_history

JUDGE = ("judge:\n  type: llm\n  model: {base_url: 'http://127.0.0.1:9/v1', model: j}\n"
         "  evaluation_steps: [Compare]\n  calibration: {anchors: anchors.jsonl, min_agreement: 0.7}\n")


def _anchors(path: Path, labels: list[str]) -> None:
    pairs = [("Q3 a", "Q1 b"), ("Q1 a", "Q3 b"), ("Q2 a", "Q2 b"), ("Q3 a", "Q2 b")]  # judge says A, B, tie, A
    path.write_text("".join(json.dumps({"id": i, "question": "q", "response_a": a, "response_b": b, "label": lab})
                            + "\n" for i, ((a, b), lab) in enumerate(zip(pairs, labels, strict=True))))


def test_second_decision_runs_the_drift_check_against_the_first(tmp_path: Path) -> None:
    rc = load_contract(write_contract(tmp_path, JUDGE, "  hard:\n    - {metric: chat/judge_win_rate, min: 0.0}"))
    candidate, baseline = run("chat", [sample(0, "Q3 x")], "cand"), run("chat", [sample(0, "Q1 y")], "base")
    _anchors(tmp_path / "anchors.jsonl", ["A", "B", "tie", "A"])
    first = decide_and_report(rc, baseline, candidate, tmp_path / "d1", judge_llm=QualityJudge())
    cal1 = first.decision.extensions["judge"]["tasks"]["chat"]["calibration"]
    assert cal1["accuracy"] == 1.0 and cal1["previous_accuracy"] is None and not cal1["drift"]
    assert first.decision.decision == "release"

    _anchors(tmp_path / "anchors.jsonl", ["B", "A", "tie", "B"])  # the judge now agrees on 1 of 4
    second = decide_and_report(rc, baseline, candidate, tmp_path / "d2", judge_llm=QualityJudge())
    cal2 = second.decision.extensions["judge"]["tasks"]["chat"]["calibration"]
    assert cal2["previous_accuracy"] == 1.0 and cal2["accuracy"] == 0.25
    assert cal2["drift"] and "DRIFT" in cal2["message"]
    assert second.decision.decision == "block"  # a drifted judge fails closed
    written = json.loads((tmp_path / "d2" / "decision.json").read_text())
    assert written["extensions"]["judge"]["tasks"]["chat"]["calibration"]["drift"] is True

    # both calibrations and both private-split consultations are in the one project history
    store = open_history(os.environ["RLGATE_HISTORY"])
    assert store.last_judge_calibration("judged/chat") is not None
    assert store.consultations("default") == {"chat": 2}
