"""Shards of one run, and `rlgate merge`: N shards' generations become the folder one process writes.

A shard (`rlgate eval --shard K/N`, or a Ray task of `protocol.executor`) evaluates the K-th contiguous
range of every task's documents and leaves what it generated beside its results. The merge refuses shards
that cannot be one run, then the harness assembles the whole run without loading the model (lm-eval
evaluates it from the merged generations, inspect joins the shards' logs): every sample comes from exactly
one shard, and the results folder is the single-process one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate._core.files import write_text_atomic
from rlgate.contract.loader import ResolvedContract
from rlgate.harness import Harness, ProgressSink, RunOutcome, RunPlan, SilentProgress
from rlgate.harness.checkpoint import CheckpointInfo
from rlgate.results.shard import SHARD_FILE, ShardManifest, read_shard

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_FIX = "merge the N folders of one `rlgate eval --shard K/N` run (same contract, checkpoint and N)"


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N (Slurm's $SLURM_ARRAY_TASK_ID of --array=1-N, a CI matrix index + 1)."""
    found = _SHARD.match(text)
    if not found or not 1 <= int(found[1]) <= int(found[2]):
        raise InputError(f"--shard takes K/N with 1 <= K <= N, not '{text}'", field="--shard",
                         fix="e.g. --shard 1/4 ... --shard 4/4, then rlgate merge the four folders")
    return int(found[1]), int(found[2])


def checkpoint_of(manifest: ShardManifest) -> CheckpointInfo:
    return CheckpointInfo(**manifest.checkpoint.model_dump())


def check_shards(folders: Sequence[Path]) -> list[ShardManifest]:
    """The folders' shard manifests, refused unless they are exactly shards 1..N of one run, each document
    of the run's own count in exactly one shard."""
    if not folders:
        raise InputError("no shard folder given", field="SHARD_DIRS", fix=_FIX)
    manifests = [read_shard(folder) for folder in folders]
    first, first_file = manifests[0], folders[0] / SHARD_FILE
    for folder, m in zip(folders[1:], manifests[1:], strict=True):
        for name in ("contract_hash", "protocol_hash", "harness", "role", "shards", "tasks", "limit", "base"):
            if getattr(m, name) != getattr(first, name):
                raise InputError(f"{name} differs from {first_file}'s ({getattr(m, name)!r} vs "
                                 f"{getattr(first, name)!r}): the shards are not of one run",
                                 file=folder / SHARD_FILE, field=name, fix=_FIX)
        if m.checkpoint.fingerprint != first.checkpoint.fingerprint:
            raise InputError(f"checkpoint {m.checkpoint.source} differs from {first_file}'s "
                             f"({first.checkpoint.source}): the shards are not of one run",
                             file=folder / SHARD_FILE, field="checkpoint.fingerprint", fix=_FIX)
    seen: dict[int, Path] = {}
    for folder, m in zip(folders, manifests, strict=True):
        if m.unanswered:
            raise InputError(f"shard {m.shard}/{m.shards} did not answer {m.unanswered} of its requests (they "
                             "failed)", file=folder / SHARD_FILE, field="unanswered",
                             fix=f"run shard {m.shard}/{m.shards} again with the same --cache, then merge")
        if m.shard > m.shards:
            raise InputError(f"shard {m.shard}/{m.shards} is out of range", file=folder / SHARD_FILE,
                             field="shard", fix=_FIX)
        if m.shard in seen:
            raise InputError(f"shard {m.shard}/{m.shards} is given twice ({seen[m.shard]} and {folder})",
                             file=folder / SHARD_FILE, field="shard", fix="pass each shard's folder once")
        seen[m.shard] = folder
    missing = [k for k in range(1, first.shards + 1) if k not in seen]
    if missing:
        raise InputError(f"shard(s) {', '.join(f'{k}/{first.shards}' for k in missing)} missing: "
                         f"{len(seen)} of {first.shards} given", file=first_file, field="shard",
                         fix="run the missing shard(s) with rlgate eval --shard K/N and merge all N folders")
    _every_document_once(folders, manifests)
    return manifests


def _every_document_once(folders: Sequence[Path], manifests: list[ShardManifest]) -> None:
    owner: dict[tuple[str, int], Path] = {}
    for folder, m in zip(folders, manifests, strict=True):
        for leaf, ids in m.documents.items():
            total = m.base.get(leaf)
            if total is None:
                raise InputError(f"task '{leaf}' is not a task of the run", file=folder / SHARD_FILE,
                                 field=f"documents.{leaf}", fix=_FIX)
            for doc in ids:
                if not 0 <= doc < total:
                    raise InputError(f"document {doc} of '{leaf}' is outside the run's {total} documents",
                                     file=folder / SHARD_FILE, field=f"documents.{leaf}", fix=_FIX)
                if (leaf, doc) in owner:
                    raise InputError(f"document {doc} of '{leaf}' is in two shards ({owner[(leaf, doc)]} and "
                                     f"{folder}): every sample must come from exactly one shard",
                                     file=folder / SHARD_FILE, field=f"documents.{leaf}", fix=_FIX)
                owner[(leaf, doc)] = folder
    for leaf, total in manifests[0].base.items():
        absent = [d for d in range(total) if (leaf, d) not in owner]
        if absent:
            raise InputError(f"{len(absent)} of the {total} documents of '{leaf}' are in no shard (first: "
                             f"{absent[0]})", file=folders[0] / SHARD_FILE, field=f"documents.{leaf}", fix=_FIX)


