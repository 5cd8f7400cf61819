"""The contract's protocol mapped onto inspect-ai: provider model names, GenerateConfig, limits, epochs.

Pure functions over the contract models (no inspect import), so the mapping is testable anywhere.

- backend `vllm` -> `vllm/<path or served model>`, `openai` -> `openai-api/rlgate/<served model>` at
  `protocol.openai.base_url`, `hf` -> `hf/<path>`; a `mockllm/...` checkpoint is passed through
  (scripted policies for tests and the demo).
- sampling -> GenerateConfig (temperature, top_p, top_k, max_tokens, seed, stop_seqs); `n` -> epochs.
  Temperature 0 under `hf` is the provider's `do_sample=False` (transformers refuses temperature 0.0).
- agent budget -> turn_limit (max_steps), token_limit, time_limit; max_tool_calls is
  counted by rlgate afterwards (inspect has no such limit).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedTask
from rlgate.contract.models import AgentBudget, Protocol

PROVIDER = {"vllm": "vllm", "openai": "openai-api", "hf": "hf"}
#: a checkpoint of this form is an inspect model name used as is (scripted test policies)
PASSTHROUGH_PREFIXES = ("mockllm/", "rlgate_scripted/")


def model_name(protocol: Protocol, load_path: str) -> tuple[str, dict[str, Any]]:
    """(inspect model name, model args) for a checkpoint under the contract's backend."""
    if load_path.startswith(PASSTHROUGH_PREFIXES):
        return load_path, {}
    if protocol.backend == "openai":
        served = protocol.openai.model or load_path
        args: dict[str, Any] = {"base_url": protocol.openai.base_url}
        return f"openai-api/rlgate/{served}", args
    if protocol.backend == "vllm":
        return f"vllm/{load_path}", {"dtype": protocol.vllm.dtype, **(
            {"max_model_len": protocol.vllm.max_model_len} if protocol.vllm.max_model_len else {})}
    hf_args: dict[str, Any] = {"device": protocol.hf.device} if protocol.hf.device != "auto" else {}
    if protocol.sampling.temperature == 0:
        hf_args["do_sample"] = False  # inspect's hf provider samples by default; transformers refuses temperature 0
    return f"hf/{load_path}", hf_args


def generate_config(protocol: Protocol) -> dict[str, Any]:
    """inspect GenerateConfig fields for the contract's sampling (temperature 0 is greedy)."""
    sampling = protocol.sampling
    config: dict[str, Any] = {"temperature": sampling.temperature, "max_tokens": sampling.max_tokens,
                              "seed": sampling.seed}
    if protocol.backend == "hf" and sampling.temperature == 0:
        del config["temperature"]  # greedy is the provider's do_sample=False (model_name); 0.0 would be refused
    if sampling.temperature > 0:
        config["top_p"] = sampling.top_p
        if sampling.top_k is not None:
            config["top_k"] = sampling.top_k
    if sampling.stop:
        config["stop_seqs"] = list(sampling.stop)
    if protocol.system_prompt:
        config["system_message"] = protocol.system_prompt
    return config


def limits(budget: AgentBudget) -> dict[str, Any]:
    """inspect eval() sample limits for the agent budget (unset -> the task's own)."""
    out: dict[str, Any] = {}
    if budget.max_steps is not None:
        out["turn_limit"] = budget.max_steps
    if budget.token_limit is not None:
        out["token_limit"] = budget.token_limit
    if budget.time_limit_s is not None:
        out["time_limit"] = int(budget.time_limit_s) if budget.time_limit_s >= 1 else 1
    return out


def agent_protocol(protocol: Protocol, task: ResolvedTask | None = None) -> dict[str, Any]:
    """What must match between two agent runs: sampling, epochs, budget, task arguments."""
    fields: dict[str, Any] = {
        "backend": protocol.backend,
        "system_prompt": protocol.system_prompt,
        "generate_config": generate_config(protocol),
        "epochs": protocol.sampling.n,
        "budget": protocol.agent.model_dump(),
    }
    if task is not None:
        fields["task"] = task.entry.task
        fields["task_args"] = dict(task.entry.task_args)
    return fields


def protocol_hash(protocol: Protocol) -> str:
    text = json.dumps(agent_protocol(protocol), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def api_key(protocol: Protocol) -> str | None:
    """The endpoint's API key from the env var the contract names (an unset one is an error)."""
    import os

    name = protocol.openai.api_key_env
    if protocol.backend != "openai" or not name:
        return None
    key = os.environ.get(name)
    if not key:
        raise InputError(f"protocol.openai.api_key_env names {name}, which is not set", field="protocol.openai",
                         fix=f"export {name}=...")
    return key
