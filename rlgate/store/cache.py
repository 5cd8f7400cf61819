"""The generation cache: every response, keyed by what produced it, committed as it arrives.

Key: (checkpoint fingerprint, task hash, protocol hash, request hash, occurrence). lm-eval's own
`use_cache` keys on the request alone, so two checkpoints would share answers; this one cannot.
`occurrence` numbers identical requests within a task (n > 1 samples per prompt), so each sample
is stored once and a resumed run takes exactly the samples it is missing.

SQLite in WAL mode: each response is its own small transaction, readers never block the writer,
and a process killed with SIGKILL loses at most the response it was writing.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate._core.text import visible_surrogates

CACHE_SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS generations (
    fingerprint TEXT NOT NULL,
    task_hash TEXT NOT NULL,
    protocol_hash TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    response TEXT NOT NULL,
    tokens_in INTEGER,
    tokens_out INTEGER,
    created REAL NOT NULL,
    PRIMARY KEY (fingerprint, task_hash, protocol_hash, request_hash, occurrence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS file_digests (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS file_stats (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    sha256 TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS file_facts (
    sha256 TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (sha256, kind)
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class CachedGeneration:
    """One stored response and its token counts (None where the backend had no tokenizer)."""

    response: str
    tokens_in: int | None = None
    tokens_out: int | None = None


def _path_key(path: Path) -> str:
    """The file's path as stored: its text, or (a name of bytes that are not UTF-8, which Python holds as lone
    surrogates no UTF-8 database takes) NUL and the bytes in hex, which no real path can spell."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "\x00" + os.fsencode(path).hex()
    return text


