"""The vLLM tests' fixtures: the dequantised SmolLM2 folder and one `vllm serve` per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.vllm_server import VllmServer, engine_env, require_vllm


@pytest.fixture(autouse=True)
def _vllm_present(monkeypatch: pytest.MonkeyPatch) -> None:
    require_vllm()
    for key, value in engine_env().items():
        monkeypatch.setenv(key, value)
    # the in-process engine in this process: no engine-core child (spawned children re-import the test module)
    monkeypatch.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")


@pytest.fixture(scope="session")
def smollm2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder CI's vLLM step serves (RLGATE_SMOLLM2_FOLDER), else SmolLM2 dequantised once per session."""
    given = os.environ.get("RLGATE_SMOLLM2_FOLDER")
    if given and (Path(given) / "config.json").is_file():
        return Path(given)
    require_vllm()
    from fixtures.real_model import require_real_gguf

    from rlgate.harness.gguf import gguf_to_folder

    return gguf_to_folder(require_real_gguf(), tmp_path_factory.mktemp("smollm2") / "model")


@pytest.fixture(scope="session")
def vllm_server(smollm2_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    require_vllm()
    server = VllmServer(smollm2_folder, tmp_path_factory.mktemp("vllm-server") / "server.log").start()
    try:
        yield server
    finally:
        server.stop()
