"""Kill a run with SIGKILL mid-way, resume it: nothing finished is generated again, nothing is lost,
and the results equal those of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ContractFactory = Callable[..., Path]

pytest.importorskip("lm_eval")

CHILD = Path(__file__).with_name("resume_child.py")
DOCS = 10


def rows(cache: Path) -> set[str]:
    db = cache / "cache.sqlite"
    if not db.exists():
        return set()
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return {r[0] for r in conn.execute("SELECT request_hash FROM generations")}
    except sqlite3.OperationalError:
        return set()


def events(log: Path, kind: str) -> list[dict]:  # type: ignore[type-arg]
    if not log.exists():
        return []
    return [e for e in map(json.loads, log.read_text().splitlines()) if e["event"] == kind]


def run_child(contract: Path, checkpoint: Path, out: Path, cache: Path, log: Path, delay: float) -> subprocess.Popen:  # type: ignore[type-arg]
    cmd = [sys.executable, str(CHILD), str(log), str(delay), "--", str(contract), "--checkpoint", str(checkpoint),
           "--out", str(out), "--cache", str(cache), "--limit", str(DOCS)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)


def samples(out: Path) -> list[dict]:  # type: ignore[type-arg]
    file = next(out.rglob("samples_gsm8k_*.jsonl"))
    logged = (json.loads(line) for line in file.read_text().splitlines())  # one line per (document, filter)
    return sorted((s for s in logged if s["filter"] == "flexible-extract"), key=lambda s: s["doc_id"])


def test_sigkill_then_resume(write_contract: ContractFactory, tiny_checkpoint: Path, shared_data: Path,
                             tmp_path: Path) -> None:
    from rlgate.harness.lmeval.caching_lm import request_hash

    contract = write_contract([{"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
                                "data_files": str(shared_data / "gsm8k/test.jsonl")}],
                              protocol={"hf": {"device": "cpu", "dtype": "float32", "batch_size": 1}})
    cache, log = tmp_path / "cache", tmp_path / "calls.jsonl"
    child = run_child(contract, tiny_checkpoint, tmp_path / "out", cache, log, delay=0.4)
    deadline = time.monotonic() + 240
    while len(rows(cache)) < 3 and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child.poll() is None, "the run finished before it could be killed: " + child.stdout.read().decode()[-2000:]  # type: ignore[union-attr]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    committed = rows(cache)
    assert 3 <= len(committed) < DOCS
    first_sent = [e["context"] for e in events(log, "sent")]
    assert len(first_sent) == DOCS  # everything was handed to the model; only some had finished

    log2 = tmp_path / "calls2.jsonl"
    resumed = run_child(contract, tiny_checkpoint, tmp_path / "out", cache, log2, delay=0.0)
    output = resumed.communicate(timeout=600)[0].decode()
    assert resumed.returncode == 0, output[-3000:]
    final = samples(tmp_path / "out")
    assert [s["doc_id"] for s in final] == list(range(DOCS))  # nothing lost
    gen_kwargs = final[0]["arguments"]["gen_args_0"]["arg_1"]
    hash_of = {s["arguments"]["gen_args_0"]["arg_0"]: request_hash(
        "generate_until", [s["arguments"]["gen_args_0"]["arg_0"], gen_kwargs]) for s in final}
    assert set(hash_of.values()) == rows(cache)
    second_sent = [e["context"] for e in events(log2, "sent")]
    # only what had not finished is generated again, each once; the model ran once per request
    assert sorted(hash_of[c] for c in second_sent) == sorted(set(hash_of.values()) - committed)
    assert sum(e["batch"] for e in events(log2, "generated")) == DOCS - len(committed)
    manifest = json.loads((tmp_path / "out" / "run_manifest.json").read_text())
    assert (manifest["tasks"][0]["cached"], manifest["tasks"][0]["generated"]) == (len(committed),
                                                                                 DOCS - len(committed))

    fresh = run_child(contract, tiny_checkpoint, tmp_path / "fresh", tmp_path / "cache2", tmp_path / "c3.jsonl", 0.0)
    assert fresh.wait(timeout=600) == 0
    uninterrupted = samples(tmp_path / "fresh")
    assert [s["resps"] for s in uninterrupted] == [s["resps"] for s in final]
    assert [s["exact_match"] for s in uninterrupted] == [s["exact_match"] for s in final]
    results = [json.loads(next(p.rglob("results_*.json")).read_text())["results"] for p in
               (tmp_path / "out", tmp_path / "fresh")]
    assert results[0] == results[1]
