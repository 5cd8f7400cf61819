"""Training-monitor throughput: a 1,000,000-step verl JSONL log and a 100,000-step TensorBoard file.

Each file is generated once into a temporary folder, then read and checked (every rule) in a fresh
process, which prints wall time and peak memory (ru_maxrss minus the process's size after imports).
Beside each, the obvious alternative is timed on the same file: per-line `json.loads` into Python
lists for the JSONL log, tensorboard's `EventAccumulator` (keeping every scalar) for the event file.
Targets: the JSONL read-and-check under 5 s and at most 0.6x the time of per-line `json.loads`; the
TensorBoard one under 10 s. Wall and CPU time are both printed (CPU time is what a shared, busy machine
does not inflate), the ratio as "takes Nx the time" with "faster" / "slower" the right way round, and
peak memory beside the input size. Prints; asserts nothing.
Run: python bench/bench_monitor.py [--steps 1000000] [--tb-steps 100000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

KEYS = ("critic/score/mean", "critic/kl", "actor/entropy", "response_length/mean", "response_length/clip_ratio",
        "actor/grad_norm", "actor/lr", "actor/ppo_kl", "actor/pg_clipfrac", "timing_s/step")
TB_TAGS = ("train/reward", "train/kl", "train/entropy", "train/completions/mean_length")


def write_verl_jsonl(path: Path, steps: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, steps)
    cols = np.column_stack([
        np.clip(0.2 + 0.5 * t + rng.normal(0, 0.03, steps), 0, 1), np.abs(0.1 * t + rng.normal(0, 0.005, steps)),
        0.5 - 0.3 * t + rng.normal(0, 0.01, steps), 300 + rng.normal(0, 10, steps),
        np.clip(0.01 + rng.normal(0, 0.003, steps), 0, 1), np.abs(2 + rng.normal(0, 0.2, steps)),
        np.full(steps, 1e-6), np.abs(rng.normal(0.001, 0.0005, steps)), np.abs(rng.normal(0.003, 0.001, steps)),
        20 + rng.normal(0, 1, steps)])
    # %.17g: as many digits as json.dumps (float repr) writes for most floats
    template = '{"step": %d, "data": {' + ", ".join(f'"{k}": %.17g' for k in KEYS) + "}}\n"
    val_template = '{"step": %d, "data": {"val-core/openai/gsm8k/acc/mean@1": %.4f}}\n'
    with path.open("w", encoding="utf-8") as handle:
        for start in range(0, steps, 50_000):
            block = cols[start:start + 50_000]
            lines = [template % (start + i + 1, *row) for i, row in enumerate(block.tolist())]
            lines += [val_template % (s + 1, 0.3 + 0.3 * s / steps) for s in range(start, start + len(block), 1000)]
            handle.write("".join(lines))


def write_tensorboard(folder: Path, steps: int, seed: int = 0) -> Path:
    """TFRecord-framed Event protos written with tensorboard's own writer (no TensorFlow)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    rng = np.random.default_rng(seed)
    values = np.column_stack([0.2 + np.linspace(0, 0.5, steps) + rng.normal(0, 0.03, steps),
                              np.abs(rng.normal(0.02, 0.005, steps)), 0.5 + rng.normal(0, 0.01, steps),
                              200 + rng.normal(0, 5, steps)]).tolist()
    writer = EventFileWriter(str(folder), max_queue_size=10_000, flush_secs=3600)
    for step, row in enumerate(values):
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=t, simple_value=v)
                                             for t, v in zip(TB_TAGS, row, strict=True)])
        writer.add_event(event_pb2.Event(step=step, wall_time=1.7e9 + step, summary=summary))
    writer.close()
    return next(folder.glob("events.out.tfevents.*"))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(kind: str, path: str) -> None:
    """Child process: time one reader; print JSON {seconds, peak_mb, points, findings}."""
    import scipy.stats  # noqa: F401  (imports are not part of the measurement; the rules import it lazily)

    import rlgate.monitor.readers  # noqa: F401
    from rlgate.monitor.policy import MonitorPolicy
    from rlgate.monitor.readers import read_log
    from rlgate.monitor.rules import evaluate

    if kind.startswith("naive_tb"):
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    base = _rss_mb()
    start = time.perf_counter()
    cpu = time.process_time()
    if kind == "rlgate":
        log = read_log(path)
        findings, _ = evaluate(log, MonitorPolicy())
        points = sum(len(s) for s in [*log.metrics.values(), *log.extra.values()])
        serious = [f.rule for f in findings if f.severity != "info"]
        problems = len(log.problems)
    elif kind == "naive_jsonl":
        columns: dict[str, list[float]] = {}
        steps: dict[str, list[int]] = {}
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                for key, value in record["data"].items():
                    columns.setdefault(key, []).append(value)
                    steps.setdefault(key, []).append(record["step"])
        points, serious, problems = sum(len(v) for v in columns.values()), [], 0
    else:
        acc = EventAccumulator(path, size_guidance={"scalars": 0})
        acc.Reload()
        points = sum(len(acc.Scalars(tag)) for tag in acc.Tags()["scalars"])
        serious, problems = [], 0
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mb": _rss_mb() - base, "rss_mb": _rss_mb(),
                      "points": points, "serious": serious, "problems": problems}))


