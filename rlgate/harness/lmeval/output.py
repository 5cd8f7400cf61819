"""Write an lm-eval output folder exactly as `lm_eval --output_path OUT --log_samples` does, plus the manifest.

lm-eval's own EvaluationTracker writes `OUT/<model>/results_<ts>.json` and
`samples_<task>_<ts>.jsonl`, so `rlgate gate` and any lm-eval tooling read rlgate runs unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lm_eval.loggers import EvaluationTracker

from rlgate._core.files import write_text_atomic
from rlgate.results.manifest import MANIFEST_FILE, RunManifest


def clear_previous(out_dir: Path) -> None:
    """Remove the files an earlier rlgate run wrote here, so the folder holds one unambiguous run.

    Only files listed by the earlier manifest are removed; nothing else in the folder is touched.
    """
    manifest_path = out_dir / MANIFEST_FILE
    if not manifest_path.is_file():
        return
    try:
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    results = out_dir / str(old.get("results_file", ""))
    if results.is_file() and results.name.startswith("results_"):
        stamp = results.stem[len("results_"):]
        for pattern in (f"samples_*_{stamp}.jsonl", f"per_response_*_{stamp}.json"):
            for sample in results.parent.glob(pattern):
                sample.unlink()
        results.unlink()
    manifest_path.unlink()


def new_tracker(out_dir: Path) -> EvaluationTracker:
    """The tracker simple_evaluate logs the experiment into (chat template, system prompt, timings)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return EvaluationTracker(output_path=str(out_dir))


def write_run(out_dir: Path, tracker: EvaluationTracker, results: dict[str, Any], lm_eval_model: str) -> Path:
    """Save results and samples with lm-eval's tracker; returns the results file."""
    samples = results.pop("samples", {}) or {}
    results.setdefault("config", {})["model"] = lm_eval_model
    tracker.general_config_tracker.model_source = lm_eval_model
    before = set(out_dir.rglob("results_*.json"))
    tracker.save_results_aggregated(results=results, samples=samples)
    written = sorted(set(out_dir.rglob("results_*.json")) - before)
    if not written:
        raise OSError(f"lm-eval could not write its results file under {out_dir}")
    for task_name in results.get("configs", {}):
        if task_name in samples:
            tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    return written[-1]


def write_manifest(out_dir: Path, manifest: RunManifest) -> Path:
    return write_text_atomic(out_dir / MANIFEST_FILE, manifest.model_dump_json(indent=2))

