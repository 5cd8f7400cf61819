"""`rlgate gate` on lm-eval folders with injected faults: corrupt scores fail closed, duplicates are never silent.

The issue's reproduction runs on the real Abel GSM8K folders (Abel-13B vs Abel-7B, 1,319 documents;
skipped where ../shared/data is absent); the same faults on a small generated folder run everywhere.
Each test asserts the exit code, the decision and the documents or lines rlgate names.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures.faults import append_first_lines, copy_folder, samples_file, set_score
from fixtures.lmeval_builders import build_synthetic_folder, cached_folder
from typer.testing import CliRunner

from rlgate.cli.app import app

CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
runner = CliRunner()
pytest.importorskip("lm_eval")
NAN_DOCS = list(range(3, 3 + 5 * 25, 5))  # 25 documents, spread over the split


def _gate(contract: Path, candidate: Path, baseline: Path, out: Path) -> tuple[int, str, dict[str, Any]]:
    result = runner.invoke(app, ["gate", str(contract), "--candidate", str(candidate), "--baseline", str(baseline),
                                 "--out", str(out)])
    decision = json.loads((out / "decision.json").read_text()) if result.exit_code != 2 else {}
    return result.exit_code, result.output, decision


def _corrupt(decision: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(c["run"], c["doc_id"], c["filter"]) for c in decision["corrupt"]]


# --------------------------------------------------------------------------- generated folders (run everywhere)
@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    base = build_synthetic_folder(root / "base", "org/base", {"gsm8k": [i % 2 == 0 for i in range(120)]})
    cand = build_synthetic_folder(root / "cand", "org/cand", {"gsm8k": [i % 5 != 0 for i in range(120)]})
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", root / "suite.yaml")
    gates = {"primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.02},
             "regression": [{"metric": "gsm8k/exact_match/strict-match", "max_drop": 0.05}]}
    contract = {"schema_version": 1, "name": "tiny", "baseline": {"checkpoint": "org/base"},
                "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"], "gates": gates}
    (root / "c.yaml").write_text(yaml.safe_dump(contract))
    gates_allow = {**gates, "allow_corrupt": 3}
    (root / "allow.yaml").write_text(yaml.safe_dump({**contract, "gates": gates_allow}))
    return {"base": base, "cand": cand, "contract": root / "c.yaml", "allow": root / "allow.yaml"}


def test_tiny_clean_folders_release(tiny: dict[str, Path], tmp_path: Path) -> None:
    code, output, decision = _gate(tiny["contract"], tiny["cand"], tiny["base"], tmp_path / "out")
    assert code == 0, output
    assert decision["decision"] == "release" and decision["corrupt"] == []


@pytest.mark.parametrize("value", [math.nan, math.inf, "1"])
def test_tiny_corrupt_scores_block(tiny: dict[str, Path], tmp_path: Path, value: object) -> None:
    cand = copy_folder(tiny["cand"], tmp_path / "cand")
    set_score(cand, [2, 7, 11], value)
    code, output, decision = _gate(tiny["contract"], cand, tiny["base"], tmp_path / "out")
    assert code == 1, output
    assert decision["decision"] == "block"
    assert {g["verdict"] for g in decision["gates"]} == {"error"}
    assert _corrupt(decision) == [("candidate", d, f) for d in (2, 7, 11) for f in ("flexible-extract", "strict-match")]
    primary = decision["gates"][0]
    assert primary["reason"].startswith("error: 3 corrupt documents in gsm8k/exact_match/flexible-extract")
    assert "candidate gsm8k doc 2" in primary["reason"] and "doc 11" in primary["reason"]
    assert decision["pairing"][0]["corrupt_candidate"] == 3
    assert "3 documents with corrupt scores" in output


def test_tiny_allow_corrupt_tolerates_and_reports_excluded(tiny: dict[str, Path], tmp_path: Path) -> None:
    cand = copy_folder(tiny["cand"], tmp_path / "cand")
    set_score(cand, [2, 7, 11], math.nan)
    code, output, decision = _gate(tiny["allow"], cand, tiny["base"], tmp_path / "out")
    assert code == 0, output
    assert decision["decision"] == "release"
    for gate in decision["gates"]:
        assert gate["verdict"] == "pass" and gate["n"] == 117
        assert gate["details"]["corrupt_excluded"] == 3 and "3 corrupt documents excluded" in gate["reason"]
    assert len(decision["corrupt"]) == 6 and "excluded under allow_corrupt 3" in output
    report = json.loads((tmp_path / "out" / "report_model.json").read_text())
    drop = next(d for d in report["rollout"]["drops"] if d.get("corrupt_documents"))
    assert drop["run"] == "candidate" and drop["corrupt_documents"] == 3 and drop["documents"][0].startswith("doc 2:")
    # one more than tolerated: error again
    set_score(cand, [20], math.nan)
    code, _, decision = _gate(tiny["allow"], cand, tiny["base"], tmp_path / "out2")
    primary = decision["gates"][0]
    assert code == 1 and primary["verdict"] == "error" and "4 corrupt documents" in primary["reason"]
    assert "allow_corrupt 3" in primary["reason"]


def test_tiny_corrupt_baseline_fails_comparative_gates_too(tiny: dict[str, Path], tmp_path: Path) -> None:
    base = copy_folder(tiny["base"], tmp_path / "base")
    set_score(base, [5], math.nan, filters=["strict-match"])
    code, _, decision = _gate(tiny["contract"], tiny["cand"], base, tmp_path / "out")
    assert code == 1 and decision["decision"] == "block"
    verdicts = {g["metric"]: g["verdict"] for g in decision["gates"]}
    assert verdicts == {"gsm8k/exact_match/flexible-extract": "pass", "gsm8k/exact_match/strict-match": "error"}
    assert _corrupt(decision) == [("baseline", 5, "strict-match")]


def test_tiny_duplicates_warn_and_conflicts_exit_2(tiny: dict[str, Path], tmp_path: Path) -> None:
    dup = copy_folder(tiny["cand"], tmp_path / "dup")
    append_first_lines(dup, 20)
    code, output, decision = _gate(tiny["contract"], dup, tiny["base"], tmp_path / "out")
    assert code == 0 and decision["decision"] == "release"
    assert "candidate gsm8k: 20 identical duplicate sample lines collapsed" in output
    assert decision["pairing"][0]["paired"] == 120
    conflict = copy_folder(tiny["cand"], tmp_path / "conflict")
    lines = append_first_lines(conflict, 20, lambda row: row.update(exact_match=1.0 - row["exact_match"]))
    code, output, _ = _gate(tiny["contract"], conflict, tiny["base"], tmp_path / "out2")
    path = samples_file(conflict)
    assert code == 2 and "Traceback" not in output
    assert f"{path}:{lines[0][0]} and {path}:{lines[0][1]}" in " ".join(output.split())


# --------------------------------------------------------------------------- the reproduction (real data)
@pytest.fixture(scope="module")
def abel(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    root = tmp_path_factory.getbasetemp()
    return {m: cached_folder(root, "gsm8k_abel", shared_data, m) for m in ("7b", "13b")}


def test_abel_nan_scores_on_25_documents_never_release(abel: dict[str, Path], tmp_path: Path) -> None:
    cand = copy_folder(abel["13b"], tmp_path / "13b-nan")
    changed = set_score(cand, NAN_DOCS, math.nan)
    assert len(changed) == 50  # 25 documents x 2 filters
    code, output, decision = _gate(CONTRACTS / "abel_gsm8k.yaml", cand, abel["7b"], tmp_path / "out")
    assert code == 1, output
    assert decision["decision"] == "block"
    by_metric = {g["metric"]: g for g in decision["gates"]}
    for metric in ("gsm8k/exact_match/flexible-extract", "gsm8k/exact_match/strict-match"):
        gate = by_metric[metric]
        assert gate["verdict"] == "error" and gate["details"]["corrupt"] == 25
        assert gate["reason"].startswith(f"error: 25 corrupt documents in {metric} (candidate 25; non-finite score")
        assert all(f"doc {d} (NaN)" in gate["reason"] for d in NAN_DOCS[:5]) and "and 20 more" in gate["reason"]
    assert _corrupt(decision) == [("candidate", d, f) for d in NAN_DOCS for f in ("flexible-extract", "strict-match")]
    name = samples_file(cand).name
    assert sorted(c["where"] for c in decision["corrupt"]) == sorted(f"{name}:{n}" for n in changed)
    assert decision["pairing"][0]["paired"] == 1319 and decision["pairing"][0]["corrupt_candidate"] == 25
    assert "candidate gsm8k: 25 documents with corrupt scores (50 values)" in output


def test_abel_first_20_lines_appended_again_warn_with_the_count(abel: dict[str, Path], tmp_path: Path) -> None:
    cand = copy_folder(abel["13b"], tmp_path / "13b-dup")
    append_first_lines(cand, 20)
    code, output, decision = _gate(CONTRACTS / "abel_gsm8k.yaml", cand, abel["7b"], tmp_path / "out")
    assert code == 0, output
    assert decision["decision"] == "release" and decision["gates"][0]["n"] == 1319
    warning = "candidate gsm8k: 20 identical duplicate sample lines collapsed"
    assert warning in output and any(w.startswith(warning) for w in decision["warnings"])


def test_abel_appended_lines_with_other_scores_exit_2_naming_both(abel: dict[str, Path], tmp_path: Path) -> None:
    cand = copy_folder(abel["13b"], tmp_path / "13b-conflict")
    lines = append_first_lines(cand, 20, lambda row: row.update(exact_match=1.0 - row["exact_match"]))
    code, output, _ = _gate(CONTRACTS / "abel_gsm8k.yaml", cand, abel["7b"], tmp_path / "out")
    path = samples_file(cand)
    text = " ".join(output.split())
    assert code == 2 and "Traceback" not in output
    assert f"{path}:{lines[0][0]} and {path}:{lines[0][1]}" in text
    assert "doc 0, filter strict-match" in text and "exact_match" in text
    assert not (tmp_path / "out" / "decision.json").exists()


@pytest.mark.parametrize("where", ["doc", "prompt"])
def test_tiny_text_that_is_not_utf8_exits_2_naming_the_line(tiny: dict[str, Path], tmp_path: Path, where: str) -> None:
    """Bytes that are not UTF-8 in a document or prompt (read after the merge) are a located error, no traceback."""
    cand = copy_folder(tiny["cand"], tmp_path / "cand")
    path = samples_file(cand)
    lines = path.read_bytes().split(b"\n")
    row = json.loads(lines[6])
    if where == "doc":
        row["doc"]["question"] = "ZZ"
    else:
        row["arguments"]["gen_args_0"]["arg_0"] = "ZZ"
    lines[6] = json.dumps(row).encode().replace(b"ZZ", b"caf\xe9")  # Latin-1, not UTF-8
    path.write_bytes(b"\n".join(lines))
    code, output, _ = _gate(tiny["contract"], cand, tiny["base"], tmp_path / "out")
    assert code == 2 and "Traceback" not in output
    assert f"{path}:7: not UTF-8 text (invalid continuation byte)" in " ".join(output.split())
    assert "fix: write the file as UTF-8 JSON Lines" in " ".join(output.split())
    assert not (tmp_path / "out" / "decision.json").exists()
