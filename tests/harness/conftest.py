"""Helpers for runner tests: contracts over local data written into a temporary folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from fixtures.real_model import require_real_gguf

ContractFactory = Callable[..., Path]


@pytest.fixture
def write_contract(tmp_path: Path) -> ContractFactory:
    """Write contract.yaml + suite.yaml; `tasks` are suite entries, `protocol` overrides the protocol."""

    def make(tasks: list[dict[str, object]], protocol: dict[str, object] | None = None,
             baseline: str = "baseline-not-used", gates: dict[str, object] | None = None,
             splits: dict[str, object] | None = None, folder: Path | None = None) -> Path:
        root = folder or tmp_path
        root.mkdir(parents=True, exist_ok=True)
        suite = {"schema_version": 1, "name": "test_suite", "tasks": tasks}
        (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
        first = str(tasks[0]["task"])
        metric = {"gsm8k": "gsm8k/exact_match/flexible-extract", "mmlu_pro": "mmlu_pro/exact_match/custom-extract",
                  "ifeval": "ifeval/prompt_level_strict_acc"}.get(first, f"{first}/exact_match")
        contract = {
            "schema_version": 1, "name": "test_contract", "baseline": {"checkpoint": baseline},
            "protocol": {"backend": "hf", "sampling": {"temperature": 0.0, "max_tokens": 16},
                         "hf": {"device": "cpu", "dtype": "float32", "batch_size": 4}, **(protocol or {})},
            "splits": splits or {"test_public": {"visibility": "nightly"},
                                 "private": {"visibility": "release_gate_only"}},
            "suites": ["suite.yaml"],
            "gates": gates or {"primary": {"metric": metric, "min_delta": 0.0}},
        }
        (root / "contract.yaml").write_text(yaml.safe_dump(contract, sort_keys=False))
        return root / "contract.yaml"

    return make


@pytest.fixture(scope="session")
def smollm2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2 dequantised once per session: each copy is half a gigabyte of float32 weights."""
    from rlgate.harness.gguf import gguf_to_folder

    return gguf_to_folder(require_real_gguf(), tmp_path_factory.mktemp("smollm2") / "model")
