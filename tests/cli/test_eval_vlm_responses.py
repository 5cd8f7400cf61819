"""`rlgate eval --responses` on stored ChartQA / MMMU / MathVista predictions: lm-eval's own metric functions score
them, no model is loaded, and the values match what the benchmarks' published rules give (computed here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
pytest.importorskip("matplotlib")


def relaxed(pred: str, target: str) -> float:
    """ChartQA relaxed accuracy (Masry et al. 2022): within 5 % of a numeric answer, else case-blind exact text."""
    try:
        p, t = float(pred), float(target)
    except ValueError:
        return float(pred.strip().lower() == target.strip().lower())
    return float(abs(p - t) / max(abs(t), 1e-10) <= 0.05)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_eval_scores_stored_vlm_predictions_without_a_model(tmp_path: Path) -> None:
    from rlgate.demo.vlm import write_contract
    from rlgate.demo.vlm_data import write_vlm_data

    data = tmp_path / "data"
    write_vlm_data(data, chartqa_charts=2, mmmu_per_subject=1, mathvista=4)
    contract = write_contract(tmp_path, data, tmp_path / "no-checkpoints")
    chart, mmmu, vista = (rows(data / "chartqa/test.jsonl"), rows(data / "mmmu/validation.jsonl"),
                          rows(data / "mathvista/testmini.jsonl"))
    assert len(chart) == 8  # per chart: value (number), top category (text), difference (number), yes/no (text)

    # ChartQA answers (None: no `Final Answer:` marker, lm-eval reads nothing); the last document is left unanswered
    value0, diff1 = float(chart[0]["label"][0]), float(chart[6]["label"][0])
    flip = {"Yes": "No", "No": "Yes"}
    answers: list[str | None] = [
        f"{value0 * 1.04:g}",                        # near miss inside 5 %: relaxed right, exact wrong
        chart[1]["label"][0],                        # right text
        f"{float(chart[2]['label'][0]) * 1.2 + 1:g}",  # far miss
        flip[chart[3]["label"][0]],                  # wrong yes/no
        chart[4]["label"][0],                        # right number
        None,                                        # unparseable prose
        f"{diff1 * 1.06 if diff1 else 1.0:g}",       # near miss just outside 5 %
    ]
    lines = [{"task": "chartqa", "doc_id": i, "response": f"Final Answer: {a}" if a is not None
              else f"It is {chart[i]['label'][0]}, I think."} for i, a in enumerate(answers)]
    scored = [relaxed(a, chart[i]["label"][0]) if a is not None else 0.0 for i, a in enumerate(answers)]
    exact = [float(a == chart[i]["label"][0]) for i, a in enumerate(answers)]
    assert scored == [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0] and sum(exact) == 2  # the set covers every case

    # MMMU: matched by the document's `id`; every other subject gets a wrong option letter
    letters = "ABCD"
    mmmu_right: dict[str, float] = {}
    for k, row in enumerate(mmmu):
        right = k % 2 == 0
        letter = row["answer"] if right else letters[(letters.index(row["answer"]) + 1) % 4]
        lines.append({"task": "mmmu_val", "doc": {"id": row["id"]}, "response": f"({letter})"})
        mmmu_right[row["id"].split("_", 1)[1].rsplit("_", 1)[0].lower()] = float(right)

    # MathVista: right, wrong (another choice or number), right, unparseable
    vista_right = [1.0, 0.0, 1.0, 0.0]
    for i, row in enumerate(vista):
        if i == 3:
            response = "I cannot tell from the chart."
        elif vista_right[i]:
            response = f"Final Answer: {row['answer']}"
        elif row["choices"]:
            response = f"Final Answer: {next(c for c in row['choices'] if c != row['answer'])}"
        else:
            response = f"Final Answer: {float(row['answer']) + 7:g}"
        lines.append({"task": "mathvista_testmini", "doc_id": i, "response": response})

    responses = tmp_path / "predictions.jsonl"
    responses.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["eval", str(contract), "--responses", str(responses), "--out", str(out),
                                      "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "model not loaded" in text
    assert ("coverage chartqa: 7/8 documents answered (87.5%); scores are over the answered documents; "
            "1 missing listed in run_manifest.json") in text
    assert "coverage mathvista_testmini: 4/4 documents answered (100.0%)" in text
    assert "coverage mmmu_val_art: 1/1 documents answered (100.0%)" in text
    assert f"imported {len(lines)} rows: {len(lines)} matched, 0 unmatched" in text

    results = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
    assert results["chartqa"]["relaxed_accuracy,none"] == pytest.approx(sum(scored) / len(scored))
    assert results["chartqa"]["exact_match,none"] == pytest.approx(sum(exact) / len(exact))
    assert results["mathvista_testmini"]["acc,rule"] == pytest.approx(sum(vista_right) / 4)
    for subject, right in mmmu_right.items():
        assert results[f"mmmu_val_{subject}"]["acc,none"] == right, subject
    assert results["mmmu_val"]["acc,none"] == pytest.approx(sum(mmmu_right.values()) / len(mmmu_right))
    manifest = json.loads((out / "run_manifest.json").read_text())
    missing = {t["task"]: t["missing_documents"] for t in manifest["tasks"]}
    assert missing["chartqa"] == [7] and missing["mathvista_testmini"] == []


def test_eval_leaves_out_leaves_nobody_answered(tmp_path: Path) -> None:
    """A leaf with no answered row is not scored on empty answers (MMMU's scorer would guess letters into the
    group score): it is left out of lm-eval's evaluation and reported 0 answered; the group scores the rest."""
    from rlgate.demo.vlm import write_contract
    from rlgate.demo.vlm_data import write_vlm_data

    data = tmp_path / "data"
    write_vlm_data(data, chartqa_charts=1, mmmu_per_subject=1, mathvista=2)
    contract = write_contract(tmp_path, data, tmp_path / "no-checkpoints")
    mmmu = rows(data / "mmmu/validation.jsonl")
    answered = [row for k, row in enumerate(mmmu) if k % 2 == 0]  # every other subject, answered right
    lines = [{"task": "mmmu_val", "doc": {"id": row["id"]}, "response": f"({row['answer']})"} for row in answered]
    lines.append({"task": "chartqa", "doc_id": 0, "response": "Final Answer: 0"})
    responses = tmp_path / "predictions.jsonl"
    responses.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["eval", str(contract), "--responses", str(responses), "--out", str(out),
                                      "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    results = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
    subject = {row["id"]: "mmmu_val_" + row["id"].split("_", 1)[1].rsplit("_", 1)[0].lower() for row in mmmu}
    kept = {subject[row["id"]] for row in answered}
    left = set(subject.values()) - kept
    assert left and kept <= set(results) and not left & set(results)
    assert "mathvista_testmini" not in results  # no row answers it at all
    assert results["mmmu_val"]["acc,none"] == 1.0  # only the answered subjects, all right: no guessed letters
    manifest = {t["task"]: t for t in json.loads((out / "run_manifest.json").read_text())["tasks"]}
    for name in left:
        assert manifest[name]["documents"] == 0 and manifest[name]["expected_documents"] == 1
    text = " ".join(result.output.split())
    assert f"coverage {sorted(left)[0]}: 0/1 documents answered (0.0%)" in text
