"""lm-eval asks `git describe` for the working folder; outside a checkout git's "fatal: not a git repository"
must not reach the terminal (it was printed twice on every hf run)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_no_git_message_outside_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capfd: pytest.CaptureFixture[str]) -> None:
    import lm_eval.evaluator

    from rlgate.harness.lmeval.runner import quiet_libraries

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    original = lm_eval.evaluator.get_git_commit_hash
    with quiet_libraries():
        assert lm_eval.evaluator.get_git_commit_hash() is None
    assert lm_eval.evaluator.get_git_commit_hash is original
    assert "fatal" not in capfd.readouterr().err
    original()  # lm-eval's own, for contrast: git prints the message
    assert "not a git repository" in capfd.readouterr().err
