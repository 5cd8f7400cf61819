"""Checkpoint checks that run before any model time, and fingerprints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.checkpoint import inspect_checkpoint
from rlgate.store.cache import GenerationCache


def fake_checkpoint(folder: Path, weights: bytes = b"weights-1", tokenizer: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "num_attention_heads": 4}))
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer or {"eos_token": "</s>"}))
    return folder


def inspect(ref: str | Path, tmp_path: Path, **kwargs: object) -> object:
    return inspect_checkpoint(str(ref), backend=str(kwargs.pop("backend", "hf")), work_dir=tmp_path / "work",
                              **kwargs)  # type: ignore[arg-type]


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist") as err:
        inspect(tmp_path / "nope", tmp_path)
    assert "save_pretrained" in (err.value.fix or "")


def test_hub_id_not_cached_while_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(InputError, match="HF_HUB_OFFLINE") as err:
        inspect("some-org/some-model-that-is-not-cached", tmp_path)
    assert "download" in (err.value.fix or "")


def test_lora_adapter_is_refused_with_the_merge_recipe(tmp_path: Path) -> None:
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "x", "peft_type": "LORA"}))
    (adapter / "adapter_model.safetensors").write_bytes(b"lora")
    with pytest.raises(InputError, match="LoRA adapter") as err:
        inspect(adapter, tmp_path)
    assert "merge_and_unload()" in (err.value.fix or "") and "save the full model" in (err.value.fix or "")
    assert "--lora-base" in (err.value.fix or "")
    base = fake_checkpoint(tmp_path / "base")
    info = inspect(adapter, tmp_path, lora_base=str(base))
    assert info.lora_base == str(base) and info.load_path == str(adapter)  # type: ignore[attr-defined]


def test_missing_config_or_weights(tmp_path: Path) -> None:
    folder = fake_checkpoint(tmp_path / "m")
    (folder / "config.json").unlink()
    with pytest.raises(InputError, match=r"no config\.json"):
        inspect(folder, tmp_path)
    folder = fake_checkpoint(tmp_path / "n")
    (folder / "model.safetensors").unlink()
    with pytest.raises(InputError, match="no weights"):
        inspect(folder, tmp_path)


def test_sharded_checkpoint_with_a_missing_shard(tmp_path: Path) -> None:
    folder = fake_checkpoint(tmp_path / "m")
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    (folder / "model-00001-of-00002.safetensors").write_bytes(b"1")
    with pytest.raises(InputError, match=r"model-00002-of-00002\.safetensors"):
        inspect(folder, tmp_path)


def test_a_file_is_not_a_checkpoint(tmp_path: Path) -> None:
    file = tmp_path / "model.safetensors"
    file.write_bytes(b"x")
    with pytest.raises(InputError, match="is a file"):
        inspect(file, tmp_path)


def test_extra_special_tokens_list_is_fixed_on_a_copy(tmp_path: Path) -> None:
    tok = {"eos_token": "</s>", "extra_special_tokens": ["<tool>", "<think>"], "additional_special_tokens": ["<a>"]}
    folder = fake_checkpoint(tmp_path / "m", tokenizer=tok)
    info = inspect(folder, tmp_path)
    copy = Path(info.load_path)  # type: ignore[attr-defined]
    assert copy != folder and "extra_special_tokens" in info.notes[0]  # type: ignore[attr-defined]
    fixed = json.loads((copy / "tokenizer_config.json").read_text())
    assert "extra_special_tokens" not in fixed
    assert fixed["additional_special_tokens"] == ["<a>", "<tool>", "<think>"]
    assert (copy / "model.safetensors").read_bytes() == b"weights-1"
    assert json.loads((folder / "tokenizer_config.json").read_text()) == tok  # the original is untouched


def test_identical_weights_share_the_weights_hash_and_the_cache_memoises(tmp_path: Path) -> None:
    a = fake_checkpoint(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    (b / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|end|>"}))
    c = fake_checkpoint(tmp_path / "c", weights=b"weights-2")
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        ia, ib, ic = (inspect(x, tmp_path, cache=cache) for x in (a, b, c))
        assert ia.weights_hash == ib.weights_hash != ic.weights_hash  # type: ignore[attr-defined]
        # the tokenizer changes what the model generates, so it is part of the fingerprint
        assert ia.fingerprint != ib.fingerprint  # type: ignore[attr-defined]
        assert cache.file_digest((a / "model.safetensors").resolve(),
                                 (a / "model.safetensors").stat()) is not None
        assert inspect(a, tmp_path, cache=cache).fingerprint == ia.fingerprint  # type: ignore[attr-defined]


def test_served_model_name_for_the_openai_backend(tmp_path: Path) -> None:
    info = inspect("my-served-model", tmp_path, backend="openai", served_url="http://h/v1")
    assert info.kind == "served" and info.fingerprint.startswith("served:")  # type: ignore[attr-defined]
    other = inspect("my-served-model", tmp_path, backend="openai", served_url="http://other/v1")
    assert other.fingerprint != info.fingerprint  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "before", "after"), [
    # a VLM's image processor (transformers 5 nests it in processor_config.json; older saves write
    # preprocessor_config.json): other pixels reach the model, so other answers
    ("processor_config.json", {"image_processor": {"image_mean": [0.5, 0.5, 0.5]}, "patch_size": 8},
     {"image_processor": {"image_mean": [0.0, 0.0, 0.0]}, "patch_size": 8}),
    ("preprocessor_config.json", {"size": {"shortest_edge": 32}}, {"size": {"shortest_edge": 64}}),
    ("added_tokens.json", {"<tool>": 480}, {"<tool>": 481}),
    ("modeling_tiny.py", {"code": "v1"}, {"code": "v2"}),  # remote code run with trust_remote_code
])
def test_a_changed_processor_or_tokenizer_file_changes_the_fingerprint(tmp_path: Path, name: str, before: dict,
                                                                       after: dict) -> None:
    """Same weights, other preprocessing: a cached answer of the old files must not be reused."""
    folder = fake_checkpoint(tmp_path / "ckpt")
    (folder / name).write_text(json.dumps(before))
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        first = inspect(folder, tmp_path, cache=cache)
        (folder / name).write_text(json.dumps(after))
        second = inspect(folder, tmp_path, cache=cache)
    assert first.weights_hash == second.weights_hash  # type: ignore[attr-defined]
    assert first.fingerprint != second.fingerprint  # type: ignore[attr-defined]


def test_weights_replaced_in_place_with_the_old_mtime_are_hashed_again(tmp_path: Path) -> None:
    """Same path, same size, same mtime (`cp -p`, `rsync -a`, `tar x`, a reproducible image build): new weights.

    The memoised digest must not stand in for the new content, or the new checkpoint would be gated
    on the old one's cached answers.
    """
    import os
    import time

    folder = fake_checkpoint(tmp_path / "ckpt", weights=b"weights-1")
    weights = folder / "model.safetensors"
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        first = inspect(folder, tmp_path, cache=cache)
        old = weights.stat()
        time.sleep(0.05)  # past the kernel's timestamp tick, as any real re-save is
        replacement = tmp_path / "new.safetensors"
        replacement.write_bytes(b"weights-2")
        os.utime(replacement, ns=(old.st_atime_ns, old.st_mtime_ns))
        shutil.copy2(replacement, weights)  # cp -p: content and mtime of the source
        assert weights.stat().st_mtime_ns == old.st_mtime_ns and weights.stat().st_size == old.st_size
        second = inspect(folder, tmp_path, cache=cache)
    assert first.weights_hash != second.weights_hash  # type: ignore[attr-defined]
    assert first.fingerprint != second.fingerprint  # type: ignore[attr-defined]


def test_the_served_model_the_contract_names_is_part_of_the_fingerprint(write_contract) -> None:  # type: ignore[no-untyped-def]
    """openai backend: protocol.openai.model is the model the server is asked for; another one, other answers."""
    from rlgate.harness.vocabulary import load_contract
    from rlgate.orchestrate import check_checkpoint

    prints = []
    for model in ("policy-step-100", "policy-step-200", None):
        openai = {"base_url": "http://127.0.0.1:8000/v1", **({"model": model} if model else {})}
        contract = write_contract([{"task": "gsm8k", "split": "test_public"}],
                                  protocol={"backend": "openai", "openai": openai})
        info = check_checkpoint(load_contract(contract), "candidate", cache_dir=contract.parent / "cache")
        prints.append(info.fingerprint)
    assert len(set(prints)) == 3


def _fake_hub(monkeypatch: pytest.MonkeyPatch, folders: dict[str, Path], files: list[str]) -> list[dict[str, object]]:
    """The Hub as `check_hub` sees it: model_info names the current revision; snapshot_download serves folders."""
    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError

    calls: list[dict[str, object]] = []
    current = list(folders)[-1]

    info = SimpleNamespace(sha=current, siblings=[SimpleNamespace(rfilename=name) for name in files])

    def snapshot_download(repo_id: str, **kwargs: object) -> str:
        calls.append({"repo_id": repo_id, **kwargs})
        if kwargs.get("local_files_only"):
            raise LocalEntryNotFoundError("not cached")
        return str(folders[str(kwargs["revision"])])

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, repo_id, timeout=None: info)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    return calls


def test_a_hub_id_is_gated_on_the_revision_it_was_fingerprinted_at(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    old = fake_checkpoint(tmp_path / "rev-old", weights=b"old")
    new = fake_checkpoint(tmp_path / "rev-new", weights=b"new")
    calls = _fake_hub(monkeypatch, {"old": old, "new": new}, ["model.safetensors", "pytorch_model.bin"])
    info = inspect("org/model", tmp_path)
    # lm-eval loads the downloaded folder of the revision fingerprinted, never the bare id (which a push between
    # the check and the load would turn into another model)
    assert info.kind == "local" and info.load_path == str(new)  # type: ignore[attr-defined]
    assert info.source == "org/model"  # type: ignore[attr-defined]
    assert info.fingerprint == inspect(new, tmp_path).fingerprint  # type: ignore[attr-defined]
    assert calls[-1]["revision"] == "new"
    assert "*.bin" in calls[-1]["ignore_patterns"] and "*.gguf" in calls[-1]["ignore_patterns"]  # type: ignore[operator]


def test_a_hub_model_with_only_bin_weights_downloads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_hub(monkeypatch, {"r1": fake_checkpoint(tmp_path / "r1")}, ["pytorch_model.bin", "config.json"])
    inspect("org/model", tmp_path)
    assert "*.bin" not in calls[-1]["ignore_patterns"]  # type: ignore[operator]


def test_a_failed_hub_download_is_one_located_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    _fake_hub(monkeypatch, {"r1": tmp_path / "unused"}, [])

    def refuse(repo_id: str, **kwargs: object) -> str:
        if kwargs.get("local_files_only"):
            raise FileNotFoundError(repo_id)
        raise PermissionError("401 Client Error: gated repository")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", refuse)
    with pytest.raises(InputError, match=r"could not be downloaded.*gated repository") as err:
        inspect("org/model", tmp_path)
    assert "HF_TOKEN" in (err.value.fix or "")


def test_a_weights_file_named_with_non_utf8_bytes_is_hashed(tmp_path: Path) -> None:
    """A file name of bytes that are not UTF-8 is held by Python as lone surrogates: hashing its name crashed with
    UnicodeEncodeError before any model time. Ordinary names hash as before (their UTF-8 bytes)."""
    import hashlib
    import os

    plain = fake_checkpoint(tmp_path / "plain")
    content = hashlib.sha256(b"weights-1").hexdigest()
    expected = hashlib.sha256(f"model.safetensors\0{content}\n".encode()).hexdigest()
    assert inspect(plain, tmp_path).weights_hash == expected  # type: ignore[attr-defined]
    odd = fake_checkpoint(tmp_path / "odd")
    (odd / os.fsdecode(b"model-00002-\xff.safetensors")).write_bytes(b"more weights")
    assert inspect(odd, tmp_path).weights_hash not in (None, expected)  # type: ignore[attr-defined]
