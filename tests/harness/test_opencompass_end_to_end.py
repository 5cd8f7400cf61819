"""A real OpenCompass run (tests/fixtures/opencompass_gsm8k_memorizer: opencompass 0.5.4, HF backend, CPU, 20 GSM8K
questions) gated end to end against an lm-eval run of the same model on the same questions through rlgate's own
hf path.

The model gives the same answer to a question under OpenCompass's prompt and lm-eval's, so: OpenCompass's
predictions re-scored through lm-eval's gsm8k task score exactly as the lm-eval run does, question by question
(and import and eval say the prompts differ: an input difference); OpenCompass's own verdicts agree with
lm-eval's on every question except the two where the scorers disagree by design (18.00, 70,000).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.harness import read_results

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "opencompass_gsm8k_memorizer"
MODEL, RUN = FIXTURE / "model", FIXTURE / "run"
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "gsm8k"
runner = CliRunner()
#: question -> (OpenCompass's verdict, lm-eval's) where the two scorers read the same answer differently
SCORERS_DISAGREE = {0: (1.0, 0.0), 2: (0.0, 1.0)}


def _project(tmp_path: Path) -> Path:
    data = tmp_path / "gsm8k"
    data.mkdir()
    (data / "test.jsonl").write_text("".join((REAL / "test.jsonl").read_text().splitlines(keepends=True)[:20]))
    with gzip.open(REAL / "train.jsonl.gz", "rt", encoding="utf-8") as handle:
        (data / "train.jsonl").write_text("".join(next(handle) for _ in range(20)))
    suite = {"schema_version": 1, "name": "oc_gsm8k", "version": "1", "tasks": [
        {"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
         "data_files": {"test": str(data / "test.jsonl"), "train": str(data / "train.jsonl")}}]}
    contract = {"schema_version": 1, "name": "oc_e2e", "baseline": {"checkpoint": str(MODEL)},
                "protocol": {"backend": "hf", "chat_template": False,
                             "sampling": {"temperature": 0.0, "top_p": 1.0, "n": 1, "max_tokens": 24, "seed": 1234},
                             "hf": {"device": "cpu", "dtype": "float32", "batch_size": 4}},
                "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
                "gates": {"primary": {"metric": "gsm8k/exact_match/strict-match", "min_delta": 0.0}}}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    (tmp_path / "contract.yaml").write_text(yaml.safe_dump(contract))
    return tmp_path / "contract.yaml"


def _strict(folder: Path) -> dict[int, float]:
    return {int(s.doc_id): float(s.scores["strict-match"]["exact_match"])  # type: ignore[arg-type]
            for s in read_results(folder).tasks["gsm8k"].samples}


@pytest.mark.slow
def test_a_real_opencompass_run_gates_against_an_lm_eval_run_of_the_same_model(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch", reason="the hf backend needs torch")
    contract = _project(tmp_path)
    cache = ["--cache", str(tmp_path / "cache")]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: one thread is faster than contending for the machine's cores
    try:
        live = runner.invoke(app, ["eval", str(contract), "--checkpoint", str(MODEL), "--out", str(tmp_path / "lm"),
                                   *cache])
    finally:
        torch.set_num_threads(threads)
    assert live.exit_code == 0, live.output

    imported = runner.invoke(app, ["import", "--from", "opencompass", str(RUN), "--out", str(tmp_path / "oc.jsonl")])
    assert imported.exit_code == 0, imported.output
    assert "gsm8k: 20 responses (read as opencompass output; benchmark version gsm8k@4f9e3e)" in imported.output
    assert "OpenCompass generated these responses from its own prompt" in imported.output
    rescored = runner.invoke(app, ["eval", str(contract), "--responses", str(tmp_path / "oc.jsonl"), "--out",
                                   str(tmp_path / "oc"), *cache])
    assert rescored.exit_code == 0, rescored.output
    assert "warning: gsm8k: 20 of 20 imported responses were generated from a prompt other than" in rescored.output
    manifest = json.loads((tmp_path / "oc" / "run_manifest.json").read_text())
    assert any("a different input" in note for note in manifest["checkpoint_notes"])

    lm, oc = _strict(tmp_path / "lm"), _strict(tmp_path / "oc")
    assert lm == oc and len(lm) == 20 and sum(lm.values()) == 14  # the same answers, scored by the same scorer
    predictions = json.loads((RUN / "predictions" / "memorizer-hf" / "gsm8k.json").read_text())
    responses = {int(s.doc_id): s.responses[0] for s in read_results(tmp_path / "lm").tasks["gsm8k"].samples}
    assert all(predictions[str(i)]["prediction"].strip() == responses[i].strip() for i in range(20))

    own = {int(s.doc_id): float(s.scores["none"]["accuracy"])  # type: ignore[arg-type]
           for s in read_results(RUN).tasks["gsm8k"].samples}  # OpenCompass's own verdicts (harness opencompass)
    differ = {i: (own[i], lm[i]) for i in range(20) if own[i] != lm[i]}
    assert differ == SCORERS_DISAGREE  # the same per-question correctness wherever the scorers agree
    assert sum(own.values()) == sum(lm.values()) == 14

    out = tmp_path / "gate"
    gated = runner.invoke(app, ["gate", str(contract), "--baseline", str(tmp_path / "lm"), "--candidate",
                                str(tmp_path / "oc"), "--out", str(out)])
    decision = json.loads((out / "decision.json").read_text())
    assert decision["pairing"][0]["paired"] == 20 and decision["pairing"][0]["document_mismatch"] == 0, gated.output
    primary = next(g for g in decision["gates"] if g["name"] == "gsm8k/exact_match/strict-match")
    assert (primary["baseline"], primary["candidate"], primary["n"]) == (0.7, 0.7, 20)
    assert primary["details"]["candidate_only_right"] == primary["details"]["baseline_only_right"] == 0
    assert decision["decision"] != "release"  # no improvement over itself: the gate's min_delta is not met
