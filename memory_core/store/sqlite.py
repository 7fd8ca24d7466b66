"""SQLite store: WAL, one writer thread fed by a queue, thread-local readers.

SQLite allows one writer at a time. Rather than letting request handlers contend
for the write lock, every write is a function queued to a single writer thread,
which drains the queue and runs each job inside one ``BEGIN IMMEDIATE`` transaction
(a ``SAVEPOINT`` per job, so one failing job rolls back alone). Batching many small
captures into one commit is what makes ingest fast. Reads run on the caller's
thread with a thread-local connection; WAL lets them proceed during writes. WAL
checkpoints run on a thread of their own (:data:`CHECKPOINT_COMMITS`), not inside
the writer's commits.

Writes return ``concurrent.futures.Future`` objects so that both threads and the
asyncio façade (``memory_core.aio``) can wait on them — or not.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memory_core.errors import StoreError
from memory_core.stats import LatencyStats
from memory_core.store.api import EngineStore, Store
from memory_core.store.batch import Done, Entry, WriteQueue, complete_batch, fail_batch
from memory_core.store.migrations import apply_migrations
from memory_core.store.sqlite_ops import SqliteTx

log = logging.getLogger("lcm.store")
T = TypeVar("T")

DB_FILENAME = "lcm.sqlite3"
_BATCH_MAX = 256

CHECKPOINT_COMMITS = 32
"""Commits between two WAL checkpoints, which a thread of their own runs.

