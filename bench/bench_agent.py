"""Speed of importing and gating agent runs, beside a plain `read_eval_log` of the same logs. Prints; asserts nothing.

The bench writes two real inspect `.eval` logs (baseline and candidate) with inspect_ai's own log
writer: 2,000 trajectories each, 20 model turns a trajectory (19 tool calls with results, then the
answer), with tool errors, limits hit and a few crashed samples. Then, side by side in one process:

1. plain: `inspect_ai.log.read_eval_log` of both logs (what any tool reading them must pay);
2. rlgate: read both logs into rlgate results (`read_results`: trajectories, per-trajectory agent
   metrics, drops), apply the contract's agent rules, and gate them (`engine.decide` on task_success,
   safety_violation_rate, tool_success_rate, tokens_to_success, with paired statistics).

Target: (2) <= 2x (1). Also printed: the badcase report and the report model on the same runs.

Run: OMP_NUM_THREADS=1 python bench/bench_agent.py [--n 2000] [--steps 20]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np


def _sample(i: int, steps: int, rng: np.random.Generator, skill: float) -> object:
    from inspect_ai.log import EvalError, EvalSample, EvalSampleLimit
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageTool,
        ChatMessageUser,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall, ToolCallError

    messages: list[object] = [ChatMessageUser(content=f"Task {i}: find the record and update the ledger.")]
    for k in range(steps - 1):
        call_id = f"call-{i}-{k}"
        call = ToolCall(id=call_id, function=("search", "read", "write")[k % 3],
                        arguments={"query": f"item {i} part {k}", "limit": 10})
        messages.append(ChatMessageAssistant(content=f"Step {k}: calling a tool.", tool_calls=[call]))
        error = ToolCallError("timeout", "the tool took too long") if rng.random() < 0.03 else None
        messages.append(ChatMessageTool(content="" if error else f"result {k} for item {i}: " + "x" * 60,
                                        tool_call_id=call_id, function=call.function, error=error))
    answer = f"The ledger total is {i}."
    messages.append(ChatMessageAssistant(content=answer))
    success = float(rng.random() < skill)
    crashed = rng.random() < 0.005
    limited = not crashed and rng.random() < 0.02
    tokens = int(rng.integers(2_000, 4_000))
    return EvalSample(
        id=i, epoch=1, input=str(messages[0].text), target=str(i), messages=messages,  # type: ignore[attr-defined]
        output=ModelOutput.from_content("mockllm/model", answer),
        scores={"checker": Score(value={"success": success, "state_success": success, "safety_violation": 0.0},
                                 answer=answer)},
        model_usage={"mockllm/model": ModelUsage(input_tokens=tokens - 500, output_tokens=500, total_tokens=tokens)},
        working_time=float(rng.uniform(5, 20)), store={"ledger": {"total": i}},
        error=EvalError(message="RuntimeError: sandbox exited", traceback="", traceback_ansi="") if crashed else None,
        limit=EvalSampleLimit(type="message", limit=40) if limited else None)


def write_log(path: Path, n: int, steps: int, seed: int, skill: float) -> None:
    """One `.eval` log of `n` trajectories, written by inspect_ai's log writer."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, write_eval_log

    rng = np.random.default_rng(seed)
    spec = EvalSpec(created=datetime.now(timezone.utc).isoformat(), task="bench_agent", task_version=1,
                    task_id="bench-agent", dataset=EvalDataset(name="bench", samples=n, sample_ids=list(range(n))),
                    model="mockllm/model", config=EvalConfig(epochs=1), metadata={"rlgate_task": "bench_agent"})
    log = EvalLog(eval=spec, status="success", samples=[_sample(i, steps, rng, skill) for i in range(n)])
    write_eval_log(log, str(path), format="eval")


def _gates() -> object:
    from rlgate.contract.models import GateConfig

    return GateConfig.model_validate({
        "primary": {"metric": "bench_agent/task_success", "min_delta": 0.0},
        "hard": [{"metric": "bench_agent/safety_violation_rate", "max": 0.0}],
        "regression": [{"metric": "bench_agent/tool_success_rate", "max_drop": 0.05}],
        "diagnostics": [{"metric": "bench_agent/tokens_to_success", "max_relative_increase": 0.5}]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from inspect_ai.log import read_eval_log

    from rlgate.badcases.report import build_badcase_report
    from rlgate.contract.models import AgentBudget
    from rlgate.engine import decide
    from rlgate.harness import read_results
    from rlgate.report.builder import build_report
    from rlgate.results.agent_metrics import apply_agent_rules

    with tempfile.TemporaryDirectory() as tmp:
        folders = [Path(tmp) / "baseline", Path(tmp) / "candidate"]
        start = time.perf_counter()
        for index, folder in enumerate(folders):
            folder.mkdir()
            write_log(folder / "run.eval", args.n, args.steps, seed=index, skill=0.6 + 0.05 * index)
        size = sum((f / "run.eval").stat().st_size for f in folders)
        print(f"wrote 2 x {args.n:,} trajectories x {args.steps} turns with inspect's log writer "
              f"({size / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s")

        plain: list[float] = []
        ours: list[float] = []
        for _ in range(args.repeat):  # interleaved, so both see the same page cache and machine load
            start = time.perf_counter()
            logs = [read_eval_log(str(f / "run.eval")) for f in folders]
            plain.append(time.perf_counter() - start)
            assert all(len(log.samples or []) == args.n for log in logs)
            del logs
            start = time.perf_counter()
            base, cand = (read_results(f, harness="inspect") for f in folders)
            apply_agent_rules([*base.tasks.values(), *cand.tasks.values()], AgentBudget(max_tool_calls=30), None)
            decision = decide(_gates(), base, cand, seed=0, contract_name="bench")  # type: ignore[arg-type]
            ours.append(time.perf_counter() - start)
        best_plain, best_ours = min(plain), min(ours)
        print(f"plain read_eval_log of both logs:        {best_plain:6.2f} s (best of {args.repeat})")
        print(f"rlgate import + agent metrics + gate:    {best_ours:6.2f} s (best of {args.repeat})  "
              f"ratio {best_ours / best_plain:.2f}x  (target <= 2x) -> {decision.decision}")
        start = time.perf_counter()
        build_badcase_report(cand, base)
        print(f"badcase report (agent taxonomy):         {time.perf_counter() - start:6.2f} s")
        start = time.perf_counter()
        model = build_report(decision, baseline=base, candidate=cand)
        print(f"report model (no contract: samples withheld): {time.perf_counter() - start:6.2f} s, "
              f"{len(model.model_dump_json()) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
