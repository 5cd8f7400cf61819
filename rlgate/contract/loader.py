"""Load a contract file and everything it references into one validated `ResolvedContract`.

References (suite files, gate policies chained with `use:`, baseline results, local task paths) are
resolved relative to the file that names them. Every problem becomes one `InputError` with the file,
line, column, field and a fix. Nothing here executes code from the files it reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rlgate._core.errors import InputError
from rlgate.contract.kinds import check_kind
from rlgate.contract.metrics import MetricRef
from rlgate.contract.models import (
    RELEASE_GATE_ONLY,
    Contract,
    DecisionPolicy,
    GateConfig,
    GatePolicy,
    GateSettings,
    Split,
    Suite,
    TaskEntry,
)
from rlgate.contract.yamlpos import PathKey, YamlDoc, dotted, load_yaml, suggest, validation_to_input_error

THRESHOLDS = ("min_delta", "max_drop", "max", "min")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True)
class ResolvedTask:
    """A suite task with its split and every path made absolute."""

    entry: TaskEntry
    suite: str
    suite_version: str
    split: str
    visibility: str
    data_files: str | dict[str, str] | None
    path: Path | None
    trusted: bool

    @property
    def name(self) -> str:
        """The name gates, results and reports use: `name:`, else the task (an inspect path's last part)."""
        return self.entry.name or default_task_name(self.entry)

    @property
    def harness(self) -> str:
        """The harness that runs this task (registry name; lm_eval unless the suite says otherwise)."""
        return self.entry.harness

    @property
    def release_gate_only(self) -> bool:
        """A private split: evaluated only by the release gate, its samples never shown."""
        return self.visibility == RELEASE_GATE_ONLY

    @property
    def benchmark_version(self) -> str:
        """'suite@version' (+ '/task@version' for a versioned private task), recorded in every run manifest."""
        text = f"{self.suite}@{self.suite_version}"
        return text + (f"/{self.name}@{self.entry.version}" if self.entry.version else "")


def default_task_name(entry: TaskEntry) -> str:
    """`inspect_evals/bfcl` -> `bfcl`, `tasks/toolbox.py@toolbox` -> `toolbox`; other tasks keep their name."""
    if "/" not in entry.task and ".py" not in entry.task:
        return entry.task
    text = entry.task
    if "@" in text:
        return text.rsplit("@", 1)[1]
    last = text.rstrip("/").rsplit("/", 1)[-1]
    return last[:-3] if last.endswith(".py") else last


def local_task_file(entry: TaskEntry) -> str | None:
    """The file part of an inspect task given as a local Python file (`tasks/x.py[@fn]`), else None."""
    file = entry.task.split("@", 1)[0]
    return file if file.endswith(".py") else None


@dataclass(frozen=True)
class GateOrigin:
    """Where a gate was written (file and YAML path), so a later check can give a located error."""

    gate: Any
    doc: YamlDoc
    path: PathKey

    def error(self, field: str, message: str, fix: str) -> InputError:
        """An InputError at the gate's `field` (file:line:column, field path and fix)."""
        return self.doc.error((*self.path, field), message, fix)


@dataclass
class ResolvedContract:
    """A contract with its suites and gate policy loaded and checked; what the rest of rlgate reads."""

    path: Path
    contract: Contract
    suites: list[Suite]
    tasks: list[ResolvedTask]
    gates: GateConfig
    policy_files: list[Path] = field(default_factory=list)
    baseline_results: Path | None = None
    suite_files: list[Path] = field(default_factory=list)
    #: every gate with the place it was written (the vocabulary check after loading reports there)
    gate_origins: list[GateOrigin] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.contract.name

    def task(self, name: str) -> ResolvedTask | None:
        return next((t for t in self.tasks if t.name == name), None)

    @property
    def private_tasks(self) -> list[str]:
        """Tasks of release-gate-only splits."""
        return [t.name for t in self.tasks if t.release_gate_only]

    def benchmark_versions(self) -> dict[str, str]:
        """task -> benchmark version, as run manifests record them."""
        return {t.name: t.benchmark_version for t in self.tasks}

    def split_of(self, task: str) -> Split | None:
        entry = self.task(task)
        return self.contract.splits.get(entry.split) if entry else None

    def referenced_files(self) -> list[Path]:
        """Every file (or task folder) the decision depends on besides the runs (rlgate.contract.content)."""
        from rlgate.contract.content import referenced_files

        return referenced_files(self)

    def content_hash(self) -> str:
        """sha256 over every referenced file (name and bytes): a change to any of them changes the hash."""
        from rlgate.contract.content import content_hash

        return content_hash(self)

    def resolve_path(self, relative: str) -> Path:
        """A path named in the contract, found as references are (file's folder, then above)."""
        return find_relative(self.path, relative) or (self.path.parent / relative).resolve()


def _validate(model: type[BaseModel], doc: YamlDoc, data: Any = None, base: PathKey = ()) -> Any:
    try:
        return model.model_validate(doc.data if data is None else data)
    except ValidationError as exc:
        raise validation_to_input_error(exc, doc, model, base) from None


def find_relative(base_file: Path, relative: str) -> Path | None:
    """A path relative to the file that names it, or else to a folder above it (the project root).

    So `suites/x.yaml` written in `contracts/c.yaml` finds the project's `suites/x.yaml`.
    """
    if Path(relative).is_absolute():
        return Path(relative) if Path(relative).exists() else None
    for folder in [base_file.parent, *base_file.parent.parents]:
        candidate = (folder / relative).resolve()
        if candidate.exists():
            return candidate
    return None


def _ref_path(doc: YamlDoc, loc: PathKey, relative: str, what: str, *, yaml_file: bool = False) -> Path:
    target = find_relative(doc.file, relative)
    if target is None:
        looked = (doc.file.parent / relative).resolve()
        raise doc.error(loc, f"{what} '{relative}' does not exist (looked for {looked} and in the folders above)",
                        "fix the path; it is relative to the file that names it or to the project root")
    if yaml_file and target.is_dir():  # `suites: [""]` finds the contract's own folder
        raise doc.error(loc, f"{what} '{relative}' is a folder ({target}), not a YAML file",
                        f"name the {what}'s .yaml file")
    return target


def _load_policy_chain(doc: YamlDoc, loc: PathKey, relative: str, stack: list[Path],
                       out_files: list[Path]) -> list[tuple[GateSettings, YamlDoc, PathKey]]:
    """Gate policies from the root of a `use:` chain down to `relative` (cycles are errors)."""
    target = _ref_path(doc, loc, relative, "gate policy", yaml_file=True)
    if target in stack:
        names = " -> ".join(p.name for p in [*stack, target])
        raise doc.error(loc, f"reference cycle between files: {names}", "remove one of the 'use:' references")
    policy_doc = load_yaml(target)
    check_kind(policy_doc, "gate policy", doc, loc, relative)
    policy = _validate(GatePolicy, policy_doc)
    out_files.append(target)
    chain: list[tuple[GateSettings, YamlDoc, PathKey]] = []
    if policy.use:
        chain = _load_policy_chain(policy_doc, ("use",), policy.use, [*stack, target], out_files)
    return [*chain, (policy, policy_doc, ())]


@dataclass
class _Origin:
    doc: YamlDoc
    path: PathKey


def _merge_gates(layers: list[tuple[GateSettings, YamlDoc, PathKey]]) -> tuple[GateConfig, dict[int, _Origin]]:
    """Later layers override earlier ones; gate lists merge by metric (later wins)."""
    merged: dict[str, Any] = {"decision": {}}
    sources: dict[str, str] = {}
    lists: dict[str, dict[str, tuple[Any, _Origin]]] = {"hard": {}, "regression": {}, "diagnostics": {}}
    primary: tuple[Any, _Origin] | None = None
    for settings, doc, base in layers:
        for scalar in ("alpha", "power", "bootstrap_resamples", "allow_corrupt", "min_coverage",
                       "allow_unpaired", "allow_missing_trajectories"):
            value = getattr(settings, scalar)
            if value is not None:
                merged[scalar] = value
        if settings.decision:
            merged["decision"].update(settings.decision)
            for outcome in settings.decision:  # the last layer that sets a key is the line that maps it
                line = doc.pos_of((*base, "decision", outcome), key=True).line
                sources[outcome] = f"{doc.file.name}:{line} {dotted((*base, 'decision', outcome))}"
        if settings.primary is not None:
            primary = (settings.primary, _Origin(doc, (*base, "primary")))
        for kind, table in lists.items():
            for index, gate in enumerate(getattr(settings, kind) or []):
                table[gate.name or gate.metric] = (gate, _Origin(doc, (*base, kind, index)))
    origins: dict[int, _Origin] = {}
    config = GateConfig(
        alpha=merged.get("alpha", 0.05),
        power=merged.get("power", 0.8),
        bootstrap_resamples=merged.get("bootstrap_resamples", 10_000),
        allow_corrupt=merged.get("allow_corrupt", 0),
        min_coverage=merged.get("min_coverage", 1.0),
        allow_unpaired=merged.get("allow_unpaired", False),
        allow_missing_trajectories=merged.get("allow_missing_trajectories", 0),
        primary=primary[0] if primary else None,
        hard=[g for g, _ in lists["hard"].values()],
        regression=[g for g, _ in lists["regression"].values()],
        diagnostics=[g for g, _ in lists["diagnostics"].values()],
        decision=DecisionPolicy(**merged["decision"]),
        decision_sources=sources,
    )
    if primary:
        origins[id(config.primary)] = primary[1]
    for kind, table in lists.items():
        for gate, (_, origin) in zip(getattr(config, kind), table.values(), strict=True):
            origins[id(gate)] = origin
    return config, origins


def _check_metric(ref_text: str, origin: _Origin, tasks: dict[str, ResolvedTask], gate: Any) -> None:
    ref = MetricRef.parse(ref_text)
    loc = (*origin.path, "metric")
    if ref.task not in tasks:
        close = suggest(ref.task, list(tasks))
        fix = f"did you mean '{close}/{ref.metric}'?" if close else f"tasks in the suites: {', '.join(tasks)}"
        raise origin.doc.error(loc, f"metric '{ref_text}' names task '{ref.task}', which is in no suite", fix)
    declared = tasks[ref.task].entry.metric_ranges.get(ref.metric)
    if declared is not None:
        _check_declared_range(ref, declared, origin, gate)
    # metric names, filters and fraction bounds are the task's harness's vocabulary: checked right after
    # loading by rlgate.harness.vocabulary.check_vocabulary (this layer knows no harness's catalog)


def _check_declared_range(ref: MetricRef, declared: tuple[float, float], origin: _Origin, gate: Any) -> None:
    """Thresholds on a metric with a declared range: bounds inside it, changes no wider than it."""
    low, high = declared
    if not low < high:
        raise origin.doc.error((*origin.path, "metric"), f"the declared range of {ref.metric} is [{low}, {high}]",
                               "declare metric_ranges as [low, high] with low < high")
    for name in THRESHOLDS:
        value = getattr(gate, name, None)
        if value is None:
            continue
        bad = (not low <= value <= high) if name in ("max", "min") else abs(value) > high - low
        if bad:
            limit = f"within [{low:g}, {high:g}]" if name in ("max", "min") else f"at most {high - low:g} in size"
            raise origin.doc.error((*origin.path, name),
                                   f"{name}={value} is out of range: {ref.metric} is declared on [{low:g}, {high:g}]",
                                   f"give a {name} {limit}")


def _has_function_tag(folder: Path) -> bool:
    files = [folder] if folder.is_file() else [*folder.rglob("*.yaml"), *folder.rglob("*.yml")]
    for file in files:
        try:
            if "!function" in file.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def _resolve_tasks(contract: Contract, doc: YamlDoc, suites: list[tuple[Suite, YamlDoc, PathKey]],
                   trusted: list[Path]) -> list[ResolvedTask]:
    out: list[ResolvedTask] = []
    seen: dict[str, PathKey] = {}
    for suite, suite_doc, base in suites:
        for index, entry in enumerate(suite.tasks):
            loc = (*base, "tasks", index)
            if entry.split not in contract.splits:
                close = suggest(entry.split, list(contract.splits))
                fix = f"did you mean '{close}'?" if close else f"declared splits: {', '.join(contract.splits)}"
                raise suite_doc.error((*loc, "split"), f"unknown split '{entry.split}'", fix)
            name = entry.name or default_task_name(entry)
            if not _NAME.match(name):
                raise suite_doc.error((*loc, "name" if entry.name else "task"),
                                      f"'{name}' cannot name a task in metric references (task/metric)",
                                      "give `name:` with letters, digits, '_', '-' or '.' only")
            if name in seen:
                raise suite_doc.error((*loc, "task"), f"task '{name}' appears twice in the suites",
                                      "list each task once (give `name:` to tell two variants apart)")
            seen[name] = loc
            data_files = entry.data_files
            if isinstance(data_files, str):
                data_files = str(_ref_path(suite_doc, (*loc, "data_files"), data_files, "data file"))
            elif isinstance(data_files, dict):
                data_files = {k: str(_ref_path(suite_doc, (*loc, "data_files", k), v, "data file"))
                              for k, v in data_files.items()}
            task_path = _ref_path(suite_doc, (*loc, "path"), entry.path, "task path") if entry.path else None
            local_file = local_task_file(entry)
            if local_file is not None:
                # the file is needed only to run the task: stored logs carry the task's identity and are matched
                # by name, so a contract that gates them loads without the source (the inspect runner refuses)
                task_path = find_relative(suite_doc.file, local_file)
            is_trusted = task_path is not None and any(task_path == t or t in task_path.parents for t in trusted)
            if local_file is not None and task_path is not None and not is_trusted:
                raise suite_doc.error((*loc, "task"), f"local task file '{local_file}' is Python and is not in "
                                      "trusted_task_paths",
                                      f"add its folder to trusted_task_paths in {doc.file.name} if you trust its code")
            if task_path is not None and not is_trusted and _has_function_tag(task_path):
                raise suite_doc.error((*loc, "path"), f"local task '{entry.path}' uses !function (runs Python) "
                                      "and is not trusted",
                                      f"add it to trusted_task_paths in {doc.file.name} if you trust its code")
            visibility = contract.splits[entry.split].visibility
            out.append(ResolvedTask(entry, suite.name, suite.version, entry.split, visibility, data_files,
                                    task_path, is_trusted))
    return out


def _with_capabilities(contract: Contract, doc: YamlDoc, gates: GateConfig, by_task: dict[str, ResolvedTask],
                       all_gates: list[Any]) -> GateConfig:
    """Check the contract's capabilities against its tasks and hand them to the engine with the gates."""
    if not contract.capabilities:
        return gates
    for name, cap in contract.capabilities.items():
        for index, task in enumerate(cap.tasks):
            if task not in by_task:
                raise doc.error(("capabilities", name, "tasks", index), f"capability {name!r} lists task {task!r}, "
                                "which no suite of the contract runs",
                                f"use one of the suite's task names: {', '.join(sorted(by_task)) or '(none)'}")
    feature = {t for cap in contract.capabilities.values() if cap.scope == "feature" for t in cap.tasks}
    if feature and gates.primary is None and all(MetricRef.parse(g.metric).task in feature for g in all_gates):
        raise doc.error(("capabilities",), "every gate belongs to a scope: feature capability, so nothing would "
                        "decide for the model as a whole",
                        "keep at least one capability (or the primary gate) at scope: model")
    return gates.model_copy(update={"capabilities": dict(contract.capabilities)})


def load_contract(path: str | Path) -> ResolvedContract:
    """Load, resolve and check a contract's structure; raises InputError on the first problem.

    The gates' metric names are checked against each task's harness by `rlgate.load_contract`
    (`rlgate.harness.vocabulary.load_contract`), which every command uses."""
    file = Path(path).resolve()
    doc = load_yaml(file)
    check_kind(doc, "contract")
    contract: Contract = _validate(Contract, doc)
    suites: list[tuple[Suite, YamlDoc, PathKey]] = []
    suite_files: list[Path] = []
    for index, item in enumerate(contract.suites):
        if isinstance(item, Suite):
            suites.append((item, doc, ("suites", index)))
            continue
        target = _ref_path(doc, ("suites", index), item, "suite file", yaml_file=True)
        if target == file:
            raise doc.error(("suites", index), "reference cycle between files: the contract lists itself as a suite",
                            "point at a suite file")
        suite_doc = load_yaml(target)
        check_kind(suite_doc, "suite", doc, ("suites", index), item)
        suite_files.append(target)
        suites.append((_validate(Suite, suite_doc), suite_doc, ()))
    trusted = [_ref_path(doc, ("trusted_task_paths", i), p, "trusted task path")
               for i, p in enumerate(contract.trusted_task_paths)]
    tasks = _resolve_tasks(contract, doc, suites, trusted)
    policy_files: list[Path] = []
    layers: list[tuple[GateSettings, YamlDoc, PathKey]] = []
    if contract.gates.use:
        layers = _load_policy_chain(doc, ("gates", "use"), contract.gates.use, [file], policy_files)
    layers.append((contract.gates, doc, ("gates",)))
    gates, origins = _merge_gates(layers)
    by_task = {t.name: t for t in tasks}
    all_gates: list[Any] = [*([gates.primary] if gates.primary else []), *gates.hard, *gates.regression,
                            *gates.diagnostics]
    for gate in all_gates:
        _check_metric(gate.metric, origins[id(gate)], by_task, gate)
    if gates.primary is None and not (gates.hard or gates.regression or gates.diagnostics):
        raise doc.error(("gates",), "the contract has no gates", "add gates.primary or a hard/regression gate")
    gates = _with_capabilities(contract, doc, gates, by_task, all_gates)
    per_task = {t.name: t.entry.min_coverage for t in tasks if t.entry.min_coverage is not None}
    if per_task:
        gates = gates.model_copy(update={"task_min_coverage": per_task})
    limits = {t.name: t.entry.limit for t in tasks if t.entry.limit is not None}
    if limits:
        gates = gates.model_copy(update={"task_limits": limits})
    baseline_results = None
    if contract.baseline.results:
        baseline_results = _ref_path(doc, ("baseline", "results"), contract.baseline.results, "baseline results")
    gate_origins = [GateOrigin(gate, origins[id(gate)].doc, origins[id(gate)].path) for gate in all_gates]
    return ResolvedContract(file, contract, [s for s, _, _ in suites], tasks, gates, policy_files,
                            baseline_results, suite_files, gate_origins)
