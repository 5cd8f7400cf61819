"""The logic of the composite action's `run:` steps (`python -m rlgate.ci STEP`), kept here so it is tested.

The action passes its inputs as environment variables (never as `${{ inputs.* }}` inside shell
code, which would let a checkpoint path or a dispatch payload inject commands):

- `check`:  RLGATE_CI_CONTRACT, RLGATE_CI_CHECKPOINT, RLGATE_CI_BASELINE, RLGATE_CI_OUT, RLGATE_CI_ARGS
- `report`: RLGATE_CI_OUT, RLGATE_CI_CHECK_EXIT, RLGATE_CI_STARTED, RLGATE_CI_CONTRACT, RLGATE_CI_ARTIFACT
- `finish`: RLGATE_CI_DECISION, RLGATE_CI_RESEARCH_ONLY_EXIT_CODE

`check` never fails the step itself: it records rlgate's exit code so the summary, annotations
and artifact upload still happen for a block; `finish` turns the decision into the job's result.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from rlgate.ci.commands import annotation, append_summary, emit, truncate_summary, write_outputs
from rlgate.ci.gates import gate_annotations, locate_metric
from rlgate.cli.common import DECISION_EXIT, EXIT_BAD_INPUT
from rlgate.engine.fmt import special_outcome
from rlgate.engine.models import Decision

DEFAULT_OUT = "rlgate-report"
#: What the `decision` output says when there is no trustworthy decision.json.
NO_DECISION = "error"
REPORT_FILES = ("report.html", "decision.json", "junit.xml", "report.md")


def resolve_out(env: Mapping[str, str]) -> Path:
    """The output folder: the `out` input, else `$RUNNER_TEMP/rlgate-report` (cleaned per job)."""
    given = env.get("RLGATE_CI_OUT", "").strip()
    if given:
        return Path(given).absolute()
    base = env.get("RUNNER_TEMP") or "."
    return (Path(base) / DEFAULT_OUT).absolute()


def check_command(env: Mapping[str, str], out: Path) -> list[str]:
    """argv for `rlgate check` built from the action's inputs; extra args are split like a shell would."""
    contract = env.get("RLGATE_CI_CONTRACT", "").strip()
    checkpoint = env.get("RLGATE_CI_CHECKPOINT", "").strip()
    argv = [sys.executable, "-m", "rlgate.cli.app", "check", contract, "--checkpoint", checkpoint, "--out", str(out)]
    baseline = env.get("RLGATE_CI_BASELINE", "").strip()
    if baseline:
        argv += ["--baseline", baseline]
    argv += shlex.split(env.get("RLGATE_CI_ARGS", ""))
    return argv


def run_check(env: Mapping[str, str], stream: TextIO) -> int:
    """Run `rlgate check`, record its exit code and the out folder as step outputs; return 0."""
    out = resolve_out(env)
    missing = [name for name in ("contract", "checkpoint") if not env.get(f"RLGATE_CI_{name.upper()}", "").strip()]
    started = f"{time.time():.3f}"
    if missing:
        emit(annotation("error", f"the action input '{missing[0]}' is empty", title="rlgate: missing input"), stream)
        code = EXIT_BAD_INPUT
    else:
        out.mkdir(parents=True, exist_ok=True)
        argv = check_command(env, out)
        emit(f"rlgate: {shlex.join(argv[2:])}", stream)
        # The action writes the job summary itself, once; rlgate must not add a second copy.
        child_env = {k: v for k, v in env.items() if k != "GITHUB_STEP_SUMMARY"}
        code = subprocess.run(argv, env=child_env, check=False).returncode
        emit(f"rlgate check exited with {code}", stream)
    write_outputs({"exit-code": str(code), "out": str(out), "started": started}, env)
    return 0


@dataclass
class Outcome:
    """What the report step concluded: the decision to act on and why."""

    decision: str
    decision_obj: Decision | None = None
    problems: list[str] = field(default_factory=list)


def read_outcome(out: Path, check_exit: str, started: str) -> Outcome:
    """The decision, trusted only when rlgate's exit code and a fresh decision.json agree (fail closed)."""
    path = out / "decision.json"
    try:
        code: int | None = int(check_exit)
    except ValueError:
        code = None
    if code is None:
        return Outcome(NO_DECISION, problems=[f"rlgate check did not report an exit code ({check_exit!r})"])
    if code not in DECISION_EXIT.values():
        what = "bad input or usage" if code == EXIT_BAD_INPUT else "an unexpected failure"
        return Outcome(NO_DECISION, problems=[f"rlgate check exited with {code} ({what}); see the step log above"])
    if not path.is_file():
        return Outcome(NO_DECISION, problems=[f"rlgate check exited with {code} but wrote no {path}"])
    try:
        since = float(started)
    except ValueError:
        since = 0.0
    if path.stat().st_mtime + 1 < since:
        return Outcome(NO_DECISION, problems=[f"{path} is older than this run (a stale decision is never used)"])
    try:
        decision = Decision.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as error:
        first = str(error).splitlines()[0]
        return Outcome(NO_DECISION, problems=[f"{path} is not a valid rlgate decision: {first}"])
    if DECISION_EXIT[decision.decision] != code:
        return Outcome(NO_DECISION, decision, [
            f"rlgate check exited with {code} but {path.name} says '{decision.decision}'; refusing to guess"])
    return Outcome(decision.decision, decision)


