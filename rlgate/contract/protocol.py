"""The contract's protocol: sampling, backends, agent budget and safety rules, image protocol, sequential looks.

What must match between two runs for their scores to be comparable; every field is part of the run
fingerprint. Split from `models` to keep each module small; `models` re-exports every name.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from rlgate._core.errors import InputError
from rlgate.contract.base import StrictModel

#: Group-sequential boundaries are integrated look by look (about 5 ms each); designs in practice use a handful
#: of interim looks. More than this is refused, naming the field.
GROUP_SEQUENTIAL_MAX_LOOKS = 50


class Sampling(StrictModel):
    """Generation settings; mapped onto lm-eval's gen_kwargs by the runner."""

    temperature: float = Field(0.0, ge=0.0, description="0 means greedy decoding (do_sample false)")
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int | None = Field(None, ge=1)
    n: int = Field(1, ge=1, description="samples per prompt; n > 1 enables pass@k and maj@k")
    max_tokens: int = Field(1024, ge=1, description="maximum new tokens per response")
    seed: int = Field(1234, description="sampling seed passed to the backend")
    stop: list[str] | None = Field(None, description="extra stop sequences (task defaults otherwise)")


class VllmOptions(StrictModel):
    """model_args for lm-eval's `vllm` backend."""

    tensor_parallel_size: int | Literal["auto"] = 1
    data_parallel_size: int = Field(1, ge=1)
    gpu_memory_utilization: float = Field(0.9, gt=0.0, le=1.0)
    max_model_len: int | None = Field(None, ge=1)
    dtype: str = "auto"
    enforce_eager: bool = False

    @field_validator("tensor_parallel_size")
    @classmethod
    def _positive_tp(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError("tensor_parallel_size must be >= 1 or 'auto'")
        return value


class HfOptions(StrictModel):
    """model_args for lm-eval's `hf` backend."""

    device: str = "auto"
    dtype: str = "auto"
    batch_size: int | Literal["auto"] = 1
    trust_remote_code: bool = False


class OpenAIOptions(StrictModel):
    """An OpenAI-compatible endpoint (e.g. `vllm serve`) via lm-eval's local-*-completions."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model: str | None = Field(None, description="served model name; defaults to the checkpoint")
    api_key_env: str | None = Field(None, description="name of the env var holding the API key")
    concurrency: int = Field(4, ge=1)
    max_retries: int = Field(3, ge=0)
    timeout_s: float = Field(600.0, gt=0)
    tokenizer: str | None = None


class AgentBudget(StrictModel):
    """Limits of one agent trajectory (inspect-ai tasks), mapped onto inspect's sample limits.

    A trajectory that reaches a limit is kept and scored as a failure, never skipped.
    """

    max_steps: int | None = Field(
        None, ge=1, description="model turns (generations) per trajectory (inspect turn_limit)")
    max_tool_calls: int | None = Field(
        None, ge=1, description="tool calls per trajectory; inspect has no such limit, so rlgate counts the calls "
        "and a trajectory that made more is a limit hit (tool_calls) and a failure")
    token_limit: int | None = Field(None, ge=1, description="total tokens per trajectory (inspect token_limit)")
    time_limit_s: float | None = Field(None, gt=0, description="wall-clock seconds per trajectory (inspect time_limit)")


class ForbiddenArgument(StrictModel):
    """A tool call whose arguments match `pattern` is a safety violation (e.g. `rm -rf`, editing CI)."""

    tool: str = Field("*", description="tool name or glob (fnmatch) the rule applies to")
    pattern: str = Field(description="regular expression searched in the call's arguments, written as JSON")
    reason: str = Field("", description="shown beside each violation")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        import re

        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class SafetyRules(StrictModel):
    """What counts as an unsafe agent action, besides what the task's scorer flags itself."""

    forbidden_tools: list[str] = Field(default_factory=list, description="tool names or globs never to be called")
    forbidden_arguments: list[ForbiddenArgument] = Field(default_factory=list)
    scorer_metric: str = Field(
        "safety_violation", description="a score of this name from the task's scorer marks a violation when > 0")


class ImageProtocol(StrictModel):
    """How images reach a vision-language model; part of the run fingerprint, like the sampling settings.

    rlgate resizes images itself before any backend sees them, so hf-multimodal and vllm-vlm get the
    same pixels. Runs made under different image protocols are refused like any protocol mismatch.
    """

    image_resolution: int | None = Field(
        None, ge=8, description="longest image side in pixels (images are only shrunk); None: as stored")
    max_pixels: int | None = Field(
        None, ge=64, description="cap on width x height, applied after image_resolution (aspect ratio kept)")
    preserve_aspect_ratio: bool = Field(
        True, description="false: image_resolution makes every image a square of that side (distorts charts)")
    images_per_prompt: int = Field(1, ge=1, description="most images one prompt may carry (backend max_images)")


#: lm-eval backends that take images (hf-multimodal on CPU/GPU, vllm-vlm on GPU)
MULTIMODAL_BACKENDS = ("hf-multimodal", "vllm-vlm")


class Sequential(StrictModel):
    """Sequential gating: documents in a seeded random order, judged after each chunk.

    method betting (default): the betting confidence sequence, valid at every look however the looks fall.
    method group_sequential: Lan-DeMets alpha spending at exactly these planned looks (more power at a planned
    look, no guarantee for a look the plan does not hold); the last planned look is the final analysis.
    """

    method: Literal["betting", "group_sequential"] = Field(
        "betting", description="betting: anytime-valid confidence sequence (Waudby-Smith & Ramdas), valid at any "
        "look; group_sequential: Lan-DeMets alpha-spending boundaries, valid at the planned looks only")
    spending: Literal["pocock", "obrien_fleming"] | None = Field(
        None, description="group_sequential only: alpha-spending function, pocock (default: alpha*ln(1+(e-1)t), "
        "stops early more often) or obrien_fleming (spends little early, keeps the final look near fixed-sample)")

    looks: int | None = Field(None, ge=1, le=1000, description="number of looks over each task's documents "
                              "(default 10 when neither looks nor chunk is given)")
    chunk: int | None = Field(None, ge=1, description="documents per task added at each look (instead of looks)")
    min_samples: int = Field(50, ge=1, description="paired documents of a task before its first look")
    max_fraction: float = Field(1.0, gt=0.0, le=1.0, description="share of each task's documents at which "
                                "generation stops even when a gate is still open (the fixed-sample tests then "
                                "decide on what was generated)")

    @model_validator(mode="after")
    def _one_schedule(self) -> Sequential:
        if self.looks is not None and self.chunk is not None:
            raise ValueError("give either looks or chunk, not both")
        if self.method == "group_sequential" and (self.looks or 0) > GROUP_SEQUENTIAL_MAX_LOOKS:
            raise ValueError(f"method group_sequential takes at most {GROUP_SEQUENTIAL_MAX_LOOKS} planned looks, not "
                             f"{self.looks}: lower looks (its boundaries are computed for every planned look), or "
                             "use method: betting, which takes any number of looks")
        if self.spending is not None and self.method != "group_sequential":
            raise ValueError("spending applies to method: group_sequential only (the betting confidence sequence "
                             "spends no alpha per look): remove spending or set method: group_sequential")
        return self

    def counts(self, total: int) -> list[int]:
        """Documents of a task of `total` documents generated by the end of each look (non-decreasing; the
        last is the max_fraction cap). Tasks of one suite are aligned look by look, the shorter lists padded."""
        if total <= 0:
            return [0]
        cap = max(1, min(total, math.ceil(total * self.max_fraction - 1e-9)))
        first = min(self.min_samples, cap)
        if self.chunk is not None:
            steps = [*range(self.chunk, cap, self.chunk), cap]
            if self.method == "group_sequential" and len(steps) > GROUP_SEQUENTIAL_MAX_LOOKS:
                raise InputError(f"chunk {self.chunk} makes {len(steps)} looks over a task of {total} documents; "
                                 f"method group_sequential takes at most {GROUP_SEQUENTIAL_MAX_LOOKS}",
                                 field="protocol.sequential.chunk",
                                 fix=f"raise chunk to at least {math.ceil(cap / GROUP_SEQUENTIAL_MAX_LOOKS)}, give "
                                     "looks instead, or use method: betting")
        else:
            k = self.looks or 10
            steps = [math.ceil(total * j / k) for j in range(1, k + 1)]
        return [min(max(s, first), cap) for s in steps]

    @staticmethod
    def order(leaf: str, size: int, seed: int) -> list[int]:
        """The seeded random order of a task's documents: the same seed and task name, the same order (so a
        later look, or a later full run, extends the documents already generated instead of starting over)."""
        import zlib

        import numpy as np

        return [int(i) for i in np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(leaf.encode())]).permutation(size)]


