"""SWE-bench harness reports as rlgate results: one sample per instance, `task_success` = resolved.

Teams run the official harness (`python -m swebench.harness.run_evaluation`); it writes, per run,
a summary `{model}.{run_id}.json` (`make_run_report` in swebench/harness/reporting.py: `resolved_ids`,
`unresolved_ids`, `error_ids`, `empty_patch_ids`, `incomplete_ids`, ... and `total_instances`) and,
per instance, `logs/run_evaluation/{run_id}/{model}/{instance_id}/report.json`
(`{instance_id: {"resolved": bool, "patch_exists": ..., "tests_status": ...}}`, grading.get_eval_report).

Every instance the report names is kept. Errored, empty-patch and incomplete instances (the harness
could not evaluate them, the model gave no patch, or no prediction was run) are failures
(`task_success` 0) carried as failed trajectories, so the drops manifest lists them; none is skipped.
A report holds outcomes, not trajectories, so only `task_success` is computed (`outcome_only`): a
gate on steps or safety is nodata here, never a made-up 0.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate._core.jsonio import load_document
from rlgate.harness.swebench.summaries import (
    experiments_file,
    instance_log_dirs,
    read_agent,
    read_experiments,
    sniff,
    summary_kind,
)
from rlgate.results.agent_metrics import AGENT_KEY, score_task, scorer_outcome
from rlgate.results.models import (
    NO_FILTER,
    RunProvenance,
    RunResult,
    SampleRecord,
    TaskProtocol,
    TaskResult,
    Trajectory,
)

INSTANCE_REPORT = "report.json"
RUN_METADATA = "run.json"
DEFAULT_TASK = "swe_bench"
#: summary-report lists, in the order an instance's status is decided (a failure list wins over resolved)
STATUS_LISTS = ("incomplete_ids", "empty_patch_ids", "error_ids", "unresolved_ids", "resolved_ids")
STATUS = {"incomplete_ids": "incomplete", "empty_patch_ids": "empty_patch", "error_ids": "error",
          "unresolved_ids": "unresolved", "resolved_ids": "resolved"}
#: why a non-resolved instance failed, as the trajectory's error (None: evaluated and not resolved)
FAILURE_TEXT = {
    "incomplete": "no prediction evaluated for this instance (incomplete run); counted as a failure",
    "empty_patch": "empty patch: the model produced no patch; counted as a failure",
    "error": "the SWE-bench harness could not evaluate this instance (evaluation error); counted as a failure",
}
SUMMARY_FIX = ("give the summary JSON that `python -m swebench.harness.run_evaluation` writes "
               "({model}.{run_id}.json, with resolved_ids / unresolved_ids / error_ids / empty_patch_ids / "
               "incomplete_ids lists of instance ids), unedited; or re-run `swebench.harness.run_evaluation` "
               "with the same --run_id to rewrite it")
INSTANCE_FIX = ("a per-instance report.json is {instance_id: {\"resolved\": true|false, ...}} as the SWE-bench "
                "harness writes it; re-run that instance (run_evaluation --instance_ids ID --run_id RUN), or give "
                "the run's summary JSON, which counts an unreadable instance report as an error")


@dataclass
class Instance:
    """One instance's outcome as a report gives it."""

    status: str
    report: dict[str, Any] = field(default_factory=dict)
    source: str = ""


def _load_json(path: Path, fix: str) -> Any:
    return load_document(path, fix, empty="this SWE-bench report is empty (a killed harness run?)")


def is_summary(data: Any) -> bool:
    return summary_kind(data) is not None


def read_summary(path: Path, data: Any | None = None) -> dict[str, Instance]:
    """Instance id -> outcome from a run's summary JSON; an id in two status lists or a non-list is an error.

    The harness's own summary is read here; the experiments layout and agent-side summaries in `summaries`."""
    data = _load_json(path, SUMMARY_FIX) if data is None else data
    kind = summary_kind(data)
    if kind == "experiments":
        return {i: Instance(s, source=path.name) for i, s in read_experiments(path, data).items()}
    if kind == "agent":
        return {i: Instance(s, source=path.name) for i, s in read_agent(path, data).items()}
    if kind != "harness":
        raise InputError("not a SWE-bench run summary: no 'resolved_ids' list", file=path, fix=SUMMARY_FIX)
    out: dict[str, Instance] = {}
    for key in STATUS_LISTS:
        ids = data.get(key, [])
        if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
            raise InputError(f"'{key}' must be a list of instance ids (strings)", file=path, field=key,
                             fix=SUMMARY_FIX)
        for instance_id in ids:
            if instance_id in out:
                raise InputError(f"instance '{instance_id}' is listed both as {out[instance_id].status} and in "
                                 f"'{key}'", file=path, field=key, fix=SUMMARY_FIX)
            out[instance_id] = Instance(STATUS[key], source=path.name)
    # completed_ids / submitted_ids name instances only in another list; one in neither is a broken report
    for key in ("completed_ids", "submitted_ids"):
        ids = data.get(key, [])
        if not isinstance(ids, list):
            raise InputError(f"'{key}' must be a list of instance ids", file=path, field=key, fix=SUMMARY_FIX)
    if not out:
        raise InputError("the run summary lists no instance (every *_ids list is empty)", file=path,
                         fix="gate the summary of a run that evaluated instances; " + SUMMARY_FIX)
    total = data.get("total_instances")
    if total is not None and (isinstance(total, bool) or not isinstance(total, int) or total < len(out)):
        raise InputError(f"total_instances ({total!r}) is not a count of at least the {len(out)} instances the "
                         "report lists", file=path, field="total_instances", fix=SUMMARY_FIX)
    reasons = data.get("failure_reasons") or {}
    for instance_id, reason in reasons.items() if isinstance(reasons, dict) else ():
        if instance_id in out:
            out[instance_id].report["infra_failure_reason"] = str(reason)
    return out


