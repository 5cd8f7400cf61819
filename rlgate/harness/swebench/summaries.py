"""Run summaries other than the harness's own `{model}.{run_id}.json`: what teams publish beside the logs.

* **experiments layout** (SWE-bench/experiments `evaluation/<split>/<run>/results/results.json`, as the
  swebench harness of mid-2024 wrote it): lists of instance ids by outcome (`resolved`, `no_generation`,
  `no_logs`, and in older runs `generated`, `applied`, `install_fail`, ...); the unresolved instances are
  the ones with a `logs/<instance>/report.json`, so the summary is always read with the logs beside it.
* **agent-side summary** (mini-swe-agent's `results_summary.json`): `{"total", "passed", "failed",
  "pass_rate", "instances": [{"instance_id", "resolved", "patch_applied"}]}`.

Both name each instance's outcome; a per-instance report that disagrees with its summary is an error
(never silently resolved either way).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError

#: experiments-layout lists -> the status rlgate gives the instance (a failure list wins over resolved)
EXPERIMENT_LISTS = {"no_generation": "empty_patch", "no_logs": "error", "install_fail": "error",
                    "reset_failed": "error", "no_apply": "error", "test_errored": "error",
                    "test_timeout": "error", "resolved": "resolved"}
#: lists the experiments layout writes that say nothing about the outcome
EXPERIMENT_INFO = ("generated", "with_logs", "applied")
EXPERIMENTS_FILE = ("results", "results.json")
EXPERIMENTS_FIX = ("give the experiments-layout run folder as published (results/results.json with the "
                   "logs/<instance>/report.json files beside it), unedited")
AGENT_FIX = ("give the results_summary.json as the agent wrote it ({\"total\", \"passed\", \"instances\": "
             "[{\"instance_id\", \"resolved\"}]}), unedited, or the harness's own run summary")


def summary_kind(data: Any) -> str | None:
    """'harness' ({model}.{run_id}.json), 'experiments', 'agent', or None for any other JSON."""
    if not isinstance(data, dict):
        return None
    if "resolved_ids" in data:
        return "harness"
    if isinstance(data.get("instances"), list) and "total" in data and ("passed" in data or "resolved" in data):
        return "agent"
    keys = set(data)
    if "resolved" in keys and keys <= set(EXPERIMENT_LISTS) | set(EXPERIMENT_INFO) and all(
            isinstance(v, list) for v in data.values()):
        return "experiments"
    return None


def sniff(head: bytes) -> bool:
    """A cheap look at a file's first bytes: does it start like an experiments or agent-side summary?"""
    start = head.lstrip()[:4096]
    if not start.startswith(b"{"):
        return False
    agent = b'"instances"' in head and b'"total"' in head and (b'"passed"' in head or b'"pass_rate"' in head)
    experiments = b'"resolved"' in head and (b'"no_generation"' in start or b'"no_logs"' in start)
    return agent or experiments


def read_experiments(path: Path, data: dict[str, Any]) -> dict[str, str]:
    """Instance id -> status from an experiments-layout results.json (the logs add unresolved ones)."""
    out: dict[str, str] = {}
    for key, status in EXPERIMENT_LISTS.items():
        ids = data.get(key, [])
        if not all(isinstance(i, str) and i for i in ids):
            raise InputError(f"'{key}' must be a list of instance ids (strings)", file=path, field=key,
                             fix=EXPERIMENTS_FIX)
        for instance_id in ids:  # failure lists come first: the harness could not evaluate it
            out.setdefault(instance_id, status)
    return out


def read_agent(path: Path, data: dict[str, Any]) -> dict[str, str]:
    """Instance id -> status from an agent-side results_summary.json; its counts must match its list."""
    out: dict[str, str] = {}
    for number, row in enumerate(data["instances"]):
        where = f"instances[{number}]"
        if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str) or not row["instance_id"]:
            raise InputError("an instance entry needs a string 'instance_id'", file=path, field=where, fix=AGENT_FIX)
        if not isinstance(row.get("resolved"), bool):
            raise InputError(f"instance '{row['instance_id']}' has no boolean 'resolved'", file=path,
                             field=f"{where}.resolved", fix=AGENT_FIX)
        if row["instance_id"] in out:
            raise InputError(f"instance '{row['instance_id']}' is listed twice", file=path, field=where, fix=AGENT_FIX)
        out[row["instance_id"]] = "resolved" if row["resolved"] else "unresolved"
    if not out:
        raise InputError("the summary lists no instance", file=path, field="instances", fix=AGENT_FIX)
    passed = data.get("passed", data.get("resolved"))
    resolved = sum(1 for s in out.values() if s == "resolved")
    total = data.get("total")
    if isinstance(passed, int) and not isinstance(passed, bool) and passed != resolved:
        raise InputError(f"'passed' says {passed} but {resolved} instances are resolved in 'instances'",
                         file=path, field="passed", fix=AGENT_FIX)
    if isinstance(total, int) and not isinstance(total, bool) and total != len(out):
        raise InputError(f"'total' says {total} but 'instances' lists {len(out)}", file=path, field="total",
                         fix="give the summary of the whole run (every instance listed); " + AGENT_FIX)
    return out


def experiments_file(folder: Path) -> Path | None:
    """The experiments-layout results.json of a run folder, when there is one."""
    candidate = folder.joinpath(*EXPERIMENTS_FILE)
    return candidate if candidate.is_file() else None


def instance_log_dirs(folder: Path) -> list[Path]:
    """The experiments layout's per-instance log folders (`logs/<instance_id>/`)."""
    logs = folder / "logs"
    return sorted(p for p in logs.iterdir() if p.is_dir()) if logs.is_dir() else []
