"""A real OpenCompass 0.5.4 run folder (tests/fixtures/opencompass_tiny_gsm8k) imported as OpenCompass wrote it:
every prediction lands on its GSM8K document (OpenCompass's `gold` is lm-eval's full answer), the benchmark
version is the summarizer's config hash, and OpenCompass's own per-sample verdicts are the ones its results hold.
"""

from __future__ import annotations

import json
from pathlib import Path

from rlgate.harness.lmeval.convert import convert
from rlgate.harness.lmeval.responses import same_target

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "opencompass_tiny_gsm8k"
GSM8K = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "gsm8k" / "test.jsonl"


def test_a_real_opencompass_run_imports_onto_lm_evals_gsm8k_documents(tmp_path: Path) -> None:
    out = tmp_path / "responses.jsonl"
    report = convert([RUN], "opencompass", out)
    assert report.rows == {"gsm8k": 20} and report.versions == {"gsm8k": "gsm8k@e520fb"}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    docs = [json.loads(line) for line in GSM8K.read_text().splitlines()[:20]]
    assert [r["doc_id"] for r in rows] == list(range(20))
    assert all(same_target(r["target"], d["answer"]) for r, d in zip(rows, docs, strict=True))
    details = json.loads((RUN / "results" / "tiny-hf" / "gsm8k.json").read_text())["details"]
    assert [d["example_abbr"] for d in details] == [f"gsm8k_test_{i}" for i in range(20)]
    assert not any(d["correct"][0] for d in details)  # OpenCompass's own verdicts: the tiny model gets none right


def test_a_dataset_sampled_twice_lands_each_replica_on_its_document(tmp_path: Path) -> None:
    """OpenCompass's `n: 2` repeats the test set: predictions 20-39 answer questions 0-19 again (the results file's
    details say so: one entry per question, two verdicts each)."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    predictions = run / "predictions" / "tiny-hf" / "gsm8k.json"
    entries = json.loads(predictions.read_text())
    predictions.write_text(json.dumps({**entries, **{str(20 + int(k)): v for k, v in entries.items()}}))
    results = run / "results" / "tiny-hf" / "gsm8k.json"
    data = json.loads(results.read_text())
    for entry in data["details"]:
        entry["correct"], entry["pred"] = entry["correct"] * 2, entry["pred"] * 2
    data["accuracy (2 runs average)"] = data.pop("accuracy")
    results.write_text(json.dumps(data))
    out = tmp_path / "responses.jsonl"
    assert convert([run], "opencompass", out).rows == {"gsm8k": 40}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["doc_id"] for r in rows] == list(range(20)) * 2
