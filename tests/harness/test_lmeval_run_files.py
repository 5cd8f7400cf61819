"""Which files make one lm-eval run (rlgate.harness.lmeval.run_files): compressed samples, two forms of one
task's samples, several runs in one folder, and the full split's size (n-samples original)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from test_lmeval_bad_input import TS, results_doc, write

from rlgate._core.errors import InputError
from rlgate.harness.lmeval.folder import read_lmeval_folder


def test_the_full_split_is_read_beside_the_effective_count(tmp_path: Path) -> None:
    doc = results_doc()
    doc["n-samples"]["t"] = {"original": 10, "effective": 3}  # lm_eval --limit 3
    task = read_lmeval_folder(write(tmp_path / "m", doc)).tasks["t"]
    assert (task.n_samples, task.n_expected) == (3, 10)


def test_a_broken_original_count_is_a_located_error(tmp_path: Path) -> None:
    doc = results_doc()
    doc["n-samples"]["t"]["original"] = "many"
    with pytest.raises(InputError) as info:
        read_lmeval_folder(write(tmp_path / "m", doc))
    assert info.value.field == "n-samples.t.original"


def test_gzip_samples_are_read(tmp_path: Path) -> None:
    folder = write(tmp_path / "m", results_doc())
    plain = folder / f"samples_t_{TS}.jsonl"
    with gzip.open(folder / f"samples_t_{TS}.jsonl.gz", "wb") as handle:
        handle.write(plain.read_bytes())
    with pytest.raises(InputError, match="here twice"):  # both forms of the same run's samples: which one?
        read_lmeval_folder(folder)
    plain.unlink()
    assert len(read_lmeval_folder(folder).tasks["t"].samples) == 3


def test_a_truncated_gzip_is_a_located_error(tmp_path: Path) -> None:
    folder = write(tmp_path / "m", results_doc())
    plain = folder / f"samples_t_{TS}.jsonl"
    packed = gzip.compress(plain.read_bytes())
    (folder / f"samples_t_{TS}.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    plain.unlink()
    with pytest.raises(InputError) as info:
        read_lmeval_folder(folder)
    assert info.value.file == folder / f"samples_t_{TS}.jsonl.gz"


def test_an_older_run_with_samples_and_a_newer_one_without_are_ambiguous(tmp_path: Path) -> None:
    folder = write(tmp_path / "m", results_doc())
    newer = folder / "results_2024-06-02T00-00-00.000000.json"
    shutil.copy(folder / f"results_{TS}.json", newer)
    with pytest.raises(InputError) as info:
        read_lmeval_folder(folder)
    assert newer.name in str(info.value) and f"results_{TS}.json" in str(info.value)
    assert len(read_lmeval_folder(folder / f"results_{TS}.json").tasks["t"].samples) == 3


def test_the_newest_run_with_samples_is_read(tmp_path: Path) -> None:
    folder = write(tmp_path / "m", results_doc())
    stamp = "2024-06-02T00-00-00.000000"
    doc = results_doc()
    doc["results"]["t"]["exact_match,none"] = 1.0
    (folder / f"results_{stamp}.json").write_text(json.dumps(doc), encoding="utf-8")
    shutil.copy(folder / f"samples_t_{TS}.jsonl", folder / f"samples_t_{stamp}.jsonl")
    assert read_lmeval_folder(folder).tasks["t"].metrics["none"]["exact_match"] == 1.0
