"""Contamination fails closed: training data that gave nothing to match, or documents too short for one n-gram,
are nodata, never a clean pass."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.contamination.index import check_contamination, contamination_gates
from rlgate.contamination.sources import EvalDoc

WORDS = [f"w{i}" for i in range(500)]


def _docs(n: int = 10, length: int = 20) -> list[EvalDoc]:
    rng = random.Random(7)
    return [EvalDoc("quiz", i, " ".join(rng.choice(WORDS) for _ in range(length))) for i in range(n)]


def _gate(docs: list[EvalDoc], files: list[Path], **kw: object) -> tuple[str, str]:
    report = check_contamination(docs, files, max_rate=0.0, **kw)  # type: ignore[arg-type]
    [gate] = contamination_gates(report)
    return gate.verdict, gate.reason


def test_training_data_that_gave_no_text_is_nodata_not_clean(tmp_path: Path) -> None:
    docs = _docs()
    filler = "".join(json.dumps({"text": " ".join(WORDS[i: i + 30])}) + "\n" for i in range(0, 400, 30))
    good = tmp_path / "good.jsonl"
    good.write_text(filler)
    assert _gate(docs, [good])[0] == "pass"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    malformed = tmp_path / "broken.jsonl"
    malformed.write_text("{not json\n{nor this\n")
    for files, kw in (([empty], {}), ([good, empty], {}), ([malformed], {}), ([good], {"text_field": "content"})):
        verdict, reason = _gate(docs, files, **kw)
        assert verdict == "nodata", (files, kw)
        assert "could not be checked" in reason and str(files[-1]) in reason
    report = check_contamination(docs, [good, empty], max_rate=0.0)
    assert any(str(empty) in w and "nothing was checked" in w for w in report.warnings)


def test_documents_too_short_for_one_ngram_are_nodata(tmp_path: Path) -> None:
    docs = _docs(length=8)
    train = tmp_path / "t.jsonl"
    train.write_text(json.dumps({"text": " ".join(WORDS[:40])}) + "\n")
    verdict, reason = _gate(docs, [train])
    assert verdict == "nodata" and "none of the 10 documents of quiz has 13 tokens" in reason


def test_a_contaminated_task_still_fails_beside_an_unread_file(tmp_path: Path) -> None:
    docs = _docs()
    train = tmp_path / "t.jsonl"
    train.write_text(json.dumps({"text": docs[3].text}) + "\n")
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n")
    assert _gate(docs, [train, empty])[0] == "fail"


def test_a_parquet_training_file_is_refused_not_read_as_text(tmp_path: Path) -> None:
    """verl keeps its training prompts in parquet: read as text, its compressed pages match nothing."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = _docs()
    table = pa.table({"prompt": [docs[2].text] * 50, "data_source": ["quiz"] * 50})
    for name in ("train.parquet", "train.data"):
        pq.write_table(table, tmp_path / name, compression="snappy")
        with pytest.raises(InputError, match="parquet/Arrow training files") as info:
            check_contamination(docs, [tmp_path / name], max_rate=0.0)
        assert info.value.file == str(tmp_path / name) and "JSONL" in (info.value.fix or "")


def test_the_gate_reason_states_the_min_overlap_it_applied(tmp_path: Path) -> None:
    """With min_overlap 0.5, a document sharing one 13-gram is partial, not contaminated; the reason must not say
    that only the counted documents share a 13-gram."""
    docs = _docs(length=40)
    train = tmp_path / "t.jsonl"
    train.write_text(json.dumps({"text": docs[0].text}) + "\n" + json.dumps({"text": docs[1].text[:80]}) + "\n")
    report = check_contamination(docs, [train], max_rate=0.0, min_overlap=0.5)
    [gate] = contamination_gates(report)
    assert (report.tasks[0].n_contaminated, report.tasks[0].n_partial) == (1, 1)
    assert gate.verdict == "fail"
    assert gate.reason.startswith("1 of 10 documents share at least 50% of their 13-grams with the training data")
    assert gate.reason.endswith("; 1 more share some below min_overlap 50%")
