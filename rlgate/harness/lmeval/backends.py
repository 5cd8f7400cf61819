"""The contract's protocol mapped onto lm-eval: model names, model_args, generation kwargs, hashes.

Pure functions over the contract models (no lm-eval, torch or vllm import), so the mapping is
testable on any machine and `import rlgate` stays fast. Only `visible_gpu_count` may import torch,
and only when `CUDA_VISIBLE_DEVICES` does not already say how many GPUs there are.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.contract.models import Protocol

#: lm-eval model names per backend.
LMEVAL_MODEL = {"hf": "hf", "vllm": "vllm", "openai": "local-completions", "openai-chat": "local-chat-completions",
                "hf-multimodal": "hf-multimodal", "vllm-vlm": "vllm-vlm"}
#: requests the runner hands the vllm backend per call; also its batch_size (see vllm_model_args)
VLLM_CHUNK = 512


def canonical_json(value: Any) -> str:
    """Stable JSON for hashing: sorted keys, no whitespace, non-JSON values as strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def protocol_fields(protocol: Protocol) -> dict[str, Any]:
    """The settings that change what a model generates (not how fast): what the protocol hash covers.

    Throughput settings (batch size, parallelism, memory, concurrency, retries, URLs) are left out:
    changing them must not invalidate cached generations or make two runs incomparable.
    """
    fields: dict[str, Any] = {
        "backend": protocol.backend,
        "chat_template": protocol.chat_template,
        "system_prompt": protocol.system_prompt,
        "num_fewshot": protocol.num_fewshot,
        "fewshot_as_multiturn": protocol.fewshot_as_multiturn,
        "sampling": protocol.sampling.model_dump(),
    }
    if protocol.backend in ("vllm", "vllm-vlm"):
        fields["dtype"] = protocol.vllm.dtype
        fields["max_model_len"] = protocol.vllm.max_model_len
    elif protocol.backend in ("hf", "hf-multimodal"):
        fields["dtype"] = protocol.hf.dtype
    if protocol.multimodal:  # text runs keep their hash (and their cached answers)
        fields["image"] = protocol.image.model_dump()
    return fields


def protocol_hash(protocol: Protocol) -> str:
    return sha256_text(canonical_json(protocol_fields(protocol)))[:16]


def generation_kwargs(protocol: Protocol, task_defaults: dict[str, Any] | None = None) -> dict[str, Any]:
    """lm-eval generation kwargs for one generate_until task under the protocol.

    Temperature 0 means greedy: `do_sample` is False (lm-eval's backends force temperature 0 when
    do_sample is false, and sample when it is true, so the two must agree). Extra stop sequences
    are added to the task's own `until`, never replacing it.
    """
    sampling = protocol.sampling
    out = dict(task_defaults or {})
    greedy = sampling.temperature == 0.0
    out["do_sample"] = not greedy
    out["temperature"] = 0.0 if greedy else sampling.temperature
    out["max_gen_toks"] = sampling.max_tokens
    if not greedy:
        out["top_p"] = sampling.top_p
        if sampling.top_k is not None:
            out["top_k"] = sampling.top_k
    else:
        out.pop("top_p", None)
        out.pop("top_k", None)
    if sampling.stop:
        until = out.get("until") or []
        until = [until] if isinstance(until, str) else list(until)
        out["until"] = until + [s for s in sampling.stop if s not in until]
    return out


