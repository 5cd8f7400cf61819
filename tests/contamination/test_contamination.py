"""Contamination: hashed 13-grams, streaming scan, planted GSM8K overlap found, clean data reported as it is."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.contamination.index import EvalIndex, check_contamination, contamination_gates
from rlgate.contamination.ngrams import NgramHasher
from rlgate.contamination.sources import EvalDoc, docs_from_data_file
from rlgate.contract.models import GateConfig
from rlgate.engine.decision import decide
from rlgate.results.models import RunProvenance, RunResult

WORDS = [f"w{i}" for i in range(500)]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_hashes_are_position_independent_and_never_span_texts() -> None:
    hasher = NgramHasher(3)
    alone, _ = hasher.hash_texts(["The cat sat"])
    inside, owners = hasher.hash_texts(["zzz   THE cat, sat!", "other text here"])
    assert alone[0] in inside.tolist()
    assert owners.tolist() == [0, 0, 1]  # no n-gram across the two texts
    across, _ = hasher.hash_texts(["x the", "cat sat"])
    assert alone[0] not in across.tolist()
    with_nul, owners = hasher.hash_texts(["the\x00cat sat", "a b c"])
    assert alone[0] in with_nul.tolist() and owners.tolist() == [0, 1]
    assert hasher.tokens("Don't PANIC: 42 café") == ["don", "t", "panic", "42", "café"]
    long_a, _ = hasher.hash_texts(["a" * 40 + "x b c"])
    long_b, _ = hasher.hash_texts(["a" * 40 + "y b c"])
    assert long_a[0] != long_b[0]


def test_synthetic_planted_documents_are_found_with_their_training_line(tmp_path: Path) -> None:
    rng = random.Random(0)
    evals = [EvalDoc("quiz", i, _text(rng, 30)) for i in range(50)]
    rows: list[dict[str, object]] = [{"text": _text(random.Random(1000 + i), 40)} for i in range(3000)]
    planted = {7: 120, 23: 1999, 41: 2999}
    for doc, line in planted.items():
        rows[line] = {"messages": [{"role": "user", "content": "please solve: " + evals[doc].text.upper() + " now"}]}
    train = _write_jsonl(tmp_path / "train.jsonl", rows)
    report = check_contamination(evals, [train], ngram=13)
    [task] = report.tasks
    assert (task.n_docs, task.n_checked, task.n_contaminated) == (50, 50, 3)
    assert {d.doc_id: d.train_line for d in task.documents} == {doc: line + 1 for doc, line in planted.items()}
    assert all(d.overlap == 1.0 and d.ngram and len(d.ngram.split()) == 13 for d in task.documents)
    with_unchecked = check_contamination(evals, [train], ngram=13, tasks=["other"])
    assert with_unchecked.tasks[0].n_contaminated == 3 and with_unchecked.tasks[1].n_docs == 0


def test_chunk_size_does_not_change_the_result(tmp_path: Path) -> None:
    from rlgate.contamination.index import build_report, scan_training_files

    rng = random.Random(5)
    evals = [EvalDoc("quiz", i, _text(rng, 20)) for i in range(20)]
    rows = [{"text": evals[i % 20].text if i % 97 == 0 else _text(rng, 25)} for i in range(2000)]
    train = _write_jsonl(tmp_path / "t.jsonl", rows)
    results = []
    for chunk in (64, 4096, 1 << 22):
        index = EvalIndex(evals, 13)
        stats = scan_training_files(index, [train], chunk_chars=chunk)
        results.append([(d.doc_id, d.train_line, d.matched_ngrams) for d in build_report(index, [train], stats)
                         .tasks[0].documents])
    assert results[0] == results[1] == results[2] and len(results[0]) == 20


def test_file_formats_fields_and_malformed_lines(tmp_path: Path) -> None:
    rng = random.Random(9)
    doc = EvalDoc("quiz", 0, _text(rng, 20))
    plain = tmp_path / "corpus.txt"
    plain.write_text(f"{_text(rng, 30)}\n\n{doc.text}\n", encoding="utf-8")
    packed = tmp_path / "corpus.jsonl.gz"
    with gzip.open(packed, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"prompt": "x", "completion": doc.text}) + "\n{broken\n")
    report = check_contamination([doc], [plain, packed])
    assert report.tasks[0].documents[0].train_line == 3
    assert [f.malformed for f in report.train_files] == [0, 1]
    assert report.train_files[1].first_malformed_line == 2 and "malformed JSON lines" in report.warnings[0]
    only_prompt = check_contamination([doc], [packed], text_field="prompt")
    assert only_prompt.tasks[0].n_contaminated == 0
    with pytest.raises(InputError, match="does not exist"):
        check_contamination([doc], [tmp_path / "missing.jsonl"])


def test_planted_copies_with_other_unicode_forms_are_found(tmp_path: Path) -> None:
    """Scraped or chat-template training text carries no-break spaces, zero-width spaces, full-width letters,
    typographic quotes and accented capitals; a copy of a question in any of these forms is still a copy."""
    question = ("Élodie's café sells 12 croissants an hour; if it opens at 7 and closes at 15, "
                "how many croissants does Élodie's café sell in a day, counting the lunch rush twice?")
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in question)
    forms = {"nbsp": question.replace(" ", "\u00a0"), "zero-width": question.replace(" ", " \u200b"),
             "fullwidth": fullwidth, "curly": question.replace("'", "\u2019"), "upper": question.upper(),
             "soft-hyphen": question.replace("croissants", "crois\u00adsants")}
    doc = EvalDoc("quiz", 0, question)
    for name, text in forms.items():
        train = _write_jsonl(tmp_path / f"{name}.jsonl", [{"text": "unrelated " * 20}, {"text": text}])
        report = check_contamination([doc], [train], ngram=13)
        [found] = report.tasks[0].documents
        assert (found.train_line, found.overlap) == (2, 1.0), name
        assert found.ngram is not None and found.ngram.startswith("élodie s café sells 12")


def test_private_documents_are_listed_by_id_only(tmp_path: Path) -> None:
    rng = random.Random(2)
    doc = EvalDoc("secret", 4, _text(rng, 20), private=True)
    train = _write_jsonl(tmp_path / "t.jsonl", [{"text": doc.text}])
    listed = check_contamination([doc], [train]).tasks[0]
    assert listed.private and listed.documents[0].doc_id == 4 and listed.documents[0].ngram is None
    assert doc.text.split()[0] not in json.dumps(listed.model_dump())


def test_contamination_is_a_hard_gate_when_the_contract_sets_max_rate(tmp_path: Path) -> None:
    rng = random.Random(4)
    docs = [EvalDoc("quiz", i, _text(rng, 20)) for i in range(10)]
    train = _write_jsonl(tmp_path / "t.jsonl", [{"text": docs[0].text}])
    assert contamination_gates(check_contamination(docs, [train])) == []
    report = check_contamination(docs, [train], max_rate=0.0, tasks=["unchecked"])
    quiz, unchecked = contamination_gates(report)
    assert (quiz.verdict, quiz.outcome, quiz.candidate) == ("fail", "hard_fail", 0.1)
    assert unchecked.verdict == "nodata"
    assert contamination_gates(check_contamination(docs, [train], max_rate=0.2))[0].verdict == "pass"
    run = RunResult(provenance=RunProvenance(source="x"))
    decision = decide(GateConfig(), run, run, seed=0, contract_name="c", extra_gates=[quiz])
    assert decision.decision == "block" and decision.deciding_gates == ["quiz contamination"]


def _gsm8k_docs(shared_data: Path) -> list[EvalDoc]:
    return docs_from_data_file("gsm8k", "gsm8k", shared_data / "gsm8k" / "test.jsonl", private=False)


def _gsm8k_train(shared_data: Path) -> list[dict[str, object]]:
    with gzip.open(shared_data / "gsm8k" / "train.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_planted_gsm8k_test_questions_are_found(shared_data: Path, tmp_path: Path) -> None:
    docs = _gsm8k_docs(shared_data)
    rows = _gsm8k_train(shared_data)
    clean = check_contamination(docs, [_write_jsonl(tmp_path / "clean.jsonl", rows)]).tasks[0]
    rng = random.Random(11)
    planted = sorted(rng.sample(range(len(docs)), 60))
    dirty_rows = list(rows)
    for doc_id in planted:
        position = rng.randrange(len(dirty_rows))
        dirty_rows.insert(position, {"question": f"Practice problem. {docs[doc_id].text}", "answer": "#### 0"})
    dirty = check_contamination(docs, [_write_jsonl(tmp_path / "dirty.jsonl", dirty_rows)]).tasks[0]
    found = {d.doc_id for d in dirty.documents}
    assert set(planted) <= found
    assert found - set(planted) <= {d.doc_id for d in clean.documents}
    assert all(d.overlap == 1.0 for d in dirty.documents if d.doc_id in planted)
    assert dirty.rate > 60 / len(docs) - 1e-9


def test_clean_gsm8k_train_vs_test(shared_data: Path, tmp_path: Path) -> None:
    """Clean train vs test: zero contaminated documents; shared template phrases show only as partial.

    At any-shared-13-gram strictness (min_overlap 0) GSM8K itself has a few templated near-duplicates
    between train and test (same question frame, different numbers); each is checked to be a real
    shared 13-gram, and none covers even half of its test question.
    """
    docs = _gsm8k_docs(shared_data)
    rows = _gsm8k_train(shared_data)
    train = _write_jsonl(tmp_path / "clean.jsonl", rows)
    strict = check_contamination(docs, [train], min_overlap=0.6).tasks[0]
    assert strict.n_contaminated == 0 and strict.rate == 0.0
    any_gram = check_contamination(docs, [train]).tasks[0]
    assert any_gram.n_partial == 0 and any_gram.n_contaminated == strict.n_partial
    assert any_gram.n_contaminated <= 5
    hasher = NgramHasher(13)
    for found in any_gram.documents:
        line = rows[found.train_line - 1]
        assert found.ngram and found.ngram in " ".join(hasher.tokens(f"{line['question']} {line['answer']}"))
        assert found.ngram in " ".join(hasher.tokens(docs[found.doc_id].text)) and found.overlap < 0.6
