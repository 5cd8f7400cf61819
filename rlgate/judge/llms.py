"""deepeval model classes: the contract's judge endpoint, a local HF judge, and a caching wrapper.

Import this module lazily (only when a judge runs): it imports deepeval, after rlgate has set
deepeval's environment. The endpoint is reached through the `openai` client (its own retries with
exponential backoff on connection errors, 408/409/429 and 5xx, and its per-request timeout); a loopback
endpoint bypasses any configured HTTP proxy.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from rlgate._core.errors import InputError
from rlgate.contract.judge_policy import JudgeModelSpec
from rlgate.judge.cache import JudgeCache, cache_key
from rlgate.judge.deepeval_api import DeepEvalBaseLLM

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class JudgeCallError(RuntimeError):
    """The judge could not be asked or did not answer (transport, HTTP status, malformed response)."""


def _fingerprint(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


class EndpointLLM(DeepEvalBaseLLM):
    """A judge behind an OpenAI-compatible `/chat/completions` endpoint (vllm serve, TGI, llama.cpp, ...)."""

    def __init__(self, spec: JudgeModelSpec) -> None:
        if not spec.base_url or not spec.model:
            raise InputError("the endpoint judge needs judge.model.base_url and judge.model.model",
                             field="judge.model")
        self.spec = spec
        self.url = spec.base_url.rstrip("/") + "/chat/completions"
        self.api_key: str | None = None
        if spec.api_key_env:
            self.api_key = os.environ.get(spec.api_key_env)
            if not self.api_key:
                raise InputError(f"the judge's API key variable {spec.api_key_env} is not set",
                                 field="judge.model.api_key_env", fix=f"export {spec.api_key_env}=...")
        self.fingerprint = _fingerprint({"kind": "endpoint", "base_url": spec.base_url, "model": spec.model,
                                         "temperature": spec.temperature, "max_tokens": spec.max_tokens})
        self._client = self._make_client()
        super().__init__(spec.model)

    def _make_client(self) -> Any:
        import openai

        # a local judge server must not be sent through the proxy the environment names for the internet
        loopback = urlparse(self.url).hostname in _LOOPBACK
        http_client = openai.DefaultHttpxClient(trust_env=False) if loopback else None
        # without a key the client would read OPENAI_API_KEY and send it to this endpoint: send a placeholder
        return openai.OpenAI(base_url=self.spec.base_url, api_key=self.api_key or "no-key",
                             timeout=self.spec.timeout_s, max_retries=self.spec.max_retries,
                             http_client=http_client)

    def load_model(self, *args: Any, **kwargs: Any) -> EndpointLLM:
        return self

    def get_model_name(self, *args: Any, **kwargs: Any) -> str:
        return f"{self.spec.model}@{self.spec.base_url}"

    def generate(self, prompt: str, schema: Any = None) -> str:
        """One chat completion; deepeval parses (and may reject) the text it returns."""
        import openai

        try:
            completion = self._client.chat.completions.create(
                model=self.spec.model, messages=[{"role": "user", "content": prompt}],
                temperature=self.spec.temperature, max_tokens=self.spec.max_tokens)
        except openai.APIStatusError as exc:
            raise JudgeCallError(f"HTTP {exc.status_code} from {self.url}: {str(exc.message)[:200]}") from exc
        except openai.APITimeoutError as exc:
            raise JudgeCallError(f"no answer from {self.url} within {self.spec.timeout_s:g} s "
                                 f"({self.spec.max_retries} retries)") from exc
        except openai.APIError as exc:  # connection refused, reset, unparseable body
            raise JudgeCallError(f"{type(exc).__name__} talking to {self.url}: {exc}") from exc
        try:
            content = completion.choices[0].message.content
        except (AttributeError, IndexError, TypeError) as exc:
            raise JudgeCallError(f"malformed chat-completions response from {self.url}: "
                                 f"{json.dumps(completion.model_dump(), default=str)[:200]}") from exc
        return content if isinstance(content, str) else ""

    async def a_generate(self, prompt: str, schema: Any = None) -> str:
        return await asyncio.to_thread(self.generate, prompt, schema)


def _local_fingerprint(folder: Path, spec: JudgeModelSpec) -> str:
    """Config plus the size and head/tail bytes of each weight file: cheap, and changes when weights do."""
    parts: dict[str, Any] = {"kind": "local", "temperature": spec.temperature, "max_tokens": spec.max_tokens}
    config = folder / "config.json"
    parts["config"] = hashlib.sha256(config.read_bytes()).hexdigest() if config.exists() else None
    for weights in sorted([*folder.glob("*.safetensors"), *folder.glob("*.bin")]):
        with weights.open("rb") as handle:
            head = handle.read(1 << 20)
            handle.seek(max(0, weights.stat().st_size - (1 << 20)))
            tail = handle.read()
        parts[weights.name] = [weights.stat().st_size, hashlib.sha256(head + tail).hexdigest()]
    return _fingerprint(parts)


class LocalHFLLM(DeepEvalBaseLLM):
    """A judge loaded from a local Hugging Face folder with transformers (CPU or GPU)."""

    model: Any
    tokenizer: Any

    def __init__(self, spec: JudgeModelSpec, base: Path | None = None) -> None:
        folder = Path(spec.path or "")
        if base is not None and not folder.is_absolute():
            folder = base / folder
        if not (folder / "config.json").exists():
            raise InputError(f"judge model folder {folder} has no config.json", field="judge.model.path",
                             fix="point judge.model.path at a saved Hugging Face model folder")
        self.spec, self.folder = spec, folder
        self.fingerprint = _local_fingerprint(folder, spec)
        super().__init__(str(folder))

    def load_model(self, *args: Any, **kwargs: Any) -> Any:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(self.folder))
        model = AutoModelForCausalLM.from_pretrained(str(self.folder))
        model.eval()
        return model

    def get_model_name(self, *args: Any, **kwargs: Any) -> str:
        return f"local:{self.folder}"

    def generate(self, prompt: str, schema: Any = None) -> str:
        import torch

        ids: Any
        if getattr(self.tokenizer, "chat_template", None):
            ids = self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
                                                     add_generation_prompt=True, return_tensors="pt")
            ids = ids if isinstance(ids, torch.Tensor) else ids["input_ids"]
        else:
            ids = self.tokenizer(prompt, return_tensors="pt")["input_ids"]
        limit = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", None)
        if limit:
            ids = ids[:, -max(1, limit - self.spec.max_tokens):]
        sampling = {"do_sample": True, "temperature": self.spec.temperature} if self.spec.temperature > 0 else {
            "do_sample": False}
        with torch.no_grad():
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=self.spec.max_tokens,
                                      pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                                      **sampling)
        return str(self.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True))

    async def a_generate(self, prompt: str, schema: Any = None) -> str:
        return self.generate(prompt, schema)


class CachingLLM(DeepEvalBaseLLM):
    """Wraps any deepeval model: answers are cached by (fingerprint, salt, prompt) and always returned as text."""

    def __init__(self, inner: DeepEvalBaseLLM, cache: JudgeCache | None) -> None:
        self.inner, self.cache = inner, cache
        self.fingerprint: str = str(getattr(inner, "fingerprint", None) or inner.get_model_name())
        self.salt = ""
        self.calls = 0
        self.hits = 0
        self.last_cached = False
        super().__init__(inner.get_model_name())

    def load_model(self, *args: Any, **kwargs: Any) -> DeepEvalBaseLLM:
        return self.inner

    def get_model_name(self, *args: Any, **kwargs: Any) -> str:
        return str(self.inner.get_model_name())

    def generate(self, prompt: str, schema: Any = None) -> str:
        key = cache_key(self.fingerprint, str(prompt), self.salt)
        cached = self.cache.get(key) if self.cache is not None else None
        self.last_cached = cached is not None
        if cached is not None:
            self.hits += 1
            return cached
        self.calls += 1
        result = self.inner.generate_with_schema(prompt, schema=schema)
        if isinstance(result, tuple) and len(result) == 2:
            result = result[0]
        text = result.model_dump_json() if hasattr(result, "model_dump_json") else str(result)
        if self.cache is not None:
            self.cache.put(key, self.fingerprint, text)
        return text

    async def a_generate(self, prompt: str, schema: Any = None) -> str:
        return self.generate(prompt, schema)


def make_judge_llm(spec: JudgeModelSpec, base: Path | None = None) -> DeepEvalBaseLLM:
    """The deepeval model the contract names (relative local paths resolve against `base`)."""
    return LocalHFLLM(spec, base) if spec.path else EndpointLLM(spec)
