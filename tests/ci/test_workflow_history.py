"""The generated workflow keeps its history: `rlgate init --github` passes RLGATE_HISTORY (a repository secret, or a
repository variable naming a persistent path on a self-hosted runner), and a second workflow run sees the first's
checkpoint.

Two workflow jobs are simulated as two `rlgate gate` processes, each in a fresh working folder (what
`actions/checkout` leaves on an ephemeral runner: the repository's files and nothing else), with the environment
the workflow's `RLGATE_HISTORY` expression evaluates to. They share nothing but that setting. The checkpoints are
real lm-eval folders (MMLU-Pro, Llama-3.1-8B base vs degraded Instruct outputs) outside the workspace.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ci_lint_tools import load_yaml12
from fixtures.history_run import build_checkpoints, write_repository
from typer.testing import CliRunner

from rlgate.cli.app import app

REPO = Path(__file__).resolve().parents[2]
EXPRESSION = re.compile(r"^\$\{\{\s*(.+?)\s*\}\}$")
OPERAND = re.compile(r"^(secrets|vars)\.([A-Za-z_][A-Za-z0-9_]*)$")


def evaluate(expression: str, secrets: dict[str, str], variables: dict[str, str]) -> str:
    """GitHub's value for `${{ a.X || b.Y }}`: the first non-empty operand, unset secrets and variables being ''.
    Anything else is refused, so a change in the workflow's form is seen here, not guessed at."""
    found = EXPRESSION.match(expression.strip())
    assert found, f"not a single expression: {expression!r}"
    for operand in found.group(1).split("||"):
        part = OPERAND.match(operand.strip())
        assert part, f"this test evaluates only secrets.X || vars.Y, got {operand!r}"
        value = (secrets if part.group(1) == "secrets" else variables).get(part.group(2), "")
        if value:
            return value
    return ""


def _workflow_history(tmp_path: Path) -> str:
    result = CliRunner().invoke(app, ["init", str(tmp_path / "user-repo"), "--github"])
    assert result.exit_code == 0, result.output
    data = load_yaml12((tmp_path / "user-repo" / ".github" / "workflows" / "rlgate-gate.yml").read_text("utf-8"))
    job_env = data["jobs"]["gate"]["env"]
    assert "RLGATE_HISTORY" in job_env, "the gate job must pass RLGATE_HISTORY to every step"
    return str(job_env["RLGATE_HISTORY"])


def test_rendered_workflow_passes_the_history_from_a_secret_or_a_persistent_path(tmp_path: Path) -> None:
    expression = _workflow_history(tmp_path)
    dsn = "postgresql://gate:s3cret@db.internal:5432/rlgate"
    assert evaluate(expression, {"RLGATE_HISTORY": dsn}, {}) == dsn
    persistent = "/mnt/persist/rlgate.sqlite"
    assert evaluate(expression, {}, {"RLGATE_HISTORY_PATH": persistent}) == persistent
    assert evaluate(expression, {"RLGATE_HISTORY": dsn}, {"RLGATE_HISTORY_PATH": "/mnt/x"}) == dsn  # the secret wins
    assert evaluate(expression, {}, {}) == ""  # neither: per-job history, and the job summary warns


def _job(workdir: Path, repo: Path, env_history: str, command: list[str]) -> subprocess.CompletedProcess[str]:
    """One workflow job: a fresh checkout of the repository's files, then one rlgate command in it."""
    if not workdir.exists():
        workdir.mkdir(parents=True)
        for name in ("contract.yaml", "trainer_state.json"):
            (workdir / name).write_bytes((repo / name).read_bytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLGATE_")}
    env.update({"PYTHONPATH": str(REPO), "RLGATE_HISTORY": env_history})
    return subprocess.run([sys.executable, "-m", "rlgate.cli.app", *command], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=600)


def _two_runs(tmp_path: Path, shared_data: Path, history: str, label: str) -> tuple[dict, str]:  # type: ignore[type-arg]
    """Gate checkpoint-150 (the best) in job 1 and checkpoint-200 (well below it) in job 2; return job 2's
    `rlgate history --json` and its gate output."""
    repo = tmp_path / f"{label}-repository"
    write_repository(repo, consecutive=1)
    base, checkpoints = build_checkpoints(tmp_path.parent, shared_data)
    for n, step in ((1, 150), (2, 200)):
        job = _job(tmp_path / f"{label}-run{n}", repo, history,
                   ["gate", "contract.yaml", "--candidate", str(checkpoints[step]), "--baseline", str(base),
                    "--out", "rlgate-out"])
        assert job.returncode in (0, 1, 3), job.stdout + job.stderr
    listing = _job(tmp_path / f"{label}-run2", repo, history, ["history", "--contract", "contract.yaml", "--json"])
    assert listing.returncode == 0, listing.stderr
    return json.loads(listing.stdout), job.stdout


@pytest.mark.slow
def test_a_second_workflow_run_sees_the_first_runs_checkpoint(tmp_path: Path, shared_data: Path) -> None:
    pytest.importorskip("lm_eval")
    store = tmp_path / "persistent-disk" / "rlgate-history.sqlite"  # RLGATE_HISTORY_PATH on a self-hosted runner
    history = evaluate(_workflow_history(tmp_path), {}, {"RLGATE_HISTORY_PATH": str(store)})
    data, _ = _two_runs(tmp_path, shared_data, history, "shared")
    [run] = data["runs"]
    assert [c["step"] for c in run["checkpoints"]] == [150, 200]
    assert [c["decision"] for c in run["checkpoints"]] == ["release", "research_only"]
    assert run["best"].endswith("checkpoint-150")
    fired = [f for f in run["rules_fired"] if f["rule"] == "primary_below_best"]
    assert fired and fired[0]["action"] == "pause" and fired[0]["step_start"] == 200, run["rules_fired"]
    assert not (tmp_path / "shared-run2" / ".rlgate").exists()  # nothing was kept in the workspace
    decision = json.loads((tmp_path / "shared-run2" / "rlgate-out" / "decision.json").read_text(encoding="utf-8"))
    assert decision["extensions"]["history"] == str(store)


@pytest.mark.slow
def test_without_the_setting_each_run_starts_from_an_empty_history(tmp_path: Path, shared_data: Path) -> None:
    pytest.importorskip("lm_eval")
    history = evaluate(_workflow_history(tmp_path), {}, {})
    data, _ = _two_runs(tmp_path, shared_data, history, "per-job")
    [run] = data["runs"]
    assert [c["step"] for c in run["checkpoints"]] == [200]  # the first job's checkpoint went with its workspace
    assert run["rules_fired"] == []