#: a SWE-bench instance id (`owner__repo-1234`): how a flat report's folder name is recognised as one
INSTANCE_ID = re.compile(r"^[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-\d+$")


def _instance(instance_id: str, report: dict[str, Any], source: str) -> Instance:
    found = Instance("resolved" if report["resolved"] else "unresolved",
                     {k: v for k, v in report.items() if k != "tests_status"}, source)
    tests = report.get("tests_status")
    if isinstance(tests, dict):
        found.report["tests"] = _test_counts(tests)
    return found


def read_instance_report(path: Path) -> dict[str, Instance]:
    """The instance(s) of one per-instance report.json: `{instance_id: report}` (the harness's
    `get_eval_report`), or the flat report itself (`{"resolved": ..., "tests_status": ...}`, what
    mini-swe-agent and per-instance log folders keep), whose instance id is its folder's name."""
    data = _load_json(path, INSTANCE_FIX)
    if not isinstance(data, dict) or not data:
        raise InputError("a per-instance SWE-bench report is a JSON object keyed by instance id", file=path,
                         fix=INSTANCE_FIX)
    if "resolved" in data:  # the flat form: one instance, named by the folder the report lives in
        if not isinstance(data["resolved"], bool):
            raise InputError("'resolved' is not true or false", file=path, field="resolved", fix=INSTANCE_FIX)
        instance_id = path.parent.name
        if not INSTANCE_ID.match(instance_id):
            raise InputError(f"a flat report (top-level 'resolved') is named by its folder, but '{instance_id}' "
                             "is not an instance id (owner__repo-NUMBER)", file=path, field="resolved",
                             fix="keep each flat report.json in a folder named after its instance "
                                 "(logs/<instance_id>/report.json), or wrap it as {instance_id: report}")
        return {instance_id: _instance(instance_id, data, str(path))}
    out: dict[str, Instance] = {}
    for instance_id, report in data.items():
        if not isinstance(report, dict) or not isinstance(report.get("resolved"), bool):
            raise InputError(f"instance '{instance_id}' has no boolean 'resolved'", file=path,
                             field=f"{instance_id}.resolved", fix=INSTANCE_FIX)
        out[instance_id] = _instance(instance_id, report, str(path))
    return out


def _test_counts(tests: dict[str, Any]) -> dict[str, int]:
    """FAIL_TO_PASS / PASS_TO_PASS ... -> passed and failed counts (the test names stay in the harness's files)."""
    counts: dict[str, int] = {}
    for group, result in tests.items():
        if isinstance(result, dict):
            for outcome in ("success", "failure"):
                if isinstance(result.get(outcome), list):
                    counts[f"{group}_{outcome}"] = len(result[outcome])
    return counts


def _instance_reports(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob(INSTANCE_REPORT) if p.is_file())


def looks_like_summary(file: Path) -> bool:
    """A cheap look at a JSON file's first bytes: does it hold a run summary's `resolved_ids`?"""
    try:
        with file.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False
    # `make_run_report` writes the counts first; the id lists of a full run can run past the first 64 KiB
    return (b'"resolved_ids"' in head or (b'"total_instances"' in head and b'"resolved_instances"' in head)
            or sniff(head))


def summary_files(folder: Path) -> list[Path]:
    """Top-level JSON files of `folder` that are run summaries (and an experiments-layout results/results.json)."""
    found = [file for file in sorted(folder.glob("*.json"))
             if file.name not in (INSTANCE_REPORT, RUN_METADATA, "run_manifest.json") and looks_like_summary(file)]
    experiments = experiments_file(folder)
    if experiments is not None and looks_like_summary(experiments):
        found.append(experiments)
    return found


