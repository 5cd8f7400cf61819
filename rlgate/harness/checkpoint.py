"""Checkpoint checks that run before any model time is spent, and checkpoint fingerprints.

A wrong path, a LoRA adapter passed as a model, a tokenizer config vLLM cannot read, or missing
weights should cost a second, not a GPU allocation. The fingerprint (content hashes of weights,
config and tokenizer files) keys the generation cache, so a re-saved identical checkpoint reuses
its answers and a changed one never does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rlgate._core.errors import InputError

if TYPE_CHECKING:  # annotations only: importing the cache module (dataclasses, ~1 ms) is for runs that generate
    from rlgate.store.cache import GenerationCache

WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin", "*.pt", "*.pth", "*.gguf")
INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
#: Files besides weights that change what the model generates: config, tokenizer (fast and slow),
#: chat templates, a VLM's image processor (processor_config.json nests it in transformers 5).
BEHAVIOUR_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json", "tokenizer.model", "vocab.json", "merges.txt", "chat_template.jinja",
                   "chat_template.json", "adapter_config.json", "added_tokens.json", "vocab.txt", "spiece.model",
                   "sentencepiece.bpe.model", "preprocessor_config.json", "processor_config.json",
                   "video_preprocessor_config.json")
#: Behaviour files by pattern: remote code (trust_remote_code) and named chat templates.
BEHAVIOUR_GLOBS = ("*.py", "additional_chat_templates/*.jinja")
#: inspect's scripted mock model (e.g. `mockllm/toolbox-baseline`): no weights to check
SCRIPTED_PREFIX = "mockllm/"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
MERGE_FIX = ("merge it first: PeftModel.from_pretrained(base, adapter).merge_and_unload(), then "
             "save_pretrained(DIR) to save the full model; or evaluate the adapter with --lora-base BASE")


@dataclass
class CheckpointInfo:
    """A checked checkpoint: what to load, its fingerprint, and what rlgate changed or noticed."""

    source: str
    kind: Literal["local", "served"]
    load_path: str
    fingerprint: str
    weights_hash: str | None
    lora_base: str | None = None
    notes: list[str] = field(default_factory=list)
    #: a GGUF checkpoint: the file's name inside `load_path` (lm-eval/transformers' `gguf_file`)
    gguf_file: str | None = None


def _sha256_file(path: Path, cache: GenerationCache | None) -> str:
    stat = path.stat()
    if cache is not None:
        known = cache.file_digest(path.resolve(), stat)
        if known:
            return known
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    value = digest.hexdigest()
    if cache is not None:
        cache.remember_digest(path.resolve(), stat, value)
    return value


def _weight_files(folder: Path) -> list[Path]:
    found: set[Path] = set()
    for pattern in WEIGHT_PATTERNS:
        found.update(p for p in folder.glob(pattern) if p.is_file())
    return sorted(found)


def _check_index(folder: Path) -> None:
    for name in INDEX_FILES:
        index = folder / name
        if not index.is_file():
            continue
        try:
            shards = set(json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values())
        except ValueError as exc:
            raise InputError(f"{name} is not valid JSON ({exc})", file=index,
                             fix="re-save the checkpoint with save_pretrained") from None
        missing = sorted(s for s in shards if not (folder / s).is_file())
        if missing:
            raise InputError(f"the checkpoint's {name} lists {len(missing)} weight shard(s) that are missing: "
                             f"{', '.join(missing[:3])}", file=index, fix="copy every shard into the folder")


def _digest_folder(folder: Path, names: list[Path], cache: GenerationCache | None) -> str:
    digest = hashlib.sha256()
    for path in names:
        # the name's own bytes: a name that is not UTF-8 (lone surrogates in Python) cannot be encoded as text
        name = os.fsencode(path.relative_to(folder).as_posix())
        digest.update(name + f"\0{_sha256_file(path, cache)}\n".encode())
    return digest.hexdigest()


def _fixed_tokenizer_copy(folder: Path, work_dir: Path, fingerprint: str) -> tuple[Path, str] | None:
    """A copy whose tokenizer_config.json has `extra_special_tokens` as older readers expect, or None.

    transformers 5 writes the list form; vLLM and transformers 4 expect a mapping and crash on a
    list. The list moves to `additional_special_tokens`, which every version reads.
    """
    config_path = folder / "tokenizer_config.json"
    if not config_path.is_file():
        return None
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"tokenizer_config.json is not valid JSON ({exc})", file=config_path,
                         fix="re-save the tokenizer with save_pretrained") from None
    extra = config.get("extra_special_tokens")
    if not isinstance(extra, list):
        return None
    copy = work_dir / "fixed-checkpoints" / fingerprint[:16]
    if copy.exists():
        shutil.rmtree(copy)
    copy.mkdir(parents=True)
    for item in folder.iterdir():
        if item.name == "tokenizer_config.json":
            continue
        target = copy / item.name
        try:
            os.symlink(item.resolve(), target)
        except OSError:
            (shutil.copytree if item.is_dir() else shutil.copy2)(item, target)
    merged = list(config.get("additional_special_tokens") or [])
    merged += [t for t in extra if t not in merged]
    fixed = {k: v for k, v in config.items() if k != "extra_special_tokens"}
    if merged:
        fixed["additional_special_tokens"] = merged
    (copy / "tokenizer_config.json").write_text(json.dumps(fixed, indent=2, ensure_ascii=False), encoding="utf-8")
    note = (f"tokenizer_config.json has extra_special_tokens as a list ({len(extra)} token(s)), which vLLM and "
            f"transformers<5 cannot read; evaluated a copy with them under additional_special_tokens: {copy}")
    return copy, note


def check_local(folder: Path, *, source: str, lora_base: str | None, cache: GenerationCache | None,
                work_dir: Path, base_info: CheckpointInfo | None = None) -> CheckpointInfo:
    """All checks on a local checkpoint folder; raises InputError naming the problem and the fix."""
    if not folder.is_dir():
        raise InputError(f"checkpoint '{source}' is a file, not a folder (nor a .gguf file)", file=folder,
                         fix="pass the folder save_pretrained wrote (config.json, weights, tokenizer), or a .gguf file")
    is_adapter = (folder / "adapter_config.json").is_file()
    if is_adapter and not lora_base:
        raise InputError(f"checkpoint '{source}' is a LoRA adapter (it has adapter_config.json), not a full model",
                         file=folder / "adapter_config.json", fix=MERGE_FIX)
    if not is_adapter:
        if not (folder / "config.json").is_file():
            raise InputError(f"checkpoint '{source}' has no config.json", file=folder,
                             fix="save the model with save_pretrained, which writes config.json beside the weights")
        _check_index(folder)
    weights = _weight_files(folder)
    if not weights:
        raise InputError(f"checkpoint '{source}' has no weights (no *.safetensors or pytorch_model*.bin)", file=folder,
                         fix="copy the weight files into the folder or point at the folder that has them")
    weights_hash = _digest_folder(folder, weights, cache)
    behaviour = [folder / n for n in BEHAVIOUR_FILES if (folder / n).is_file()]  # this order: older keys still hit
    behaviour += sorted({p for g in BEHAVIOUR_GLOBS for p in folder.glob(g) if p.is_file()} - set(behaviour))
    fingerprint = hashlib.sha256(f"{weights_hash}\n{_digest_folder(folder, behaviour, cache)}".encode()).hexdigest()
    if base_info is not None:
        fingerprint = hashlib.sha256(f"{fingerprint}\nbase:{base_info.fingerprint}".encode()).hexdigest()
    info = CheckpointInfo(source, "local", str(folder), fingerprint, weights_hash,
                          lora_base=base_info.load_path if base_info else None)
    if base_info is not None:
        info.notes += base_info.notes
    fixed = _fixed_tokenizer_copy(folder, work_dir, fingerprint)
    if fixed:
        info.load_path, note = str(fixed[0]), fixed[1]
        info.notes.append(note)
    return info


def check_gguf(file: Path, *, source: str, lora_base: str | None, cache: GenerationCache | None,
               chat_template: bool) -> CheckpointInfo:
    """A GGUF file: header, architecture and tokenizer checked; fingerprinted by the file's content.

    The file holds weights, tokenizer and chat template, so its hash is the whole fingerprint.
    """
    from rlgate.harness import gguf

    if lora_base:
        raise InputError(f"checkpoint '{source}' is a GGUF file; --lora-base applies to a LoRA adapter folder",
                         file=file, fix="drop --lora-base, or merge the adapter into the model and convert that")
    gguf.check_magic(file)
    gguf.require_gguf_package(file)
    weights_hash = _sha256_file(file, cache)
    kind = gguf.inspection_kind()
    stored = cache.file_fact(weights_hash, kind) if cache is not None else None
    if stored is not None:
        info = gguf.info_from_json(stored, file)
    else:
        info = gguf.inspect_gguf(file)
        if cache is not None:
            cache.remember_fact(weights_hash, kind, gguf.info_to_json(info))
    if chat_template and info.chat_template is None:
        raise InputError(f"the contract applies a chat template (protocol.chat_template: true), and '{file.name}' "
                         "carries none (no tokenizer.chat_template)", file=file, field="protocol.chat_template",
                         fix="set protocol.chat_template: false, or convert the model with its chat template")
    fingerprint = hashlib.sha256(f"gguf\n{weights_hash}".encode()).hexdigest()
    return CheckpointInfo(source, "local", str(file.parent), fingerprint, weights_hash, notes=list(info.notes),
                          gguf_file=file.name)


def _hub_offline() -> bool:
    flags = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes") for v in flags)


def check_hub(repo_id: str, *, lora_base: str | None, cache: GenerationCache | None, work_dir: Path) -> CheckpointInfo:
    """A Hugging Face id: checked from the local HF cache when there, else asked of the Hub."""
    try:
        from huggingface_hub import HfApi, snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError, RepositoryNotFoundError
    except ImportError:  # pragma: no cover - huggingface_hub comes with the hf extra
        raise InputError(f"checkpoint '{repo_id}' is not a local folder", fix="pass a local path") from None
    try:
        local = snapshot_download(repo_id, local_files_only=True)
        return check_local(Path(local), source=repo_id, lora_base=lora_base, cache=cache, work_dir=work_dir)
    except (LocalEntryNotFoundError, FileNotFoundError, OSError):
        pass
    if _hub_offline():
        raise InputError(f"checkpoint '{repo_id}' is neither a local folder nor in the Hugging Face cache, and "
                         "HF_HUB_OFFLINE is set",
                         fix="download it first (huggingface-cli download) or pass a local path")
    try:
        info = HfApi().model_info(repo_id, timeout=15)
    except RepositoryNotFoundError:
        raise InputError(f"checkpoint '{repo_id}' is not a local folder and the Hugging Face Hub has no such model",
                         fix="check the path or the model id") from None
    except Exception as exc:  # network errors of every kind
        raise InputError(f"checkpoint '{repo_id}' is not a local folder or in the HF cache, and the Hub could not be "
                         f"reached ({type(exc).__name__})",
                         fix="pass a local path, or download the model first") from None
    # Download the revision asked about now and gate that folder: handing lm-eval the bare id would let it fetch
    # whatever the repository holds when it loads, which a push in between makes another model.
    try:
        local = snapshot_download(repo_id, revision=info.sha, ignore_patterns=_hub_ignore_patterns(info))
    except Exception as exc:  # network, disk, gated repositories
        raise InputError(f"checkpoint '{repo_id}' could not be downloaded from the Hugging Face Hub "
                         f"({type(exc).__name__}: {str(exc)[:200]})",
                         fix="download it first (huggingface-cli download) and pass the folder, or set HF_TOKEN "
                             "for a gated model") from None
    return check_local(Path(local), source=repo_id, lora_base=lora_base, cache=cache, work_dir=work_dir)


def _hub_ignore_patterns(info: object) -> list[str]:
    """Files transformers does not load: other formats' weights, and `.bin` where safetensors exist."""
    names = [str(getattr(s, "rfilename", "")) for s in getattr(info, "siblings", None) or []]
    ignore = ["*.onnx", "*.onnx_data", "onnx/*", "*.gguf", "*.h5", "*.msgpack", "*.ot", "*.tflite", "*.mlmodel",
              "coreml/*", "openvino/*", "original/*"]
    if any(name.endswith(".safetensors") for name in names):
        ignore += ["*.bin", "*.pt", "*.pth"]
    return ignore