def compare(ours: float, other: float) -> str:
    """'0.45x the time (2.2x faster)' or '1.50x the time (1.5x slower)': never a ratio below 1 called faster."""
    ratio = ours / other
    speed = f"{1 / ratio:.1f}x faster" if ratio <= 1 else f"{ratio:.1f}x slower"
    return f"rlgate takes {ratio:.2f}x the time ({speed})"


def run_child(kind: str, path: Path) -> dict[str, object]:
    out = subprocess.run([sys.executable, __file__, "--measure", kind, str(path)], check=True, capture_output=True,
                         text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--tb-steps", type=int, default=100_000)
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "PATH"))
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    with tempfile.TemporaryDirectory(prefix="rlgate-bench-monitor-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        jsonl = folder / "metrics.jsonl"
        write_verl_jsonl(jsonl, args.steps)
        print(f"wrote {args.steps:,}-step verl JSONL ({jsonl.stat().st_size / 1e6:.0f} MB, {len(KEYS)} metrics "
              f"per step) in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        tb = write_tensorboard(folder, args.tb_steps)
        print(f"wrote {args.tb_steps:,}-step TensorBoard file ({tb.stat().st_size / 1e6:.1f} MB, "
              f"{len(TB_TAGS)} scalars per step) in {time.perf_counter() - start:.1f} s")
        for label, path, naive in (("verl JSONL", jsonl, "naive_jsonl"), ("TensorBoard", tb, "naive_tb")):
            ours = run_child("rlgate", path)
            other = run_child(naive, path)
            alternative = "per-line json.loads" if naive == "naive_jsonl" else "EventAccumulator"
            size = path.stat().st_size / 1e6
            target = "target < 5 s and <= 0.6x per-line json.loads" if naive == "naive_jsonl" else "target < 10 s"
            print(f"{label:12} read+check {ours['seconds']:6.2f} s (cpu {ours['cpu']:5.2f} s)  "
                  f"peak {ours['rss_mb']:5.0f} MB (+{ours['peak_mb']:4.0f} over imports) for {size:.0f} MB of input  "
                  f"{ours['points']:,} points, serious findings {ours['serious']}, problems {ours['problems']}  "
                  f"({target})")
            print(f"{'':12} {alternative:>18} {other['seconds']:6.2f} s (cpu {other['cpu']:5.2f} s)  "
                  f"peak {other['rss_mb']:5.0f} MB (+{other['peak_mb']:4.0f} over imports)  (read only)")
            print(f"{'':12} {'ratio':>18} {compare(float(ours['seconds']), float(other['seconds']))} wall, "
                  f"{compare(float(ours['cpu']), float(other['cpu']))} cpu")


if __name__ == "__main__":
    main()
