"""GGUF checkpoint checks on small GGUF files written with gguf's own writer (no model time)."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pytest

from rlgate._core.errors import InputError, MissingExtraError
from rlgate.harness.checkpoint import inspect_checkpoint
from rlgate.harness.lmeval.backends import model_spec

gguf = pytest.importorskip("gguf")
pytest.importorskip("transformers")
TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"


def write_gguf(path: Path, arch: str = "llama", tokens: bool = True, template: str | None = TEMPLATE,
               weights: float = 1.0) -> Path:
    """A GGUF with the header fields rlgate checks and one small tensor."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name("tiny test model")
    writer.add_file_type(0)
    if tokens:
        writer.add_tokenizer_model("gpt2")
        writer.add_token_list(["<s>", "</s>", "a", "b"])
    if template:
        writer.add_chat_template(template)
    writer.add_tensor("token_embd.weight", np.full((4, 8), weights, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def inspect(ref: Path, tmp_path: Path, **kwargs: Any) -> Any:
    return inspect_checkpoint(str(ref), backend=kwargs.pop("backend", "hf"), work_dir=tmp_path / "work", **kwargs)


def test_a_gguf_file_is_checked_and_loaded_as_folder_plus_gguf_file(tmp_path: Path) -> None:
    file = write_gguf(tmp_path / "m" / "model.Q4.gguf")
    info = inspect(file, tmp_path, chat_template=True)
    assert info.kind == "local" and info.load_path == str(file.parent) and info.gguf_file == "model.Q4.gguf"
    assert info.weights_hash and info.fingerprint != info.weights_hash
    assert any("llama" in n and "4 tokens" in n for n in info.notes)
    folder_info = inspect(file.parent, tmp_path)  # a folder holding one GGUF and no config.json
    assert folder_info.gguf_file == info.gguf_file and folder_info.fingerprint == info.fingerprint
    from rlgate.contract.models import Protocol

    name, args = model_spec(Protocol(), info.load_path, gguf_file=info.gguf_file)
    assert name == "hf" and args["pretrained"] == str(file.parent) and args["gguf_file"] == "model.Q4.gguf"
    changed = write_gguf(tmp_path / "n" / "model.Q4.gguf", weights=2.0)
    assert inspect(changed, tmp_path).fingerprint != info.fingerprint


def test_vllm_gets_the_file_path(tmp_path: Path) -> None:
    from rlgate.contract.models import Protocol

    _, args = model_spec(Protocol(backend="vllm"), str(tmp_path), gguf_file="m.gguf", )
    assert args["pretrained"] == str(tmp_path / "m.gguf")


def test_not_a_gguf_and_a_truncated_one(tmp_path: Path) -> None:
    bad = tmp_path / "weights.gguf"
    bad.write_bytes(b"PK\x03\x04 not gguf")
    with pytest.raises(InputError, match="not a GGUF file") as err:
        inspect(bad, tmp_path)
    assert err.value.file == bad.resolve()
    good = write_gguf(tmp_path / "ok" / "m.gguf")
    cut = tmp_path / "cut" / "m.gguf"
    cut.parent.mkdir()
    cut.write_bytes(good.read_bytes()[:60])
    with pytest.raises(InputError, match="cannot be read") as err:
        inspect(cut, tmp_path)
    assert "truncated" in (err.value.fix or "")


def test_unknown_architecture_and_missing_tokenizer(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="architecture 'not-a-real-arch'") as err:
        inspect(write_gguf(tmp_path / "a" / "m.gguf", arch="not-a-real-arch"), tmp_path)
    assert err.value.field == "general.architecture" and "safetensors" in (err.value.fix or "")
    with pytest.raises(InputError, match="no tokenizer") as err:
        inspect(write_gguf(tmp_path / "b" / "m.gguf", tokens=False), tmp_path)
    assert err.value.field == "tokenizer.ggml.tokens"


def test_chat_template_required_by_the_contract(tmp_path: Path) -> None:
    file = write_gguf(tmp_path / "m.gguf", template=None)
    info = inspect(file, tmp_path)  # fine without a chat template in the protocol
    assert any("no chat template" in n for n in info.notes)
    with pytest.raises(InputError, match="carries none") as err:
        inspect(file, tmp_path, chat_template=True)
    assert err.value.field == "protocol.chat_template"


def test_a_folder_with_two_ggufs_and_lora_base(tmp_path: Path) -> None:
    write_gguf(tmp_path / "f" / "a.gguf")
    write_gguf(tmp_path / "f" / "b.gguf")
    with pytest.raises(InputError, match="2 GGUF files") as err:
        inspect(tmp_path / "f", tmp_path)
    assert "--checkpoint" in (err.value.fix or "")
    with pytest.raises(InputError, match="--lora-base"):
        inspect(tmp_path / "f" / "a.gguf", tmp_path, lora_base=str(tmp_path / "f" / "b.gguf"))


def test_missing_gguf_package_is_an_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = write_gguf(tmp_path / "m.gguf")
    real_import = builtins.__import__

    def no_gguf(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "gguf" or name.startswith("gguf."):
            raise ImportError("No module named 'gguf'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_gguf)
    with pytest.raises(MissingExtraError) as err:
        inspect(file, tmp_path)
    assert "rl-release-gate[gguf]" in (err.value.fix or "") and err.value.file == file.resolve()


def test_cli_exit_2_without_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a user sees it: one message with the install hint, exit 2, no traceback."""
    import sys

    from typer.testing import CliRunner

    from rlgate.cli.app import app

    file = write_gguf(tmp_path / "m.gguf")
    contract = tmp_path / "contract.yaml"
    (tmp_path / "suite.yaml").write_text("schema_version: 1\nname: s\ntasks:\n  - {task: gsm8k, split: s}\n")
    contract.write_text("schema_version: 1\nname: c\nbaseline: {checkpoint: x}\nsplits: {s: {visibility: nightly}}\n"
                        "suites: [suite.yaml]\ngates: {primary: {metric: gsm8k/exact_match/flexible-extract}}\n")
    monkeypatch.setitem(sys.modules, "gguf", None)  # import gguf -> ImportError
    result = CliRunner().invoke(app, ["eval", str(contract), "--checkpoint", str(file), "--out", str(tmp_path / "o"),
                                      "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 2, result.output
    assert "rl-release-gate[gguf]" in result.output and "Traceback" not in result.output


def test_the_inspection_is_stored_once_per_file_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second check of the same content (any path) reads the stored inspection instead of parsing the file."""
    from rlgate.harness import gguf as checks
    from rlgate.store.cache import GenerationCache

    first = write_gguf(tmp_path / "a" / "model.gguf")
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        info = inspect(first, tmp_path, cache=cache, chat_template=True)
        copy = tmp_path / "b" / "renamed.gguf"
        copy.parent.mkdir()
        copy.write_bytes(first.read_bytes())

        def no_parse(path: Path) -> Any:
            raise AssertionError(f"{path} parsed again")

        monkeypatch.setattr(checks, "inspect_gguf", no_parse)
        again = inspect(copy, tmp_path, cache=cache, chat_template=True)
        assert again.fingerprint == info.fingerprint and again.gguf_file == "renamed.gguf"
        assert any("renamed.gguf" in note and "4 tokens" in note for note in again.notes), again.notes
        changed = write_gguf(tmp_path / "c" / "model.gguf", weights=2.0)  # other content: inspected, not reused
        with pytest.raises(AssertionError, match="parsed again"):
            inspect(changed, tmp_path, cache=cache)
