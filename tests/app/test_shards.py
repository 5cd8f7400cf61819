"""`rlgate eval --shard K/N` + `rlgate merge`: N shards give the single-process results folder, and shards that
cannot be one run are refused (exit 2, one line naming the file). No Ray needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fixtures.shard_contract import DOCS, TASKS, results_of, sample_records, write_contract
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()
N = 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, shared_data: Path, tiny_checkpoint: Path) -> dict[str, Path]:
    """One single-process run and four shards (each with its own cache, as on four machines), merged."""
    root = tmp_path_factory.mktemp("shards")
    contract = write_contract(root, shared_data, str(tiny_checkpoint))
    one = root / "one"
    result = runner.invoke(app, ["eval", str(contract), "--checkpoint", str(tiny_checkpoint), "--out", str(one),
                                 "--cache", str(root / "cache-one")])
    assert result.exit_code == 0, result.output
    shards = []
    for k in range(1, N + 1):
        folder = root / f"shard{k}"
        result = runner.invoke(app, ["eval", str(contract), "--checkpoint", str(tiny_checkpoint), "--out",
                                     str(folder), "--cache", str(root / f"cache{k}"), "--shard", f"{k}/{N}"])
        assert result.exit_code == 0, result.output
        assert f"shard {k}/{N}" in result.output
        shards.append(folder)
    merged = root / "merged"
    result = runner.invoke(app, ["merge", *map(str, reversed(shards)), "--out", str(merged), "--cache",
                                 str(root / "cache-merge")])
    assert result.exit_code == 0, result.output
    assert f"merged {N} shards: {DOCS * len(TASKS)} documents" in result.output
    return {"root": root, "contract": contract, "one": one, "merged": merged, **{f"s{k}": s for k, s in
                                                                                 enumerate(shards, 1)}}


def test_merged_shards_equal_the_single_process_run(runs: dict[str, Path]) -> None:
    one, merged = sample_records(runs["one"]), sample_records(runs["merged"])
    assert sorted(one) == sorted(TASKS)
    assert one == merged  # every per-sample record, prompt and response hashes included
    for task in TASKS:
        ids = [r["doc_id"] for r in merged[task]]  # one record per document and filter
        assert sorted(set(ids)) == list(range(DOCS)) and len({ids.count(i) for i in ids}) == 1
    assert results_of(runs["one"]) == results_of(runs["merged"])
    a, b = (json.loads((runs[n] / "run_manifest.json").read_text()) for n in ("one", "merged"))
    for key in ("tasks",):
        for x, y in zip(a[key], b[key], strict=True):
            for field in ("task", "task_hash", "documents", "requests", "generated", "cached", "tokens_in",
                          "tokens_out", "drops", "expected_documents"):
                assert x[field] == y[field], field
    assert a["protocol_hash"] == b["protocol_hash"] and a["checkpoint_fingerprint"] == b["checkpoint_fingerprint"]
    assert b["model_loaded"]  # the shards loaded it; the merge itself answered from their generations


def test_each_shard_holds_a_contiguous_range_and_says_it_is_partial(runs: dict[str, Path]) -> None:
    seen: dict[str, list[int]] = {t: [] for t in TASKS}
    for k in range(1, N + 1):
        shard = json.loads((runs[f"s{k}"] / "shard.json").read_text())
        assert shard["schema_version"] == 2 and (shard["shard"], shard["shards"]) == (k, N)
        assert shard["base"] == {t: DOCS for t in TASKS}
        for task, ids in shard["documents"].items():
            assert ids == list(range(ids[0], ids[0] + len(ids))) if ids else True
            seen[task] += ids
        manifest = json.loads((runs[f"s{k}"] / "run_manifest.json").read_text())
        assert all(t["expected_documents"] == DOCS for t in manifest["tasks"])  # gated alone: partial coverage
    assert all(sorted(ids) == list(range(DOCS)) for ids in seen.values())


def _merge(runs: dict[str, Path], folders: list[Path], name: str) -> str:
    result = runner.invoke(app, ["merge", *map(str, folders), "--out", str(runs["root"] / name), "--cache",
                                 str(runs["root"] / f"cache-{name}")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return " ".join(result.output.split())


def test_a_missing_shard_is_refused(runs: dict[str, Path]) -> None:
    out = _merge(runs, [runs["s1"], runs["s2"], runs["s4"]], "m1")
    assert "shard(s) 3/4 missing" in out and "shard.json" in out


def test_a_shard_given_twice_is_refused(runs: dict[str, Path]) -> None:
    out = _merge(runs, [runs["s1"], runs["s2"], runs["s2"], runs["s3"], runs["s4"]], "m2")
    assert "shard 2/4 is given twice" in out


def _copy(runs: dict[str, Path], k: int, name: str) -> tuple[Path, dict[str, object]]:
    folder = runs["root"] / name
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(runs[f"s{k}"], folder)
    return folder, json.loads((folder / "shard.json").read_text())


def test_an_overlapping_document_is_refused(runs: dict[str, Path]) -> None:
    folder, data = _copy(runs, 3, "overlap")
    documents = data["documents"]
    assert isinstance(documents, dict)
    documents["gsm8k"] = [0, *documents["gsm8k"]]  # doc 0 is shard 1's
    (folder / "shard.json").write_text(json.dumps(data))
    out = _merge(runs, [runs["s1"], runs["s2"], folder, runs["s4"]], "m3")
    assert "document 0 of 'gsm8k' is in two shards" in out and str(folder / "shard.json") in out


def test_a_shard_of_another_checkpoint_or_contract_is_refused(runs: dict[str, Path]) -> None:
    folder, data = _copy(runs, 2, "other-ckpt")
    checkpoint = data["checkpoint"]
    assert isinstance(checkpoint, dict)
    checkpoint["fingerprint"] = "0" * 64
    (folder / "shard.json").write_text(json.dumps(data))
    out = _merge(runs, [runs["s1"], folder, runs["s3"], runs["s4"]], "m4")
    assert "the shards are not of one run" in out and "checkpoint" in out
    folder, data = _copy(runs, 2, "other-contract")
    data["contract_hash"] = "f" * 64
    (folder / "shard.json").write_text(json.dumps(data))
    out = _merge(runs, [runs["s1"], folder, runs["s3"], runs["s4"]], "m5")
    assert "contract_hash differs" in out and str(folder / "shard.json") in out


def test_a_document_in_no_shard_and_a_bad_manifest_are_refused(runs: dict[str, Path]) -> None:
    folder, data = _copy(runs, 4, "short")
    documents = data["documents"]
    assert isinstance(documents, dict)
    documents["gsm8k_cot"] = documents["gsm8k_cot"][:-1]
    (folder / "shard.json").write_text(json.dumps(data))
    out = _merge(runs, [runs["s1"], runs["s2"], runs["s3"], folder], "m6")
    assert "1 of the 7 documents of 'gsm8k_cot' are in no shard" in out
    data["extra"] = 1
    (folder / "shard.json").write_text(json.dumps(data))
    out = _merge(runs, [runs["s1"], runs["s2"], runs["s3"], folder], "m7")
    assert "not a shard manifest" in out and "extra" in out
    out = _merge(runs, [runs["s1"], runs["one"]], "m8")
    assert "is not a shard folder" in out


def test_bad_shard_argument(runs: dict[str, Path], tiny_checkpoint: Path) -> None:
    result = runner.invoke(app, ["eval", str(runs["contract"]), "--checkpoint", str(tiny_checkpoint), "--out",
                                 str(runs["root"] / "bad"), "--shard", "5/4"])
    assert result.exit_code == 2 and "--shard takes K/N with 1 <= K <= N" in result.output
