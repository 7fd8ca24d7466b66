"""Copy an embedded store (SQLite in a data directory) into PostgreSQL, and verify it.

:func:`copy_store` copies every table of the schema, row for row and id for id:

- The target's schema is brought up to date first
  (:mod:`memory_core.store.pg_migrations`); then every table and column of the
  SQLite schema must exist there, else :class:`MigrateError` (a target of an older
  lcm-proxy). Tables and columns only PostgreSQL has (state of its own, such as
  per-replica bookkeeping) are left to their defaults and not compared.
- The copy is **one PostgreSQL transaction**: a copy that fails or is interrupted
  leaves the target as it was (run it again). It holds the write lock every
  :class:`~memory_core.store.pg.PgStore` batch takes, so a replica already started
  on the target waits instead of interleaving writes.
- A target whose tables hold any row is refused (:class:`TargetNotEmpty`) unless
  ``force``, which empties every table of the schema in the same transaction first
  (what the target held is lost). There is no resume: the copy is all or nothing.
- Tables are copied parents first (foreign keys), each by one ``COPY`` in key order
  that streams the rows read from SQLite; a reference to a later row of the same
  table (``memory_items.superseded_by``, ``summary_nodes.parent_id``) is checked at
  the end of that statement. ``progress(n)`` is called every ``batch_rows`` rows.
  Ids are kept (``COPY`` writes identity columns as given); each identity sequence
  is then advanced past the highest id SQLite ever handed out (``sqlite_sequence``,
  which a purge does not lower), so an id is never reused. User triggers (the item
  change log's) are off during the copy: their rows are copied as they were.
- The derived indexes (Tantivy full text, HNSW vectors) are not copied: they live
  beside each proxy and rebuild from the store's outbox when a proxy starts with an
  empty index directory; the stored vectors (``embeddings``) are copied and reused.

:func:`verify` compares, per table, the row count and a SHA-256 digest of the rows
in key order (:func:`row_digest`: a canonical encoding where bytes, text, integers
and floats must be equal exactly) between the source and the target.

The source must not change meanwhile: the CLI holds the data directory's lock.
Needs ``psycopg`` (the ``postgres`` extra).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_core.errors import SchemaTooNewError, StoreError

Progress = Callable[[int], None]
"""Called with the number of rows copied since its previous call."""


class MigrateError(StoreError):
    """The copy or the verification could not run (schemas differ, a row was refused,
    the target cannot be reached or changed)."""


class TargetNotEmpty(MigrateError):
    """The target already holds rows; ``tables`` maps each non-empty table to ``True``."""

    def __init__(self, tables: list[str]) -> None:
        super().__init__("the target database already holds lcm-proxy data (tables: "
                         + ", ".join(tables) + ")")
        self.tables = tables


@dataclass(frozen=True)
class TableCheck:
    """One table compared: rows and digest (hex SHA-256) on each side."""

    table: str
    source_rows: int
    target_rows: int
    source_digest: str
    target_digest: str

    @property
    def ok(self) -> bool:
        return (self.source_rows == self.target_rows
                and self.source_digest == self.target_digest)


@dataclass(frozen=True)
class _Table:
    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]          # ORDER BY: the primary key (every column without one)
    text_key: frozenset[str]      # key columns of text type (ordered bytewise on both sides)
    identity: tuple[str, ...]     # PostgreSQL identity columns


# -- digests ------------------------------------------------------------------------------

def _field(value: Any) -> bytes:
    """One value, tagged by type and length-prefixed: equal bytes iff equal values."""
    if value is None:
        return b"n"
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return b"i" + str(value).encode() + b";"
    if isinstance(value, float):
        return b"f" + value.hex().encode() + b";"
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        return b"t" + str(len(data)).encode() + b":" + data
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return b"b" + str(len(data)).encode() + b":" + data
    raise MigrateError(f"cannot encode a value of type {type(value).__name__}")


def row_digest(rows: Iterable[Iterable[Any]]) -> tuple[int, str]:
    """``(rows, hex SHA-256)`` of ``rows`` in the order given. Each value is encoded
    with its type (NULL, integer, float by its exact ``float.hex``, UTF-8 text, bytes)
    and length, so two tables digest equal only when every value is equal."""
    h = hashlib.sha256()
    n = 0
    for row in rows:
        h.update(b"r" + b"".join(_field(v) for v in row))
        n += 1
    return n, h.hexdigest()


# -- the two schemas ----------------------------------------------------------------------

def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _open_source(data_dir: Path) -> sqlite3.Connection:
    """A read-only connection to the data dir's SQLite store, at this code's schema
    (an older store is migrated first, as any command that opens it does)."""
    from memory_core.store.migrations import SCHEMA_VERSION
    from memory_core.store.sqlite import DB_FILENAME

    path = Path(data_dir) / DB_FILENAME
    if not path.is_file():
        raise MigrateError(f"no lcm-proxy store in {data_dir}")

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                               check_same_thread=False)

    conn = connect()
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        conn.close()
        raise SchemaTooNewError(f"store schema {version} is newer than this code"
                                f" ({SCHEMA_VERSION})")
    if version < SCHEMA_VERSION:
        conn.close()
        from memory_core.store.sqlite import SqliteStore

        SqliteStore(data_dir).close()  # applies the pending migrations
        conn = connect()
    return conn


def _sqlite_tables(src: sqlite3.Connection) -> dict[str, tuple[list[str], list[str]]]:
    """``{table: (columns, primary key columns)}`` of the SQLite schema."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    names = [r[0] for r in src.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name")]
    for name in names:
        info = src.execute(f"PRAGMA table_info({_q(name)})").fetchall()
        cols = [r[1] for r in info]
        key = [r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
        out[name] = (cols, key)
    return out


def _pg_tables(conn: Any) -> dict[str, dict[str, tuple[str, bool]]]:
    """``{table: {column: (data type, is identity)}}`` of the target's schema."""
    out: dict[str, dict[str, tuple[str, bool]]] = {}
    rows = conn.execute(
        "SELECT c.table_name, c.column_name, c.data_type, c.is_identity"
        " FROM information_schema.columns c JOIN information_schema.tables t"
        " ON t.table_schema = c.table_schema AND t.table_name = c.table_name"
        " WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'"
        " AND c.table_name <> 'lcm_schema' ORDER BY c.table_name, c.ordinal_position"
    ).fetchall()
    for table, column, dtype, identity in rows:
        out.setdefault(table, {})[column] = (dtype, identity == "YES")
    return out


def _tables(src: sqlite3.Connection, conn: Any) -> list[_Table]:
    """The tables to copy, parents before children; :class:`MigrateError` when the
    two schemas differ."""
    lite, pg = _sqlite_tables(src), _pg_tables(conn)
    if set(lite) - set(pg):
        raise MigrateError(f"tables only in SQLite: {sorted(set(lite) - set(pg))} (a target"
                           " schema older than the source? use the same lcm-proxy version)")
    tables: dict[str, _Table] = {}
    for name, (cols, key) in lite.items():
        if set(cols) - set(pg[name]):
            raise MigrateError(f"columns of {name} only in SQLite:"
                               f" {sorted(set(cols) - set(pg[name]))}")
        key = key or cols
        tables[name] = _Table(
            name, tuple(cols), tuple(key),
            frozenset(k for k in key if pg[name][k][0] in ("text", "character varying")),
            tuple(c for c in cols if pg[name][c][1]))
    parents = {name: {r[2] for r in src.execute(f"PRAGMA foreign_key_list({_q(name)})")}
               - {name} for name in tables}
    order: list[str] = []
    while len(order) < len(tables):
        ready = sorted(n for n in tables if n not in order and parents[n] <= set(order))
        if not ready:
            raise MigrateError("foreign keys form a cycle between tables: "
                               + ", ".join(sorted(set(tables) - set(order))))
        order.extend(ready)
    return [tables[n] for n in order]


def _select(table: _Table, *, postgres: bool) -> str:
    order = ", ".join(_q(k) + (' COLLATE "C"' if postgres and k in table.text_key else "")
                      for k in table.key)
    return (f"SELECT {', '.join(_q(c) for c in table.columns)} FROM {_q(table.name)}"
            f" ORDER BY {order}")


# -- copy ---------------------------------------------------------------------------------

def source_rows(data_dir: str | Path) -> dict[str, int]:
    """``{table: rows}`` of the SQLite store in ``data_dir``."""
    src = _open_source(Path(data_dir))
    try:
        return {name: int(src.execute(f"SELECT COUNT(*) FROM {_q(name)}").fetchone()[0])
                for name in _sqlite_tables(src)}
    finally:
        src.close()


def _connect(url: str) -> Any:
    import psycopg

    from memory_core.store import pg_text
    from memory_core.store.pg import describe
    from memory_core.store.pg_migrations import apply_migrations

    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=30)
        pg_text.register(conn)
    except psycopg.Error as exc:
        raise MigrateError(f"cannot connect to {describe(url)}: {exc}") from exc
    try:
        apply_migrations(conn)
    except SchemaTooNewError:
        conn.close()
        raise
    except psycopg.Error as exc:
        conn.close()
        raise MigrateError(f"cannot migrate the schema of {describe(url)}: {exc}") from exc
    return conn