# --------------------------------------------------------------------------- parallelism
def visible_gpu_count() -> int:
    """GPUs this process may use: CUDA_VISIBLE_DEVICES when set, else what torch sees."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        devices = [d for d in env.split(",") if d.strip() and d.strip() != "-1"]
        return len(devices)
    try:
        import torch
    except ImportError:
        return 0
    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def _attention_heads(checkpoint: str | None) -> int | None:
    if not checkpoint:
        return None
    config = Path(checkpoint) / "config.json"
    if not config.is_file():
        return None
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    heads = data.get("num_attention_heads") or data.get("text_config", {}).get("num_attention_heads")
    return int(heads) if isinstance(heads, int) and heads > 0 else None


def auto_tensor_parallel(gpus: int, attention_heads: int | None = None) -> int:
    """Largest power of two ≤ the visible GPUs (vLLM shards attention heads evenly, so it must divide them)."""
    size = 1
    while size * 2 <= max(gpus, 1):
        size *= 2
    if attention_heads:
        while size > 1 and attention_heads % size:
            size //= 2
    return size


# --------------------------------------------------------------------------- model_args
def hf_model_args(protocol: Protocol, checkpoint: str, lora_base: str | None = None,
                  gguf_file: str | None = None) -> dict[str, Any]:
    """lm-eval HFLM args; a GGUF checkpoint is `pretrained=FOLDER, gguf_file=NAME` (tokenizer from the GGUF too)."""
    opts = protocol.hf
    args: dict[str, Any] = {"pretrained": lora_base or checkpoint, "dtype": opts.dtype,
                            "batch_size": opts.batch_size, "trust_remote_code": opts.trust_remote_code}
    if gguf_file:
        args["gguf_file"] = gguf_file
    if opts.device != "auto":
        args["device"] = opts.device
    if lora_base:
        args["peft"] = checkpoint
    return args


def vllm_model_args(protocol: Protocol, checkpoint: str, lora_base: str | None = None,
                    gpus: int | None = None, gguf_file: str | None = None) -> dict[str, Any]:
    """lm-eval's vllm args; vLLM takes a GGUF checkpoint as the path of the file itself."""
    opts = protocol.vllm
    if gguf_file:
        checkpoint = str(Path(checkpoint) / gguf_file)
    tp = opts.tensor_parallel_size
    if tp == "auto":
        available = visible_gpu_count() if gpus is None else gpus
        tp = auto_tensor_parallel(available // max(opts.data_parallel_size, 1) or 1,
                                  _attention_heads(lora_base or checkpoint))
    args: dict[str, Any] = {
        "pretrained": lora_base or checkpoint,
        "tensor_parallel_size": tp,
        "data_parallel_size": opts.data_parallel_size,
        "gpu_memory_utilization": opts.gpu_memory_utilization,
        "dtype": opts.dtype,
        "seed": protocol.sampling.seed,
        # not "auto": lm-eval then asks vLLM for its progress bar, whose speed postfix divides by the bar's elapsed
        # time, 0 when tqdm is disabled (TQDM_DISABLE=1, as rlgate's CLI sets it): ZeroDivisionError on every
        # request (vllm 0.32). One batch of the runner's chunk is what "auto" did with it, without the bar.
        "batch_size": VLLM_CHUNK,
    }
    if opts.max_model_len is not None:
        args["max_model_len"] = opts.max_model_len
    if opts.enforce_eager:
        args["enforce_eager"] = True
    if lora_base:
        args["lora_local_path"] = checkpoint
    return args


def openai_endpoint(base_url: str, chat: bool) -> str:
    """The completions URL lm-eval posts to, from a server root such as http://host:8000/v1."""
    url = base_url.rstrip("/")
    if url.endswith(("/completions", "/chat/completions")):
        return url
    return f"{url}/chat/completions" if chat else f"{url}/completions"


def openai_model_args(protocol: Protocol, checkpoint: str) -> dict[str, Any]:
    opts = protocol.openai
    args: dict[str, Any] = {
        "model": opts.model or checkpoint,
        "base_url": openai_endpoint(opts.base_url, protocol.chat_template),
        "num_concurrent": opts.concurrency,
        "max_retries": opts.max_retries,
        "timeout": int(opts.timeout_s),
        "seed": protocol.sampling.seed,
        "tokenized_requests": False,
    }
    if opts.tokenizer:
        args["tokenizer"] = opts.tokenizer
        args["tokenizer_backend"] = "huggingface"
    else:
        args["tokenizer_backend"] = None
    return args


def model_spec(protocol: Protocol, checkpoint: str, lora_base: str | None = None,
               gguf_file: str | None = None) -> tuple[str, dict[str, Any]]:
    """(lm-eval model name, model_args) for the protocol's backend."""
    if protocol.backend in ("hf", "hf-multimodal"):
        args = hf_model_args(protocol, checkpoint, lora_base, gguf_file)
        if protocol.multimodal:
            args["max_images"] = protocol.image.images_per_prompt
            if args["batch_size"] == "auto":  # lm-eval's hf-multimodal refuses batch_size auto
                args["batch_size"] = 1
        return LMEVAL_MODEL[protocol.backend], args
    if protocol.backend in ("vllm", "vllm-vlm"):
        args = vllm_model_args(protocol, checkpoint, lora_base, gguf_file=gguf_file)
        if protocol.multimodal:
            args["max_images"] = protocol.image.images_per_prompt
        return LMEVAL_MODEL[protocol.backend], args
    if lora_base:
        raise InputError("--lora-base does not apply to the openai backend: the server decides which weights it serves",
                         fix="serve the merged model (or the adapter) with vllm serve and point protocol.openai at it")
    name = LMEVAL_MODEL["openai-chat" if protocol.chat_template else "openai"]
    return name, openai_model_args(protocol, checkpoint)


def lmeval_seeds(protocol: Protocol) -> dict[str, int]:
    """simple_evaluate's four seeds, all from the protocol's sampling seed."""
    seed = protocol.sampling.seed
    return {"random_seed": seed, "numpy_random_seed": seed, "torch_random_seed": seed, "fewshot_random_seed": seed}
