"""Which files of an lm-eval output folder make one run: its results file and the samples of the same timestamp.

lm-eval names both after the run's start (`results_<ts>.json`, `samples_<task>_<ts>.jsonl`), so a folder that
holds several runs is read as the newest run whose results have samples. When the newest results file has no
samples but an older run has, neither can be chosen silently (the newest's aggregates would be gated as if no
samples were logged, or an older run's samples judged under the newer results): the folder is refused with
every run listed. Samples are read compressed too (`.jsonl.gz`, and `.jsonl.zst` where `zstandard` is
installed); two forms of one task's samples for the same run are refused rather than one picked.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

from rlgate._core.errors import InputError

RESULTS_RE = re.compile(r"^results_(?P<ts>.+)\.json$")
SAMPLE_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst")
_FIX_FOLDER = "point at the folder given to lm_eval --output_path (run with --log_samples)"


def _mtime(file: Path) -> float:
    """Modification time; a link to nothing sorts as oldest (reading it, if chosen, names it)."""
    try:
        return file.stat().st_mtime
    except OSError:
        return 0.0


def _stamp(file: Path) -> str:
    return RESULTS_RE.match(file.name)["ts"]  # type: ignore[index]


def _samples_of_run(results: Path) -> list[Path]:
    pattern = f"samples_*_{glob.escape(_stamp(results))}.jsonl*"
    return sorted(p for p in results.parent.glob(pattern) if p.name.endswith(SAMPLE_SUFFIXES))


def find_results_file(path: str | Path) -> Path:
    """The results file of the run to read at `path` (a results file, a folder, or the one model folder below it):
    the newest run, refused when it has no samples and an older run in the same folder has (see the module)."""
    root = Path(path)
    if root.is_file():
        if RESULTS_RE.match(root.name):
            return root
        raise InputError(f"'{root.name}' is not an lm-eval results file (results_<timestamp>.json)",
                         file=root, fix=_FIX_FOLDER)
    if not root.is_dir():
        raise InputError("results folder does not exist", file=root, fix=_FIX_FOLDER)
    found = sorted(root.glob("results_*.json"))
    if not found:
        nested = sorted(root.glob("*/results_*.json"))
        folders = sorted({p.parent.name for p in nested})
        if len(folders) > 1:
            raise InputError(f"results of several models under this folder: {', '.join(folders)}", file=root,
                             fix="point at one model's folder, e.g. " + str(root / folders[0]))
        found = nested
    if not found:
        raise InputError("no results_*.json here or in a folder one level below", file=root, fix=_FIX_FOLDER)
    # lm-eval's timestamps are ISO dates with ':' replaced, so names sort by time.
    ordered = sorted(found, key=lambda p: (_stamp(p), _mtime(p)), reverse=True)
    newest = ordered[0]
    if len(ordered) > 1 and newest.exists() and not _samples_of_run(newest):  # a link to nothing: read, named
        logged = [p for p in ordered[1:] if _samples_of_run(p)]
        if logged:
            runs = "; ".join(f"{p.name} ({len(_samples_of_run(p))} samples files)" for p in logged[:5])
            raise InputError(
                f"several lm-eval runs here: the newest, {newest.name}, has no samples file, and older runs have "
                f"({runs}); which one to gate is ambiguous", file=newest.parent,
                fix=f"point at the results file of the run to gate (e.g. {newest.parent / logged[0].name}), or move "
                "the other runs out of the folder")
    return newest


def samples_file_of(results: Path, task: str, stamp: str) -> Path | None:
    """The samples file of `task` in the run `results` belongs to (any of the suffixes), None when absent."""
    forms = [results.parent / f"samples_{task}_{stamp}{suffix}" for suffix in SAMPLE_SUFFIXES]
    present = [p for p in forms if p.exists() or p.is_symlink()]  # a link to nothing: named, not skipped
    if len(present) > 1:
        raise InputError(f"the samples of task '{task}' are here twice: {', '.join(p.name for p in present)}",
                         file=results.parent, fix="keep one of them (the others are copies or a different run)")
    return present[0] if present else None