def copy_store(data_dir: str | Path, url: str, *, force: bool = False,
               batch_rows: int = 2000, progress: Progress | None = None) -> dict[str, int]:
    """Copy the SQLite store of ``data_dir`` into the PostgreSQL database at ``url``
    (see the module docstring); return ``{table: rows copied}`` in copy order.

    Raises :class:`TargetNotEmpty` (nothing changed) when the target holds rows and
    not ``force``; :class:`MigrateError` when the schemas differ or PostgreSQL
    refuses a row or a statement (the transaction is rolled back: the target is as
    before); ``SchemaTooNewError`` when either side is newer than this code."""
    import psycopg

    from memory_core.store.pg import WRITE_LOCK

    src = _open_source(Path(data_dir))
    conn = _connect(url)
    copied: dict[str, int] = {}
    try:
        tables = _tables(src, conn)
        issued = dict(src.execute("SELECT name, seq FROM sqlite_sequence").fetchall()) \
            if src.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'"
                           ).fetchone() else {}
        where = "checking the target"
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                full = [t.name for t in tables if conn.execute(
                    f"SELECT EXISTS (SELECT 1 FROM {_q(t.name)})").fetchone()[0]]
                if full and not force:
                    raise TargetNotEmpty(full)
                if full:
                    conn.execute("TRUNCATE " + ", ".join(_q(t.name) for t in tables)
                                 + " RESTART IDENTITY")
                for t in tables:
                    where = f"disabling the triggers of {t.name}"
                    conn.execute(f"ALTER TABLE {_q(t.name)} DISABLE TRIGGER USER")
                for t in tables:
                    where = f"copying {t.name}"
                    copied[t.name] = _copy_table(src, conn, t, batch_rows, progress)
                for t in tables:
                    where = f"advancing the id sequences of {t.name}"
                    for col in t.identity:
                        high = conn.execute(f"SELECT COALESCE(MAX({_q(col)}), 0)"
                                            f" FROM {_q(t.name)}").fetchone()[0]
                        high = max(int(high), int(issued.get(t.name) or 0))
                        seq = conn.execute("SELECT pg_get_serial_sequence(%s, %s)",
                                           (_q(t.name), col)).fetchone()[0]
                        if high > 0:
                            conn.execute("SELECT setval(%s, %s, true)", (seq, high))
                    where = f"enabling the triggers of {t.name}"
                    conn.execute(f"ALTER TABLE {_q(t.name)} ENABLE TRIGGER USER")
                where = "committing"
        except psycopg.Error as exc:
            raise MigrateError(f"{where}: {exc}".strip()) from exc
        return copied
    finally:
        src.close()
        conn.close()


