"""The protocol → lm-eval mapping: generation kwargs, model_args per backend, tensor parallel 'auto', hashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.contract.models import Protocol
from rlgate.harness.lmeval import backends


def proto(**kwargs: object) -> Protocol:
    return Protocol.model_validate(kwargs)


def test_greedy_sets_do_sample_false_and_drops_sampling_knobs() -> None:
    out = backends.generation_kwargs(proto(sampling={"temperature": 0.0, "top_p": 0.9, "max_tokens": 77}),
                                     {"until": ["Question:"], "do_sample": True, "top_p": 0.5})
    assert out == {"until": ["Question:"], "do_sample": False, "temperature": 0.0, "max_gen_toks": 77}


def test_sampling_sets_do_sample_true_with_its_knobs() -> None:
    out = backends.generation_kwargs(proto(sampling={"temperature": 0.7, "top_p": 0.95, "top_k": 20}), {})
    assert out["do_sample"] is True
    assert (out["temperature"], out["top_p"], out["top_k"]) == (0.7, 0.95, 20)


def test_extra_stop_sequences_are_added_to_the_tasks_own() -> None:
    out = backends.generation_kwargs(proto(sampling={"stop": ["</answer>", "Question:"]}), {"until": ["Question:"]})
    assert out["until"] == ["Question:", "</answer>"]
    assert backends.generation_kwargs(proto(sampling={"stop": ["x"]}), {"until": "Q"})["until"] == ["Q", "x"]


@pytest.mark.parametrize(("gpus", "heads", "expected"), [
    (0, None, 1), (1, None, 1), (2, None, 2), (3, None, 2), (7, None, 4), (8, None, 8), (8, 12, 4), (8, 6, 2),
    (16, 40, 8),
])
def test_auto_tensor_parallel_is_largest_power_of_two_dividing_heads(gpus: int, heads: int | None,
                                                                    expected: int) -> None:
    assert backends.auto_tensor_parallel(gpus, heads) == expected


def test_visible_gpus_from_cuda_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    assert backends.visible_gpu_count() == 3
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert backends.visible_gpu_count() == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    assert backends.visible_gpu_count() == 0


def test_vllm_model_args_from_the_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 12}))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7")
    p = proto(backend="vllm", sampling={"seed": 7}, vllm={"tensor_parallel_size": "auto", "data_parallel_size": 2,
                                                        "gpu_memory_utilization": 0.8, "max_model_len": 4096,
                                                        "dtype": "bfloat16", "enforce_eager": True})
    name, args = backends.model_spec(p, str(tmp_path))
    assert name == "vllm"
    # 8 GPUs, 2 data-parallel replicas: 4 per replica, and 4 divides 12 heads.
    assert args == {"pretrained": str(tmp_path), "tensor_parallel_size": 4, "data_parallel_size": 2,
                    "gpu_memory_utilization": 0.8, "dtype": "bfloat16", "seed": 7, "batch_size": 512,
                    "max_model_len": 4096, "enforce_eager": True}
    fixed = backends.vllm_model_args(proto(backend="vllm", vllm={"tensor_parallel_size": 2}), "m", lora_base="base")
    assert (fixed["tensor_parallel_size"], fixed["pretrained"], fixed["lora_local_path"]) == (2, "base", "m")


def test_hf_model_args_and_lora() -> None:
    name, args = backends.model_spec(proto(backend="hf", hf={"batch_size": 8, "dtype": "float32"}), "/m")
    assert name == "hf"
    assert args == {"pretrained": "/m", "dtype": "float32", "batch_size": 8, "trust_remote_code": False}
    _, lora = backends.model_spec(proto(backend="hf", hf={"device": "cuda:1"}), "/adapter", lora_base="/base")
    assert (lora["pretrained"], lora["peft"], lora["device"]) == ("/base", "/adapter", "cuda:1")


def test_openai_model_args_and_endpoint() -> None:
    p = proto(backend="openai", openai={"base_url": "http://h:8000/v1/", "model": "served", "concurrency": 16,
                                        "max_retries": 5, "timeout_s": 30})
    name, args = backends.model_spec(p, "/ckpt")
    assert name == "local-completions"
    assert args["base_url"] == "http://h:8000/v1/completions"
    assert (args["model"], args["num_concurrent"], args["max_retries"], args["timeout"]) == ("served", 16, 5, 30)
    chat, chat_args = backends.model_spec(proto(backend="openai", chat_template=True), "m")
    assert chat == "local-chat-completions" and chat_args["base_url"].endswith("/v1/chat/completions")
    with pytest.raises(InputError, match="lora-base"):
        backends.model_spec(p, "/ckpt", lora_base="/base")


def test_protocol_hash_ignores_throughput_but_not_generation_settings() -> None:
    base = proto(backend="vllm")
    same = proto(backend="vllm", vllm={"gpu_memory_utilization": 0.5, "tensor_parallel_size": 4})
    assert backends.protocol_hash(base) == backends.protocol_hash(same)
    assert backends.protocol_hash(base) != backends.protocol_hash(proto(backend="vllm", sampling={"max_tokens": 9}))
    assert backends.protocol_hash(base) != backends.protocol_hash(proto(backend="vllm", chat_template=True))


def test_seeds_come_from_the_protocol() -> None:
    assert set(backends.lmeval_seeds(proto(sampling={"seed": 3})).values()) == {3}
