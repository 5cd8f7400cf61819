"""GGUF checkpoints: checks on the file, its architecture and its tokenizer, before any model time.

A GGUF file carries weights (often quantised), the tokenizer and the chat template in one file.
transformers loads it with `gguf_file=` (the `gguf` package dequantises it), so lm-eval's hf
backend evaluates it as `pretrained=FOLDER, gguf_file=NAME`. What transformers would only find
out after dequantising a few hundred megabytes — a truncated file, an architecture or tokenizer it
cannot convert, a missing `gguf` package — is found here in seconds, and once per file content: the
checkpoint check stores the inspection in the generation cache under the file's sha256.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError, MissingExtraError, install_hint

GGUF_MAGIC = b"GGUF"
#: transformers' own renames of llama.cpp architecture names (modeling_gguf_pytorch_utils.load_gguf_checkpoint).
_ARCH_RENAMES = {"qwen2moe": "qwen2_moe", "qwen3moe": "qwen3_moe", "gpt-oss": "gpt_oss", "minimax-m2": "minimax_m2"}
#: bump when inspect_gguf checks or reports something new: stored inspections of older versions are not reused
INSPECT_VERSION = 1
GGUF_FIX = install_hint("gguf") + " (the gguf package reads and dequantises GGUF files for transformers)"


@dataclass
class GgufInfo:
    """What the file says about itself: enough to check it and to tell the reader what was evaluated."""

    path: Path
    architecture: str
    name: str | None
    file_type: int | None
    tokenizer_model: str
    vocab_size: int
    chat_template: str | None
    tensors: int
    notes: list[str] = field(default_factory=list)


def gguf_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.gguf") if p.is_file())


def require_gguf_package(path: Path) -> None:
    """transformers needs the `gguf` package to load the file: say how to install it, not a traceback."""
    try:
        import gguf  # noqa: F401
    except ImportError:
        raise MissingExtraError(f"checkpoint '{path.name}' is a GGUF file, which needs the Python package 'gguf' "
                                "(not installed)", file=path, fix=GGUF_FIX) from None


def _reader(path: Path) -> Any:
    require_gguf_package(path)
    from gguf import GGUFReader

    try:
        return GGUFReader(str(path))
    except Exception as exc:  # gguf raises ValueError, struct/index/memory errors on damaged files
        raise InputError(f"the GGUF file cannot be read ({type(exc).__name__}: {str(exc)[:200]})", file=path,
                         fix="the file is damaged or truncated: download or convert it again") from None


def _value(reader: Any, key: str) -> Any:
    found = reader.fields.get(key)
    if found is None:
        return None
    contents = found.contents()
    return contents


def _supported_architectures() -> tuple[set[str], set[str]]:
    """(architectures transformers builds a config for, those whose tokenizer it can convert)."""
    try:
        from transformers.integrations.ggml import GGUF_TO_FAST_CONVERTERS
        from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES
    except ImportError:
        raise MissingExtraError.for_extra("a GGUF checkpoint", "hf", "transformers") from None
    return set(GGUF_SUPPORTED_ARCHITECTURES), set(GGUF_TO_FAST_CONVERTERS)


def check_magic(path: Path) -> None:
    """Refuse a file that does not start with GGUF's magic bytes (before reading or hashing it)."""
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise InputError(f"'{path.name}' is not a GGUF file (it starts with {magic!r}, not b'GGUF')", file=path,
                         fix="pass a .gguf file written by llama.cpp's convert script or gguf-py")


def info_to_json(info: GgufInfo) -> str:
    return json.dumps({**asdict(info), "path": str(info.path)})


def info_from_json(text: str, path: Path) -> GgufInfo:
    """A stored inspection of the same content, for the file at `path` (its notes name this file)."""
    data = json.loads(text)
    old_name = Path(data["path"]).name
    notes = [note.replace(old_name, path.name) for note in data.get("notes", [])]
    return GgufInfo(**{**data, "path": path, "notes": notes})


def inspection_kind() -> str:
    """The cache key of an inspection: this check's version and the transformers whose GGUF support it asked."""
    from importlib import metadata

    try:
        transformers = metadata.version("transformers")
    except metadata.PackageNotFoundError:
        transformers = "none"
    return f"gguf-inspect/{INSPECT_VERSION}/transformers-{transformers}"


