"""PostgreSQL store: a ``psycopg_pool`` pool of readers, one writer thread fed by a queue.

The contract is :class:`memory_core.store.api.Store`'s, and what
:class:`memory_core.store.sqlite.SqliteStore` guarantees holds here too:

- **Reads** (:meth:`PgStore.read_tx`) run on the calling thread on a pooled
  connection in autocommit mode: each statement reads what was committed when it
  started (two statements of one job may see different commits, as SQLite's
  autocommit readers).
- **Writes** (:meth:`PgStore.write_tx`) are queued to one writer thread, which drains
  the queue into batches of up to 256 jobs; a batch is one transaction on the
  writer's own connection (outside the pool, so that reads holding every pooled
  connection never make a write wait) and each job a savepoint in it (a batch of
  one job needs none), so a failing job rolls back alone and the batch commits
  once. Jobs of this store run in the order queued, a job's future resolves after
  its commit, and ``then`` runs (on the writer thread) after the commit and before
  the future resolves, so what it queues runs before anything queued by whoever
  waits on the future, and keeps the job's place ahead of the jobs queued after
  it (:meth:`~memory_core.store.batch.WriteQueue.following`). A lost connection (a restart, a failover) or a failed
  ``COMMIT`` fails every job of its batch with
  :class:`~memory_core.errors.StoreError`; the next batch connects again.
- **Across replicas**: each batch first takes a transaction-level advisory lock
  (:data:`WRITE_LOCK`), so the write transactions of every store on one database
  commit one at a time. Ids (messages, the index outbox, the item change log) are
  drawn from sequences inside that lock, so they grow in commit order on the whole
  database, not only per process: a reader that catches up by position (the
  indexer's checkpoint, the item cache's change position) never skips a row that a
  slower transaction commits later with a smaller id.

Schema: :mod:`memory_core.store.pg_migrations`, applied on open under an advisory
lock of its own. Needs ``psycopg`` 3 and ``psycopg_pool`` (the ``postgres`` extra).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from memory_core.errors import SchemaTooNewError, StoreError
from memory_core.stats import LatencyStats
from memory_core.store import pg_text
from memory_core.store.api import EngineStore, Store
from memory_core.store.batch import Done, Entry, WriteQueue, complete_batch, fail_batch
from memory_core.store.pg_migrations import apply_migrations
from memory_core.store.pg_ops import PgTx
from memory_core.store.pg_trips import (
    CountingCursor,
    RoundTrips,
    WriterConnection,
    job_name,
    running,
    sync,
)

log = logging.getLogger("lcm.store")
T = TypeVar("T")

_BATCH_MAX = 256

WRITE_LOCK = 0x6C636D5F777269  # "lcm_wri"
"""Key of the transaction-level advisory lock every write batch holds until it commits."""

_BEGIN = ((b"BEGIN", None, None),
          (f"SELECT pg_advisory_xact_lock({WRITE_LOCK})".encode(), None, None))
"""A write batch's transaction and lock, deferred to its first statement
(:func:`~memory_core.store.pg_trips.defer`)."""

EXCLUSIVE_CLASS = 0x6C636D  # "lcm"
"""First key of the session-level advisory locks of :meth:`PgStore.exclusive`."""


def describe(url: str) -> str:
    """``url`` without its password: ``host:port/dbname`` (for messages and logs)."""
    try:
        info = conninfo_to_dict(url)
    except psycopg.Error:
        return "(unparsable PostgreSQL URL)"
    return f"{info.get('host', '')}:{info.get('port', '5432')}/{info.get('dbname', '')}"


def stored_schema_version(url: str, timeout: float = 10.0) -> int:
    """The last migration applied to the database at ``url`` (``0``: none yet), read
    without applying any (no advisory lock, no DDL). Raises
    :class:`~memory_core.errors.StoreError` when it cannot be reached."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout))
                             ) as conn:
            row = conn.execute("SELECT to_regclass('lcm_schema') IS NOT NULL").fetchone()
            if row is None or not row[0]:
                return 0
            got = conn.execute("SELECT COALESCE(MAX(number), 0) FROM lcm_schema").fetchone()
            return int(got[0]) if got is not None else 0
    except psycopg.Error as exc:
        raise StoreError(f"cannot read the schema version of {describe(url)}: {exc}") from exc


