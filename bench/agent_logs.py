"""Large inspect `.eval` logs in minutes: a few hundred samples written by inspect's own writer, the rest of the
zip members made by giving those real records new ids. A bench helper; asserts nothing about rlgate.

inspect's writer builds (pydantic) and serializes every sample, which for 2 x 100,000 trajectories did not finish
in 15 CPU minutes on two cores. Here inspect writes `templates` samples (bench_agent's `_sample`: the same
messages, tool errors, limits, crashes and scores) whose ids are marker numbers; sample `i` of the big log is the
JSON bytes inspect wrote for one template (drawn at random, so the outcome rates are the templates' rates), with
its marker replaced by `i` (the id, the input, the target, the tool-call ids, the store: everything that named the
sample). The header (`header.json`, `_journal/start.json`: dataset size and sample ids), `summaries.json` and its
journal copy are inspect's own, with the same replacement; every member is zstd-compressed as inspect writes them.
`check_log` reads a built log back with inspect's `read_eval_log` and compares it with what was written.
"""

from __future__ import annotations

import json
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

MARK = 900_000_000  # template t has id MARK + t: nine digits that no other number in a sample contains
HEADER, START, SUMMARIES, JOURNAL_SUMMARIES = ("header.json", "_journal/start.json", "summaries.json",
                                               "_journal/summaries/1.json")


def _templates(path: Path, count: int, steps: int, seed: int, skill: float) -> None:
    """`count` samples with marker ids, written by inspect's writer (bench_agent's sample shapes)."""
    from bench_agent import _sample
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, write_eval_log

    rng = np.random.default_rng(seed)
    ids = [MARK + t for t in range(count)]
    spec = EvalSpec(created=datetime.now(timezone.utc).isoformat(), task="bench_agent", task_version=1,
                    task_id="bench-agent", dataset=EvalDataset(name="bench", samples=count, sample_ids=ids),
                    model="mockllm/model", config=EvalConfig(epochs=1), metadata={"rlgate_task": "bench_agent"})
    log = EvalLog(eval=spec, status="success", samples=[_sample(i, steps, rng, skill) for i in ids])
    write_eval_log(log, str(path), format="eval")


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _with_dataset(member: bytes, n: int) -> bytes:
    """The header (or journal start) with the big log's dataset: n samples, ids 0..n-1."""
    data = json.loads(member)
    data["eval"]["dataset"].update(samples=n, sample_ids=list(range(n)))
    return _dumps(data)


def write_scaled_log(path: Path, n: int, steps: int, seed: int, skill: float, templates: int = 256) -> None:
    """One `.eval` log of `n` trajectories, as described in the module docstring."""
    import inspect_ai._util.zipfile as inspect_zip  # patches zipfile for zstd, as inspect does when it writes

    count = min(templates, n)
    source = path.with_name(path.stem + ".templates.eval")
    _templates(source, count, steps, seed, skill)
    with zipfile.ZipFile(source) as log:
        names = log.namelist()
        samples = [log.read(f"samples/{MARK + t}_epoch_1.json") for t in range(count)]
        header, start = log.read(HEADER), log.read(START)
        summaries = json.loads(log.read(SUMMARIES))
    source.unlink()
    marks = [str(MARK + t).encode() for t in range(count)]
    for mark, raw in zip(marks, samples, strict=True):  # the marker names the sample and nothing else
        sample = json.loads(raw)
        if sample["id"] != int(mark) or mark in _dumps({k: v for k, v in sample.items()
                                                       if k in ("working_time", "model_usage")}):
            raise SystemExit("a template's marker id occurs in one of its numbers: change MARK")
    by_id = {s["id"]: _dumps(s) for s in summaries}
    summary_bytes = [by_id[MARK + t] for t in range(count)]
    pick = np.random.default_rng(seed + 1000).integers(0, count, size=n)
    rows = []
    with zipfile.ZipFile(path, "w", **inspect_zip.zipfile_compress_kwargs) as out:
        out.writestr(START, _with_dataset(start, n))
        for i, t in enumerate(pick.tolist()):
            out.writestr(f"samples/{i}_epoch_1.json", samples[t].replace(marks[t], str(i).encode()))
            rows.append(summary_bytes[t].replace(marks[t], str(i).encode()))
        joined = b"[" + b",".join(rows) + b"]"
        out.writestr(JOURNAL_SUMMARIES, joined)
        out.writestr(SUMMARIES, joined)
        out.writestr(HEADER, _with_dataset(header, n))
    if sorted(set(names) - {f"samples/{MARK + t}_epoch_1.json" for t in range(count)}) != sorted(
            [START, JOURNAL_SUMMARIES, SUMMARIES, HEADER]):
        raise SystemExit(f"inspect wrote members this helper does not make: {names[:8]}...")


def check_log(path: Path, n: int) -> None:
    """Read the log back with inspect's own reader: n samples, ids 0..n-1 each naming itself, a valid header."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    samples = log.samples or []
    if log.status != "success" or len(samples) != n or log.eval.dataset.sample_ids != list(range(n)):
        raise SystemExit(f"{path}: inspect reads {len(samples)} samples, status {log.status}")
    for sample in samples:
        calls = [c.id for m in sample.messages if m.role == "assistant" for c in (m.tool_calls or [])]
        if sample.target != str(sample.id) or not all(c.startswith(f"call-{sample.id}-") for c in calls):
            raise SystemExit(f"{path}: sample {sample.id} still names another sample")
    print(f"{path.name}: inspect's read_eval_log reads {n} samples, status {log.status}")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.eval"
        write_scaled_log(out, int(sys.argv[1]) if len(sys.argv) > 1 else 1000, 4, seed=0, skill=0.6)
        check_log(out, int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
