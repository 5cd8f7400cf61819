"""A shard's own files beside its results: the shard manifest and the shard's generations.

`rlgate merge` (and the Ray executor) assembles the run from them: the generations go into the merging
cache and the whole run is evaluated from it, so N shards give the very folder one process writes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.harness.base import RunPlan
from rlgate.results.shard import GENERATIONS_FILE, SHARD_FILE, ShardManifest, write_shard
from rlgate.store.cache import GenerationCache, Scope


def write_shard_files(plan: RunPlan, *, harness: str, documents: dict[str, list[int]], base: dict[str, int],
                      requested: dict[Scope, list[tuple[str, int]]], protocol_hash: str) -> Path:
    """shard.json and generations.sqlite (the answers to exactly the requests the shard made, numbered as
    the shard numbered them) in the shard's folder; the manifest's path."""
    with GenerationCache(plan.cache_dir / "cache.sqlite") as cache:
        unanswered = cache.export_requests(requested, plan.out_dir / GENERATIONS_FILE)
    manifest = plan.shard_manifest(harness=harness, protocol_hash=protocol_hash, base=base, documents=documents,
                                   generations=GENERATIONS_FILE, unanswered=unanswered)
    return write_shard(plan.out_dir, manifest)


def import_generations(plan: RunPlan, shards: list[tuple[Path, ShardManifest]]) -> None:
    """The shards' generations into the plan's cache, in shard order: identical requests are numbered as one
    process numbers them, so the run evaluated from the cache afterwards is the single-process one."""
    files = []
    for folder, manifest in shards:
        generations = folder / manifest.generations
        if not generations.is_file():
            raise InputError(f"{generations} is missing: the shard's generations", file=folder / SHARD_FILE,
                             field="generations", fix="copy the whole shard folder, or re-run the shard")
        files.append(generations)
    with GenerationCache(plan.cache_dir / "cache.sqlite") as cache:
        cache.import_shards(files)


def cache_only_factory(source: str) -> Callable[[], Any]:
    """The model factory of a merge: every request must already be in the cache (the shards generated it)."""
    def refuse() -> Any:
        raise InputError(f"the shards' generations do not answer every request of the run of {source}: a "
                         "shard was cut short or its generations.sqlite is missing",
                         field="rlgate merge", fix="re-run the incomplete shard (rlgate eval --shard K/N, same "
                         "cache) and merge again")

    return refuse
