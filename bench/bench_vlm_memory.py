"""Peak memory of importing and gating a 10,000-image ChartQA-format suite, printed beside its size on disk.

The suite: 10,000 charts drawn from known tables (rlgate.demo.vlm_data's tables and questions, one
question per chart), each a 320x240 PNG drawn with PIL (matplotlib takes ~50 ms a chart; PIL ~1 ms).
Decoded, the images would take 10,000 x 320 x 240 x 3 bytes = 2.3 GB, so a step that held them all
would break the 2 GB target. Stored predictions of a baseline (every answer right) and a candidate
(every fifth answer wrong) are written as lmms-eval samples files, then each step runs as its own
process, and its peak RSS (ru_maxrss of the finished child, RUSAGE_CHILDREN) is printed:

  rlgate import (lmms-eval -> responses), rlgate eval --responses (lm-eval scores them) for each role,
  rlgate gate baseline vs candidate.

It also measures the live path without a model: lm-eval's `build_all_requests` on the suite (as a
live `rlgate eval --checkpoint` builds every request up front), then rlgate's caching LM answering
all of them through a stand-in backend that receives the decoded images (so every image is decoded
for its cache key and again, one chunk at a time, for the backend). Requests carry LazyImages;
before they did, request building alone held every decoded picture (3.2 GB at 10,000 charts).

Target: every import and gating step under 2 GB. Prints; asserts nothing.
Run: python bench/bench_vlm_memory.py [--images 10000] [--keep /tmp/rlgate-bench-vlm]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
       "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
#: runs one command as a child and prints the child's peak RSS in KiB (Linux ru_maxrss unit)
WRAP = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
        "print('MAXRSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(rc)")
SIZE = (320, 240)
CONTRACT = """schema_version: 1
name: vlm_memory_bench
baseline:
  checkpoint: "{root}/no-checkpoint"
protocol:
  backend: hf-multimodal
  chat_template: false
  sampling: {{temperature: 0.0, n: 1, max_tokens: 12, seed: 1234}}
  image: {{image_resolution: 320, preserve_aspect_ratio: true, images_per_prompt: 1}}
splits:
  test_public: {{visibility: nightly}}
suites: [suite.yaml]
judge: {{type: rule}}
capabilities:
  charts: {{tasks: [chartqa], scope: feature}}
gates:
  alpha: 0.05
  primary: {{metric: chartqa/relaxed_accuracy, min_delta: 0.0}}
  diagnostics:
    - {{metric: chartqa/answer_parse_failure_rate, max: 0.2}}
"""
SUITE = """schema_version: 1
name: charts_10k
version: "1"
tasks:
  - task: chartqa
    split: test_public
    data_files: {{test: "{root}/data/chartqa/test.jsonl"}}
"""


def draw(chart: object, path: Path) -> None:
    """A bar chart of the table in PIL: one bar per (category, series), grey axis; enough to be a real PNG."""
    from PIL import Image, ImageDraw

    table: dict[str, dict[str, int]] = chart.table  # type: ignore[attr-defined]
    categories: list[str] = chart.categories  # type: ignore[attr-defined]
    image = Image.new("RGB", SIZE, "white")
    pen = ImageDraw.Draw(image)
    pen.line([(20, 220), (310, 220)], fill="grey")
    slot = 280 // max(1, len(categories) * len(table))
    x = 24
    for category in categories:
        for k, series in enumerate(table):
            value = table[series][category]
            pen.rectangle([x, 220 - 2 * value, x + slot - 4, 220], fill=("steelblue", "orange")[k % 2])
            x += slot
        pen.text((x - slot, 224), category[:6], fill="black")
    image.save(path, optimize=False, compress_level=1)


def generate(root: Path, images: int) -> tuple[list[str], float]:
    """The suite (rows + PNGs, streamed to disk); returns every row's answer and the seconds it took."""
    from rlgate.demo.vlm_data import chartqa_rows, random_chart

    started = time.monotonic()
    rng = random.Random(0)
    folder = root / "data"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "chartqa").mkdir(exist_ok=True)
    answers: list[str] = []
    with (folder / "chartqa" / "test.jsonl").open("w", encoding="utf-8") as out:
        for n in range(images):
            chart = random_chart(rng)
            name = f"chart_{n:05d}.png"
            draw(chart, folder / "images" / name)
            row = list(chartqa_rows(chart, f"../images/{name}", rng))[n % 4]  # one question per chart
            out.write(json.dumps(row) + "\n")
            answers.append(row["label"][0])
    (root / "suite.yaml").write_text(SUITE.format(root=root.as_posix()))
    (root / "contract.yaml").write_text(CONTRACT.format(root=root.as_posix()))
    return answers, time.monotonic() - started


def wrong(answer: str) -> str:
    try:
        return f"{float(answer) * 1.5 + 5:g}"
    except ValueError:
        return {"Yes": "No", "No": "Yes"}.get(answer, "Nothing")


