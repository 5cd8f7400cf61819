"""Judge calibration: agreement with human labels on an anchor set, and drift since the last run.

Anchor rows (JSONL), pairwise: `{"id": .., "question": .., "response_a": .., "response_b": ..,
"label": "A" | "B" | "tie"}`; pointwise: `{"id": .., "question": .., "response": .., "label": "pass" |
"fail"}`. Anchors are judged under the task's own policy (orders, samples), response A in the
candidate's place. A judge error counts as a disagreement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from rlgate._core.errors import InputError
from rlgate._core.jsonio import iter_jsonl
from rlgate.contract.judge_policy import CalibrationSpec, JudgeSpec
from rlgate.judge.report import CalibrationReport
from rlgate.judge.runner import Judge, judge_pair, judge_points
from rlgate.judge.stats import cohen_kappa

PAIR_LABELS = {"A", "B", "tie"}
POINT_LABELS = {"pass", "fail"}
PASS_SCORE = 0.5


class JudgeHistory(Protocol):
    """What calibration needs from the history store: the last agreement recorded under a key."""

    def last_judge_calibration(self, key: str) -> dict[str, Any] | None: ...

    def record_judge_calibration(self, key: str, record: dict[str, Any]) -> None: ...


def load_anchors(path: Path, mode: str) -> list[dict[str, Any]]:
    """Read and check the anchor set; every bad row is an InputError naming its line."""
    if not path.is_file():
        raise InputError(f"anchor set {path} does not exist", file=path, field="judge.calibration.anchors",
                         fix="point judge.calibration.anchors at a JSONL file of human-labelled items")
    fields = ("question", "response_a", "response_b") if mode == "pairwise" else ("question", "response")
    labels = PAIR_LABELS if mode == "pairwise" else POINT_LABELS
    rows: list[dict[str, Any]] = []
    for number, row in iter_jsonl(path, fix="one JSON object per line"):
        if not isinstance(row, dict):
            raise InputError("a row must be a JSON object", file=path, line=number)
        missing = [f for f in fields if not isinstance(row.get(f), str)]
        if missing:
            raise InputError(f"missing or non-text field(s): {', '.join(missing)}", file=path, line=number,
                             fix=f"{mode} anchors need {', '.join(fields)} and label")
        if row.get("label") not in labels:
            raise InputError(f"label {row.get('label')!r} is not one of {sorted(labels)}", file=path,
                             line=number, field="label")
        row.setdefault("id", number)
        rows.append(row)
    if not rows:
        raise InputError("the anchor set is empty", file=path, fix="add human-labelled items")
    return rows


def _judge_label(judge: Judge, spec: JudgeSpec, row: dict[str, Any]) -> str:
    key = f"anchor:{row['id']}"
    if spec.mode == "pairwise":
        outcome, _ = judge_pair(judge, spec, key, row["question"], row["response_a"], row["response_b"])
        return {"win": "A", "loss": "B", "tie": "tie"}.get(outcome, "error")
    score, _ = judge_points(judge, spec, row["question"], row["response"], "candidate")
    return "error" if score is None else "pass" if score >= PASS_SCORE else "fail"


def calibrate(spec: JudgeSpec, cal: CalibrationSpec, anchors: Path, judge: Judge, key: str,
              history: JudgeHistory | None) -> CalibrationReport:
    """Agreement (accuracy, Cohen's kappa) of the judge with the human labels; drift against the last run."""
    rows = load_anchors(anchors, spec.mode)
    human = [str(r["label"]) for r in rows]
    said = [_judge_label(judge, spec, r) for r in rows]
    accuracy = sum(h == j for h, j in zip(human, said, strict=True)) / len(rows)
    kappa = cohen_kappa(human, said)
    below = accuracy < cal.min_agreement or (cal.min_kappa is not None and (kappa is None or kappa < cal.min_kappa))
    previous = history.last_judge_calibration(key) if history is not None else None
    prev_acc = previous.get("accuracy") if previous else None
    prev_kappa = previous.get("kappa") if previous else None
    was_ok = prev_acc is not None and prev_acc >= cal.min_agreement and (
        cal.min_kappa is None or (prev_kappa is not None and prev_kappa >= cal.min_kappa))
    drift = below and was_ok
    kappa_text = "n/a" if kappa is None else f"{kappa:.3f}"
    message = f"agreement {accuracy:.1%} (kappa {kappa_text}) on {len(rows)} anchors, floor {cal.min_agreement:.0%}"
    if prev_acc is not None:
        message += f"; last run {prev_acc:.1%}"
        if previous and previous.get("judge") != judge.fingerprint:
            message += " with a different judge model"
    if drift:
        message += ": DRIFT, the judge fell below its floor since the last run"
    elif below:
        message += ": below the floor"
    report = CalibrationReport(
        anchors=str(anchors), n=len(rows), errors=said.count("error"), accuracy=accuracy, kappa=kappa,
        min_agreement=cal.min_agreement, min_kappa=cal.min_kappa, below_floor=below, previous_accuracy=prev_acc,
        previous_kappa=prev_kappa, previous_judge=previous.get("judge") if previous else None, drift=drift,
        message=message)
    if history is not None:
        history.record_judge_calibration(key, {"accuracy": accuracy, "kappa": kappa, "judge": judge.fingerprint,
                                               "n": len(rows), "errors": report.errors})
    return report