def _copy_table(src: sqlite3.Connection, conn: Any, table: _Table, batch_rows: int,
                progress: Progress | None) -> int:
    n = pending = 0
    cols = ", ".join(_q(c) for c in table.columns)
    with conn.cursor() as cur, cur.copy(f"COPY {_q(table.name)} ({cols}) FROM STDIN") as cp:
        rows = src.execute(_select(table, postgres=False))
        while True:
            batch = rows.fetchmany(batch_rows)
            if not batch:
                break
            for row in batch:
                cp.write_row(row)
            n += len(batch)
            pending += len(batch)
            if progress is not None:
                progress(pending)
                pending = 0
    return n


# -- verification ---------------------------------------------------------------------------

def _pg_rows(conn: Any, table: _Table, batch_rows: int) -> Iterator[tuple[Any, ...]]:
    with conn.cursor(name=f"lcm_verify_{table.name}") as cur:
        cur.itersize = batch_rows
        cur.execute(_select(table, postgres=True))
        yield from cur


def verify(data_dir: str | Path, url: str, *, batch_rows: int = 2000,
           progress: Progress | None = None) -> list[TableCheck]:
    """Compare every table of the SQLite store in ``data_dir`` with the database at
    ``url``: rows and :func:`row_digest` in key order, one :class:`TableCheck` per
    table in copy order. ``progress(n)``: rows read from the source. Raises
    :class:`MigrateError` when the schemas differ or the target cannot be read."""
    import psycopg

    src = _open_source(Path(data_dir))
    conn = _connect(url)
    checks: list[TableCheck] = []

    def counted(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
        for i, row in enumerate(rows, 1):
            if progress is not None and i % batch_rows == 0:
                progress(batch_rows)
            yield row

    try:
        tables = _tables(src, conn)
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            for t in tables:
                s_rows, s_digest = row_digest(counted(src.execute(_select(t, postgres=False))))
                if progress is not None:
                    progress(s_rows % batch_rows)
                t_rows, t_digest = row_digest(_pg_rows(conn, t, batch_rows))
                checks.append(TableCheck(t.name, s_rows, t_rows, s_digest, t_digest))
    except psycopg.Error as exc:
        raise MigrateError(f"reading the target: {exc}") from exc
    finally:
        src.close()
        conn.close()
    return checks
