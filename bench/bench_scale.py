"""The scale of one decision, side by side with the floor in one run. Prints; asserts nothing.

1. samples: a synthetic GSM8K-format pair of `--docs` documents per run (two filters, so twice as many sample
   lines; bench_gate's documents, their records checked against lm-eval's own scoring on the first 200):
   `rlgate gate` against the json.loads floor (bench_gate's).
2. trajectories: two inspect `.eval` logs of `--trajectories` agent trajectories each (agent_logs: inspect's
   writer for 256 of bench_agent's samples, their records with new ids for the rest; `--steps` turns):
   rlgate's import + agent metrics + gate against the floor, json.loads of every sample
   record in both logs (a .eval log is a zip of JSON files).
3. executor (with --ray-address): `rlgate check` of a three-task contract on a tiny local model, executor
   local against executor ray (`--shards` shards) on the same work, fresh caches each, at each
   `--executor-docs` size (40 and 200 documents per task by default).

Every measurement is a fresh child process; its peak RSS (ru_maxrss) and wall time are printed beside it.
Goals (issue 37): peak RSS < 2 GB, ratio to the floor <= 3x, executor overhead <= 1.15x.
Run: python bench/bench_scale.py [--docs 1000000] [--trajectories 10000 100000] [--steps 4] [--ray-address ADDR]
     [--executor-docs 40 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_gate import REPO, _popen_wait  # the same child runner as bench_gate


def _records(correct: list[bool], filters: list[str], gen_kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """lm-eval sample dicts of the synthetic GSM8K documents (bench_gate's), filter-major, built directly: lm-eval's
    own scoring of a million documents takes hours on two cores, so `build_samples` checks these against
    `score_task` (lm-eval's filters and metrics) on the first documents and stops on any difference."""
    from lm_eval.utils import handle_non_serializable, hash_string

    out = []
    for name in filters:
        for i, ok in enumerate(correct):
            doc = {"question": f"What is {i}?", "answer": f"It is {i}.\n#### {i}"}
            prompt, answer = f"Question: {doc['question']}\nAnswer:", i if ok else i + 1
            out.append({"doc_id": i, "doc": doc, "target": doc["answer"],
                        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": gen_kwargs}},
                        "resps": [[f"The value is {answer}. #### {answer}"]], "filtered_resps": [str(answer)],
                        "filter": name, "metrics": ["exact_match"],
                        "doc_hash": hash_string(json.dumps(doc, indent=2, default=handle_non_serializable,
                                                           ensure_ascii=False)),
                        "prompt_hash": hash_string(prompt), "target_hash": hash_string(doc["answer"]),
                        "exact_match": 1.0 if ok else 0.0})
    return out


def build_samples(keep: Path, docs: int) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    import numpy as np
    from fixtures.lmeval_builders import TaskOutput, dump_config, lm_eval_task_yaml, score_task, write_lmeval_folder

    raw = dict(lm_eval_task_yaml("gsm8k/gsm8k.yaml"), task="gsm8k", num_fewshot=0)
    rng = np.random.default_rng(2)
    correct_b = (rng.random(docs) < 0.36).tolist()
    correct_c = [c or bool(rng.random() < 0.12) for c in correct_b]
    check = correct_b[:200]
    scored = score_task("gsm8k", raw, [{"question": f"What is {i}?", "answer": f"It is {i}.\n#### {i}"}
                                       for i in range(len(check))],
                        [f"Question: What is {i}?\nAnswer:" for i in range(len(check))],
                        [[f"The value is {i if ok else i + 1}. #### {i if ok else i + 1}"] for i, ok in
                         enumerate(check)])
    gen_kwargs = scored[0]["arguments"]["gen_args_0"]["arg_1"]
    filters = list(dict.fromkeys(s["filter"] for s in scored))
    if _records(check, filters, gen_kwargs) != json.loads(json.dumps(scored)):
        raise SystemExit("the direct records differ from lm-eval's scoring: fix _records")
    folders = []
    for model, correct in (("base", correct_b), ("cand", correct_c)):
        samples = _records(correct, filters, gen_kwargs)
        folders.append(str(write_lmeval_folder(keep / model, model_name=f"org/{model}",
                                               tasks=[TaskOutput("gsm8k", dump_config(raw), samples, docs)])))
        del samples
    contracts = REPO / "tests" / "fixtures" / "contracts"
    text = (contracts / "abel_gsm8k.yaml").read_text()
    (keep / "contract.yaml").write_text(text.replace("gsm8k_suite.yaml", str(contracts / "gsm8k_suite.yaml")))
    print(json.dumps(folders))


def build_agents(keep: Path, n: int, steps: int) -> None:
    """The two logs, built by `agent_logs.write_scaled_log` (inspect's writer for 256 samples, their records with
    new ids for the rest): inspect's writer alone did not finish 2 x 100,000 in 15 CPU minutes."""
    from agent_logs import write_scaled_log

    for index, name in enumerate(("baseline", "candidate")):
        (keep / name).mkdir(parents=True, exist_ok=True)
        write_scaled_log(keep / name / "run.eval", n, steps, seed=index, skill=0.6 + 0.05 * index)


def agent_gate(keep: Path) -> None:
    from bench_agent import _gates

    from rlgate._core.gcpause import collector_paused, command_policy, executable
    from rlgate.contract.models import AgentBudget
    from rlgate.engine import decide
    from rlgate.harness import read_results
    from rlgate.results.agent_metrics import apply_agent_rules

    # the collector policy of the `rlgate gate` process (cli/gate_cmd.py, app/decide.py): a pause ends in a
    # freeze, the engine runs paused
    with executable(), command_policy():
        base, cand = (read_results(keep / name, harness="inspect") for name in ("baseline", "candidate"))
        apply_agent_rules([*base.tasks.values(), *cand.tasks.values()], AgentBudget(max_tool_calls=30), None)
        with collector_paused():
            print(decide(_gates(), base, cand, seed=0, contract_name="bench").decision)  # type: ignore[arg-type]


def agent_floor(keep: Path) -> None:
    import zipfile_zstd  # noqa: F401  (inspect writes zstd members; this is how inspect itself reads them)

    count = 0
    for name in ("baseline", "candidate"):
        with zipfile.ZipFile(keep / name / "run.eval") as log:
            for member in log.namelist():
                if member.endswith(".json"):
                    json.loads(log.read(member))
                    count += member.startswith("samples/")
    print(count)


def _verdict(stdout: str) -> str:
    lines = stdout.strip().splitlines()
    return lines[-1] if lines and not lines[-1].startswith("wrote") else "decision.json written"


def _side_by_side(label: str, ours: list[str], floor: list[str], repeat: int) -> None:
    runs = []
    for _ in range(repeat):
        mine, theirs = _popen_wait(ours), _popen_wait(floor)
        for done, ok in ((mine[3], (0, 1, 3)), (theirs[3], (0,))):
            if done.returncode not in ok:
                raise SystemExit(f"{label}: a child failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        runs.append((mine, theirs))
    best, best_floor = min(r[0][0] for r in runs), min(r[1][0] for r in runs)
    peak, peak_floor = min(r[0][1] for r in runs), min(r[1][1] for r in runs)
    cpu, cpu_floor = min(r[0][2] for r in runs), min(r[1][2] for r in runs)
    print(f"{label}")
    print(f"  rlgate   best {best:7.2f} s wall, {cpu:7.2f} s CPU, peak RSS {peak:6.0f} MB  "
          f"({_verdict(runs[0][0][3].stdout)})")
    print(f"  floor    best {best_floor:7.2f} s wall, {cpu_floor:7.2f} s CPU, peak RSS {peak_floor:6.0f} MB  "
          f"({runs[0][1][3].stdout.strip()} records)")
    print(f"  ratio    {best / best_floor:.2f}x wall, {cpu / cpu_floor:.2f}x CPU   (goal <= 3x; peak goal < 2048 MB: "
          f"{'met' if peak < 2048 else 'not met'})")


def executor(keep: Path, address: str, shards: int, sizes: list[int], repeat: int) -> None:
    """Local against ray on the same work, at each size (documents per task): the fixed cost of the shards'
    processes and the merge weighs most on the smallest, the parallel generation more on the larger."""
    sys.path.insert(0, str(REPO / "tests"))
    import fixtures.shard_contract as contract_fixture
    from fixtures.shard_contract import write_contract

    from rlgate.demo.model import build_tiny_checkpoint

    shared = REPO.parent / "shared" / "data"
    checkpoint = build_tiny_checkpoint(keep / "tiny")
    for docs in sizes:
        contract_fixture.DOCS = docs
        local = write_contract(keep / f"local{docs}", shared, str(checkpoint), split="private")
        ray = write_contract(keep / f"ray{docs}", shared, str(checkpoint), split="private",
                             executor={"kind": "ray", "address": address, "shards": shards})
        times: dict[str, list[float]] = {"local": [], "ray": []}
        for attempt in range(repeat):
            for name, contract in (("local", local), ("ray", ray)):
                out = keep / f"{name}{docs}-{attempt}"
                wall, _, _, done = _popen_wait([sys.executable, "-m", "rlgate.cli.app", "check", str(contract),
                                                "--checkpoint", str(checkpoint), "--out", str(out / "out"),
                                                "--cache", str(out / "cache")])
                if done.returncode not in (0, 1, 3):
                    raise SystemExit(f"executor {name}: check failed (exit {done.returncode}):\n"
                                     f"{done.stdout[-2000:]}")
                times[name].append(wall)
        best_local, best_ray = min(times["local"]), min(times["ray"])
        print(f"executor: rlgate check, 3 tasks x {docs} documents, tiny hf model, baseline + candidate, "
              "fresh caches")
        print(f"  local (one process)     best {best_local:6.2f} s  (runs "
              f"{', '.join(f'{t:.2f}' for t in times['local'])})")
        print(f"  ray, {shards} shards + merge   best {best_ray:6.2f} s  (runs "
              f"{', '.join(f'{t:.2f}' for t in times['ray'])})")
        print(f"  overhead {best_ray / best_local:.2f}x  (goal <= 1.15x on the local cluster)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--trajectories", type=int, nargs="+", default=[100_000],
                        help="trajectories per log; several sizes are measured one after the other in this run")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--ray-address", help="a running Ray cluster for the executor's overhead")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--executor-docs", type=int, nargs="+", default=[40, 200],
                        help="documents per task of the executor's contract, one measurement per size")
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--part", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:
        kind, folder, *rest = args.part
        {"build-samples": lambda: build_samples(Path(folder), int(rest[0])),
         "build-agents": lambda: build_agents(Path(folder), int(rest[0]), int(rest[1])),
         "agent-gate": lambda: agent_gate(Path(folder)), "agent-floor": lambda: agent_floor(Path(folder))}[kind]()
        return
    with tempfile.TemporaryDirectory(prefix="rlgate-bench-scale-") as tmp:
        keep = args.keep or Path(tmp)
        me = [sys.executable, __file__, "--part"]
        if args.docs:
            samples = keep / f"samples{args.docs}"
            start = time.perf_counter()
            if not (samples / "contract.yaml").exists():
                built = _popen_wait([*me, "build-samples", str(samples), str(args.docs)])[3]
                if built.returncode:
                    raise SystemExit(built.stderr[-2000:])
            base, cand = (next((samples / m).glob("*/results_*.json")).parent for m in ("base", "cand"))
            print(f"samples pair ready in {time.perf_counter() - start:.0f} s: {args.docs:,} documents per run")
            gate = [sys.executable, "-m", "rlgate.cli.app", "gate", str(samples / "contract.yaml"), "--candidate",
                    str(cand), "--baseline", str(base), "--out", str(samples / "out")]
            _side_by_side(f"samples: {args.docs:,} documents per run (x2 filters x2 runs = {4 * args.docs:,} sample "
                          "lines)", gate, [sys.executable, str(Path(__file__).parent / "bench_gate.py"), "--floor",
                                           str(base), str(cand)], args.repeat)
        for trajectories in [n for n in args.trajectories if n]:
            agents = keep / f"agents{trajectories}x{args.steps}"
            start = time.perf_counter()
            if not (agents / "candidate" / "run.eval").exists():
                built = _popen_wait([*me, "build-agents", str(agents), str(trajectories), str(args.steps)])[3]
                if built.returncode:
                    raise SystemExit(built.stderr[-2000:])
            print(f"agent logs ready in {time.perf_counter() - start:.0f} s: {trajectories:,} trajectories x "
                  f"{args.steps} turns per run")
            _side_by_side(f"trajectories: {trajectories:,} per run, {args.steps} turns each",
                          [*me, "agent-gate", str(agents)], [*me, "agent-floor", str(agents)], args.repeat)
        if args.ray_address:
            executor(keep / "executor", args.ray_address, args.shards, args.executor_docs, max(args.repeat, 1))
        else:
            print("executor: skipped (give --ray-address of a running cluster, e.g. one `ray start --head` started)")


if __name__ == "__main__":
    main()
