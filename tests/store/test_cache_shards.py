"""A shard's generations file and the merge's import: exactly the shard's requests go out, and identical requests
of several shards come back numbered as one process numbers them (over the task, in document order)."""

from __future__ import annotations

from pathlib import Path

from rlgate.store.cache import CachedGeneration, GenerationCache, Scope

TASK = Scope("fp", "task", "proto")
OTHER = Scope("fp", "other-task", "proto")


def _shard(path: Path, rows: dict[Scope, list[tuple[str, int, str]]]) -> Path:
    with GenerationCache(path) as cache:
        for scope, items in rows.items():
            cache.put_many(scope, [(req, occ, CachedGeneration(text)) for req, occ, text in items])
    return path


def test_a_shard_exports_exactly_the_requests_it_made(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "cache.sqlite") as cache:  # seeded with a whole earlier run, and more
        cache.put_many(TASK, [("p", 0, CachedGeneration("a")), ("p", 1, CachedGeneration("b")),
                              ("q", 0, CachedGeneration("c"))])
        unanswered = cache.export_requests({TASK: [("p", 0), ("r", 0)]}, tmp_path / "generations.sqlite")
    assert unanswered == 1  # ("r", 0) was never answered: the manifest counts it
    with GenerationCache(tmp_path / "generations.sqlite") as out:
        assert out.count() == 1 and out.get_many(TASK, [("p", 0)]) == {("p", 0): CachedGeneration("a")}


def test_identical_requests_of_several_shards_get_the_run_s_occurrences(tmp_path: Path) -> None:
    # prompt p: once in shard 1, twice in shard 2 (n = 2 samples, or two documents), once in shard 3
    one = _shard(tmp_path / "1.sqlite", {TASK: [("p", 0, "s1-p0"), ("u", 0, "s1-u")], OTHER: [("p", 0, "o1")]})
    two = _shard(tmp_path / "2.sqlite", {TASK: [("p", 0, "s2-p0"), ("p", 1, "s2-p1")], OTHER: [("p", 0, "o2")]})
    three = _shard(tmp_path / "3.sqlite", {TASK: [("p", 0, "s3-p0"), ("u", 0, "s3-u")]})
    with GenerationCache(tmp_path / "merged.sqlite") as merged:
        assert merged.import_shards([one, two, three]) == 8
        found = merged.get_many(TASK, [("p", i) for i in range(5)] + [("u", 0), ("u", 1)])
        assert {key: gen.response for key, gen in found.items()} == {
            ("p", 0): "s1-p0", ("p", 1): "s2-p0", ("p", 2): "s2-p1", ("p", 3): "s3-p0",
            ("u", 0): "s1-u", ("u", 1): "s3-u"}
        other = merged.get_many(OTHER, [("p", 0), ("p", 1), ("p", 2)])  # counted per task, not across tasks
        assert {key: gen.response for key, gen in other.items()} == {("p", 0): "o1", ("p", 1): "o2"}


def test_the_import_keeps_what_the_cache_already_holds(tmp_path: Path) -> None:
    shard = _shard(tmp_path / "1.sqlite", {TASK: [("p", 0, "new")]})
    with GenerationCache(tmp_path / "merged.sqlite") as merged:
        merged.put(TASK, "p", 0, CachedGeneration("kept"))
        merged.import_shards([shard])
        assert merged.get_many(TASK, [("p", 0)])[("p", 0)].response == "kept" and merged.count() == 1
