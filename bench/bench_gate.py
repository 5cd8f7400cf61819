"""`rlgate gate` end to end against the floor: a plain `json.loads` loop over the same files. Prints; asserts nothing.

Two pairs of lm-eval output folders (built once with lm-eval's own scorers, kept with --keep):
- real: Llama-3.1-8B base vs Instruct on MMLU-Pro from ../shared/data (the 2,000 questions with published
  generations by default; --full-real adds all 12,032 questions);
- synthetic: a 12,000-document GSM8K-format pair (two filters, so 24,000 sample lines per folder).

Each measurement is a fresh process, the two alternated `--repeat` times: `python -m rlgate.cli.app gate`
(contract, both folders, decision, every report) and `python bench_gate.py --floor` (interpreter start, then
`json.loads` of the results file and of every sample line of both folders), and a third process that only
imports the libraries the gate path is built on (the part of the ratio no change inside rlgate can remove), and a
fourth, the lower bound under that stack: the libraries, the pydantic models of the two documents the gate writes
(decision.json, report_model.json), a msgspec decode of every line, and writing as many bytes as the gate's outputs
(no records, no statistics, no rendering: any gate built on this stack does at least this). The
ratio gate / floor is printed
from the best of each, with the spread, and so is the ratio of CPU time (user + system, which other
processes on the machine disturb less than wall time); peak memory (ru_maxrss of the child) is printed
beside the input size.
The decision.json of every gate run is compared (timestamps aside) with the first one.
rlgate's modules are byte-compiled first (as `pip install` does), so an editable checkout or
PYTHONDONTWRITEBYTECODE does not make every run compile them from source.
Target: ratio <= 3 (moonshot <= 1.5).
Run: python bench/bench_gate.py [--repeat 5] [--keep /tmp/rlgate-bench-gate] [--full-real]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
       "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def floor(folders: list[str]) -> None:
    """The floor: json.loads every line of the results and samples files of the folders (what any reader must do)."""
    count = 0
    for folder in folders:
        for path in sorted(Path(folder).glob("results_*.json")):
            json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(Path(folder).glob("samples_*.jsonl")):
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    json.loads(line)
                    count += 1
    print(count)


def lower_bound(sizes: list[int], out_dir: str, folders: list[str]) -> None:
    """The least any gate on rlgate's stack does: import the libraries, build the models of the documents it
    writes, decode every line (msgspec, the two fields every reader needs) and write `sizes` bytes to `out_dir`."""
    import jinja2  # noqa: F401 - the libraries of STACK_IMPORTS, as the libraries-only process imports them
    import msgspec
    import numpy  # noqa: F401
    import pydantic  # noqa: F401
    import typer  # noqa: F401
    import yaml  # noqa: F401

    from rlgate.engine.models import Decision
    from rlgate.report.model import ReportModel

    for model in (Decision, ReportModel):
        model.model_rebuild()  # built at import, or now where its build is deferred

    class Line(msgspec.Struct):
        doc_id: int
        filter: str = "none"

    decoder = msgspec.json.Decoder(Line)
    count = 0
    for folder in folders:
        for path in sorted(Path(folder).glob("results_*.json")):
            msgspec.json.decode(path.read_bytes())
        for path in sorted(Path(folder).glob("samples_*.jsonl")):
            with open(path, "rb") as handle:
                for line in handle:
                    decoder.decode(line)
                    count += 1
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for index, size in enumerate(sizes):
        (out / f"output{index}").write_bytes(b"x" * size)
    print(count)


def _build(keep: Path, full_real: bool) -> list[tuple[str, Path, Path, Path]]:
    """(label, baseline folder, candidate folder, contract) per pair, built under `keep` unless already there."""
    sys.path.insert(0, str(REPO / "tests"))
    from fixtures.lmeval_builders import build_mmlu_pro_llama_folder, build_synthetic_folder

    pairs: list[tuple[str, Path, Path, Path]] = []
    shared = Path(os.environ.get("RLGATE_SHARED_DATA", REPO.parent / "shared" / "data"))
    contracts = REPO / "tests" / "fixtures" / "contracts"
    real = [("real MMLU-Pro Llama-3.1-8B base vs Instruct, 2,000 generations", "real2k", True)]
    if full_real:
        real.append(("real MMLU-Pro Llama-3.1-8B base vs Instruct, all 12,032 questions", "real12k", False))
    if (shared / "outputs" / "mmlu_pro" / "predictions.csv").exists():
        for label, name, only in real:
            folders = []
            for model in ("base", "instruct"):
                target = keep / name / model
                found = sorted(target.glob("*/results_*.json"))
                folders.append(found[0].parent if found else
                               build_mmlu_pro_llama_folder(shared, model, target, generations_only=only))
            pairs.append((label, folders[0], folders[1], contracts / "llama_mmlu_pro.yaml"))
    else:
        print(f"real pair skipped: no MMLU-Pro outputs under {shared}")
    import numpy as np

    rng = np.random.default_rng(2)
    correct_b = (rng.random(12_000) < 0.36).tolist()
    correct_c = [c or bool(rng.random() < 0.12) for c in correct_b]
    synth = []
    for model, correct in (("base", correct_b), ("cand", correct_c)):
        target = keep / "synth12k" / model
        found = sorted(target.glob("*/results_*.json"))
        synth.append(found[0].parent if found else build_synthetic_folder(target, f"org/{model}", {"gsm8k": correct}))
    contract = keep / "synth12k" / "contract.yaml"
    text = (contracts / "abel_gsm8k.yaml").read_text()
    contract.write_text(text.replace("gsm8k_suite.yaml", str(contracts / "gsm8k_suite.yaml")))
    pairs.append(("synthetic GSM8K-format pair, 12,000 documents", synth[0], synth[1], contract))
    return pairs


def _popen_wait(command: list[str]) -> tuple[float, float, float, subprocess.CompletedProcess[str]]:
    """(wall s, peak MB, CPU s (user + system), result) of a child run to the end."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    # read pipes to the end before reaping, so the child is never blocked on a full pipe
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime,
            subprocess.CompletedProcess(command, proc.returncode, out, err))


