"""What inspect tasks need to run, so `rlgate validate` can say it and `eval` can refuse early.

Needs come from the suite entry's `requires:` and from what rlgate knows about inspect-evals tasks
(checked against inspect-evals 0.26: BFCL downloads its data from the gorilla repository on GitHub on first
use and keeps it in inspect-evals' cache, the tau2 tasks ship theirs, SWE-bench and GAIA need Docker sandboxes
and Hugging Face hub data).
"""

from __future__ import annotations

import importlib.util
import shutil

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedTask, local_task_file

#: inspect-evals task -> (needs, Python packages it imports beyond inspect-evals)
KNOWN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "inspect_evals/bfcl": (("bfcl_data",), ()),
    "inspect_evals/tau2_airline": ((), ()),
    "inspect_evals/tau2_retail": ((), ()),
    "inspect_evals/tau2_telecom": ((), ()),
    "inspect_evals/swe_bench": (("docker", "hub_data"), ("swebench",)),
    "inspect_evals/swe_bench_verified_mini": (("docker", "hub_data"), ("swebench",)),
    "inspect_evals/gaia": (("docker", "hub_data"), ()),
}

_NEED_TEXT = {
    "docker": "Docker (sandboxed tools)",
    "network": "network access",
    "hub_data": "Hugging Face hub data (or a pre-filled HF cache)",
    "bfcl_data": "BFCL's data, fetched from GitHub (git) on first use into inspect-evals' cache",
    "gpu": "a GPU",
}


def needs(task: ResolvedTask) -> list[str]:
    """Everything the task needs to run: rlgate's agent extra, packages, Docker, data."""
    out = ["pip install 'rl-release-gate[agent]' (inspect-ai)"]
    known_needs, packages = KNOWN.get(task.entry.task, ((), ()))
    if local_task_file(task.entry) is not None:
        out.append(f"local task file {task.path} (trusted)" if task.path is not None else
                   f"local task file {local_task_file(task.entry)} (absent: needed to run the task, not to gate "
                   "its stored logs)")
    elif task.entry.task.startswith("inspect_evals/"):
        out.append("inspect-evals")
    out += [f"Python package {p}" for p in packages]
    out += [_NEED_TEXT[n] for n in dict.fromkeys([*known_needs, *task.entry.requires])]
    return out


def missing(task: ResolvedTask) -> list[str]:
    """The needs this machine does not meet (packages not importable, no docker binary)."""
    out: list[str] = []
    if local_task_file(task.entry) is not None and task.path is None:
        out.append(f"the local task file {local_task_file(task.entry)} does not exist (looked beside the suite "
                   "file and in the folders above); it is needed to run the task")
    if importlib.util.find_spec("inspect_ai") is None:
        out.append("inspect-ai is not installed (pip install 'rl-release-gate[agent]')")
    known_needs, packages = KNOWN.get(task.entry.task, ((), ()))
    if task.entry.task.startswith("inspect_evals/") and importlib.util.find_spec("inspect_evals") is None:
        out.append("inspect-evals is not installed (pip install 'rl-release-gate[agent]')")
    out += [f"Python package {p} is not installed" for p in packages if importlib.util.find_spec(p) is None]
    if "docker" in {*known_needs, *task.entry.requires}:
        problem = _docker_problem()
        if problem:
            out.append(problem)
    return out


def _bfcl_data_problem() -> str | None:
    """Why inspect-evals' BFCL task would have to download its data (not cached yet), or None."""
    try:
        from inspect_evals.constants import INSPECT_EVALS_CACHE_PATH
    except ImportError:
        return None  # reported as inspect-evals missing
    cached = (INSPECT_EVALS_CACHE_PATH / "BFCL").glob("*simple_python*.json")
    if next(cached, None) is not None:
        return None
    return (f"BFCL's data is not in inspect-evals' cache ({INSPECT_EVALS_CACHE_PATH / 'BFCL'}); the task downloads "
            "it from GitHub with git on first use, which needs network access")


def _docker_problem() -> str | None:
    """Why Docker sandboxes cannot start here (no binary, or no daemon answering), or None."""
    import subprocess

    if shutil.which("docker") is None:
        return "Docker is not installed or not on PATH"
    try:
        answered = subprocess.run(["docker", "info"], capture_output=True, timeout=15).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        answered = False
    return None if answered else "the Docker daemon does not answer (docker info failed)"


def notes(task: ResolvedTask) -> list[str]:
    """What a run will fetch on first use (not a refusal: with network access it works)."""
    known_needs, _ = KNOWN.get(task.entry.task, ((), ()))
    problem = _bfcl_data_problem() if "bfcl_data" in known_needs else None
    return [problem] if problem else []


def check_requirements(task: ResolvedTask) -> None:
    """Refuse, before any model time, a task this machine cannot run."""
    problems = missing(task)
    if problems:
        docker = any("Docker" in p for p in problems)
        fix = ("install Docker and start its daemon (`docker info` must answer), " if docker else
               "install what it needs, ") + ("or evaluate it on a machine that has it and gate the .eval logs (or "
                                            "the SWE-bench harness's report) with `rlgate gate`")
        raise InputError(f"task '{task.name}' ({task.entry.task}) cannot run here: {'; '.join(problems)}",
                         field="suites.tasks", fix=fix)