def fallback_summary(outcome: Outcome) -> str:
    """A short summary for when report.md is missing: the decision and the gates that did not pass."""
    from rlgate._core.text import md_inline

    lines = [f"## rlgate decision: **{outcome.decision}**", ""]
    if outcome.decision_obj is not None:
        lines += [md_inline(outcome.decision_obj.summary), ""]
        lines += [f"- capability **{md_inline(c.name)}** ({c.scope}): {c.decision}"
                  + (f" — {md_inline(c.flag)}" if c.flag else "") for c in outcome.decision_obj.capabilities]
        for gate in outcome.decision_obj.gates:
            if gate.verdict != "pass":
                note = f" [{md_inline(gate.outcome)}]" if special_outcome(gate.outcome) else ""
                lines.append(f"- **{md_inline(gate.name)}** ({gate.kind}, {gate.verdict}{note} → {gate.effect}): "
                             f"{md_inline(gate.reason)}")
    lines += [f"- {md_inline(problem)}" for problem in outcome.problems]
    return "\n".join(lines).rstrip() + "\n"


def history_warning(env: Mapping[str, str], location: object) -> str | None:
    """A warning when the checkpoint history dies with the job: no RLGATE_HISTORY, and the history the
    decision used is a file inside the workspace, which actions/checkout cleans."""
    if env.get("RLGATE_HISTORY", "").strip() or not isinstance(location, str) or "://" in location:
        return None
    workspace = env.get("GITHUB_WORKSPACE", "").strip()
    if workspace and not Path(location).resolve().is_relative_to(Path(workspace).resolve()):
        return None  # the contract's monitor.history points outside the checkout
    return ("> **Warning: the checkpoint history is per-job.** It lives in the workspace "
            f"(`{location}`), which is cleaned for the next run, so the cross-checkpoint rules (pause below the "
            "best checkpoint, roll back, private-split consultation budget) cannot see earlier checkpoints. Set "
            "the repository secret `RLGATE_HISTORY` to a `postgresql://` URL, or the variable "
            "`RLGATE_HISTORY_PATH` to a persistent path on the self-hosted runner (docs/ci.md).")


def run_report(env: Mapping[str, str], stream: TextIO) -> int:
    """Write the job summary, annotate failed gates and set the `decision` and `report-path` outputs."""
    out = resolve_out(env)
    outcome = read_outcome(out, env.get("RLGATE_CI_CHECK_EXIT", ""), env.get("RLGATE_CI_STARTED", ""))
    report_md = out / "report.md"
    if outcome.decision_obj is not None and not outcome.problems and report_md.is_file():
        markdown = report_md.read_text(encoding="utf-8")
    else:
        markdown = fallback_summary(outcome)
    artifact = env.get("RLGATE_CI_ARTIFACT", "").strip()
    run_url = _run_url(env)
    if artifact:
        where = f" of [this run]({run_url})" if run_url else ""
        markdown = markdown.rstrip("\n") + (
            f"\n\nArtifact **{artifact}**{where}: report.html, report.md, decision.json, junit.xml.\n")
    warning = history_warning(env, outcome.decision_obj.extensions.get("history")
                              if outcome.decision_obj is not None else None)
    if warning:
        markdown = warning + "\n\n" + markdown
    append_summary(truncate_summary(markdown, "*(truncated: the full report is in the artifact)*"), env)

    contract = env.get("RLGATE_CI_CONTRACT", "").strip()
    file_ref = _workspace_relative(contract, env)
    for problem in outcome.problems:
        emit(annotation("error", problem, title="rlgate: no decision", file=file_ref), stream)
    if outcome.decision_obj is not None and not outcome.problems:
        lines = locate_metric(Path(contract)) if file_ref else {}
        for line in gate_annotations(outcome.decision_obj, file_ref, lines):
            emit(line, stream)

    html = out / "report.html"
    report_path = html if html.is_file() else (report_md if report_md.is_file() else None)
    scoped = outcome.decision_obj if outcome.decision_obj is not None and not outcome.problems else None
    write_outputs({"decision": outcome.decision, "report-path": str(report_path or ""),
                   "flags": " ".join(scoped.flags) if scoped else "",
                   "capabilities": json.dumps({c.name: c.decision for c in scoped.capabilities} if scoped else {},
                                              sort_keys=True)}, env)
    return 0


def finish(env: Mapping[str, str], stream: TextIO) -> int:
    """Map the decision to the job's exit code: block fails, research_only uses research-only-exit-code."""
    decision = env.get("RLGATE_CI_DECISION", "").strip() or NO_DECISION
    raw = env.get("RLGATE_CI_RESEARCH_ONLY_EXIT_CODE", "0").strip() or "0"
    if not raw.isdigit() or int(raw) > 255:
        emit(annotation("error", f"research-only-exit-code must be an integer 0-255, got {raw!r}",
                        title="rlgate: bad input"), stream)
        return EXIT_BAD_INPUT
    if decision == "research_only":
        code = int(raw)
    elif decision in DECISION_EXIT:
        code = DECISION_EXIT[decision]
    else:
        code = EXIT_BAD_INPUT
    emit(f"rlgate: decision {decision} -> exit code {code}", stream)
    return code


def _run_url(env: Mapping[str, str]) -> str:
    server, repo, run = (env.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else ""


def _workspace_relative(contract: str, env: Mapping[str, str]) -> str | None:
    """The contract as a repository-relative path (what annotations link to), if it lies in the workspace."""
    if not contract:
        return None
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    try:
        return Path(contract).resolve().relative_to(workspace).as_posix()
    except ValueError:
        return None


STEPS = {"check": run_check, "report": run_report, "finish": finish}
