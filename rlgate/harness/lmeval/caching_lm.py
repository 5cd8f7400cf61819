"""An lm-eval `LM` that answers from rlgate's generation cache and loads the real model on the first miss.

lm-eval hands every request of a request type to one call; this wrapper splits them per task
(for per-task progress, wall time and token counts), answers what the cache holds, and sends only
the misses to the real backend. Each response is written to the cache the moment the backend
reports it (through lm-eval's own cache hook, which HF reports per batch and the API backends per
request) and again when the call returns, then under the keys of the requests the backend returned them
for (the hook files identical requests in the order they finished); a run killed at any point resumes
with exactly the requests it had not finished. When everything is cached the real model is never built.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import jinja2
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM, CacheHook, TemplateLM

from rlgate._core.errors import InputError
from rlgate._core.text import visible_surrogates
from rlgate.harness.base import ProgressSink, SilentProgress
from rlgate.harness.lmeval.backends import canonical_json
from rlgate.harness.lmeval.images import LazyImage, has_lazy_images, materialize, pixel_key
from rlgate.results.manifest import Drops
from rlgate.store.cache import CachedGeneration, GenerationCache, Scope

MAX_ERROR_SHARE = 0.1
#: requests whose images are decoded at once (lm-eval builds every request up front; a chunk of
#: 256 320x240 charts is ~60 MB of pixels, while 10,000 would be 2.3 GB)
IMAGE_CHUNK = 256


@dataclass
class TaskStats:
    """What happened to one task's requests in this run."""

    requests: int = 0
    cached: int = 0
    generated: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_known: bool = True
    seconds: float = 0.0
    drops: Drops = field(default_factory=Drops)


