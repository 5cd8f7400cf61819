"""The shard manifest: what one shard of a run (`rlgate eval --shard K/N`, a Ray shard) covered, on disk.

`rlgate merge` reads it to refuse shards that cannot be one run (another contract, protocol, checkpoint or
shard count), a missing shard, or a document in two shards, before it assembles the run from the shards'
outputs. The documents are lm-eval's document ids of each leaf task, or the dataset positions (from 0) of each
inspect task, counted against the contract's own documents (`base`), never against what the shards claim to
have produced.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlgate._core.errors import InputError
from rlgate._core.files import write_text_atomic

#: 2: the generations file holds exactly the shard's requests, numbered among the shard's own documents
SHARD_SCHEMA_VERSION: Literal[2] = 2
SHARD_FILE = "shard.json"
#: the shard's generations (a GenerationCache file holding only this shard's tasks), merged into the cache
GENERATIONS_FILE = "generations.sqlite"


class ShardCheckpoint(BaseModel):
    """The checkpoint the shard evaluated, as `check_checkpoint` found it (the merge runs under the same key)."""

    model_config = ConfigDict(extra="forbid")

    source: str
    kind: Literal["local", "served"]
    load_path: str
    fingerprint: str
    weights_hash: str | None = None
    lora_base: str | None = None
    gguf_file: str | None = None
    notes: list[str] = Field(default_factory=list)


class ShardManifest(BaseModel):
    """One shard K of N of a run: its contract, protocol, checkpoint and the documents it evaluated."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[2] = SHARD_SCHEMA_VERSION
    contract: str = Field(description="the contract file the shard ran (the merge loads it again)")
    contract_name: str
    contract_hash: str = Field(description="sha256 over every file the contract references")
    protocol_hash: str
    harness: str
    role: str
    checkpoint: ShardCheckpoint
    shard: int = Field(ge=1, description="K of K/N, from 1")
    shards: int = Field(ge=1, description="N of K/N")
    tasks: list[str] = Field(description="the contract's tasks of the run (suite task names)")
    limit: int | None = None
    base: dict[str, int] = Field(description="task (lm-eval: leaf task) -> documents of the whole run (the "
                                 "contract's, after limit)")
    documents: dict[str, list[int]] = Field(description="task -> documents this shard evaluated (lm-eval doc ids, "
                                            "inspect dataset positions)")
    generations: str = Field(GENERATIONS_FILE, description="what the shard generated, beside shard.json: lm-eval's "
                             "generations file, inspect's logs folder")
    unanswered: int = Field(0, ge=0, description="requests of the shard its generations do not answer (failed)")


def shard_range(count: int, shard: tuple[int, int]) -> range:
    """The positions of shard K of N among `count` documents: the K-th of N contiguous, near-equal ranges."""
    k, n = shard
    return range(count * (k - 1) // n, count * k // n)


def write_shard(folder: Path, manifest: ShardManifest) -> Path:
    return write_text_atomic(folder / SHARD_FILE, manifest.model_dump_json(indent=1))


def read_shard(folder: Path) -> ShardManifest:
    """The shard manifest of `folder`; anything else is refused naming the file and the fix."""
    path = folder / SHARD_FILE
    fix = "pass folders written by `rlgate eval --shard K/N`"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{folder} is not a shard folder (no {SHARD_FILE})", file=path, fix=fix) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read the shard manifest: {exc}", file=path, fix=fix) from None
    if isinstance(data, dict) and isinstance(data.get("schema_version"), int) \
            and data["schema_version"] != SHARD_SCHEMA_VERSION:
        newer = data["schema_version"] > SHARD_SCHEMA_VERSION
        raise InputError(f"the shard manifest has schema version {data['schema_version']}; this rlgate reads "
                         f"{SHARD_SCHEMA_VERSION}", file=path, field="schema_version",
                         fix="merge with the rlgate that wrote the shards" if newer else
                         "re-run the shard with this rlgate (its cache answers what it already generated)")
    try:
        return ShardManifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(f"not a shard manifest: {where}: {first['msg']}", file=path, field=where, fix=fix) from None