def inspect_gguf(path: Path) -> GgufInfo:
    """Check a GGUF file (header, architecture, tokenizer); raises InputError naming the problem and the fix."""
    check_magic(path)
    reader = _reader(path)
    arch = _value(reader, "general.architecture")
    if not isinstance(arch, str) or not arch:
        raise InputError("the GGUF file has no general.architecture", file=path,
                         fix="re-convert the model with llama.cpp's convert_hf_to_gguf.py, which writes it")
    name = _value(reader, "general.name")
    mapped = _ARCH_RENAMES.get(arch, arch)
    if mapped == "llama" and isinstance(name, str) and "mistral" in name.lower():
        mapped = "mistral"
    configs, tokenizers = _supported_architectures()
    if mapped not in configs:
        raise InputError(f"the GGUF file's architecture '{arch}' is not one transformers can load from GGUF",
                         file=path, field="general.architecture",
                         fix=f"convert the original model to safetensors instead; transformers' GGUF loader knows: "
                             f"{', '.join(sorted(configs))}")
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    tok_model = _value(reader, "tokenizer.ggml.model")
    if tokens is None or not isinstance(tok_model, str):
        raise InputError("the GGUF file carries no tokenizer (tokenizer.ggml.model / tokenizer.ggml.tokens)",
                         file=path, field="tokenizer.ggml.tokens",
                         fix="re-convert the model with its tokenizer (convert_hf_to_gguf.py writes it)")
    if mapped not in tokenizers:
        raise InputError(f"transformers cannot convert the tokenizer of a GGUF '{arch}' model", file=path,
                         field="tokenizer.ggml.model",
                         fix="evaluate the original safetensors checkpoint, whose tokenizer files load directly")
    template = _value(reader, "tokenizer.chat_template")
    file_type = _value(reader, "general.file_type")
    info = GgufInfo(path=path, architecture=arch, name=name if isinstance(name, str) else None,
                    file_type=int(file_type) if isinstance(file_type, int) else None, tokenizer_model=tok_model,
                    vocab_size=len(tokens.data), chat_template=template if isinstance(template, str) else None,
                    tensors=len(reader.tensors))
    quant = _quant_name(info.file_type)
    info.notes.append(f"GGUF checkpoint {path.name}: {arch}{f' ({info.name})' if info.name else ''}, "
                      f"{info.tensors} tensors{f', {quant}' if quant else ''}, {tok_model} tokenizer of "
                      f"{info.vocab_size} tokens; transformers dequantises the weights on load")
    if info.chat_template is None:
        info.notes.append(f"{path.name} carries no chat template (tokenizer.chat_template): a contract with "
                          "chat_template: true cannot be applied to it")
    return info


def _quant_name(file_type: int | None) -> str | None:
    if file_type is None:
        return None
    try:
        from gguf import LlamaFileType
    except ImportError:  # pragma: no cover - checked by _reader first
        return None
    try:
        return LlamaFileType(file_type).name.removeprefix("MOSTLY_")
    except ValueError:
        return f"file type {file_type}"


def resolve_gguf(path: Path) -> Path | None:
    """The GGUF file a checkpoint reference means (a .gguf file, or a folder holding one and no config.json)."""
    if path.is_file():
        return path if path.suffix.lower() == ".gguf" or _starts_with_magic(path) else None
    if not path.is_dir() or (path / "config.json").is_file():
        return None
    found = gguf_files(path)
    if len(found) > 1:
        raise InputError(f"checkpoint folder '{path}' holds {len(found)} GGUF files "
                         f"({', '.join(p.name for p in found[:4])}) and no config.json", file=path,
                         fix="pass the .gguf file to evaluate itself as --checkpoint")
    return found[0] if found else None


def _starts_with_magic(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == GGUF_MAGIC
    except OSError:
        return False


def gguf_to_folder(file: Path, folder: Path, dtype: str = "float32") -> Path:
    """Dequantise a GGUF into a save_pretrained folder (config with architectures, tokenizer, chat template).

    For the tools that want a folder, not a GGUF: `transformers serve` (its model manager reads
    `config.architectures`, which a GGUF-derived config lacks), TRL, vLLM without a tokenizer flag.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    inspect_gguf(file)
    tokenizer = AutoTokenizer.from_pretrained(str(file.parent), gguf_file=file.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(file.parent), gguf_file=file.name, dtype=getattr(torch, dtype))
    # transformers marks a GGUF-loaded model as quantised (not serialisable); its weights are already
    # dequantised, so a plain model of the same config takes them as they are.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.architectures = [type(loaded).__name__]
    model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
