"""What a path no harness reads looks like, so the refusal names the format and the way in.

`rlgate gate` and `rlgate eval --responses` pick a harness by a cheap look at names and first bytes
(`Harness.can_read`). When none claims a path, this says what the files resemble (another tool's
output that `rlgate import` converts, an lm-eval layout rlgate does not read, a run that holds no
scores) and the fix, instead of a bare "not recognised". It reads at most the first 64 KiB of a
few files; it never parses a whole file.
"""

from __future__ import annotations

import re
from pathlib import Path

_HEAD = 1 << 16


def _head(file: Path) -> bytes:
    try:
        with file.open("rb") as handle:
            return handle.read(_HEAD)
    except OSError:
        return b""


def _candidates(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found: list[Path] = []
    for depth in range(4):
        found += sorted(p for p in path.glob("/".join(["*"] * depth + ["*"])) if p.is_file())
        if len(found) > 200:
            break
    return found[:200]


def _import_format(file: Path) -> tuple[str, str, str] | None:
    """(`rlgate import --from` format, what the file looks like, the fix) of another tool's predictions."""
    name = file.name
    if file.suffix.lower() in (".xlsx", ".tsv") or re.search(r"_acc\.csv$", name):
        return ("vlmevalkit", f"a VLMEvalKit result file ({name})", "convert it first: rlgate import --from "
                "vlmevalkit FILE --out responses.jsonl, then rlgate eval CONTRACT --responses responses.jsonl")
    if re.search(r"^\d{8}_\d{6}_(results|samples_.+)\.jsonl?$", name):
        return ("lmms-eval", f"lmms-eval output ({name}: its <date>_<time>_results.json / _samples_<task>.jsonl "
                "names)", "convert the samples file: rlgate import --from lmms-eval FILE --out responses.jsonl")
    run = file.parent.parent.parent if file.parent.parent.name in ("predictions", "results") else (
        file.parent.parent if file.parent.name == "summary" else None)
    if run is not None and (run / "predictions").is_dir():  # <run>/predictions/<model>/<abbr>.json, results/, summary/
        return ("opencompass", "an OpenCompass work_dir (predictions/<model>/<dataset>.json, results/, summary/)",
                "import it: rlgate import --from opencompass WORK_DIR --out responses.jsonl (or gate a dataset "
                "on OpenCompass's own verdicts: a contract task with harness: opencompass)")
    return None


def import_format(path: Path) -> tuple[str, str, str] | None:
    """(format, what it looks like, fix) when `path` is another tool's predictions `rlgate import` converts."""
    files = _candidates(path)
    for file in files:
        found = _import_format(file)
        if found is not None:
            return found
    return None


def _describe(file: Path) -> tuple[str, str] | None:
    name, head = file.name, _head(file)
    imported = _import_format(file)
    if imported is not None:
        return imported[1], imported[2]
    if head.lstrip().startswith(b"{") and b'"results"' in head and b'"versions"' in head:
        if b'"bypass' in head:
            return (f"an lm-eval --predict_only run ({name}: its only metric is the 'bypass' placeholder, "
                    "not a score)", "re-run lm-eval without --predict_only (with --log_samples) to get scores")
        if b'"configs"' not in head and b'"n-samples"' not in head and b'"config"' in head:
            return (f"lm-eval < 0.4 single-file output ({name}: top-level results/versions/config, metric keys "
                    "without a filter)", "rlgate reads lm-eval >= 0.4 output folders (results_<timestamp>.json "
                    "with samples_<task>_<timestamp>.jsonl): re-run with lm-eval >= 0.4 and --log_samples")
        if not name.startswith("results_"):
            return (f"lm-eval results under a name lm-eval >= 0.4 does not write ({name})",
                    "give the folder lm-eval wrote (results_<timestamp>.json beside samples_<task>_<timestamp>"
                    ".jsonl), with its file names unchanged")
    return None


def diagnose(path: Path) -> tuple[str, str] | None:
    """(what the path looks like, the fix) for a path no harness reads, or None when nothing is recognised."""
    files = _candidates(path)
    for file in files:
        found = _describe(file)
        if found is not None:
            return found
    return None
