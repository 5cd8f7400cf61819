"""Identical requests in documents of different shards (the same problem twice in a dataset): the merge numbers
them as one process does, so the merged run is the single-process run, its cache key for key."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fixtures.shard_contract import TASKS, results_of, sample_records, write_contract
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()


def _keys(cache: Path) -> set[tuple[str, str, int, str]]:
    with sqlite3.connect(cache / "cache.sqlite") as conn:
        return set(conn.execute("SELECT task_hash, request_hash, occurrence, response FROM generations"))


def _eval(contract: Path, checkpoint: Path, out: Path, cache: Path, *extra: str) -> None:
    result = runner.invoke(app, ["eval", str(contract), "--checkpoint", str(checkpoint), "--out", str(out),
                                 "--cache", str(cache), *extra])
    assert result.exit_code == 0, result.output


def test_documents_repeated_across_shards_merge_into_the_single_process_run(
        tmp_path: Path, shared_data: Path, tiny_checkpoint: Path) -> None:
    lines = (shared_data / "gsm8k/test.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    data = tmp_path / "data"
    (data / "gsm8k").mkdir(parents=True)
    # documents 0, 2 and 4 are one problem, 1 and 3 another; shard 1 of 2 holds 0-1, shard 2 holds 2-4
    (data / "gsm8k/test.jsonl").write_text("\n".join([lines[0], lines[1], lines[0], lines[1], lines[0]]) + "\n")
    contract = write_contract(tmp_path, data, str(tiny_checkpoint))
    _eval(contract, tiny_checkpoint, tmp_path / "one", tmp_path / "cache-one")
    for k in (1, 2):
        _eval(contract, tiny_checkpoint, tmp_path / f"s{k}", tmp_path / f"cache{k}", "--shard", f"{k}/2")
    second = json.loads((tmp_path / "s2/shard.json").read_text())
    assert second["documents"]["gsm8k"] == [2, 3, 4] and second["unanswered"] == 0
    result = runner.invoke(app, ["merge", str(tmp_path / "s2"), str(tmp_path / "s1"), "--out",
                                 str(tmp_path / "merged"), "--cache", str(tmp_path / "cache-merged")])
    assert result.exit_code == 0, result.output
    assert sample_records(tmp_path / "one") == sample_records(tmp_path / "merged")
    assert results_of(tmp_path / "one") == results_of(tmp_path / "merged")
    one = _keys(tmp_path / "cache-one")
    assert {occ for _, _, occ, _ in one} == {0, 1, 2}  # the repeated problem is three requests, 0..2
    assert len(one) == 5 * len(TASKS) and _keys(tmp_path / "cache-merged") == one


def test_a_shard_with_unanswered_requests_or_an_older_manifest_is_refused(tmp_path: Path) -> None:
    from rlgate._core.errors import InputError
    from rlgate.app.shards import check_shards
    from rlgate.results.shard import SHARD_FILE

    manifest = {"schema_version": 2, "contract": "c.yaml", "contract_name": "c", "contract_hash": "h",
                "protocol_hash": "p", "harness": "lm_eval", "role": "candidate",
                "checkpoint": {"source": "m", "kind": "local", "load_path": "m", "fingerprint": "f"},
                "shard": 1, "shards": 1, "tasks": ["gsm8k"], "base": {"gsm8k": 1}, "documents": {"gsm8k": [0]},
                "unanswered": 3}
    (tmp_path / SHARD_FILE).write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="did not answer 3 of its requests") as failed:
        check_shards([tmp_path])
    assert failed.value.fix and "same --cache" in failed.value.fix
    (tmp_path / SHARD_FILE).write_text(json.dumps({**manifest, "schema_version": 1, "unanswered": 0}))
    with pytest.raises(InputError, match="schema version 1") as failed:
        check_shards([tmp_path])
    assert failed.value.fix and "re-run the shard" in failed.value.fix