def _pixels(value: Any) -> Any:
    """Images in request arguments hashed by content (a PIL repr carries a memory address)."""
    if isinstance(value, dict):
        return {k: _pixels(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_pixels(v) for v in value]
    if isinstance(value, LazyImage):
        return value.content_key()
    if hasattr(value, "tobytes") and hasattr(value, "size") and hasattr(value, "mode"):
        return pixel_key(value)
    return value


def request_hash(reqtype: str, args: Any) -> str:
    return hashlib.sha256(canonical_json([reqtype, _pixels(list(args))]).encode()).hexdigest()[:32]


def _encode_result(reqtype: str, result: Any) -> str:
    """The stored form, which is also what the run scores: a response's lone surrogates (no UTF-8 store takes them)
    as visible text, so a fresh and a resumed run read the same response."""
    if reqtype == "generate_until":
        return visible_surrogates(result) if isinstance(result, str) else result
    return json.dumps(result)


def _decode_result(reqtype: str, text: str) -> Any:
    if reqtype == "generate_until":
        return text
    value = json.loads(text)
    return tuple(value) if isinstance(value, list) else value


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _well_formed(reqtype: str, value: Any) -> bool:
    """What lm-eval's backends return: (log-likelihood, is_greedy) per continuation, one number per rolling text."""
    if reqtype == "loglikelihood":
        return (isinstance(value, tuple) and len(value) == 2 and _number(value[0])
                and (isinstance(value[1], bool) or value[1] in (0, 1)))
    return reqtype != "loglikelihood_rolling" or _number(value)


def _decode_cached(cache: GenerationCache, scope: Scope, task: str, item: tuple[Instance, str, int],
                   reqtype: str, text: object) -> Any:
    """A stored result read back; one edited by hand (not JSON, wrong shape) is named with the row to delete."""
    if reqtype == "generate_until" and isinstance(text, str):
        return text
    try:
        value = _decode_result(reqtype, text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if value is not None and _well_formed(reqtype, value):
        return value
    inst, key, occ = item
    shape = "[log-likelihood, is_greedy]" if reqtype == "loglikelihood" else "a number" \
        if reqtype == "loglikelihood_rolling" else "text"
    where = (f"fingerprint='{scope.fingerprint}' AND task_hash='{scope.task_hash}' AND "
             f"protocol_hash='{scope.protocol_hash}' AND request_hash='{key}' AND occurrence={occ}")
    raise InputError(f"the cached {reqtype} result for task '{task}' doc {inst.doc_id} (request_hash {key}, "
                     f"occurrence {occ}) is {str(text)[:60]!r}, not {shape} (was the cache edited?)",
                     file=cache.path, fix=f'delete that entry (sqlite3 {cache.path} "DELETE FROM generations WHERE '
                     f'{where}") and run again to recompute it, or delete the file or pass another --cache')


class _Hook(CacheHook):
    """lm-eval's per-response cache hook, redirected into rlgate's cache for the current chunk."""

    def __init__(self, owner: CachingLM) -> None:
        super().__init__(None)
        self.owner = owner
        self.pending: dict[str, deque[tuple[str, int]]] = defaultdict(deque)
        self.scope: Scope | None = None
        self.task: str = ""
        self.reported = 0

    def arm(self, task: str, scope: Scope, reqtype: str, keyed: list[tuple[Instance, str, int]]) -> None:
        self.task, self.scope, self.reported = task, scope, 0
        self.pending = defaultdict(deque)
        for inst, req, occ in keyed:
            self.pending[request_hash(reqtype, inst.args)].append((req, occ))

    def add_partial(self, attr: str, req: Iterable[Any], res: Any) -> None:
        if self.scope is None:
            return
        queue = self.pending.get(request_hash(attr, list(req)))
        if not queue:
            return
        key, occ = queue.popleft()
        text = _encode_result(attr, res)
        gen = CachedGeneration(text, *self.owner.count_tokens(req, text, attr))
        self.owner.cache.put(self.scope, key, occ, gen)
        self.reported += 1
        self.owner.progress.advanced(self.task, 1)


class CachingLM(LM):
    """Cache-first LM: `factory` builds the real lm-eval LM, only when a request is not cached."""

    def __init__(self, factory: Callable[[], LM], *, cache: GenerationCache, fingerprint: str, protocol_hash: str,
                 task_hashes: dict[str, str], progress: ProgressSink | None = None, chunk_size: int | None = None,
                 tokenizer_loader: Callable[[], Any] | None = None, eager: bool = False,
                 model_info: dict[str, Any] | None = None, record_requests: bool = False) -> None:
        super().__init__()
        self._factory = factory
        self._inner: LM | None = None
        self.cache = cache
        self.fingerprint = fingerprint
        self.protocol_hash = protocol_hash
        self.task_hashes = task_hashes
        self.progress: ProgressSink = progress or SilentProgress()
        self.chunk_size = chunk_size
        self._tokenizer_loader = tokenizer_loader
        self._chat_tokenizer: Any = None
        self._model_info = model_info or {}
        self.stats: dict[str, TaskStats] = defaultdict(TaskStats)
        self.model_loaded = False
        self._hook = _Hook(self)
        #: with `record_requests` (a shard), every (request hash, occurrence) asked, per scope: the shard's
        #: generations file holds exactly these (its cache may hold more, seeded from the main cache)
        self.requested: dict[Scope, list[tuple[str, int]]] | None = defaultdict(list) if record_requests else None
        if eager:
            self.inner  # noqa: B018  (cheap backends, e.g. an HTTP client, are built up front)

    # ------------------------------------------------------------------ the real model
    @property
    def inner(self) -> LM:
        if self._inner is None:
            self.progress.message("loading the model (a request is not in the cache)")
            began = time.monotonic()
            self._inner = self._factory()
            self.progress.message(f"model loaded in {time.monotonic() - began:.0f} s")
            self._inner.set_cache_hook(self._hook)
            if self._chat_tokenizer is not None and hasattr(self._inner, "chat_applied"):
                # prompts were formatted with the processor's template here; hf-multimodal must not
                # re-place image tokens as it does for untemplated prompts
                self._inner.chat_applied = True
            self.model_loaded = True
        return self._inner

    def count_tokens(self, args: Any, text: str, reqtype: str) -> tuple[int | None, int | None]:
        inner = self._inner
        encode = getattr(inner, "tok_encode", None)
        if encode is None or getattr(inner, "tokenizer", None) is None or reqtype != "generate_until":
            return None, None
        try:
            context = next(iter(args))
            return len(encode(context if isinstance(context, str) else str(context))), len(encode(text))
        except Exception:  # a tokenizer that cannot encode a value is not worth failing a run for
            return None, None

    # ------------------------------------------------------------------ what lm-eval asks of an LM
    @property
    def tokenizer(self) -> Any:
        if self._inner is not None:
            return getattr(self._inner, "tokenizer", None)
        return self._chat_tokenizer

    def _template_tokenizer(self) -> Any:
        if self._inner is not None and getattr(self._inner, "tokenizer", None) is not None:
            return self._inner.tokenizer
        if self._chat_tokenizer is None and self._tokenizer_loader is not None:
            self._chat_tokenizer = self._tokenizer_loader()
        return self._chat_tokenizer

    @property
    def tokenizer_name(self) -> str:
        if self._inner is not None and hasattr(self._inner, "tokenizer_name"):
            return str(self._inner.tokenizer_name)
        tok = self._template_tokenizer()
        return str(getattr(tok, "name_or_path", "")).replace("/", "__")

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> Any:
        """As lm-eval's HF and vLLM backends do it, from the tokenizer alone (no weights needed)."""
        if self._tokenizer_loader is None:
            return self.inner.apply_chat_template(chat_history, add_generation_prompt)
        tok = self._template_tokenizer()
        kwargs = {"tokenize": False, "add_generation_prompt": add_generation_prompt,
                  "continue_final_message": not add_generation_prompt}
        try:
            return tok.apply_chat_template(chat_history, **kwargs)
        except jinja2.exceptions.TemplateError:
            return tok.apply_chat_template([m for m in chat_history if m["role"] != "system"], **kwargs)

    def chat_template(self, chat_template: bool | str = False) -> str | None:
        if self._tokenizer_loader is None:
            return self.inner.chat_template(chat_template)
        self._template_tokenizer()
        return TemplateLM.chat_template(self, chat_template)

    def get_model_info(self) -> dict[str, Any]:
        return dict(self._model_info)

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[Any]:
        return self._run("generate_until", requests)

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[Any]:
        return self._run("loglikelihood", requests)

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[Any]:
        return self._run("loglikelihood_rolling", requests)

    # ------------------------------------------------------------------ the cache-first loop
    def _run(self, reqtype: str, requests: list[Instance]) -> list[Any]:
        results: list[Any] = [None] * len(requests)
        by_task: dict[str, list[int]] = defaultdict(list)
        for index, inst in enumerate(requests):
            by_task[inst.task_name].append(index)
        for task, indices in by_task.items():
            started = time.monotonic()
            self._run_task(reqtype, task, [requests[i] for i in indices], indices, results)
            self.stats[task].seconds += time.monotonic() - started
        return results

    def _run_task(self, reqtype: str, task: str, insts: list[Instance], indices: list[int], out: list[Any]) -> None:
        scope = Scope(self.fingerprint, self.task_hashes.get(task, "unhashed:" + task), self.protocol_hash)
        seen: dict[str, int] = defaultdict(int)
        keyed: list[tuple[Instance, str, int]] = []
        for inst in insts:
            key = request_hash(reqtype, inst.args)
            keyed.append((inst, key, seen[key]))
            seen[key] += 1
        if self.requested is not None:
            self.requested[scope].extend((key, occ) for _, key, occ in keyed)
        found = self.cache.get_many(scope, [(k, o) for _, k, o in keyed])
        stats = self.stats[task]
        stats.requests += len(insts)
        misses: list[tuple[int, tuple[Instance, str, int]]] = []
        for pos, item in enumerate(keyed):
            hit = found.get((item[1], item[2]))
            if hit is None:
                misses.append((pos, item))
                continue
            out[indices[pos]] = _decode_cached(self.cache, scope, task, item, reqtype, hit.response)
            stats.cached += 1
            self._account(stats, reqtype, hit)
        self.progress.task_started(task, len(insts), len(insts) - len(misses))
        step = self.chunk_size or len(misses) or 1
        if misses and has_lazy_images(misses[0][1][0].args):
            step = min(step, IMAGE_CHUNK)
        for start in range(0, len(misses), step):
            chunk = misses[start:start + step]
            generated = self._generate(reqtype, task, scope, [item for _, item in chunk])
            for (pos, _), gen in zip(chunk, generated, strict=True):
                out[indices[pos]] = _decode_result(reqtype, gen.response) if gen is not None else ""
                if gen is None:
                    continue
                stats.generated += 1
                self._account(stats, reqtype, gen)
        self.progress.task_finished(task)
        if stats.drops.errored + stats.drops.timed_out > max(3, MAX_ERROR_SHARE * stats.requests):
            raise RuntimeError(f"{task}: {stats.drops.errored + stats.drops.timed_out} of {stats.requests} requests "
                               f"failed ({'; '.join(stats.drops.examples[:2])}); the finished ones are cached, "
                               "run the same command again to retry the rest")

    def _account(self, stats: TaskStats, reqtype: str, gen: CachedGeneration) -> None:
        if reqtype == "generate_until" and not gen.response.strip():
            stats.drops.empty += 1
        if gen.tokens_in is None or gen.tokens_out is None:
            stats.tokens_known = False
        else:
            stats.tokens_in += gen.tokens_in
            stats.tokens_out += gen.tokens_out

    def _call(self, reqtype: str, insts: list[Instance]) -> list[Any]:
        """The backend answers copies whose images are decoded; they are dropped when the chunk returns."""
        insts = [replace(inst, arguments=materialize(inst.arguments)) if has_lazy_images(inst.arguments) else inst
                 for inst in insts]
        method = getattr(self.inner, reqtype)
        if "disable_tqdm" in inspect.signature(method).parameters:
            return list(method(insts, disable_tqdm=True))
        return list(method(insts))

    def _generate(self, reqtype: str, task: str, scope: Scope,
                  items: list[tuple[Instance, str, int]]) -> list[CachedGeneration | None]:
        """Run one chunk on the real model; a failing chunk is retried request by request, failures counted."""
        insts = [inst for inst, _, _ in items]
        self.inner  # noqa: B018  (a model that cannot be built is an error, not a failed request)
        self._hook.arm(task, scope, reqtype, items)
        try:
            raw = self._call(reqtype, insts)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception:
            if len(items) == 1:
                self._record_failure(task, items[0])
                return [None]
            done = self.cache.get_many(scope, [(key, occ) for _, key, occ in items])  # the hook saved these
            return [done.get((item[1], item[2])) or self._generate(reqtype, task, scope, [item])[0]
                    for item in items]
        finally:
            reported = self._hook.reported
            self._hook.scope = None
        gens: list[CachedGeneration | None] = []
        for (inst, _, _), result in zip(items, raw, strict=True):
            text = _encode_result(reqtype, result)
            gens.append(CachedGeneration(text, *self.count_tokens(inst.args, text, reqtype)))
        # replace what the hook stored: it files identical requests (n samples of a prompt) in the order
        # they finished, which concurrent backends do not keep; this is the order the run scored them in
        self.cache.put_many(scope, [(key, occ, gen) for (_, key, occ), gen in zip(items, gens, strict=True)
                                    if gen is not None], replace=True)
        if len(items) > reported:
            self.progress.advanced(task, len(items) - reported)
        return gens

    def _record_failure(self, task: str, item: tuple[Instance, str, int]) -> None:
        """Count the request the backend could not answer (inside the except block that caught it)."""
        error = sys.exc_info()[1]
        drops = self.stats[task].drops
        if "timeout" in type(error).__name__.lower() or "timed out" in str(error).lower():
            drops.timed_out += 1
        else:
            drops.errored += 1
        if len(drops.examples) < 5:
            drops.examples.append(f"{task} doc {item[0].doc_id}: {type(error).__name__}: {str(error)[:160]}")
        self.progress.advanced(task, 1)
