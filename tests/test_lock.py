"""The lock CI checks (`.ci/relock --check` runs `uv lock --check`) agrees with pyproject.toml, and a drift fails it.

A copy of pyproject.toml and uv.lock is checked; the drifted copy is resolved again (uv cache, else the index).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def _uv() -> str:
    found = os.environ.get("RLGATE_UV") or shutil.which("uv")
    if found:
        return found
    if os.environ.get("RLGATE_REQUIRE_UV"):
        pytest.fail("RLGATE_REQUIRE_UV is set but no uv was found (set RLGATE_UV to its path)")
    pytest.skip("uv is not installed (pip install uv==0.13.9, or set RLGATE_UV)")


def _lock_check(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_uv(), "lock", "--check", "--quiet"], cwd=folder, capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.fixture
def project_copy(repo_root: Path, tmp_path: Path) -> Path:
    for name in ("pyproject.toml", "uv.lock"):
        shutil.copy(repo_root / name, tmp_path / name)
    return tmp_path


def test_the_committed_lock_matches_pyproject(project_copy: Path) -> None:
    result = _lock_check(project_copy)
    assert result.returncode == 0, result.stderr


def test_a_dependency_added_without_relocking_fails_the_check(project_copy: Path) -> None:
    pyproject = project_copy / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    assert "\ndependencies = [\n" in text
    pyproject.write_text(text.replace("\ndependencies = [\n", '\ndependencies = [\n  "six>=1.16",\n', 1),
                         encoding="utf-8")
    result = _lock_check(project_copy)
    assert result.returncode != 0
    assert "needs to be updated" in result.stderr
