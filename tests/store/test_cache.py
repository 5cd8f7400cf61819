"""The generation cache: keys, occurrences, durability across processes, bad files."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rlgate._core.errors import InputError
from rlgate.store.cache import CachedGeneration, GenerationCache, Scope

SCOPE = Scope("fp-a", "task-1", "proto-1")


def test_round_trip_and_scoping(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put(SCOPE, "req", 0, CachedGeneration("first", 10, 3))
        cache.put(SCOPE, "req", 1, CachedGeneration("second"))
        found = cache.get_many(SCOPE, [("req", 0), ("req", 1), ("req", 2), ("other", 0)])
        assert found == {("req", 0): CachedGeneration("first", 10, 3), ("req", 1): CachedGeneration("second")}
        for other in (Scope("fp-b", "task-1", "proto-1"), Scope("fp-a", "task-2", "proto-1"),
                      Scope("fp-a", "task-1", "proto-2")):
            assert cache.get_many(other, [("req", 0)]) == {}


def test_first_write_wins(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put(SCOPE, "req", 0, CachedGeneration("kept"))
        cache.put_many(SCOPE, [("req", 0, CachedGeneration("ignored"))])
        assert cache.get_many(SCOPE, [("req", 0)])[("req", 0)].response == "kept"
        assert cache.count() == 1 and cache.count("fp-a") == 1 and cache.count("nope") == 0


def test_many_keys_are_queried_in_chunks(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put_many(SCOPE, [(f"r{i}", 0, CachedGeneration(str(i))) for i in range(1300)])
        found = cache.get_many(SCOPE, [(f"r{i}", 0) for i in range(1300)])
        assert len(found) == 1300 and found[("r1299", 0)].response == "1299"


def test_wal_mode_and_visible_to_another_process(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with GenerationCache(path) as cache:
        cache.put(SCOPE, "req", 0, CachedGeneration("from parent"))
        mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        code = ("import sys; from rlgate.store.cache import *; c = GenerationCache(sys.argv[1]); "
                "s = Scope('fp-a','task-1','proto-1'); assert c.get_many(s, [('req', 0)]); "
                "c.put(s, 'child', 0, CachedGeneration('from child'))")
        subprocess.run([sys.executable, "-c", code, str(path)], check=True)
        assert cache.get_many(SCOPE, [("child", 0)])[("child", 0)].response == "from child"


def _stat(size: int = 10, mtime: int = 5, ctime: int = 7, inode: int = 3) -> os.stat_result:
    return SimpleNamespace(st_size=size, st_mtime_ns=mtime, st_ctime_ns=ctime, st_ino=inode)  # type: ignore[return-value]


def test_file_digest_memo_is_invalidated_by_size_mtime_ctime_or_inode(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.remember_digest(Path("/x"), _stat(), "abc")
        assert cache.file_digest(Path("/x"), _stat()) == "abc"
        assert cache.file_digest(Path("/x"), _stat(size=11)) is None
        assert cache.file_digest(Path("/x"), _stat(mtime=6)) is None
        # new content given the old mtime (cp -p, rsync -a, tar x) still has a new ctime; a replaced file a new inode
        assert cache.file_digest(Path("/x"), _stat(ctime=8)) is None
        assert cache.file_digest(Path("/x"), _stat(inode=4)) is None


def test_not_a_database_is_a_clear_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError, match="not a readable SQLite file"):
        GenerationCache(bad)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    GenerationCache(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(InputError, match="schema version 99"):
        GenerationCache(path)


def test_a_cache_folder_that_is_a_file_is_a_clear_input_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("keep me", encoding="utf-8")
    with pytest.raises(InputError) as info:
        GenerationCache(tmp_path / "taken" / "cache.sqlite")
    assert info.value.file == tmp_path / "taken" and "--cache" in (info.value.fix or "")
    assert (tmp_path / "taken").read_text(encoding="utf-8") == "keep me"


def test_hand_edited_token_counts_read_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with GenerationCache(path) as cache:
        cache.put(SCOPE, "req", 0, CachedGeneration("kept", 10, 3))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE generations SET tokens_in='ten', tokens_out=2.5")
    with GenerationCache(path) as cache:  # counts only feed the token report; the response itself is intact
        assert cache.get_many(SCOPE, [("req", 0)]) == {("req", 0): CachedGeneration("kept", None, None)}


def test_a_file_name_of_non_utf8_bytes_and_a_lone_surrogate_response_are_stored(tmp_path: Path) -> None:
    """A checkpoint file named with bytes that are not UTF-8 reaches Python as lone surrogates, as does a server's
    `"\\ud800"` escape in a response: no UTF-8 database takes either (UnicodeEncodeError, the run lost)."""
    weights = tmp_path / os.fsdecode(b"model-\xff.safetensors")
    weights.write_bytes(b"w")
    other = tmp_path / "model-\\xff.safetensors"  # the escape's spelling, a different file
    other.write_bytes(b"v")
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.remember_digest(weights, weights.stat(), "sha-weights")
        cache.remember_digest(other, other.stat(), "sha-other")
        assert cache.file_digest(weights, weights.stat()) == "sha-weights"
        assert cache.file_digest(other, other.stat()) == "sha-other"
        cache.put(SCOPE, "req", 0, CachedGeneration("a\ud800b"))
        assert cache.get_many(SCOPE, [("req", 0)]) == {("req", 0): CachedGeneration("a\\ud800b")}
