"""protocol.executor kind ray for an inspect agent task on a real local Ray cluster: `rlgate check` of the
shipped toolbox task (scripted mockllm policies) sharded on the cluster gives the single-process decision.json,
each role's merged log holding every sample once. Inspect answers nothing from a cache, so a candidate with the
baseline's weights is sharded and run live too, as one process runs it.

The cluster: `fixtures.ray_cluster` (started by `.ci/run` on loopback; a skip elsewhere, a failure in CI).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures.ray_cluster import ray_address
from fixtures.shard_contract import comparable_decision
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")

from rlgate.cli.app import app
from rlgate.demo.agent import write_project
from rlgate.harness import read_results

runner = CliRunner()
ADDRESS = ray_address()
SAMPLES = 24


def _check(root: Path, executor: dict[str, Any] | None, checkpoint: str) -> Path:
    contract = root / "contract.yaml" if (root / "contract.yaml").exists() else write_project(root).contract
    if executor is not None:
        data = yaml.safe_load(contract.read_text())
        data["protocol"]["executor"] = executor
        contract.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["check", str(contract), "--checkpoint", checkpoint, "--out", str(root / "out"),
                                 "--cache", str(root / "cache")], env={"RLGATE_HISTORY": str(root / "h.sqlite")})
    assert result.exit_code == 3, result.output  # research_only: success bought with twice the tokens (or equal)
    return root / "out"


@pytest.mark.parametrize(("checkpoint", "shards"), [("mockllm/toolbox-candidate", 3),
                                                    ("mockllm/toolbox-baseline", 2)])
def test_ray_shards_of_an_agent_task_give_the_single_process_decision(tmp_path: Path, checkpoint: str,
                                                                      shards: int) -> None:
    one = _check(tmp_path / "one", None, checkpoint)
    ray = _check(tmp_path / "ray", {"kind": "ray", "address": ADDRESS, "shards": shards, "cpus_per_shard": 1,
                                    "max_retries": 2}, checkpoint)
    assert comparable_decision(ray / "decision.json") == comparable_decision(one / "decision.json")
    for role in ("baseline", "candidate"):
        assert sorted(p.name for p in (ray / f"{role}-shards").iterdir()) == [f"{k}-of-{shards}"
                                                                             for k in range(1, shards + 1)]
        samples = read_results(ray / role).tasks["toolbox"].samples
        assert sorted(s.doc_id for s in samples) == sorted(s.doc_id for s in
                                                          read_results(one / role).tasks["toolbox"].samples)
        assert len({s.doc_id for s in samples}) == SAMPLES
        manifest = json.loads((ray / role / "run_manifest.json").read_text())
        assert manifest["tasks"][0]["generated"] == SAMPLES  # every sample generated once, by one shard
    if shards == 3:  # a restarted check finds every shard's finished log: nothing is generated twice
        again = _check(tmp_path / "ray", {"kind": "ray", "address": ADDRESS, "shards": shards, "cpus_per_shard": 1,
                                          "max_retries": 2}, checkpoint)
        assert comparable_decision(again / "decision.json") == comparable_decision(one / "decision.json")
        for folder in sorted(again.glob("*-shards/*")):
            assert json.loads((folder / "run_manifest.json").read_text())["tasks"][0]["generated"] == 0, folder