def _count(value: object) -> int | None:
    """A stored token count; one edited into something else is unknown (counts only feed the token report)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@dataclass(frozen=True)
class Scope:
    """The part of the key shared by every request of one task in one run."""

    fingerprint: str
    task_hash: str
    protocol_hash: str


class GenerationCache:
    """Thread-safe access to the cache file; one connection per instance."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the cache folder: {exc.strerror or exc}",
                             file=Path(exc.filename) if exc.filename else self.path.parent,
                             fix="pass a folder for --cache (or $RLGATE_CACHE_DIR), not a file") from None
        try:
            self._conn = sqlite3.connect(str(self.path), timeout=60.0, check_same_thread=False,
                                         isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=60000")
            self._conn.executescript(_SCHEMA)
            self._check_version()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"the generation cache {self.path} is not a readable SQLite file ({exc})",
                             file=self.path,
                             fix="delete it (it only holds cached generations) or pass another --cache") from None
        self._lock = threading.Lock()

    def _check_version(self) -> None:
        row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(CACHE_SCHEMA_VERSION),))
        elif int(row[0]) != CACHE_SCHEMA_VERSION:
            raise InputError(f"the generation cache {self.path} has schema version {row[0]}, this rlgate reads "
                             f"{CACHE_SCHEMA_VERSION}", file=self.path, fix="pass another --cache or delete the file")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> GenerationCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # ------------------------------------------------------------------ generations
    def get_many(self, scope: Scope, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], CachedGeneration]:
        """Stored responses for (request hash, occurrence) keys; missing keys are absent."""
        wanted = list(keys)
        found: dict[tuple[str, int], CachedGeneration] = {}
        if not wanted:
            return found
        hashes = sorted({h for h, _ in wanted})
        with self._lock:
            for start in range(0, len(hashes), 500):
                chunk = hashes[start:start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT request_hash, occurrence, response, tokens_in, tokens_out FROM generations "
                    f"WHERE fingerprint=? AND task_hash=? AND protocol_hash=? AND request_hash IN ({marks})",
                    (scope.fingerprint, scope.task_hash, scope.protocol_hash, *chunk)).fetchall()
                for req, occ, response, t_in, t_out in rows:
                    found[(req, occ)] = CachedGeneration(response, _count(t_in), _count(t_out))
        wanted_set = set(wanted)
        return {k: v for k, v in found.items() if k in wanted_set}

    def put(self, scope: Scope, request_hash: str, occurrence: int, generation: CachedGeneration) -> None:
        """Store one response in its own transaction (durable once this returns)."""
        self.put_many(scope, [(request_hash, occurrence, generation)])

    def put_many(self, scope: Scope, rows: Iterable[tuple[str, int, CachedGeneration]], *,
                 replace: bool = False) -> None:
        """Store responses in one transaction; `replace` overwrites rows already stored under the same keys."""
        now = time.time()
        values = [(scope.fingerprint, scope.task_hash, scope.protocol_hash, req, occ,
                   visible_surrogates(gen.response), gen.tokens_in,
                   gen.tokens_out, now) for req, occ, gen in rows]
        if not values:
            return
        with self._tx() as conn:
            conn.executemany(f"INSERT OR {'REPLACE' if replace else 'IGNORE'} INTO generations "
                             "VALUES (?,?,?,?,?,?,?,?,?)", values)

    def count(self, fingerprint: str | None = None) -> int:
        with self._lock:
            if fingerprint is None:
                return int(self._conn.execute("SELECT COUNT(*) FROM generations").fetchone()[0])
            return int(self._conn.execute("SELECT COUNT(*) FROM generations WHERE fingerprint=?",
                                          (fingerprint,)).fetchone()[0])

    def export_requests(self, requested: Mapping[Scope, Sequence[tuple[str, int]]], dest: Path) -> int:
        """Copy the generations of exactly these (request hash, occurrence) keys into a fresh cache file `dest`
        (a shard's generations: what it asked, not whatever else its cache holds); the keys with no answer."""
        dest.unlink(missing_ok=True)
        unanswered = 0
        with GenerationCache(dest) as out:
            for scope, keys in requested.items():
                found = self.get_many(scope, keys)
                out.put_many(scope, [(req, occ, gen) for (req, occ), gen in found.items()])
                unanswered += len(set(keys)) - len(found)
        return unanswered

    def export_fingerprint(self, fingerprint: str, dest: Path) -> int:
        """Copy every generation of one checkpoint into the cache file `dest` (kept rows win); the rows copied."""
        with self._lock:
            rows = self._conn.execute("SELECT * FROM generations WHERE fingerprint=?", (fingerprint,)).fetchall()
        with GenerationCache(dest) as out, out._tx() as conn:
            conn.executemany("INSERT OR IGNORE INTO generations VALUES (?,?,?,?,?,?,?,?,?)", rows)
        return len(rows)

    def import_shards(self, sources: Sequence[Path]) -> int:
        """Add the generations of shards 1..N (their files, in shard order) not stored here yet; the rows read.

        A shard numbers identical requests (one prompt in two documents) from 0 among its own documents; one
        process numbers them over the whole task in document order. Shards hold contiguous document ranges in
        order and every request a shard made is in its file (`export_requests`, `ShardManifest.unanswered`),
        so shard K's occurrence i of a request is the run's occurrence (its count in shards 1..K-1) + i."""
        offsets: dict[tuple[str, str, str, str], int] = defaultdict(int)
        read = 0
        for source in sources:
            with GenerationCache(source) as other, other._lock:
                rows = other._conn.execute("SELECT * FROM generations").fetchall()
            counts: dict[tuple[str, str, str, str], int] = defaultdict(int)
            renumbered = []
            for row in rows:
                key = (row[0], row[1], row[2], row[3])
                renumbered.append((*key, offsets[key] + row[4], *row[5:]))
                counts[key] = max(counts[key], row[4] + 1)
            for key, count in counts.items():
                offsets[key] += count
            if renumbered:
                with self._tx() as conn:
                    conn.executemany("INSERT OR IGNORE INTO generations VALUES (?,?,?,?,?,?,?,?,?)", renumbered)
            read += len(rows)
        return read

    # ------------------------------------------------------------------ file digests
    def file_digest(self, path: Path, stat: os.stat_result) -> str | None:
        """A memoised sha256 of a file, valid while its size, mtime, ctime and inode are unchanged.

        Size and mtime alone are not enough: `cp -p`, `rsync -a`, `tar x` and reproducible image
        builds give new content the old mtime. ctime cannot be set back, and a replaced file has a
        new inode. (`file_stats` supersedes the size+mtime `file_digests` of older versions.)
        """
        with self._lock:
            row = self._conn.execute("SELECT size, mtime_ns, ctime_ns, inode, sha256 FROM file_stats WHERE path=?",
                                     (_path_key(path),)).fetchone()
        if row and tuple(row[:4]) == (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino):
            return str(row[4])
        return None

    def remember_digest(self, path: Path, stat: os.stat_result, sha256: str) -> None:
        with self._tx() as conn:
            conn.execute("INSERT OR REPLACE INTO file_stats VALUES (?,?,?,?,?,?)",
                         (_path_key(path), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, sha256))

    # ------------------------------------------------------------------ facts about a file's content
    def file_fact(self, sha256: str, kind: str) -> str | None:
        """What a check found in the file with this content (`kind` names the check and its version)."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM file_facts WHERE sha256=? AND kind=?",
                                     (sha256, kind)).fetchone()
        return str(row[0]) if row else None

    def remember_fact(self, sha256: str, kind: str, value: str) -> None:
        with self._tx() as conn:
            conn.execute("INSERT OR REPLACE INTO file_facts VALUES (?,?,?)", (sha256, kind, value))