def write_samples(path: Path, answers: list[str], every_wrong: int | None) -> None:
    """An lmms-eval samples file (its save_results_samples layout), streamed."""
    with path.open("w", encoding="utf-8") as out:
        for i, answer in enumerate(answers):
            response = wrong(answer) if every_wrong and i % every_wrong == 0 else answer
            out.write(json.dumps({"doc_id": i, "target": answer, "filtered_resps": response, "token_counts": [None],
                                  "input": "Answer the question with a single word.",
                                  "relaxed_overall": float(response == answer)}) + "\n")


def measure(label: str, args: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Run `rlgate ARGS` as a child of a wrapper; returns (peak RSS in MiB, seconds)."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", WRAP, sys.executable, "-m", "rlgate.cli.app", *args],
                          capture_output=True, text=True, env=ENV, cwd=REPO)
    seconds = time.monotonic() - started
    if proc.returncode not in ok:
        sys.exit(f"{label} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    kib = next(int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("MAXRSS"))
    return kib / 1024, seconds


def probe_live(root: Path) -> None:
    """Child process: build the live path's requests (decoded images), then print the count."""
    sys.path.insert(0, str(REPO))
    from rlgate.app.runs import select_tasks
    from rlgate.harness.lmeval.tasks import load_suite
    from rlgate.harness.vocabulary import load_contract

    resolved = load_contract(root / "contract.yaml")
    suite = load_suite(select_tasks(resolved, None, release_gate=False), resolved.contract.protocol)
    task = suite.leaves["chartqa"]
    task.build_all_requests(rank=0, world_size=1)
    from lm_eval.api.instance import Instance
    from lm_eval.api.model import LM

    from rlgate.harness.lmeval.caching_lm import CachingLM
    from rlgate.store.cache import GenerationCache

    class Backend(LM):
        """Stands in for hf-multimodal: takes decoded images, answers by their width (no model)."""

        def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
            return [f"Final Answer: {r.args[2]['visual'][0].size[0]}" for r in requests]

        def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
            raise NotImplementedError

    with GenerationCache(root / "live-cache.sqlite") as cache:
        lm = CachingLM(Backend, cache=cache, fingerprint="bench", protocol_hash="bench",
                       task_hashes={"chartqa": "bench"})
        answers = lm.generate_until(list(task.instances))
    print(f"answered {len(answers)} requests")


def measure_probe(root: Path) -> tuple[float, float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", WRAP, sys.executable, str(Path(__file__).resolve()),
                           "--probe-live", str(root)], capture_output=True, text=True, env=ENV, cwd=REPO)
    if proc.returncode:
        sys.exit(f"live path failed:\n{proc.stderr[-3000:]}")
    kib = next(int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("MAXRSS"))
    return kib / 1024, time.monotonic() - started


def disk_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    parser.add_argument("--no-live", action="store_true", help="skip the live path (no model) measurement")
    parser.add_argument("--probe-live", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_live:
        probe_live(args.probe_live)
        return
    sys.path.insert(0, str(REPO))
    root = args.keep or Path(tempfile.mkdtemp(prefix="rlgate-bench-vlm-"))
    root.mkdir(parents=True, exist_ok=True)
    answers, seconds = generate(root, args.images)
    size = disk_size(root / "data")
    decoded = args.images * SIZE[0] * SIZE[1] * 3
    print(f"suite: {args.images} images + {len(answers)} ChartQA rows, {size / 2**20:.1f} MiB on disk "
          f"(decoded RGB: {decoded / 2**30:.2f} GiB), generated in {seconds:.1f} s")
    for role, every in (("baseline", None), ("candidate", 5)):
        write_samples(root / f"20260101_samples_chartqa_{role}.jsonl", answers, every)
    rows: list[tuple[str, float, float]] = []
    for role in ("baseline", "candidate"):
        samples = root / f"20260101_samples_chartqa_{role}.jsonl"
        rows.append((f"import {role} (lmms-eval)", *measure("import", [
            "import", str(samples), "--from", "lmms-eval", "--task", "chartqa", "--answer-marker",
            "--out", str(root / f"{role}.jsonl")])))
        rows.append((f"eval --responses {role}", *measure("eval", [
            "eval", str(root / "contract.yaml"), "--responses", str(root / f"{role}.jsonl"),
            "--out", str(root / f"{role}-eval"), "--cache", str(root / "cache")])))
    rows.append(("gate baseline vs candidate", *measure("gate", [
        "gate", str(root / "contract.yaml"), "--baseline", str(root / "baseline-eval"),
        "--candidate", str(root / "candidate-eval"), "--out", str(root / "gate")], ok=(0, 1, 3))))
    decision = json.loads((root / "gate" / "decision.json").read_text())
    if not args.no_live:
        rows.append(("live path: requests + caching LM (no model)", *measure_probe(root)))
    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  peak RSS   time     (suite on disk {size / 2**20:.1f} MiB, target < 2048 MiB)")
    for label, rss, secs in rows:
        print(f"{label:<{width}}  {rss:7.0f} MiB  {secs:6.1f} s  {'ok' if rss < 2048 else 'OVER TARGET'}")
    print(f"gate decision: {decision['decision']} (candidate answers every fifth question wrong)")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