def merge_shards(folders: Sequence[Path], out: Path, *, cache_dir: Path | None = None, contract: Path | None = None,
                 progress: ProgressSink | None = None, resolved: ResolvedContract | None = None) -> RunOutcome:
    """Check the shards, then let their harness assemble the whole run into `out` (lm-eval: from the shards'
    generations through the cache; inspect: the shards' logs as one log per task).

    `resolved`: the contract already loaded (the Ray executor's), else loaded from `contract` or the shards'."""
    merge = ShardMerge.of(folders, out, cache_dir=cache_dir, contract=contract, progress=progress, resolved=resolved)
    merge.generations()
    return merge.assemble()


@dataclass(frozen=True)
class ShardMerge:
    """One run's checked shards and the plan that merges them, in the harness's two steps: `generations` writes
    the cache (one writer: the Ray executor does every role's first), `assemble` only reads it (so the roles of
    a check may assemble at once, on the host of the cache)."""

    harness: Harness
    plan: RunPlan
    shards: list[tuple[Path, ShardManifest]]

    @classmethod
    def of(cls, folders: Sequence[Path], out: Path, *, cache_dir: Path | None = None, contract: Path | None = None,
           progress: ProgressSink | None = None, resolved: ResolvedContract | None = None) -> ShardMerge:
        """The folders checked to be shards 1..N of one run of `contract` (the shards' own when not given)."""
        from rlgate.app.runs import default_cache_dir
        from rlgate.harness.registry import get_harness
        from rlgate.harness.vocabulary import load_contract

        manifests = check_shards(folders)
        first = manifests[0]
        path = resolved.path if resolved is not None else contract or Path(first.contract)
        if resolved is None and not path.exists():
            raise InputError(f"the shards' contract {path} is not here", file=folders[0] / SHARD_FILE,
                             field="contract", fix="pass the contract with --contract")
        resolved = resolved or load_contract(path)
        if resolved.content_hash() != first.contract_hash:
            raise InputError(f"the contract {path} changed since the shards ran (its files' sha256 differs)",
                             file=folders[0] / SHARD_FILE, field="contract_hash",
                             fix="merge with the contract the shards ran, or re-run the shards")
        by_name = {t.name: t for t in resolved.tasks}
        unknown = [name for name in first.tasks if name not in by_name]
        if unknown:
            raise InputError(f"task '{unknown[0]}' of the shards is not in {path}", file=folders[0] / SHARD_FILE,
                             field="tasks", fix="merge with the contract the shards ran")
        harness = get_harness(first.harness)
        plan = harness.plan(resolved, [by_name[name] for name in first.tasks], out,
                            cache_dir or default_cache_dir(), checkpoint=checkpoint_of(first), limit=first.limit,
                            role=first.role, progress=progress or SilentProgress(),
                            cached_only=True)  # a merge never loads the model
        return cls(harness, plan, sorted(zip(folders, manifests, strict=True), key=lambda pair: pair[1].shard))

    def generations(self) -> None:
        """The step that writes the cache (lm-eval: the shards' generations into it)."""
        self.harness.merge_generations(self.plan, self.shards)

    def assemble(self) -> RunOutcome:
        """The whole run into its folder, the cache only read; counted as the shards ran it."""
        return _as_the_shards_ran(self.harness.assemble(self.plan, self.shards), [f for f, _ in self.shards])


def _as_the_shards_ran(outcome: RunOutcome, folders: Sequence[Path]) -> RunOutcome:
    """The merged manifest counts what the shards did (generated, cached, model loaded, time), not the merge's
    own replay of their generations, so it reads as the one-process run's."""
    from dataclasses import replace

    from rlgate.results.manifest import MANIFEST_FILE, load_manifest

    shards = [load_manifest(folder / MANIFEST_FILE) for folder in folders]
    manifest = outcome.manifest
    runs = {run.task: [r for s in shards for r in s.tasks if r.task == run.task] for run in manifest.tasks}
    for run in manifest.tasks:
        parts = runs[run.task]
        run.cached = sum(r.cached for r in parts)
        run.generated = sum(r.generated for r in parts)
        run.wall_time_s = round(sum(r.wall_time_s for r in parts), 3)
    manifest = manifest.model_copy(update={
        "model_loaded": any(s.model_loaded for s in shards),
        "wall_time_s": round(max(s.wall_time_s for s in shards) + manifest.wall_time_s, 3)})
    write_text_atomic(outcome.out_dir / MANIFEST_FILE, manifest.model_dump_json(indent=2))
    return replace(outcome, manifest=manifest, model_loaded=manifest.model_loaded)
