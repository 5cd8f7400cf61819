"""Shared test fixtures: where the real public data lives, and the repository root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data_dir() -> Path | None:
    env = os.environ.get("RLGATE_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "data")
    return next((c for c in candidates if (c / "README.md").exists()), None)


@pytest.fixture(autouse=True)
def _history_outside_the_source_tree(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gating a fixture contract records the checkpoint; keep each test's history out of the checkout."""
    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path_factory.mktemp("history") / "history.sqlite"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data` (real public data); tests using it skip cleanly where it is absent."""
    found = _shared_data_dir()
    if found is None:
        pytest.skip("shared data (../shared/data) is not available")
    return found


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny local checkpoint (BPE tokenizer trained with `tokenizers`, small Llama), built once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from rlgate.demo.model import build_tiny_checkpoint

    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "checkpoint")


from fixtures.postgres import pg_server, pg_url  # noqa: E402,F401  (a real PostgreSQL server for history tests)