class PgStore:
    """The shared store: one PostgreSQL database at ``url`` (``postgresql://…``).

    Opening connects (at most ``timeout`` seconds), applies pending migrations and
    starts the writer thread; it raises :class:`~memory_core.errors.StoreError` when
    the database cannot be reached or migrated and ``SchemaTooNewError`` when it is
    newer than this code. The read pool keeps ``min_size`` to ``max_size``
    connections, each read job holding one while it runs (a read waits up to
    ``timeout`` seconds for a free one, then raises ``psycopg_pool.PoolTimeout``);
    the writer has one more of its own. Call :meth:`close` to flush queued writes
    and close every connection.
    """

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10,
                 timeout: float = 30.0) -> None:
        self.url = url
        self.shared = True
        """Other processes may write this database (replicas, :mod:`memory_core.replica`)."""
        self.location = describe(url)
        """``host:port/dbname`` (:class:`~memory_core.store.api.EngineStore`)."""
        self.before_checkpoint: Callable[[], None] | None = None
        """Unused: PostgreSQL has no WAL checkpoints for the engine to give way to."""
        self._pool = ConnectionPool(url, min_size=min_size, max_size=max_size,
                                    timeout=timeout,
                                    kwargs={"autocommit": True,
                                            "cursor_factory": CountingCursor},
                                    configure=pg_text.register, open=False, name="lcm-pg")
        try:
            self._pool.open(wait=True, timeout=timeout)
            with self._pool.connection() as conn:
                self.schema_version = apply_migrations(conn)
        except SchemaTooNewError:
            self._pool.close()
            raise
        except Exception as exc:  # psycopg.Error, PoolTimeout
            self._pool.close()
            raise StoreError(f"cannot open store at {describe(url)}: {exc}") from exc
        self._timeout = timeout
        self._wconn: WriterConnection | None = None
        self._lconn: psycopg.Connection[Any] | None = None
        self._lmutex = threading.Lock()  # one statement at a time on _lconn
        self._queue = WriteQueue()
        self._closed = False
        self.after_commit: Callable[[], None] | None = None
        """Called on the writer thread after each committed batch (e.g. to wake an
        indexer). Must be cheap and must not raise."""
        self.round_trips = RoundTrips()
        """Jobs and round trips by job name (:mod:`memory_core.store.pg_trips`); a
        write batch's ``BEGIN``, lock and ``COMMIT`` count to its job when it holds
        one, else to ``(write batch)``."""
        self.commit_latency = LatencyStats()
        """Seconds each write transaction took on the writer thread, from ``BEGIN``
        to the end of its ``COMMIT`` (all its jobs included)."""
        self._thread = threading.Thread(target=self._run, name="lcm-pg-writer", daemon=True)
        self._thread.start()

    # -- writes ---------------------------------------------------------------
    def write_tx(self, fn: Callable[..., T], *args: Any,
                 then: Callable[[T], None] | None = None, urgent: bool = False,
                 order_key: Hashable = None, gives_way: bool = False,
                 then_key: Hashable = None) -> Future[T]:
        """Queue ``fn(tx, *args)`` as one atomic write job (``tx``: a
        :class:`~memory_core.store.pg_ops.PgTx` in the batch's transaction); return
        its future (``fn``'s value, or the exception it raised, its changes rolled
        back). ``urgent``: ahead of queued jobs that are not, except those that
        share its ``order_key``; ``gives_way``: waits while a request is in flight
        (:meth:`hold_background`; see :class:`~memory_core.store.batch.WriteQueue`).
        ``then(value)``: see the module docstring; ``then_key``: the order key of
        what it queues, when not ``order_key``.
        Raises ``StoreError`` after :meth:`close`. ``fn`` and ``then`` run in a copy
        of the caller's context (:mod:`contextvars`), as the SQLite store's jobs do."""
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

    def write_tx_sync(self, fn: Callable[..., T], *args: Any,
                      timeout: float | None = 60.0, urgent: bool = False) -> T:
        """Run ``fn(tx, *args)`` as a write job and wait for its result."""
        return self.write_tx(fn, *args, urgent=urgent).result(timeout)

    def queue_depth(self) -> int:
        """Write jobs queued and not yet taken by the writer thread (approximate)."""
        return self._queue.qsize()

    def _run(self) -> None:
        while True:
            entries, stop = self._queue.take(_BATCH_MAX)
            if entries:
                self._run_batch(entries)
            if stop:
                return

    def _run_batch(self, entries: list[Entry]) -> None:
        results: list[Done] = []
        started = time.perf_counter()
        jobs = [entry[2] for entry in entries]
        alone = len(jobs) == 1  # the batch is the job: no savepoint round trips
        batch_key = job_name(jobs[0][0]) if alone else "(write batch)"
        trips = self.round_trips
        conn: WriterConnection | None = None
        try:
            conn = self._writer_connection()
            # BEGIN and the advisory lock go with the first statement of the batch
            # (pg_trips.defer: no round trip of their own).
            conn.deferred[:] = list(_BEGIN)
            tx = PgTx(conn)
            if not alone:
                # The jobs' savepoints nest in the transaction (psycopg opens a
                # savepoint inside a transaction it finds): open it first.
                sync(conn)
                trips.add(batch_key, trips=1)
            failed_alone = False
            for at, entry in enumerate(entries):
                if self._queue.cut(at, entry):  # an urgent job waits: commit what ran
                    self._queue.put_back(entries[at:])
                    jobs = jobs[:at]  # the batch's own, should it fail
                    break
                fn, args, fut, then, ctx = entry[2]
                if not fut.set_running_or_notify_cancel():
                    continue
                try:
                    with running(trips, job_name(fn)):
                        if alone:
                            value = ctx.run(fn, tx, *args)
                        else:
                            trips.add(job_name(fn), trips=2)  # SAVEPOINT, RELEASE
                            with conn.transaction():  # the job rolls back alone
                                try:
                                    value = ctx.run(fn, tx, *args)
                                    sync(conn)  # its deferred writes, before RELEASE
                                finally:
                                    conn.deferred.clear()
                except BaseException as exc:  # noqa: BLE001 - delivered to the caller
                    if conn.broken:
                        raise
                    results.append((fut, False, exc, None, ctx))
                    failed_alone = alone
                else:
                    results.append((fut, True, value, then, ctx))
            if failed_alone:
                conn.deferred.clear()  # what the job deferred is dropped with it
                if conn.pgconn.transaction_status != pq.TransactionStatus.IDLE:
                    conn.execute(b"ROLLBACK")
                    trips.add(batch_key, trips=1)
            else:
                deferred = alone and bool(conn.deferred) and results
                try:
                    conn.execute(b"COMMIT")  # with the job's last deferred writes
                except psycopg.Error as exc:
                    if not deferred or conn.broken:
                        raise
                    # A deferred statement of the job failed: the job's own error,
                    # as if the statement had run when the job asked for it.
                    fut, _ok, _value, _then, ctx = results[-1]
                    results[-1] = (fut, False, exc, None, ctx)
                    conn.execute(b"ROLLBACK")
                    trips.add(batch_key, trips=1)
                trips.add(batch_key, trips=1)
        except BaseException as exc:  # noqa: BLE001 - e.g. the connection lost at COMMIT
            log.error("postgresql write batch failed: %s", exc)
            if conn is not None and not conn.closed and not conn.broken:
                conn.deferred.clear()
                with contextlib.suppress(psycopg.Error):
                    conn.execute(b"ROLLBACK")  # a no-op (a warning) outside a transaction
            fail_batch(jobs, exc)  # every job was rolled back with it
            return
        self.commit_latency.observe(time.perf_counter() - started)
        complete_batch(results, self.after_commit, self._queue, entries)

    def _writer_connection(self) -> WriterConnection:
        conn = self._wconn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
            self._wconn = None
            conn = WriterConnection.open(self.url, autocommit=True,
                                         connect_timeout=max(1, int(self._timeout)),
                                         cursor_factory=CountingCursor)
            pg_text.register(conn)
            self._wconn = conn
        return conn

    # -- locks across replicas ----------------------------------------------------
    @contextlib.contextmanager
    def exclusive(self, key: int) -> Iterator[bool]:
        """Try to take the lock ``key`` (a 31-bit integer, e.g. a thread id) of every
        process on this database; yield whether it was taken, release it on exit.

        A session-level advisory lock on a connection of its own (outside the pool),
        so that it is held across the reads, writes and upstream calls of the block
        (a compaction), and released by the server if this process dies. Within one
        process the lock is not exclusive (advisory locks stack per session): callers
        keep their own in-process lock. Never waits; a database error yields False.
        """
        taken = False
        try:
            with self._lmutex:
                taken = bool(self._lock_connection().execute(
                    "SELECT pg_try_advisory_lock(%s, %s)",
                    (EXCLUSIVE_CLASS, key & 0x7FFFFFFF)).fetchone()[0])  # type: ignore[index]
        except psycopg.Error as exc:
            log.warning("cross-replica lock %s not taken: %s", key, exc)
        try:
            yield taken
        finally:
            if taken:
                try:
                    with self._lmutex:
                        self._lock_connection().execute(
                            "SELECT pg_advisory_unlock(%s, %s)",
                            (EXCLUSIVE_CLASS, key & 0x7FFFFFFF))
                except psycopg.Error:  # a lost session released it already
                    pass

    def _lock_connection(self) -> psycopg.Connection[Any]:
        conn = self._lconn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
            self._lconn = None
            conn = psycopg.connect(self.url, autocommit=True,
                                   connect_timeout=max(1, int(self._timeout)))
            pg_text.register(conn)
            self._lconn = conn
        return conn

    # -- reads ----------------------------------------------------------------
    def read_tx(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(tx, *args)`` on a pooled connection (autocommit) and return its
        value. Raises ``StoreError`` after :meth:`close`."""
        if self._closed:
            raise StoreError("store is closed")
        with self._pool.connection() as conn, running(self.round_trips, job_name(fn)):
            return fn(PgTx(conn), *args)

    def flush(self, timeout: float | None = 60.0) -> None:
        """Wait until every write queued before this call has committed."""
        if not self._closed:
            self.write_tx(lambda tx: None).result(timeout)

    def close(self) -> None:
        """Flush queued writes, stop the writer thread and close the pool."""
        if self._closed:
            return
        self._closed = True
        self._queue.stop()
        self._thread.join(timeout=60)
        if self._wconn is not None:
            self._wconn.close()
        with self._lmutex:
            if self._lconn is not None:
                self._lconn.close()
        self._pool.close()


if TYPE_CHECKING:  # mypy checks that PgStore implements the Store Protocol
    def _conforms(store: PgStore) -> Store:
        return store

    def _engine_store(store: PgStore) -> EngineStore:
        return store
