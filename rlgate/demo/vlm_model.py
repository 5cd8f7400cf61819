"""A tiny randomly initialised LLaVA built locally, and a short CPU training loop on chart questions.

transformers' LLaVA (CLIP vision tower + Llama text model) at a few hundred thousand parameters,
a BPE tokenizer trained with `tokenizers` on the prompts, and CLIP's PIL image processor (no
torchvision, which does not load beside the CPU torch wheel). Saved with `save_pretrained`, so
lm-eval's `hf-multimodal` backend loads it through AutoProcessor / AutoModelForImageTextToText
like any Hub VLM. Training puts the loss on the response tokens of (image, prompt, response)
triples whose prompts are rendered as lm-eval renders the tasks' documents.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlgate.demo.model import EOS, PAD

IMAGE = "<image>"
#: a minimal chat template on the processor, so chat_template: true can be checked and used
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {% if m['content'] is string %}{{ m['content'] }}"
                 "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}"
                 "{% endif %}{% endfor %}{% endif %}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}")


@dataclass(frozen=True)
class TinyVlmConfig:
    vocab_size: int = 480
    hidden_size: int = 64
    layers: int = 2
    heads: int = 4
    image_size: int = 32
    patch_size: int = 8
    seed: int = 0


@dataclass(frozen=True)
class Triple:
    """One training example: an image file, the prompt lm-eval renders, the response to learn."""

    image: Path
    prompt: str
    response: str


def build_processor(texts: Sequence[str], config: TinyVlmConfig) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlavaProcessor, PreTrainedTokenizerFast
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=config.vocab_size, special_tokens=[EOS, PAD, IMAGE],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, bos_token=EOS, pad_token=PAD,
                                   model_max_length=1024)
    side = config.image_size
    images = CLIPImageProcessorPil(size={"shortest_edge": side}, crop_size={"height": side, "width": side})
    return LlavaProcessor(image_processor=images, tokenizer=fast, patch_size=config.patch_size,
                          vision_feature_select_strategy="default", image_token=IMAGE, num_additional_image_tokens=1,
                          chat_template=CHAT_TEMPLATE)


def new_model(processor: Any, config: TinyVlmConfig) -> Any:
    import torch
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration

    torch.manual_seed(config.seed)
    tok = processor.tokenizer
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                              image_size=config.image_size, patch_size=config.patch_size, projection_dim=32)
    text = LlamaConfig(vocab_size=len(tok), hidden_size=config.hidden_size, intermediate_size=config.hidden_size * 2,
                       num_hidden_layers=config.layers, num_attention_heads=config.heads,
                       num_key_value_heads=config.heads, max_position_embeddings=1024, tie_word_embeddings=True,
                       bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    llava = LlavaConfig(vision_config=vision, text_config=text, image_token_index=tok.convert_tokens_to_ids(IMAGE),
                        vision_feature_layer=-1, vision_feature_select_strategy="default")
    return LlavaForConditionalGeneration(llava)


def train(model: Any, processor: Any, triples: Sequence[Triple], *, steps: int, batch_size: int = 8,
          lr: float = 3e-3, seed: int = 0) -> float:
    """AdamW on response tokens; returns the mean loss of the last steps."""
    import torch
    from PIL import Image

    torch.manual_seed(seed)
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    tok = processor.tokenizer
    model.train()
    recent: list[float] = []
    for _ in range(steps):
        batch = [triples[rng.randrange(len(triples))] for _ in range(batch_size)]
        images = []
        for t in batch:
            with Image.open(t.image) as im:
                images.append(im.convert("RGB"))
        prompts = processor(text=[t.prompt for t in batch], images=images, return_tensors=None)
        rows, labels = [], []
        for ids, t in zip(prompts["input_ids"], batch, strict=True):
            answer = tok(t.response, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
            rows.append(list(ids) + answer)
            labels.append([-100] * len(ids) + answer)
        width = max(len(r) for r in rows)
        input_ids = torch.full((batch_size, width), tok.pad_token_id, dtype=torch.long)
        label_t = torch.full((batch_size, width), -100, dtype=torch.long)
        mask = torch.zeros((batch_size, width), dtype=torch.long)
        for i, (r, lab) in enumerate(zip(rows, labels, strict=True)):
            input_ids[i, :len(r)] = torch.tensor(r)
            label_t[i, :len(lab)] = torch.tensor(lab)
            mask[i, :len(r)] = 1
        pixels = torch.tensor(processor.image_processor(images, return_tensors="np")["pixel_values"])
        loss = model(input_ids=input_ids, attention_mask=mask, pixel_values=pixels, labels=label_t).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        recent = [*recent[-19:], float(loss.detach())]
    model.eval()
    return sum(recent) / max(len(recent), 1)


def save(model: Any, processor: Any, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder), safe_serialization=True)
    processor.save_pretrained(str(folder))
    return folder