def collect(path: Path) -> tuple[dict[str, Instance], list[Path]]:
    """Every instance at `path` (a summary, a report.json, or a folder of them) and the files read.

    A summary decides each instance's status; per-instance reports beside it add their details, and on
    their own (no summary) each is the instance's outcome.
    """
    if path.is_file():
        data = _load_json(path, SUMMARY_FIX if path.name != INSTANCE_REPORT else INSTANCE_FIX)
        if is_summary(data):
            return read_summary(path, data), [path]
        if path.name != INSTANCE_REPORT and isinstance(data, dict) and not any(
                isinstance(v, dict) and "resolved" in v for v in data.values()):
            raise InputError("neither a SWE-bench run summary (no resolved_ids) nor a per-instance report.json "
                             "(no instance with 'resolved')", file=path, fix=SUMMARY_FIX)
        return read_instance_report(path), [path]
    summaries = summary_files(path)
    if len(summaries) > 1:
        names = ", ".join(p.name for p in summaries)
        raise InputError(f"{len(summaries)} SWE-bench run summaries in one folder ({names})", file=path,
                         fix="keep one run's summary per folder (one folder per model run)")
    reports = _instance_reports(path)
    if not summaries and not reports:
        raise InputError("no SWE-bench report in this folder", file=path,
                         fix="point at the run summary {model}.{run_id}.json or at logs/run_evaluation/{run_id}")
    instances: dict[str, Instance] = read_summary(summaries[0]) if summaries else {}
    # the harness's summary lists every instance; the others list some outcomes and the reports add the rest
    complete = bool(summaries) and summary_kind(_load_json(summaries[0], SUMMARY_FIX)) == "harness"
    for report in reports:
        for instance_id, found in read_instance_report(report).items():
            known = instances.get(instance_id)
            if known is None:
                if complete:  # the summary is the run's account; a stray report of another instance is not
                    continue
                instances[instance_id] = found
            else:
                if not complete and found.status != known.status and "resolved" in (found.status, known.status):
                    raise InputError(f"instance '{instance_id}' is {found.status} in its report but "
                                     f"{known.status} in {summaries[0].name}", file=report, field="resolved",
                                     fix="give the summary and reports of one evaluation run, unedited")
                known.report.update(found.report)
    if summaries and summaries[0] == experiments_file(path):  # a log folder without a report: not evaluated
        for folder in instance_log_dirs(path):
            if folder.name not in instances and not (folder / INSTANCE_REPORT).exists():
                instances[folder.name] = Instance("error", {"infra_failure_reason": "no report.json in its log "
                                                            "folder"}, source=str(folder))
    return instances, [*summaries, *reports]


def dataset_name(path: Path, files: list[Path]) -> str | None:
    """The dataset the run graded against, from the harness's run.json (newer SWE-bench) when present."""
    folders = [path if path.is_dir() else path.parent]
    for file in files:
        folders += list(file.parents)[:4]
    for folder in folders:
        candidates = [folder / RUN_METADATA, *folder.glob(f"logs/run_evaluation/*/{RUN_METADATA}")]
        for meta in candidates:
            if meta.is_file():
                try:
                    data = json.loads(meta.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                if isinstance(data, dict) and isinstance(data.get("dataset"), str):
                    return data["dataset"]
    return None


def task_slug(dataset: str | None) -> str:
    """`SWE-bench/SWE-bench_Verified` -> `swe_bench_verified`; no dataset -> `swe_bench`."""
    if not dataset:
        return DEFAULT_TASK
    return re.sub(r"[^a-z0-9]+", "_", dataset.rsplit("/", 1)[-1].lower()).strip("_") or DEFAULT_TASK


def _sample(instance_id: str, found: Instance) -> SampleRecord:
    error = FAILURE_TEXT.get(found.status)
    reason = found.report.get("infra_failure_reason")
    if error and reason:
        error = f"{error} (harness: {reason})"
    success = 1.0 if found.status == "resolved" else 0.0
    outcome = scorer_outcome(success, None, None, {"resolved": success}, outcome_only=True)
    extra: dict[str, Any] = {"sample_id": instance_id, "swebench_status": found.status, AGENT_KEY: outcome}
    if found.report:
        extra["swebench_report"] = found.report
    if found.status == "incomplete":
        extra["missing"] = True
    doc_hash = hashlib.sha256(json.dumps(["swebench", instance_id]).encode("utf-8")).hexdigest()[:16]
    return SampleRecord(doc_id=instance_id, doc_hash=doc_hash, scores={NO_FILTER: {}},
                        trajectory=Trajectory(error=error), extra=extra)


def task_result(name: str, instances: dict[str, Instance], dataset: str | None) -> TaskResult:
    samples = [_sample(i, instances[i]) for i in sorted(instances)]
    task = TaskResult(task=name, n_samples=len(samples), samples=samples,
                      protocol=TaskProtocol(dataset=dataset or "",
                                            agent={"source": "swebench_harness_report"}))
    score_task(task)
    return task


def read_reports(path: Path, version: str | None, *, task: str | None = None, samples: bool = True) -> RunResult:
    """A SWE-bench report (file or folder) as a RunResult with one task: `task`, else named after its dataset."""
    instances, files = collect(path)
    dataset = dataset_name(path, files)
    result = task_result(task or task_slug(dataset), instances, dataset)
    if not samples:
        result.samples = []
    provenance = RunProvenance(source=str(path), harness="swebench", harness_version=version,
                               library_versions={"swebench": version} if version else {})
    return RunResult(provenance=provenance, tasks={result.task: result})
