"""protocol.executor kind ray on a real local Ray cluster: `rlgate check` of a three-task contract sharded four
ways gives the single-process decision.json, and a worker killed mid-run still leaves every sample exactly once.

The cluster: `fixtures.ray_cluster` (started by `.ci/run` on loopback; a skip elsewhere, a failure in CI).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fixtures.ray_cluster import ray_address
from fixtures.shard_contract import DOCS, TASKS, comparable_decision, sample_records, write_contract
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()
ADDRESS = ray_address()

RAY: dict[str, Any] = {"kind": "ray", "address": ADDRESS, "shards": 4, "cpus_per_shard": 1, "max_retries": 3}


def _check(contract: Path, checkpoint: Path, out: Path, cache: Path) -> Any:
    return runner.invoke(app, ["check", str(contract), "--checkpoint", str(checkpoint), "--out", str(out),
                               "--cache", str(cache)])


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory, shared_data: Path, tiny_checkpoint: Path) -> Path:
    root = tmp_path_factory.mktemp("single")
    contract = write_contract(root, shared_data, str(tiny_checkpoint), split="private")
    saved = os.environ.get("RLGATE_HISTORY")
    os.environ["RLGATE_HISTORY"] = str(root / "history.sqlite")  # its own history, like each test's
    try:
        result = _check(contract, tiny_checkpoint, root / "out", root / "cache")
    finally:
        os.environ.pop("RLGATE_HISTORY") if saved is None else os.environ.update(RLGATE_HISTORY=saved)
    assert result.exit_code == 3, result.output  # same weights on both sides: research_only
    return root / "out"


def _same_run(ray_out: Path, single: Path) -> None:
    for role in ("baseline", "candidate"):
        records = sample_records(ray_out / role)
        assert records == sample_records(single / role)
        for task in TASKS:
            assert sorted({r["doc_id"] for r in records[task]}) == list(range(DOCS))
    assert comparable_decision(ray_out / "decision.json") == comparable_decision(single / "decision.json")


def test_ray_shards_give_the_single_process_decision(tmp_path: Path, shared_data: Path, tiny_checkpoint: Path,
                                                     single: Path) -> None:
    contract = write_contract(tmp_path, shared_data, str(tiny_checkpoint), executor=RAY, split="private")
    result = _check(contract, tiny_checkpoint, tmp_path / "out", tmp_path / "cache")
    assert result.exit_code == 3, result.output
    _same_run(tmp_path / "out", single)
    shards = sorted((tmp_path / "out" / "baseline-shards").iterdir())
    assert [s.name for s in shards] == [f"{k}-of-4" for k in range(1, 5)]
    assert all(not (s / "running.json").exists() for s in shards)  # every shard finished
    # the candidate has the baseline's weights (its requests are the baseline's): evaluated from the merged
    # cache, as one process finds it cached, not sharded again
    assert not (tmp_path / "out" / "candidate-shards").exists()
    candidate = json.loads((tmp_path / "out" / "candidate" / "run_manifest.json").read_text())
    assert all(t["generated"] == 0 and t["cached"] == t["documents"] for t in candidate["tasks"])
    # a restarted check resumes from the shards' caches: nothing is generated again
    result = _check(contract, tiny_checkpoint, tmp_path / "again", tmp_path / "cache")
    assert result.exit_code == 3, result.output
    for k in range(1, 5):
        manifest = json.loads((tmp_path / "again" / "baseline-shards" / f"{k}-of-4" / "run_manifest.json").read_text())
        assert all(t["generated"] == 0 for t in manifest["tasks"]), manifest["tasks"]
    _same_run(tmp_path / "again", single)


def test_a_worker_killed_mid_run_still_gives_every_sample_once(tmp_path: Path, shared_data: Path,
                                                               tiny_checkpoint: Path, single: Path) -> None:
    contract = write_contract(tmp_path, shared_data, str(tiny_checkpoint), executor=RAY, split="private")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), *sys.path])}
    process = subprocess.Popen([sys.executable, "-m", "rlgate.cli.app", "check", str(contract), "--checkpoint",
                                str(tiny_checkpoint), "--out", str(out), "--cache", str(tmp_path / "cache")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and time.monotonic() < deadline and process.poll() is None:
        for running in sorted((out / "baseline-shards").glob("*/running.json")):
            try:
                pid = json.loads(running.read_text())["pid"]
            except (OSError, ValueError):
                continue
            os.kill(pid, signal.SIGKILL)  # the worker process running this shard dies mid-shard
            killed = running.parent
            break
        time.sleep(0.05)
    output, _ = process.communicate(timeout=600)
    assert killed is not None, "no shard was seen running: " + output
    assert process.returncode == 3, output
    assert not (killed / "running.json").exists()  # the killed shard was run again to its end
    _same_run(out, single)


def test_a_candidate_of_other_weights_is_sharded_beside_the_baseline(tmp_path: Path, shared_data: Path,
                                                                     tiny_checkpoint: Path) -> None:
    """Both roles' shards go to the cluster together (six tasks on the cluster's slots): each role's folder is
    still the one-process one, and so is the decision."""
    from rlgate.demo.model import build_tiny_checkpoint

    other = build_tiny_checkpoint(tmp_path / "other", seed=1, steps=10)
    runs = {}
    for name, executor in (("one", None), ("ray", {**RAY, "shards": 3})):
        contract = write_contract(tmp_path / name, shared_data, str(tiny_checkpoint), executor=executor,
                                  split="private")
        result = _check(contract, other, tmp_path / name / "out", tmp_path / name / "cache")
        assert result.exit_code in (0, 1, 3), result.output
        runs[name] = tmp_path / name / "out"
    for role in ("baseline", "candidate"):
        assert sample_records(runs["ray"] / role) == sample_records(runs["one"] / role)
        assert sorted(p.name for p in (runs["ray"] / f"{role}-shards").iterdir()) == [f"{k}-of-3" for k in (1, 2, 3)]
    assert comparable_decision(runs["ray"] / "decision.json") == comparable_decision(runs["one"] / "decision.json")
