"""Decision, runs and contract built directly for report tests, with hostile text in the samples."""

from __future__ import annotations

from pathlib import Path

from rlgate.contract.loader import ResolvedContract
from rlgate.engine.models import Decision, GateVerdict, PairingReport, RunRef
from rlgate.harness.vocabulary import load_contract
from rlgate.results.models import (
    RunProvenance,
    RunResult,
    SampleRecord,
    TaskProtocol,
    TaskResult,
    ToolCall,
    Trajectory,
    TrajectoryStep,
)

#: Each of these must show up as text and do nothing.
HOSTILE_RESPONSE = (
    "I think </script><script>window.__pwned=1;document.title='pwned'</script> the answer is "
    "<img src=x onerror=\"window.__pwned=2;alert(1)\"> [click](javascript:window.__pwned=3) "
    "<a href=\"javascript:window.__pwned=4\">link</a> | pipe `tick` **bold** \u202eevil\u202c \x07bell "
    "<!-- comment --> &lt;entity&gt; \u2028sep\u2029 The answer is (B)."
)
HOSTILE_PROMPT = "Question: <svg onload=window.__pwned=5> what is 2+2?\nOptions: (A) 3 (B) 4\nAnswer:"
PRIVATE_MARKER = "PRIVATE-QUESTION-TEXT-7f3a"
#: Longer than the page's preview, so the "show all" toggle appears; ends with a marker.
LONG_RESPONSE = "Let me think. " * 150 + "END-OF-LONG-RESPONSE"

CONTRACT_YAML = """\
schema_version: 1
name: report_test
baseline: {results: base}
splits:
  public: {visibility: nightly}
  private: {visibility: release_gate_only}
suites:
  - schema_version: 1
    name: s
    tasks:
      - {task: gsm8k, split: public}
      - {task: mmlu_pro, split: public}
      - {task: ifeval, split: private}
gates:
  alpha: 0.05
  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.02}
  regression:
    - {metric: mmlu_pro/exact_match/custom-extract, max_drop: 0.01}
    - {metric: ifeval/prompt_level_strict_acc, max_drop: 0.01}
"""


def contract(tmp_path: Path) -> ResolvedContract:
    (tmp_path / "base").mkdir(exist_ok=True)
    path = tmp_path / "contract.yaml"
    path.write_text(CONTRACT_YAML, encoding="utf-8")
    return load_contract(path)


def _sample(doc_id: int, right: bool, *, metric: str, filt: str, prompt: str, response: str,
            target: str = "B") -> SampleRecord:
    answer = target if right else "A"
    return SampleRecord(doc_id=doc_id, doc_hash=f"h{doc_id}", prompt=prompt, target=target,
                        responses=[response if doc_id == 0 else LONG_RESPONSE if doc_id == 1
                                   else f"... so the answer is ({answer})."],
                        filtered={filt: answer}, scores={filt: {metric: 1.0 if right else 0.0}},
                        response_tokens=[12])


def run(model: str, pattern: list[bool], *, hostile: bool = True, n: int | None = None) -> RunResult:
    """Three tasks: gsm8k and mmlu_pro_math (shareable), ifeval (private)."""
    n = n or len(pattern)
    tasks: dict[str, TaskResult] = {}
    specs = [("gsm8k", "exact_match", "flexible-extract"), ("mmlu_pro_math", "exact_match", "custom-extract"),
             ("ifeval", "prompt_level_strict_acc", "none")]
    for task, metric, filt in specs:
        samples = []
        for i in range(n):
            right = pattern[i % len(pattern)]
            prompt = HOSTILE_PROMPT if task != "ifeval" else f"{PRIVATE_MARKER} write 3 words"
            response = HOSTILE_RESPONSE if hostile and task != "ifeval" else f"{PRIVATE_MARKER} answer"
            samples.append(_sample(i, right, metric=metric, filt=filt, prompt=prompt, response=response))
        acc = sum(s.scores[filt][metric] for s in samples) / n  # type: ignore[misc]
        tasks[task] = TaskResult(task=task, metrics={filt: {metric: acc}}, n_samples=n,
                                 protocol=TaskProtocol(version="1", num_fewshot=0, filters=[filt]), samples=samples)
    provenance = RunProvenance(source=f"/runs/{model}", model=model, checkpoint_fingerprint="sha256:ab12",
                               lm_eval_version="0.4.13", library_versions={"torch": "2.13.0"}, wall_time_s=321.0)
    return RunResult(provenance=provenance,
                     tasks=tasks, groups={"mmlu_pro": ["mmlu_pro_math"]},
                     group_metrics={"mmlu_pro": {"custom-extract": {"exact_match": tasks["mmlu_pro_math"]
                                                                    .metrics["custom-extract"]["exact_match"]}}})


