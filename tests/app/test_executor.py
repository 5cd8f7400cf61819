"""protocol.executor without a Ray cluster: the model, its absence from the fingerprint, and the refusals
(no `ray` installed, protocol.sequential) that come before any model time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixtures.shard_contract import write_contract

from rlgate._core.errors import InputError
from rlgate.app.executor import _seed, run_key, run_role
from rlgate.contract.models import Protocol
from rlgate.harness.checkpoint import CheckpointInfo
from rlgate.harness.vocabulary import load_contract

CHECKPOINT = CheckpointInfo(source="ckpt", kind="local", load_path="ckpt", fingerprint="f" * 64, weights_hash=None)


def test_the_executor_defaults_to_local_and_forbids_unknown_fields() -> None:
    assert Protocol().executor.kind == "local" and Protocol().executor.shards == 1
    with pytest.raises(ValueError, match="extra"):
        Protocol.model_validate({"executor": {"kind": "ray", "nodes": 3}})
    with pytest.raises(ValueError, match="kind"):
        Protocol.model_validate({"executor": {"kind": "slurm"}})


def test_the_executor_is_not_part_of_the_run_fingerprint() -> None:
    pytest.importorskip("lm_eval")
    from rlgate.harness.lmeval.backends import protocol_hash

    ray = Protocol.model_validate({"executor": {"kind": "ray", "shards": 8, "gpus_per_shard": 1}})
    assert protocol_hash(ray) == protocol_hash(Protocol())


def test_without_ray_installed_kind_ray_names_the_extra(tmp_path: Path, shared_data: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    resolved = load_contract(write_contract(tmp_path, shared_data, "ckpt", executor={"kind": "ray", "shards": 2}))
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError, as where it is not installed
    with pytest.raises(InputError, match=r"ray") as caught:
        run_role(resolved, resolved.tasks, tmp_path / "out", cache_dir=tmp_path / "cache", checkpoint=CHECKPOINT,
                 limit=None, role="candidate")
    assert "pip install" in (caught.value.fix or "") and "ray" in (caught.value.fix or "")
    assert not (tmp_path / "out").exists()


def test_sequential_with_kind_ray_is_refused(tmp_path: Path, shared_data: Path) -> None:
    resolved = load_contract(write_contract(tmp_path, shared_data, "ckpt", executor={"kind": "ray"}))
    with pytest.raises(InputError, match=r"protocol\.sequential generates look by look"):
        run_role(resolved, resolved.tasks, tmp_path / "out", cache_dir=tmp_path / "cache", checkpoint=CHECKPOINT,
                 limit=None, role="candidate", sequential_look=1)


def test_the_run_key_changes_with_what_the_shards_hold(tmp_path: Path, shared_data: Path) -> None:
    resolved = load_contract(write_contract(tmp_path, shared_data, "ckpt", executor={"kind": "ray"}))
    key = run_key(resolved, resolved.tasks, CHECKPOINT, None, 4)
    assert key == run_key(resolved, resolved.tasks, CHECKPOINT, None, 4)
    assert key != run_key(resolved, resolved.tasks, CHECKPOINT, None, 2)
    assert key != run_key(resolved, resolved.tasks[:1], CHECKPOINT, None, 4)
    assert key != run_key(resolved, resolved.tasks, CHECKPOINT, 3, 4)


def test_new_shard_caches_start_with_the_checkpoints_cached_generations(tmp_path: Path) -> None:
    from rlgate.store.cache import CachedGeneration, GenerationCache, Scope

    mine, other = Scope("f" * 64, "task", "proto"), Scope("0" * 64, "task", "proto")
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        cache.put_many(mine, [("r1", 0, CachedGeneration("a", 3, 1)), ("r2", 0, CachedGeneration("b"))])
        cache.put_many(other, [("r1", 0, CachedGeneration("other checkpoint"))])
    kept = tmp_path / "shards" / "2"
    with GenerationCache(kept / "cache.sqlite") as cache:
        cache.put_many(mine, [("r9", 0, CachedGeneration("a shard's own"))])
    _seed(tmp_path, [tmp_path / "shards" / "1", kept], "f" * 64)
    with GenerationCache(tmp_path / "shards" / "1" / "cache.sqlite") as cache:
        found = cache.get_many(mine, [("r1", 0), ("r2", 0)])
        assert found == {("r1", 0): CachedGeneration("a", 3, 1), ("r2", 0): CachedGeneration("b")}
        assert cache.count() == 2  # the other checkpoint's generations stay out
    with GenerationCache(kept / "cache.sqlite") as cache:
        assert cache.count() == 1  # a shard's cache that exists is resumed as it is


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:  # a port just free: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_cluster_that_does_not_answer_is_refused_before_ray_init(tmp_path: Path, shared_data: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """ray.init retries a stopped cluster's address without end; the check refuses it first, naming the field."""
    ray = pytest.importorskip("ray")
    from rlgate.app.executor import gcs_problem

    address = f"127.0.0.1:{_closed_port()}"
    resolved = load_contract(write_contract(tmp_path, shared_data, "ckpt", executor={"kind": "ray",
                                                                                       "address": address}))

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("ray.init was reached")

    monkeypatch.setattr(ray, "init", never)
    with pytest.raises(InputError, match=r"cannot reach the Ray cluster .* nothing answers at") as caught:
        run_role(resolved, resolved.tasks, tmp_path / "out", cache_dir=tmp_path / "cache", checkpoint=CHECKPOINT,
                 limit=None, role="candidate")
    assert caught.value.field == "protocol.executor.address" and "ray start" in (caught.value.fix or "")
    assert gcs_problem("ray://127.0.0.1:1") is None  # Ray Client addresses: ray.init gives up by itself


def test_a_cluster_that_answers_passes_the_probe() -> None:
    pytest.importorskip("ray")
    import socket

    from rlgate.app.executor import gcs_problem

    with socket.socket() as server:
        server.bind(("", 0))  # every interface, as a GCS listens: Ray reads 127.0.0.1 as this node's address
        server.listen()
        assert gcs_problem(f"127.0.0.1:{server.getsockname()[1]}") is None
