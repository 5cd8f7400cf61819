"""The contract's protocol mapped onto inspect-ai's model names and GenerateConfig (pure functions)."""

from __future__ import annotations

from rlgate.contract.models import Protocol
from rlgate.harness.inspect.protocol import generate_config, model_name


def test_greedy_under_hf_is_do_sample_false_not_temperature_zero() -> None:
    greedy = Protocol.model_validate({"backend": "hf", "hf": {"device": "cpu"}, "sampling": {"temperature": 0.0}})
    name, args = model_name(greedy, "/models/x")
    assert name == "hf//models/x" and args == {"device": "cpu", "do_sample": False}
    assert "temperature" not in generate_config(greedy)  # transformers refuses temperature=0.0 when sampling

    sampled = Protocol.model_validate({"backend": "hf", "sampling": {"temperature": 0.7, "top_p": 0.9}})
    assert model_name(sampled, "/models/x")[1] == {}
    config = generate_config(sampled)
    assert config["temperature"] == 0.7 and config["top_p"] == 0.9


def test_greedy_elsewhere_keeps_temperature_zero() -> None:
    vllm = Protocol.model_validate({"backend": "vllm", "sampling": {"temperature": 0.0}})
    assert generate_config(vllm)["temperature"] == 0.0 and "do_sample" not in model_name(vllm, "m")[1]
