"""Checks and helpers of VLM runs that cost seconds, done before a model is loaded.

- a text backend given an image task is refused (lm-eval would fail after loading the model);
- the checkpoint's processor must load (AutoProcessor), carry an image processor and a tokenizer,
  and the config must name the image token lm-eval's hf-multimodal needs; with
  `chat_template: true` the processor must have a chat template;
- `ProcessorChat` applies the processor's chat template exactly as lm-eval's hf-multimodal does,
  so a fully cached run never loads the weights just to format prompts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.contract.models import Protocol

IMAGE_PLACEHOLDER = "<image>"


def refuse_text_backend(protocol: Protocol, image_tasks: list[str]) -> None:
    if image_tasks and not protocol.multimodal:
        raise InputError(f"task '{image_tasks[0]}' takes images, but protocol.backend is '{protocol.backend}', "
                         "a text-only backend", field="protocol.backend",
                         fix="set protocol.backend: hf-multimodal (CPU or GPU) or vllm-vlm (GPU), or remove the "
                             "image tasks from the suite")


def check_processor(load_path: str, *, chat_template: bool, trust_remote_code: bool = False) -> Any:
    """Load and check the checkpoint's processor; returns it (cheap: no weights)."""
    folder = Path(load_path)
    config_file = folder / "config.json"
    if config_file.is_file():
        try:
            config = json.loads(config_file.read_text(encoding="utf-8"))
        except ValueError:
            config = {}
        if not any(config.get(k) is not None for k in ("image_token_id", "image_token_index")):
            raise InputError("the checkpoint's config.json names no image token (image_token_id / image_token_index), "
                             "so lm-eval's hf-multimodal cannot place images in the prompt", file=config_file,
                             fix="evaluate a vision-language checkpoint, or add image_token_index to its config")
    try:
        from transformers import AutoProcessor

        processor = AutoProcessor.from_pretrained(load_path, trust_remote_code=trust_remote_code)
    except Exception as exc:  # transformers raises many types for a broken or missing processor
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:240]
        raise InputError(f"the checkpoint's processor does not load ({text})", file=load_path,
                         fix="save the processor beside the weights: processor.save_pretrained(DIR) writes "
                             "processor_config.json / preprocessor_config.json and the tokenizer") from None
    if getattr(processor, "image_processor", None) is None or getattr(processor, "tokenizer", None) is None:
        raise InputError(f"the checkpoint's processor ({type(processor).__name__}) has no image processor or no "
                         "tokenizer: it is not a vision-language processor", file=load_path,
                         fix="save the model's AutoProcessor (image processor + tokenizer) with save_pretrained")
    if chat_template and not getattr(processor, "chat_template", None):
        raise InputError("protocol.chat_template is true, but the checkpoint's processor has no chat template",
                         file=load_path, field="protocol.chat_template",
                         fix="save a chat_template.jinja with the processor, or set chat_template: false")
    return processor


class ProcessorChat:
    """The processor's chat template as lm-eval's hf-multimodal applies it (interleaved image entries)."""

    def __init__(self, processor: Any, max_images: int, name: str) -> None:
        self.processor = processor
        self.max_images = max_images
        self.chat_template = processor.chat_template
        self.name_or_path = name

    def apply_chat_template(self, chat_history: list[dict[str, Any]], **kwargs: Any) -> Any:
        converted = []
        for message in chat_history:
            parts: list[dict[str, Any]] = []
            pieces = str(message["content"]).split(IMAGE_PLACEHOLDER)
            for i, piece in enumerate(pieces):
                if piece:
                    parts.append({"type": "text", "text": piece})
                if i < len(pieces) - 1 and i < self.max_images:
                    parts.append({"type": "image"})
            converted.append({"role": message["role"], "content": parts})
        kwargs.pop("tokenize", None)
        return self.processor.apply_chat_template(converted, **kwargs)


def processor_chat_loader(processor: Any, max_images: int, name: str) -> Any:
    def load() -> ProcessorChat:
        return ProcessorChat(processor, max_images, name)

    return load
