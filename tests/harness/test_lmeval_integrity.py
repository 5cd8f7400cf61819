"""Reading lm-eval folders with unusable scores and repeated sample lines: listed, collapsed or refused, never silent.

Generated folders (scored by lm-eval's own code, tests/fixtures/lmeval_builders.py), so these run
everywhere lm_eval is installed; the Abel reproduction lives in tests/cli/test_gate_integrity.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fixtures.faults import append_first_lines, copy_folder, samples_file, set_score
from fixtures.lmeval_builders import build_synthetic_folder

from rlgate._core.errors import InputError
from rlgate.harness import read_results
from rlgate.harness.lmeval.folder import read_lmeval_folder
from rlgate.results.integrity import SampleLines, classify, quarantine
from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult

pytest.importorskip("lm_eval")
FILTERS = ("strict-match", "flexible-extract")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("integrity")
    return build_synthetic_folder(root / "clean", "org/clean", {"gsm8k": [i % 3 != 0 for i in range(40)]})


def test_clean_folder_has_nothing_corrupt(folder: Path) -> None:
    task = read_lmeval_folder(folder).tasks["gsm8k"]
    assert task.corrupt == [] and task.duplicate_lines == 0 and len(task.samples) == 40


@pytest.mark.parametrize(("value", "problem", "shown"), [
    (math.nan, "non_finite", "NaN"), (math.inf, "non_finite", "Infinity"), (-math.inf, "non_finite", "-Infinity"),
    ("1.0", "wrong_type", '"1.0"'), (None, "wrong_type", "null"), ({"em": 1}, "wrong_type", '{"em": 1}'),
    ([1.0, math.nan], "non_finite", "[1.0, NaN]"),
])
def test_unusable_scores_are_listed_by_document_and_filter(folder: Path, tmp_path: Path, value: object,
                                                           problem: str, shown: str) -> None:
    broken = copy_folder(folder, tmp_path / "broken")
    changed = set_score(broken, [4, 9], value)
    task = read_lmeval_folder(broken).tasks["gsm8k"]
    listed = [(c.doc_id, c.filter, c.metric, c.problem, c.value) for c in task.corrupt]
    assert listed == [(d, f, "exact_match", problem, shown) for d in (4, 9) for f in sorted(FILTERS)]
    name = samples_file(broken).name
    assert sorted(c.where for c in task.corrupt) == sorted(f"{name}:{n}" for n in changed)
    by_id = {s.doc_id: s for s in task.samples}
    assert len(task.samples) == 40  # the document stays; only its unusable score leaves the sample
    assert all("exact_match" not in by_id[d].scores[f] for d in (4, 9) for f in FILTERS)
    assert by_id[5].scores["strict-match"]["exact_match"] in (0.0, 1.0)


def test_a_metric_that_is_never_numeric_is_not_corrupt(folder: Path, tmp_path: Path) -> None:
    """Corpus metrics (bleu keeps [references, prediction] per sample) are not per-sample numbers anywhere."""
    broken = copy_folder(folder, tmp_path / "bleu")
    path = samples_file(broken)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row["metrics"] = [*row["metrics"], "bleu"]
        row["bleu"] = [[row["target"]], row["filtered_resps"][0]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    task = read_lmeval_folder(broken).tasks["gsm8k"]
    assert task.corrupt == []
    assert all("bleu" not in s.scores["strict-match"] for s in task.samples)


def test_identical_duplicate_lines_collapse_and_are_counted(folder: Path, tmp_path: Path) -> None:
    dup = copy_folder(folder, tmp_path / "dup")
    append_first_lines(dup, 20)
    clean = read_lmeval_folder(folder).tasks["gsm8k"]
    task = read_lmeval_folder(dup).tasks["gsm8k"]
    assert task.duplicate_lines == 20 and task.corrupt == []
    assert [s.model_dump() for s in task.samples] == [s.model_dump() for s in clean.samples]


@pytest.mark.parametrize(("field", "change", "shown"), [
    ("exact_match", lambda row: row.update(exact_match=1.0 - row["exact_match"]), "exact_match"),
    ("resps", lambda row: row.update(resps=[["something else #### 7"]]), "response"),
    ("filtered_resps", lambda row: row.update(filtered_resps=["7"]), "filtered answer"),
])
def test_conflicting_duplicate_names_both_lines(folder: Path, tmp_path: Path, field: str, change: object,
                                                shown: str) -> None:
    conflict = copy_folder(folder, tmp_path / "conflict")
    lines = append_first_lines(conflict, 3, change)  # type: ignore[arg-type]
    path = samples_file(conflict)
    with pytest.raises(InputError) as info:
        read_lmeval_folder(conflict)
    first, again = lines[0]
    assert info.value.line == again and str(path) == str(info.value.file)
    assert f"{path}:{first} and {path}:{again}" in info.value.message
    assert "doc 0, filter strict-match" in info.value.message and shown in info.value.message


def test_every_harness_goes_through_the_same_quarantine() -> None:
    """read_results' post-pass moves NaN / inf out of any adapter's samples into the task's corrupt list."""
    samples = [SampleRecord(doc_id=i, doc_hash=str(i), scores={"none": {"score": v}})
               for i, v in enumerate([1.0, math.nan, math.inf, 0.5])]
    run = RunResult(provenance=RunProvenance(source="x"), tasks={"t": TaskResult(task="t", samples=samples)})
    quarantine(run)
    task = run.tasks["t"]
    assert [(c.doc_id, c.problem, c.value) for c in task.corrupt] == [(1, "non_finite", "NaN"),
                                                                      (2, "non_finite", "Infinity")]
    assert [s.scores["none"].get("score") for s in task.samples] == [1.0, None, None, 0.5]