#: What the gate path cannot do without (typer CLI, pydantic models, jinja2 HTML, PyYAML contracts, numpy
#: statistics, msgspec decoding): importing them is part of every `rlgate gate`, whatever rlgate itself does.
STACK_IMPORTS = "import typer, pydantic, jinja2, yaml, numpy, msgspec"

_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)?")


def _size_mb(folders: list[Path]) -> float:
    return sum(p.stat().st_size for f in folders for p in f.iterdir() if p.is_file()) / 1e6


def bench_pair(label: str, base: Path, cand: Path, contract: Path, repeat: int, out_root: Path) -> None:
    gate_times, floor_times, gate_peaks, floor_peaks, decisions = [], [], [], [], set()
    gate_cpu, floor_cpu, stack_times, lower_times = [], [], [], []
    lines = 0
    for attempt in range(repeat):
        out = out_root / f"out{attempt}"
        gate = [sys.executable, "-m", "rlgate.cli.app", "gate", str(contract), "--candidate", str(cand),
                "--baseline", str(base), "--out", str(out)]
        wall, peak, cpu, done = _popen_wait(gate)
        if done.returncode not in (0, 1, 3):
            raise SystemExit(f"rlgate gate failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        gate_times.append(wall)
        gate_cpu.append(cpu)
        gate_peaks.append(peak)
        decisions.add(_STAMP.sub("<time>", (out / "decision.json").read_text(encoding="utf-8")))
        wall, peak, cpu, done = _popen_wait([sys.executable, __file__, "--floor", str(base), str(cand)])
        floor_times.append(wall)
        floor_cpu.append(cpu)
        floor_peaks.append(peak)
        lines = int(done.stdout.strip())
        stack_times.append(_popen_wait([sys.executable, "-c", STACK_IMPORTS])[0])
        sizes = json.dumps([p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()])
        wall, _, _, done = _popen_wait([sys.executable, __file__, "--lower-bound", sizes, str(out_root / "lower"),
                                        str(base), str(cand)])
        if done.returncode != 0:
            raise SystemExit(f"the lower-bound process failed:\n{done.stderr[-2000:]}")
        lower_times.append(wall)
    verdict = json.loads(next(iter(decisions)))["decision"]
    best_gate, best_floor = min(gate_times), min(floor_times)
    ratios = sorted(g / f for g, f in zip(gate_times, floor_times, strict=True))
    print(f"{label}: {lines:,} sample lines, {_size_mb([base, cand]):.1f} MB on disk")
    print(f"  rlgate gate      best {best_gate:6.2f} s  (runs {', '.join(f'{t:.2f}' for t in gate_times)})  "
          f"peak {min(gate_peaks):5.0f} MB   decision {verdict}; decision.json identical across runs: "
          f"{len(decisions) == 1}")
    print(f"  json.loads floor best {best_floor:6.2f} s  (runs {', '.join(f'{t:.2f}' for t in floor_times)})  "
          f"peak {min(floor_peaks):5.0f} MB")
    stack = min(stack_times)
    print(f"  libraries only   best {stack:6.2f} s  = {stack / best_floor:.2f}x the floor: a process that imports the "
          "libraries rlgate's gate path is built on and does nothing else")
    lower = min(lower_times)
    print(f"  lower bound      best {lower:6.2f} s  = {lower / best_floor:.2f}x the floor: those libraries, the models "
          "of decision.json and report_model.json, a msgspec decode of every line, writing as many bytes as the "
          "gate's outputs")
    print(f"  ratio (best/best) {best_gate / best_floor:5.2f}x   per-run ratios {ratios[0]:.2f}x .. "
          f"{ratios[-1]:.2f}x   (target <= 3x, moonshot <= 1.5x)")
    print(f"  CPU (user+system) best: gate {min(gate_cpu):.2f} s, floor {min(floor_cpu):.2f} s, ratio "
          f"{min(gate_cpu) / min(floor_cpu):.2f}x   (steadier than wall time when other processes share the cores)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="folder to build the pairs in once and reuse (default: temporary)")
    parser.add_argument("--full-real", action="store_true", help="also gate all 12,032 real MMLU-Pro questions")
    parser.add_argument("--floor", nargs="+", metavar="FOLDER")
    parser.add_argument("--lower-bound", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    parser.add_argument("--build", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        floor(args.floor)
        return
    if args.lower_bound:
        sizes, out_dir, *folders = args.lower_bound
        lower_bound(json.loads(sizes), out_dir, folders)
        return
    if args.build:
        print(json.dumps([[label, *map(str, rest)] for label, *rest in _build(args.build, args.full_real)]))
        return
    with tempfile.TemporaryDirectory(prefix="rlgate-bench-gate-") as tmp:
        keep = args.keep or Path(tmp)
        keep.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        # Built in a child: this process stays small, so the children's ru_maxrss (which Linux carries across
        # fork + exec) is theirs, not the builder's numpy and lm_eval.
        built = subprocess.run([sys.executable, __file__, "--build", str(keep)]
                               + (["--full-real"] if args.full_real else []), env=ENV, check=True,
                               stdout=subprocess.PIPE, text=True)
        # what `pip install` does for a wheel: without it every gate run would compile rlgate from source
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "rlgate")], env=ENV, check=True,
                       stdout=subprocess.DEVNULL)
        pairs = [(label, Path(b), Path(c), Path(k)) for label, b, c, k in json.loads(built.stdout.splitlines()[-1])]
        print(f"folders ready in {time.perf_counter() - start:.1f} s (under {keep}); {args.repeat} alternated runs "
              f"each, fresh processes, {sys.version.split()[0]}")
        for label, base, cand, contract in pairs:
            bench_pair(label, base, cand, contract, args.repeat, Path(tmp) / label.split()[0])


if __name__ == "__main__":
    main()