def inspect_checkpoint(ref: str, *, backend: str, lora_base: str | None = None, cache: GenerationCache | None = None,
                       work_dir: Path, served_url: str | None = None, chat_template: bool = False,
                       served_model: str | None = None) -> CheckpointInfo:
    """Check a checkpoint reference (local folder, GGUF file, HF id, or a served model name) and fingerprint it.

    `served_model`: the name the openai backend asks the server for when it is not `ref`
    (protocol.openai.model)."""
    from rlgate.harness.gguf import resolve_gguf

    path = Path(ref).expanduser()
    gguf = resolve_gguf(path.resolve()) if path.exists() else None
    if gguf is not None:
        return check_gguf(gguf, source=ref, lora_base=lora_base, cache=cache, chat_template=chat_template)
    base_info = None
    if lora_base:
        base_info = inspect_checkpoint(lora_base, backend=backend, cache=cache, work_dir=work_dir)
    if path.exists():
        return check_local(path.resolve(), source=ref, lora_base=lora_base, cache=cache, work_dir=work_dir,
                           base_info=base_info)
    if ref.startswith(SCRIPTED_PREFIX):
        digest = hashlib.sha256(ref.encode()).hexdigest()
        return CheckpointInfo(ref, "served", ref, f"scripted:{digest}", None, notes=[
            f"'{ref}' is a scripted inspect mockllm policy (tests and demos), not a model"])
    if backend == "openai":
        asked = f"{served_url}\n{ref}" + (f"\nmodel={served_model}" if served_model and served_model != ref else "")
        digest = hashlib.sha256(asked.encode()).hexdigest()
        return CheckpointInfo(ref, "served", ref, f"served:{digest}", None, notes=[
            f"'{ref}' is a served model name: rlgate cannot hash its weights, so cached answers are keyed by the "
            "server URL and model name; clear the cache if the server's model changes under the same name"])
    if _HUB_ID.match(ref) and not ref.startswith((".", "/", "~")):
        return check_hub(ref, lora_base=lora_base, cache=cache, work_dir=work_dir)
    raise InputError(f"checkpoint '{ref}' does not exist", file=str(path.resolve()),
                     fix="pass the folder save_pretrained wrote, or a Hugging Face model id such as org/name")