@pytest.mark.parametrize("value", [math.nan, math.inf, "1.0", None, [1.0, math.nan], [1.0, 0.0], []])
def test_lmeval_reads_leave_nothing_for_quarantine(folder: Path, tmp_path: Path, value: object) -> None:
    """lm_eval declares `scores_checked`, so read_results skips its quarantine pass: that is only sound while
    the reader (with the metrics it derives) leaves no unusable score behind, which this checks."""
    from rlgate.harness import get_harness

    assert getattr(get_harness("lm_eval"), "scores_checked", False)
    broken = copy_folder(folder, tmp_path / "q")
    set_score(broken, [2, 7], value)
    run = read_results(broken)
    again = quarantine(run.model_copy(deep=True))
    assert again == run and again.tasks["gsm8k"].corrupt == run.tasks["gsm8k"].corrupt


def test_read_results_quarantines(folder: Path, tmp_path: Path) -> None:
    broken = copy_folder(folder, tmp_path / "rr")
    set_score(broken, [1], math.nan, filters=["flexible-extract"])
    task = read_results(broken).tasks["gsm8k"]
    assert [(c.doc_id, c.filter) for c in task.corrupt] == [(1, "flexible-extract")]


def test_classify_and_sample_lines(tmp_path: Path) -> None:
    assert classify(True) == (1.0, None) and classify([1, 0]) == ([1.0, 0.0], None)
    assert classify(10**400) == (None, "non_finite") and classify("x") == (None, "wrong_type")
    rows = [{"id": 0, "f": "none", "score": math.nan}, {"id": 0, "f": "none", "score": math.nan},
            {"id": 0, "f": "other", "score": 1.0}, {"id": 0, "f": "other", "score": 0.0}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = SampleLines(path, fix="f", fields=lambda row: {"score": row["score"]})
    assert lines.first(0, "none", 1, rows[0])
    assert not lines.first(0, "none", 2, rows[1])  # NaN equals NaN for a repeat
    assert lines.first(0, "other", 3, rows[2]) and lines.collapsed == 1
    with pytest.raises(InputError, match=r"s\.jsonl:3 and .*s\.jsonl:4 disagree \(score 1\.0 vs 0\.0\)"):
        lines.first(0, "other", 4, rows[3])