class Executor(StrictModel):
    """Where the runs execute: in this process (local), or as shards on a Ray cluster (kind ray).

    Not part of the run fingerprint: how documents are spread over workers never changes a generation, and
    N shards merged give the same results folder as one process (`rlgate merge` checks every sample once).
    """

    kind: Literal["local", "ray"] = Field("local", description="local: one process (default); ray: each shard a "
                                          "Ray task (the `ray` extra)")
    address: str = Field("auto", description="ray.init address: auto (the cluster `ray start` started, or "
                         "$RAY_ADDRESS), or ray://HOST:PORT")
    shards: int = Field(1, ge=1, le=4096, description="shards per run: each holds a contiguous range of every "
                        "task's documents")
    gpus_per_shard: float = Field(0.0, ge=0.0, description="GPUs each shard's Ray task reserves (num_gpus)")
    cpus_per_shard: float = Field(1.0, ge=0.0, description="CPUs each shard's Ray task reserves (num_cpus)")
    max_retries: int = Field(2, ge=0, le=100, description="re-runs of a shard whose worker died; a re-run resumes "
                             "from the shard's cache, so nothing is generated twice")


class Protocol(StrictModel):
    """How responses are produced. Runs under different protocols are never compared silently."""

    backend: Literal["vllm", "hf", "openai", "hf-multimodal", "vllm-vlm"] = Field(
        "hf", description="hf | vllm | openai for text; hf-multimodal | vllm-vlm for image tasks")
    chat_template: bool = False
    system_prompt: str | None = None
    num_fewshot: int | None = Field(None, ge=0, description="override every task's few-shot count")
    fewshot_as_multiturn: bool = False
    sampling: Sampling = Field(default_factory=Sampling)
    limit: int | None = Field(None, ge=1, description="documents per task (smoke runs only)")
    vllm: VllmOptions = Field(default_factory=VllmOptions)
    hf: HfOptions = Field(default_factory=HfOptions)
    openai: OpenAIOptions = Field(default_factory=OpenAIOptions)
    agent: AgentBudget = Field(default_factory=AgentBudget, description="budget of agent trajectories (inspect)")
    image: ImageProtocol = Field(default_factory=ImageProtocol, description="image protocol of VLM tasks")
    sequential: Sequential | None = Field(
        None, description="sequential gating (off when absent): documents in a seeded random "
        "order, in chunks, stopping once every gate is settled (`rlgate gate --sequential` replays it)")
    executor: Executor = Field(default_factory=Executor, description="where the runs execute (local, or shards on "
                               "a Ray cluster); not part of the run fingerprint")

    @property
    def multimodal(self) -> bool:
        return self.backend in MULTIMODAL_BACKENDS
