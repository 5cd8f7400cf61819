"""The shared history backend: PostgreSQL through psycopg 3 (the `postgres` extra).

Same schema, migrations and statements as SQLite (rlgate.store.sql). One connection per opened store
(one per decision); every operation is one transaction, and upserts (`INSERT ... ON CONFLICT`) make
concurrent gate jobs of one team safe without locks. First openers serialise schema migrations on an
advisory lock. Connection problems are bad input: exit 2 naming host:port and the fix; the password
never appears in a message (see rlgate.store.location.redact).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rlgate._core.errors import InputError, MissingExtraError
from rlgate.store.location import SETTING, redact
from rlgate.store.sql import SQLHistory

_MIGRATION_LOCK = 0x726C6761  # "rlga": one advisory lock id for rlgate's schema migrations


def _target(url: str) -> tuple[str, str, str, str]:
    """(host:port, user, database, password) of a DSN, with libpq's defaults."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        info = conninfo_to_dict(url)
    except Exception as exc:  # psycopg.ProgrammingError: unparseable DSN
        raise InputError(f"the PostgreSQL history URL {redact(url)!r} cannot be parsed: {redact(str(exc))}",
                         field=SETTING, fix="write postgresql://user:password@host:5432/database") from None
    host = str(info.get("host") or "localhost")
    port = str(info.get("port") or "5432")
    return f"{host}:{port}", str(info.get("user") or ""), str(info.get("dbname") or ""), str(info.get("password") or "")


class PostgresHistory(SQLHistory):
    """The project's history in a PostgreSQL database named by a `postgresql://` URL."""

    param = "%s"

    def __init__(self, url: str, connect_timeout: float = 10.0) -> None:
        try:
            import psycopg
        except ImportError:
            raise MissingExtraError.for_extra("a postgresql:// history", "postgres", "psycopg") from None
        self._psycopg = psycopg
        self.location = redact(url)
        self.address, self.user, self.database, self._password = _target(url)
        try:
            self._conn = psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(connect_timeout)),
                                         application_name="rlgate")
        except psycopg.Error as exc:
            raise self._connect_error(exc) from None
        self._open()

    def _clean(self, text: str) -> str:
        text = redact(text)
        return text.replace(self._password, "***") if self._password else text

    def _connect_error(self, exc: Exception) -> InputError:
        text = " ".join(line.strip() for line in self._clean(str(exc)).splitlines() if line.strip())
        text = text or type(exc).__name__
        lower = str(exc).lower()
        if "password authentication failed" in lower or "no password supplied" in lower:
            return InputError(f"PostgreSQL at {self.address} refused the password of user '{self.user}' ({text})",
                              field=SETTING, fix="correct the user and password in the URL (in CI: the repository "
                              "secret behind RLGATE_HISTORY)")
        if "does not exist" in lower and "database" in lower:
            return InputError(f"PostgreSQL at {self.address} has no database '{self.database}'", field=SETTING,
                              fix=f"create it (createdb -h {self.address.rsplit(':', 1)[0]} -p "
                              f"{self.address.rsplit(':', 1)[1]} -U {self.user or 'USER'} {self.database}) "
                              "or name an existing database in the URL")
        return InputError(f"cannot reach the PostgreSQL history at {self.address} ({text})", field=SETTING,
                          fix=f"start the server or check host and port in the URL; is {self.address} reachable "
                          "from this machine (firewall, VPN, the runner's network)?")

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        try:
            with self._conn.transaction():
                yield self._conn
        except self._psycopg.OperationalError as exc:
            raise InputError(f"the PostgreSQL history at {self.address} failed: {self._clean(str(exc)).strip()}",
                             field=SETTING, fix="check that the server is up and reachable, then run again"
                             ) from None
        except self._psycopg.Error as exc:  # refused rights, a table of the same name that is not rlgate's, ...
            text = " ".join(line.strip() for line in self._clean(str(exc)).splitlines() if line.strip())
            raise InputError(f"the PostgreSQL history at {self.address} (database '{self.database}') failed: "
                             f"{text or type(exc).__name__}", field=SETTING,
                             fix=f"give rlgate a database of its own (createdb rlgate) in which user "
                             f"'{self.user}' may create tables, and name it in the URL") from None

    def _read(self) -> Any:
        return self._tx()

    def _write(self) -> Any:
        return self._tx()

    @contextmanager
    def _migration_lock(self) -> Iterator[None]:
        """A session advisory lock taken before the migration transaction starts, so that transaction sees
        the catalog as the previous holder left it (a lock taken inside would keep a stale catalog view)."""
        self._conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
        try:
            yield
        finally:
            self._conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))

    def _stored_version(self, cur: Any) -> int:
        if cur.execute("SELECT to_regclass('rlgate_meta')").fetchone()[0] is not None:
            row = cur.execute("SELECT value FROM rlgate_meta WHERE key = 'schema_version'").fetchone()
            if row is not None:
                return self._version_value(row[0])
        if cur.execute("SELECT to_regclass('checkpoints')").fetchone()[0] is None:
            return 0
        columns = {r[0] for r in cur.execute("SELECT column_name FROM information_schema.columns WHERE table_name = "
                                             "'checkpoints' AND table_schema = current_schema()").fetchall()}
        if not {"run", "checkpoint", "step", "metrics"} <= columns:  # never migrate another application's table
            raise InputError(f"the PostgreSQL database '{self.database}' at {self.address} has a table 'checkpoints' "
                             "that is not rlgate's (no run, checkpoint, step and metrics columns)", field=SETTING,
                             fix="give rlgate a database of its own (createdb rlgate) and name it in the URL")
        return 1
