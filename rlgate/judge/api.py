"""Run the contract's judge policy over a candidate (and baseline) run: the judge layer's entry point.

    report = run_judge(resolved_contract, candidate, baseline, run_dir)
    decision = decide(without_judge_gates(rc.gates), ..., extra_gates=judge_gate_verdicts(report, rc.gates))
    decision.extensions["judge"] = report.model_dump(mode="json")

(`judge_for_decision` does these three steps, and nothing when the contract has no judge.)

Files go under `run_dir/judge/`: the answer cache (`cache.sqlite`) and deepeval's folder (`deepeval/`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlgate.contract.judge_policy import JudgeModelSpec, JudgeSpec, resolve_judge
from rlgate.contract.loader import ResolvedContract
from rlgate.contract.models import GateConfig
from rlgate.engine.models import GateVerdict
from rlgate.judge.cache import JudgeCache
from rlgate.judge.calibration import JudgeHistory, calibrate
from rlgate.judge.report import JudgeItem, JudgeReport, JudgeTrust, TaskJudgeReport
from rlgate.judge.runner import Judge, LazyJudge, judge_items, summarise
from rlgate.judge.selfjudge import self_judging
from rlgate.results.models import RunResult


def task_policies(rc: ResolvedContract) -> dict[str, JudgeSpec]:
    """The resolved judge policy of every task that has one (contract default overridden per task)."""
    out: dict[str, JudgeSpec] = {}
    for task in rc.tasks:
        spec = resolve_judge(rc.contract.judge, task.entry.judge, task=task.name, file=rc.path)
        if spec is not None:
            out[task.name] = spec
    return out


class _JudgeFactory:
    """Builds one G-Eval judge per (policy, model), sharing the loaded model and the cache."""

    def __init__(self, run_dir: Path, rc: ResolvedContract, llm: Any) -> None:
        self.folder = run_dir / "judge"
        self.rc, self.llm = rc, llm
        self.cache: JudgeCache | None = None
        self.deepeval_folder: str | None = None
        self._models: dict[str, Any] = {}

    def for_spec(self, spec: JudgeSpec) -> Callable[[], Judge]:
        def build() -> Judge:
            from rlgate.judge.deepeval_env import prepare_deepeval

            self.deepeval_folder = prepare_deepeval(self.folder / "deepeval")
            from rlgate.judge.geval import GEvalJudge

            if self.cache is None:
                self.cache = JudgeCache(self.folder / "cache.sqlite")
            key = spec.model.model_dump_json() if spec.model else "-"
            if key not in self._models:
                self._models[key] = self.llm if self.llm is not None else self._make(spec)
            return GEvalJudge(spec, self._models[key], self.cache)

        return build

    def resolved_model(self, model: JudgeModelSpec) -> JudgeModelSpec:
        """The judge model with a local folder resolved against the contract."""
        if model.path:
            return model.model_copy(update={"path": str(self.rc.resolve_path(model.path))})
        return model

    def _make(self, spec: JudgeSpec) -> Any:
        from rlgate.judge.llms import make_judge_llm

        assert spec.model is not None  # resolve_judge requires a model for LLM policies
        return make_judge_llm(self.resolved_model(spec.model))


def _flag_self_judging(task_report: TaskJudgeReport, spec: JudgeSpec, model: JudgeModelSpec,
                       candidate: RunResult) -> None:
    """Mark the judge untrusted when it is the candidate itself (its `on_bias` decides: error or warn)."""
    same = self_judging(model, candidate.provenance)
    if same is None:
        return
    old = task_report.trust
    message = (f"judge NOT TRUSTED: the judge model is the candidate itself ({same}); a model grading its own "
               "answers prefers them (self-preference bias)" + (f"; {old.message}" if old is not None else ""))
    task_report.trust = JudgeTrust(position=old.position if old else None, length=old.length if old else None,
                                   on_bias=spec.on_bias, trusted=False, message=message, self_judging=same)


def run_judge(rc: ResolvedContract, candidate: RunResult, baseline: RunResult | None, run_dir: Path, *,
              history: JudgeHistory | None = None, llm: Any = None, alpha: float | None = None) -> JudgeReport:
    """Judge every task with a judge policy. `llm` (a deepeval DeepEvalBaseLLM) replaces the contract's
    judge model, e.g. in tests; `history` enables drift checks of the calibration."""
    level = 1 - (alpha if alpha is not None else rc.gates.alpha)
    factory = _JudgeFactory(run_dir, rc, llm)
    report = JudgeReport()
    for task, spec in task_policies(rc).items():
        leaves = candidate.leaves(task)
        if not leaves:
            report.warnings.append(f"{task}: the candidate run has no results for this task; not judged")
            continue
        lazy = LazyJudge(factory.for_spec(spec))
        items: list[JudgeItem] = []
        unpaired = 0
        for leaf in leaves:
            base = baseline.tasks.get(leaf) if baseline is not None else None
            if baseline is not None and base is None:
                report.warnings.append(f"{leaf}: the baseline run has no results for this task; not judged")
                continue
            leaf_items, leaf_unpaired = judge_items(leaf, spec, candidate.tasks[leaf], base, lazy)
            items += leaf_items
            unpaired += leaf_unpaired
        task_report = summarise(task, spec, items, lazy.judge, level, unpaired)
        if spec.type != "rule" and spec.model is not None:
            _flag_self_judging(task_report, spec, factory.resolved_model(spec.model), candidate)
        if spec.calibration is not None:
            judge = lazy.get()
            task_report.calibration = calibrate(spec, spec.calibration, rc.resolve_path(spec.calibration.anchors),
                                                judge, f"{rc.name}/{task}", history)
            task_report.judge_model, task_report.judge_fingerprint = judge.model_name, judge.fingerprint
            if task_report.calibration.below_floor:
                report.warnings.append(f"{task}: judge calibration {task_report.calibration.message}")
        if unpaired:
            report.warnings.append(f"{task}: {unpaired} document(s) in only one run were not judged")
        if task_report.errors:
            report.warnings.append(f"{task}: {task_report.errors} judge error(s) (never counted as wins)")
        report.tasks[task] = task_report
    report.deepeval_folder = factory.deepeval_folder
    report.cache = str(factory.cache.path) if factory.cache is not None else None
    if factory.cache is not None:
        factory.cache.close()
    return report


@dataclass
class JudgeForDecision:
    """What a gate/check command passes to the engine: its gates, the judge verdicts, the report section."""

    gates: GateConfig
    extra_gates: list[GateVerdict] = field(default_factory=list)
    report: JudgeReport | None = None

    @property
    def extension(self) -> dict[str, Any] | None:
        """The report as decision.json stores it under extensions["judge"]."""
        return self.report.model_dump(mode="json") if self.report is not None else None


def judge_for_decision(rc: ResolvedContract, candidate: RunResult, baseline: RunResult | None, run_dir: Path, *,
                       history: JudgeHistory | None = None, llm: Any = None) -> JudgeForDecision:
    """Run the judge when the contract has a judge policy or a judge gate; otherwise change nothing.

        j = judge_for_decision(rc, cand_run, base_run, out)
        decision = decide(j.gates, base_run, cand_run, ..., extra_gates=j.extra_gates)
        if j.extension: decision.extensions["judge"] = j.extension
    """
    from rlgate.judge.gate import judge_gate_verdicts, without_judge_gates

    stripped = without_judge_gates(rc.gates)
    if not task_policies(rc) and stripped == rc.gates:
        return JudgeForDecision(rc.gates)
    report = run_judge(rc, candidate, baseline, run_dir, history=history, llm=llm)
    return JudgeForDecision(stripped, judge_gate_verdicts(report, rc.gates, candidate, baseline), report)