SQLite's automatic checkpoint runs inside the ``COMMIT`` that crosses 1,000 WAL
pages, on the committing thread: here the writer, which a request waits on for
its capture. On this machine's disk a checkpoint of 1,000-1,500 pages took about
22 ms, and in the long-session eval about 1.4 % of the request path's commits
took 5-10 ms instead of 0.4. The checkpointer copies the WAL back while the
writer goes on (a ``PASSIVE`` checkpoint blocks no writer and no reader), after
:attr:`SqliteStore.before_checkpoint` (the engine sets it, once a search service
is attached, to give way to requests in flight)."""

_AUTOCHECKPOINT_PAGES = 4000
"""The writer's own automatic checkpoint stays on past this many WAL pages (about
16 MB), so that the WAL stays bounded when commits are few and large (a bulk
import, up to 256 jobs a commit) or the checkpointer falls behind."""


def _connect(path: Path, cache_kib: int = 2000, statements: int = 32) -> sqlite3.Connection:
    conn = sqlite3.connect(
        str(path), isolation_level=None, check_same_thread=False, timeout=30.0,
        cached_statements=statements,
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute(f"PRAGMA cache_size=-{int(cache_kib)}")
    return conn


WRITER_STATEMENTS = 128
"""Prepared statements the writer's connection keeps at least. One request's capture,
its items' duplicate checks, the answer's capture and the background jobs run about 49
distinct statements on the writer in turn: a least-recently-used cache smaller than that
cycle drops each statement before it runs again, and every one is prepared anew
(docs/evaluation/README.md, "The standing fold and the writer's statements at 1,000
turns")."""


class SqliteStore:
    """The embedded store: one database file ``lcm.sqlite3`` in ``data_dir``.

    Opening creates the directory and the file if needed and applies pending
    migrations (raises ``StoreError``/``SchemaTooNewError`` on failure). Call
    :meth:`close` to flush queued writes and stop the writer thread.

    Memory is bounded per connection (the writer plus one reader per reading
    thread): a page cache of ``cache_kib`` KiB and at most ``statements`` prepared
    statements (the writer at least :data:`WRITER_STATEMENTS`). The statement cache
    needs the bound more than the page cache: a query with an ``IN (?, …)`` list is a
    new statement for every list length, about 200 bytes per parameter, so 128 cached
    statements (Python's default) of history-long lists grew each connection by
    megabytes under the load test; such lists now come in a few lengths
    (:func:`memory_core.store.sqlite_rows.padded`).

    ``memory_limit_kib`` (when above 0) bounds SQLite's memory in the whole process,
    every connection together: SQLite's soft heap limit (``PRAGMA soft_heap_limit``,
    process-wide, so the last store opened sets it). About 14 connections on two
    cores (more with more cores) would otherwise each fill ``cache_kib`` once the
    database outgrows it; past the limit the page caches recycle their pages.
    """

    def __init__(self, data_dir: str | Path, *, cache_kib: int = 2000,
                 statements: int = 32, memory_limit_kib: int = 0) -> None:
        self.data_dir = Path(data_dir)
        self.shared = False
        """One process per data directory (its indexes hold a writer lock)."""
        self._limits = (cache_kib, statements)
        try:
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # private
            self.path = self.data_dir / DB_FILENAME
            self.location = str(self.path)
            self._wconn = _connect(self.path, cache_kib, max(statements, WRITER_STATEMENTS))
            if memory_limit_kib > 0:
                self._wconn.execute(f"PRAGMA soft_heap_limit={int(memory_limit_kib) * 1024}")
            self.schema_version = apply_migrations(self._wconn)
            self._wtx = SqliteTx(self._wconn)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store at {self.data_dir}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create data dir {self.data_dir}: {exc}") from exc
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._queue = WriteQueue()
        self._closed = False
        self.after_commit: Callable[[], None] | None = None
        """Called on the writer thread after each committed batch (e.g. to wake an
        indexer). Must be cheap and must not raise."""
        self.before_checkpoint: Callable[[], None] | None = None
        """Called on the checkpointer thread before each checkpoint (e.g. to wait,
        bounded, while a request is in flight). Must not raise."""
        self._commits = 0
        self.commit_latency = LatencyStats()
        """Seconds each write transaction took on the writer thread, from ``BEGIN
        IMMEDIATE`` to the end of its ``COMMIT`` (all its jobs included)."""
        self._checkpoint_due = threading.Event()
        self._wconn.execute(f"PRAGMA wal_autocheckpoint={_AUTOCHECKPOINT_PAGES}")
        self._thread = threading.Thread(target=self._run, name="lcm-sqlite-writer", daemon=True)
        self._thread.start()
        self._checkpointer = threading.Thread(target=self._checkpoint_loop,
                                              name="lcm-sqlite-checkpoint", daemon=True)
        self._checkpointer.start()

    # -- writes ---------------------------------------------------------------
    def write(self, fn: Callable[..., T], *args: Any,
              then: Callable[[T], None] | None = None, urgent: bool = False,
              order_key: Hashable = None, gives_way: bool = False,
              then_key: Hashable = None) -> Future[T]:
        """Queue ``fn(conn, *args)`` to run in a write transaction; return its future.

        The future holds ``fn``'s return value, or the exception it raised (the job's
        changes are then rolled back; other jobs of the batch are unaffected). Jobs
        run in the order they were queued; ``urgent`` ones (a request waits for
        them) ahead of those that are not, except those that share their
        ``order_key``: see :class:`~memory_core.store.batch.WriteQueue`, as for
        ``gives_way`` (background work that waits while a request is in flight:
        :meth:`hold_background`).
        ``then(value)``: called on the writer thread once the job has committed and
        before its future resolves, so that what it queues runs before anything
        queued by whoever waited on the future; what it queues keeps this job's
        place, ahead of the jobs queued after it (``then_key``: the order key of
        those jobs when not ``order_key``; :meth:`WriteQueue.following
        <memory_core.store.batch.WriteQueue.following>`)
        (it must not raise; nothing is called for a failed job or batch). Raises
        ``StoreError`` after :meth:`close`. ``fn`` and ``then`` run in a copy of the
        caller's context (:mod:`contextvars`): a job logs with the request id of the
        request that queued it.
        """
        if self._closed:
            raise StoreError("store is closed")
        fut: Future[T] = Future()
        self._queue.put((fn, args, fut, then, contextvars.copy_context()), urgent=urgent,
                        key=order_key, gives_way=gives_way, then_key=then_key)
        return fut

    def hold_background(self, busy: Callable[[], bool] | None, seconds: float) -> None:
        """Jobs queued with ``gives_way`` wait while ``busy()``, at most ``seconds``
        each (:meth:`WriteQueue.hold_background
        <memory_core.store.batch.WriteQueue.hold_background>`)."""
        self._queue.hold_background(busy, seconds)

    def wake_writer(self) -> None:
        """``busy()`` may have turned false: the writer looks again."""
        self._queue.wake()

    def write_sync(self, fn: Callable[..., T], *args: Any, timeout: float | None = 60.0) -> T:
        """Run ``fn(conn, *args)`` on the writer thread and wait for its result."""
        return self.write(fn, *args).result(timeout)

    def write_tx(self, fn: Callable[..., T], *args: Any,
                 then: Callable[[T], None] | None = None, urgent: bool = False,
                 order_key: Hashable = None, gives_way: bool = False,
              then_key: Hashable = None) -> Future[T]:
        """Queue ``fn(tx, *args)`` as a write job, ``tx`` the writer's
        :class:`~memory_core.store.sqlite_ops.SqliteTx`; as :meth:`write` otherwise."""
        return self.write(self._on_writer, fn, args, then=then, urgent=urgent,
                          order_key=order_key, gives_way=gives_way, then_key=then_key)

    def write_tx_sync(self, fn: Callable[..., T], *args: Any,
                      timeout: float | None = 60.0, urgent: bool = False) -> T:
        """Run ``fn(tx, *args)`` as a write job and wait for its result."""
        return self.write_tx(fn, *args, urgent=urgent).result(timeout)

    def _on_writer(self, conn: sqlite3.Connection, fn: Callable[..., T],
                   args: tuple[Any, ...]) -> T:
        return fn(self._wtx, *args)

    def tx_on(self, conn: sqlite3.Connection) -> SqliteTx:
        """The operation groups over a connection that :meth:`read`/:meth:`write` handed
        to a job (for jobs that also call modules not yet moved behind the interface)."""
        if conn is self._wconn:
            return self._wtx
        if conn is getattr(self._local, "conn", None):
            return self._reader_tx()
        return SqliteTx(conn)

    def _run(self) -> None:
        conn = self._wconn
        while True:
            entries, stop = self._queue.take(_BATCH_MAX)
            if entries:
                self._run_batch(conn, entries)
            if stop:
                return

    def queue_depth(self) -> int:
        """Write jobs queued and not yet taken by the writer thread (approximate)."""
        return self._queue.qsize()

    def _run_batch(self, conn: sqlite3.Connection, entries: list[Entry]) -> None:
        results: list[Done] = []
        started = time.perf_counter()
        jobs = [entry[2] for entry in entries]
        try:
            conn.execute("BEGIN IMMEDIATE")
            for at, entry in enumerate(entries):
                if self._queue.cut(at, entry):  # an urgent job waits: commit what ran
                    self._queue.put_back(entries[at:])
                    jobs = jobs[:at]  # the batch's own, should it fail
                    break
                fn, args, fut, then, ctx = entry[2]
                if not fut.set_running_or_notify_cancel():
                    continue
                conn.execute("SAVEPOINT job")
                try:
                    value = ctx.run(fn, conn, *args)
                except BaseException as exc:  # noqa: BLE001 - delivered to the caller
                    conn.execute("ROLLBACK TO job")
                    conn.execute("RELEASE job")
                    results.append((fut, False, exc, None, ctx))
                else:
                    conn.execute("RELEASE job")
                    results.append((fut, True, value, then, ctx))
            conn.execute("COMMIT")
        except BaseException as exc:  # noqa: BLE001 - e.g. disk full at COMMIT
            log.error("sqlite write batch failed: %s", exc)
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            fail_batch(jobs, exc)  # every job was rolled back with it
            return
        self.commit_latency.observe(time.perf_counter() - started)
        self._commits += 1
        if self._commits % CHECKPOINT_COMMITS == 0:
            self._checkpoint_due.set()
        complete_batch(results, self.after_commit, self._queue, entries)

    def _checkpoint_loop(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                self._checkpoint_due.wait()
                self._checkpoint_due.clear()
                if self._closed:
                    return
                hook = self.before_checkpoint
                if hook is not None:
                    try:
                        hook()
                    except Exception:  # noqa: BLE001 - never stops checkpoints
                        log.exception("before_checkpoint hook failed")
                if self._closed:
                    return
                try:
                    if conn is None:
                        conn = _connect(self.path, *self._limits)
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error as exc:  # the writer's own checkpoint still bounds the WAL
                    log.warning("WAL checkpoint failed: %s", exc)
        finally:
            if conn is not None:
                conn.close()

    # -- reads ----------------------------------------------------------------
    def reader(self) -> sqlite3.Connection:
        """Return this thread's read connection (opened on first use)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreError("store is closed")
            conn = _connect(self.path, *self._limits)
            conn.execute("PRAGMA query_only=ON")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(conn, *args)`` on this thread's read connection and return its value."""
        return fn(self.reader(), *args)

    def read_tx(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(tx, *args)`` on this thread's read connection and return its value
        (``tx``: its :class:`~memory_core.store.sqlite_ops.SqliteTx`)."""
        return fn(self._reader_tx(), *args)

    def _reader_tx(self) -> SqliteTx:
        conn = self.reader()
        tx: SqliteTx | None = getattr(self._local, "tx", None)
        if tx is None:
            tx = self._local.tx = SqliteTx(conn)
        return tx

    def flush(self, timeout: float | None = 60.0) -> None:
        """Wait until every write queued before this call has committed."""
        if not self._closed:
            self.write(lambda conn: None).result(timeout)

    @contextlib.contextmanager
    def exclusive(self, key: int) -> Iterator[bool]:
        """The lock ``key`` of every process on this store: always taken (yields
        True). One process serves a data directory (its index writer lock), so the
        caller's in-process lock already excludes everyone."""
        yield True

    def close(self) -> None:
        """Flush queued writes, stop the writer thread and close every connection."""
        if self._closed:
            return
        self._closed = True
        self._queue.stop()
        self._thread.join(timeout=60)
        self._checkpoint_due.set()
        self._checkpointer.join(timeout=60)
        try:
            self._wconn.execute("PRAGMA optimize")
        except sqlite3.Error:
            pass
        self._wconn.close()
        with self._readers_lock:
            for conn in self._readers:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._readers.clear()


if TYPE_CHECKING:  # mypy checks that SqliteStore implements the Store Protocol
    def _conforms(store: SqliteStore) -> Store:
        return store

    def _engine_store(store: SqliteStore) -> EngineStore:
        return store


def stored_schema_version(data_dir: str | Path) -> int:
    """The ``user_version`` of the database in ``data_dir`` (``0``: no file), read on
    a read-only connection: no migration is applied. Raises
    :class:`~memory_core.errors.StoreError` when the file cannot be read."""
    path = Path(data_dir) / DB_FILENAME
    if not path.is_file():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
        try:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the schema version of {path}: {exc}") from exc


def read_only_tx(path: Path, fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(tx, *args)`` on a read-only connection to the SQLite file ``path``
    (another process's store, e.g. a benchmark watching a proxy), ``tx`` a
    :class:`~memory_core.store.sqlite_ops.SqliteTx`; the connection is closed after.
    Raises ``sqlite3.OperationalError`` when the file cannot be opened."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    try:
        return fn(SqliteTx(conn), *args)
    finally:
        conn.close()
