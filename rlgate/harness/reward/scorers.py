"""Reward models that score a (prompt, response): a local sequence classifier through transformers, or a served
reward model behind an OpenAI-compatible server's pooling endpoint (vLLM: `vllm serve RM --task reward`).

torch and transformers are imported only when a local reward model is loaded.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any, Protocol

from rlgate._core.errors import InputError


class RewardScorer(Protocol):
    """Scores (prompt, response) pairs; one float per pair, higher = preferred."""

    format: str

    def score(self, items: Sequence[tuple[str, str]]) -> list[float]: ...


def _finite(values: list[float], where: str) -> list[float]:
    bad = [i for i, v in enumerate(values) if not math.isfinite(v)]
    if bad:
        raise InputError(f"the reward model returned a non-finite score for {len(bad)} response(s)", file=where,
                         fix="check the checkpoint (NaN weights, overflow in half precision); a score that is not "
                             "a number is never counted as a preference")
    return values


class HfRewardScorer:
    """`AutoModelForSequenceClassification` with one output (RewardBench's reward head), on CPU or the GPU."""

    def __init__(self, path: str, *, batch_size: int = 8, max_length: int = 2048) -> None:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError:
            raise InputError("scoring a local reward model needs torch and transformers", field="--checkpoint",
                             fix="pip install 'rlgate[hf]'") from None
        self.torch, self.path = torch, path
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForSequenceClassification.from_pretrained(path)
        labels = int(self.model.config.num_labels)
        if labels != 1:
            raise InputError(f"the reward model has {labels} output labels; a reward head has one", file=path,
                             fix="give a sequence classifier trained as a reward model (num_labels=1)")
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model.to(self.device).eval()
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model.config.pad_token_id = self.tokenizer.pad_token_id
        self.batch_size, self.max_length = batch_size, max_length
        self.format = "chat_template" if getattr(self.tokenizer, "chat_template", None) else "plain"

    def _text(self, prompt: str, response: str) -> str:
        if self.format == "chat_template":
            chat = [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
            return str(self.tokenizer.apply_chat_template(chat, tokenize=False))
        return f"{prompt}\n{response}"

    def score(self, items: Sequence[tuple[str, str]]) -> list[float]:
        out: list[float] = []
        for start in range(0, len(items), self.batch_size):
            texts = [self._text(p, r) for p, r in items[start:start + self.batch_size]]
            batch = self.tokenizer(texts, return_tensors="pt", padding=True, truncation=True,
                                   max_length=self.max_length).to(self.device)
            with self.torch.no_grad():
                logits = self.model(**batch).logits
            out += [float(v) for v in logits[:, 0].float().cpu().tolist()]
        return _finite(out, self.path)


class EndpointRewardScorer:
    """A reward model served behind `POST {base_url}/pooling` (vLLM's pooling API): one score per input."""

    format = "served"

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = 120.0,
                 batch_size: int = 16) -> None:
        self.url = base_url.rstrip("/") + "/pooling"
        self.model, self.api_key, self.timeout_s, self.batch_size = model, api_key, timeout_s, batch_size

    def _post(self, texts: list[str]) -> list[float]:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                data: Any = json.loads(response.read().decode("utf-8"))
        except (urllib.error.URLError, TimeoutError, ValueError, OSError) as exc:
            raise InputError(f"the reward endpoint did not answer: {exc}", file=self.url,
                             fix="start the server (e.g. `vllm serve RM --task reward`) and check "
                                 "protocol.openai.base_url") from None
        rows = data.get("data") if isinstance(data, dict) else None
        if not isinstance(rows, list) or len(rows) != len(texts):
            raise InputError(f"the reward endpoint answered {type(rows).__name__} for {len(texts)} inputs",
                             file=self.url,
                             fix="the server must answer {'data': [{'data': score}, ...]}, one entry per input")
        out = []
        for row in sorted(rows, key=lambda r: r.get("index", 0) if isinstance(r, dict) else 0):
            value = row.get("data") if isinstance(row, dict) else None
            while isinstance(value, list) and len(value) == 1:  # [score] or [[score]]
                value = value[0]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"the reward endpoint gave {json.dumps(value)[:60]} for a score", file=self.url,
                                 fix="serve a reward model (one score per input), not an embedding model")
            out.append(float(value))
        return _finite(out, self.url)

    def score(self, items: Sequence[tuple[str, str]]) -> list[float]:
        texts = [f"{p}\n{r}" for p, r in items]
        return [v for start in range(0, len(texts), self.batch_size)
                for v in self._post(texts[start:start + self.batch_size])]