def decision(extensions: dict | None = None) -> Decision:
    gates = [
        GateVerdict(name="gsm8k gain", kind="primary", metric="gsm8k/exact_match/flexible-extract", verdict="pass",
                    outcome="primary_pass", effect="release", baseline=0.5, candidate=0.75, delta=0.25,
                    ci=(0.1, 0.4), ci_level=0.95, p_value=0.003, mde=0.08, n=8, test="mcnemar_exact",
                    threshold={"min_delta": 0.02}, reason="improved by 25.0 pp (p=0.003)"),
        GateVerdict(name="mmlu_pro | <b>no drop</b>", kind="regression", metric="mmlu_pro/exact_match/custom-extract",
                    verdict="fail", outcome="regression_fail", effect="block", baseline=0.75, candidate=0.5,
                    delta=-0.25, ci=(-0.45, -0.05), ci_level=0.95, p_value=0.01, p_adjusted=0.02, mde=0.09, n=8,
                    test="mcnemar_exact", threshold={"max_drop": 0.01},
                    reason="dropped 25.0 pp > 1.0 pp <script>window.__pwned=9</script>"),
        GateVerdict(name="ifeval no drop", kind="regression", metric="ifeval/prompt_level_strict_acc",
                    verdict="nodata", outcome="nodata", effect="block", reason="candidate has no ifeval results"),
    ]
    return Decision(decision="block", summary="block: mmlu_pro regressed; ifeval has no data",
                    deciding_gates=["mmlu_pro | <b>no drop</b>", "ifeval no drop"], gates=gates,
                    pairing=[PairingReport(task="gsm8k", paired=8)], contract="report_test",
                    inputs=[RunRef(role="baseline", source="/runs/base"),
                            RunRef(role="candidate", source="/runs/cand")],
                    alpha=0.05, seed=7, extensions=extensions or {})


HOSTILE_TOOL_RESULT = "<img src=x onerror=\"window.__pwned=31\"> </pre></details><script>window.__pwned=32</script>"


def trajectory(doc_id: int, right: bool, private: bool = False) -> Trajectory:
    """A small agent run: a search that errors, a retry whose result is hostile text, then the answer.
    Document 2 crashed, document 3 hit the message limit, document 4 lost its sandbox."""
    marker = f"{PRIVATE_MARKER} " if private else ""
    steps = [
        TrajectoryStep(role="system", content="You are an agent."),
        TrajectoryStep(role="user", content=f"{marker}{HOSTILE_PROMPT}"),
        TrajectoryStep(role="assistant", content="searching", tool_calls=[
            ToolCall(id="c1", function="search", arguments={"q": f"{marker}<b>two plus two</b>"})]),
        TrajectoryStep(role="tool", content="", tool_call_id="c1", error="timeout: search took too long"),
        TrajectoryStep(role="assistant", content="retrying", tool_calls=[
            ToolCall(id="c2", function="search", arguments={"q": "2+2"})]),
        TrajectoryStep(role="tool", content=HOSTILE_TOOL_RESULT, tool_call_id="c2"),
        TrajectoryStep(role="assistant", content=f"{marker}The answer is {'(B)' if right else '(A)'}."),
    ]
    error = {2: "RuntimeError: boom", 4: "sandbox: docker container exited (137)"}.get(doc_id) if not right else None
    limits = ["message"] if doc_id == 3 and not right else []
    return Trajectory(steps=steps, limits_hit=limits, error=error, total_tokens=300 + doc_id,
                      working_time_s=1.5, final_state={"db": {"k": "<v>"}}, explanation="checked")


def agent_run(model: str, pattern: list[bool], n: int | None = None) -> RunResult:
    """`run`, with an agent trajectory on every sample (the private task's carry the private marker)."""
    result = run(model, pattern, n=n)
    for name, task in result.tasks.items():
        for sample in task.samples:
            right = bool(next(iter(next(iter(sample.scores.values())).values())))
            assert isinstance(sample.doc_id, int)
            sample.trajectory = trajectory(sample.doc_id, right, private=name == "ifeval")
            sample.extra["agent"] = {"success": float(right), "answer": "(B)" if right else "(A)", "scores": {}}
            sample.scores.setdefault("none", {})["task_success"] = 1.0 if right else 0.0
    return result
