"""Shared test fixtures: where the real public data lives, and the repository root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENDORED = REPO / "tests" / "fixtures" / "real"
def _shared_data_dir() -> Path | None:
    env = os.environ.get("RLGATE_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "data")
    return next((c for c in candidates if (c / "README.md").exists()), None)


@pytest.fixture(autouse=True)
def _history_outside_the_source_tree(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gating a fixture contract records the checkpoint; keep each test's history out of the checkout."""
    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path_factory.mktemp("history") / "history.sqlite"))
    # and no document list cached on this machine decides a test's coverage (tests that want one set their own)
    monkeypatch.setenv("RLGATE_DOCLISTS", str(tmp_path_factory.getbasetemp() / "no-doclists"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Real public data: `../shared/data` where present, else the vendored permissive subset.

    Files kept by reference only (see tests/fixtures/real/README.md) are reached through
    `fixtures.real_data.require_by_reference`, which skips with the reason when they are absent.
    """
    return _shared_data_dir() or VENDORED


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny local checkpoint (BPE tokenizer trained with `tokenizers`, small Llama), built once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from rlgate.demo.model import build_tiny_checkpoint

    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "checkpoint")


from fixtures.postgres import pg_server, pg_url  # noqa: E402,F401  (a real PostgreSQL server for history tests)
