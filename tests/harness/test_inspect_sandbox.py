"""Docker and sandboxes: a Docker task on a machine without Docker is refused at plan time (exit 2, nothing
run, the task and the fix named); a sandbox that dies mid-run leaves failed trajectories, listed as
sandbox failures in the drops, never fewer samples."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")

from rlgate.cli.app import app
from rlgate.harness import read_results

runner = CliRunner()

#: a trusted local task whose sandbox ("flaky", the local sandbox with a planted death) dies on some samples
TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import includes
from inspect_ai.solver import solver
from inspect_ai.util import sandbox, sandboxenv
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment


@sandboxenv(name="flaky")
class FlakySandbox(LocalSandboxEnvironment):
    """The local sandbox, except that a sample marked `die` loses its container at the first exec."""

    @classmethod
    async def sample_init(cls, task_name, config, metadata):
        env = cls()
        env.die = bool(metadata.get("die"))
        return {"default": env}

    async def exec(self, cmd, *args, **kwargs):
        if self.die:
            raise RuntimeError("docker container exited unexpectedly (137) while running " + " ".join(cmd))
        return await super().exec(cmd, *args, **kwargs)


@solver
def run_in_sandbox():
    async def solve(state, generate):
        result = await sandbox().exec(["sh", "-c", "echo hello from the sandbox"])
        state.output = ModelOutput.from_content(model="sandbox", content=result.stdout.strip())
        return state
    return solve


@task
def sandboxed():
    samples = [Sample(id=f"s{i}", input="say hello", target="hello", metadata={"die": i in (2, 4)})
               for i in range(1, 6)]
    return Task(dataset=samples, solver=run_in_sandbox(), scorer=includes(), sandbox="flaky")
'''


def _project(tmp_path: Path, requires: list[str]) -> Path:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "sandboxed.py").write_text(TASK, encoding="utf-8")
    contract = {
        "schema_version": 1, "name": "sandboxed", "baseline": {"checkpoint": "mockllm/model"},
        "splits": {"public": {"visibility": "nightly"}}, "trusted_task_paths": ["tasks"],
        "suites": [{"schema_version": 1, "name": "s", "tasks": [
            {"task": "tasks/sandboxed.py@sandboxed", "name": "sandboxed", "harness": "inspect", "split": "public",
             "requires": requires}]}],
        "gates": {"primary": {"metric": "sandboxed/task_success", "min_delta": 0.0}}}
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract), encoding="utf-8")
    return path


def test_sandbox_dying_mid_run_gives_failed_listed_trajectories(tmp_path: Path) -> None:
    contract = _project(tmp_path, [])
    out = tmp_path / "run"
    result = runner.invoke(app, ["eval", str(contract), "--checkpoint", "mockllm/model", "--out", str(out),
                                 "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    assert "2 sandbox failed" in result.output
    task = read_results(out).tasks["sandboxed"]
    assert task.n_samples == 5 and sorted(s.doc_id for s in task.samples) == ["s1", "s2", "s3", "s4", "s5"]
    success = {s.doc_id: s.scores["none"]["task_success"] for s in task.samples}
    assert success == {"s1": 1.0, "s2": 0.0, "s3": 1.0, "s4": 0.0, "s5": 1.0}
    dead = next(s for s in task.samples if s.doc_id == "s2")
    assert "container exited unexpectedly" in (dead.trajectory.error or "")  # type: ignore[union-attr]
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert manifest["tasks"][0]["drops"]["sandbox_failed"] == 2 and manifest["tasks"][0]["documents"] == 5
    gate = runner.invoke(app, ["gate", str(contract), "--candidate", str(out), "--baseline", str(out), "--out",
                               str(tmp_path / "g")])
    assert gate.exit_code == 3, gate.output
    drops = json.loads((tmp_path / "g" / "decision.json").read_text())["extensions"]["drops"]
    listed = sorted((d["run"], d["doc_id"], d["kind"]) for d in drops["runs"])
    assert listed == [(r, d, "sandbox_failed") for r in ("baseline", "candidate") for d in ("s2", "s4")]


def _fake_docker(folder: Path) -> None:
    """A `docker` whose daemon never answers (`docker info` exits 1)."""
    folder.mkdir()
    script = folder / "docker"
    script.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize("docker", ["absent", "no_daemon"])
@pytest.mark.parametrize("command", ["eval", "check"])
def test_docker_task_without_docker_is_refused_at_plan_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            docker: str, command: str) -> None:
    contract = _project(tmp_path, ["docker"])
    bin_dir = tmp_path / "bin"
    if docker == "no_daemon":
        _fake_docker(bin_dir)
    else:
        bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin/nonexistent")
    out = tmp_path / "out"
    args = ([command, str(contract), "--checkpoint", "mockllm/model", "--out", str(out), "--cache",
             str(tmp_path / "cache")])
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "task 'sandboxed'" in text and ("Docker is not installed" if docker == "absent" else
                                           "Docker daemon does not answer") in text
    assert "fix: install Docker and start its daemon" in text and "Traceback" not in text
    assert not list(out.rglob("*.eval"))  # nothing ran: no model time spent, no log written
