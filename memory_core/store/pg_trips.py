"""Round trips of :class:`~memory_core.store.pg.PgStore`, counted per job.

Every statement a job sends to the server is one round trip (psycopg 3 outside
pipeline mode waits for each statement's result), and so are the write batch's
own ``BEGIN`` (with the advisory lock), savepoints and ``COMMIT``. The store's
connections make their cursors with :class:`CountingCursor`, which adds one to
the job running on the calling thread; :class:`RoundTrips` keeps the sums by the
job's name (its function's ``__qualname__``), so a benchmark can tell capture's
round trips from the assembly's reads. One lock and two additions a statement:
cheap next to a round trip, so it is always on.

**Deferred writes.** On the writer's connection (:class:`WriterConnection`) a
statement whose result nobody reads (a head move, an event row, the extraction
queue's bookkeeping, the batch's ``BEGIN`` and lock) can be deferred
(:func:`defer`): it is sent with the job's next statement, in one pipeline
(psycopg 3's pipeline mode, one ``Sync``), so it costs no round trip of its own;
the next statement's round trip carries them all. An error in a deferred
statement is raised by that next statement (the rest of the pipeline is
skipped), inside the same job: the write batch sends a job's last deferred
statements before the job ends (:func:`sync`), or with ``COMMIT`` when the job is
the batch.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from psycopg import pq
from psycopg.rows import dict_row

_job = threading.local()
"""``trips`` (the :class:`RoundTrips` of the store whose job runs on this thread)
and ``key`` (the job's name), set by the store around each job."""


class RoundTrips:
    """Jobs run and round trips made, by job name (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, list[int]] = {}

    def add(self, key: str, trips: int = 0, jobs: int = 0) -> None:
        """Count ``trips`` round trips and ``jobs`` jobs for ``key``."""
        with self._lock:
            entry = self._counts.setdefault(key, [0, 0])
            entry[0] += jobs
            entry[1] += trips

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """``{job name: (jobs, round trips)}`` so far."""
        with self._lock:
            return {k: (v[0], v[1]) for k, v in self._counts.items()}


def job_name(fn: Any) -> str:
    """The name a job is counted under: its function's qualified name."""
    inner = getattr(fn, "func", fn)  # functools.partial
    module = str(getattr(inner, "__module__", "") or "").rpartition(".")[2]
    name = str(getattr(inner, "__qualname__", type(inner).__name__))
    return f"{module}.{name}" if module else name


class running:
    """Context manager: count the statements sent on this thread as job ``key``
    of ``trips`` (restores the job it interrupts: a job may run another's reads)."""

    __slots__ = ("_key", "_saved", "_trips")

    def __init__(self, trips: RoundTrips, key: str) -> None:
        self._trips, self._key = trips, key
        self._saved: tuple[Any, Any] = (None, None)

    def __enter__(self) -> None:
        self._saved = (getattr(_job, "trips", None), getattr(_job, "key", None))
        _job.trips, _job.key = self._trips, self._key
        self._trips.add(self._key, jobs=1)

    def __exit__(self, *exc: object) -> None:
        _job.trips, _job.key = self._saved


def count(n: int = 1) -> None:
    """Add ``n`` round trips to the job running on this thread (if any)."""
    trips = getattr(_job, "trips", None)
    if trips is not None:
        trips.add(_job.key, trips=n)


Deferred = tuple[Any, Any, "psycopg.Cursor[Any] | None"]
"""A deferred statement: ``(query, params, cursor)`` (the cursor that keeps its
rows, :func:`defer_read`; ``None``: its result is not read)."""


class WriterConnection(psycopg.Connection[Any]):
    """The writer thread's connection: it holds the statements deferred to its
    next round trip (:func:`defer`)."""

    deferred: list[Deferred]

    @classmethod
    def open(cls, url: str, **kwargs: Any) -> WriterConnection:
        conn = cls.connect(url, **kwargs)
        conn.deferred = []
        return conn


def defer(conn: Any, query: Any, params: Any = None) -> None:
    """Send ``query`` with the next statement of ``conn`` (the writer's, in a write
    job), or now on any other connection (a read job's: nothing follows there)."""
    pending = getattr(conn, "deferred", None)
    if pending is None:
        conn.execute(query, params)
    else:
        pending.append((query, params, None))


def defer_read(conn: Any, query: Any, params: Any = None) -> Callable[[], list[Any]]:
    """Send ``query`` with the next statement of ``conn`` as :func:`defer`, keeping
    its rows; return a function that reads them (as dicts), sending it first
    (:func:`sync`) when nothing has carried it yet. On any other connection the
    query runs now."""
    pending = getattr(conn, "deferred", None)
    cur = psycopg.Cursor(conn, row_factory=dict_row)
    if pending is None:
        count()
        rows = cur.execute(query, params).fetchall()
        return lambda: rows
    entry: Deferred = (query, params, cur)
    pending.append(entry)

    def read() -> list[Any]:
        if any(e is entry for e in pending):
            sync(conn)
        return cur.fetchall()

    return read


def sync(conn: Any) -> bool:
    """Send the statements deferred on ``conn`` now (one round trip, counted to the
    running job); raise the first one's error. Returns whether there were any."""
    pending = getattr(conn, "deferred", None)
    if not pending:
        return False
    count()
    _send(conn)
    return True


def _send(conn: Any, cursor: psycopg.Cursor[Any] | None = None, query: Any = None,
          params: Any = None, kwargs: dict[str, Any] | None = None) -> None:
    """The deferred statements of ``conn``, then ``query`` on ``cursor``, in one
    pipeline: the results come back at its end (one round trip). Inside a
    pipeline already (:func:`pipelined`), queued in it."""
    pending = list(getattr(conn, "deferred", None) or ())
    if pending:
        conn.deferred.clear()
    with contextlib.nullcontext() if in_pipeline(conn) else conn.pipeline():
        for q, p, cur in pending:
            (cur or psycopg.Cursor(conn)).execute(q, p)
        if cursor is not None:
            psycopg.Cursor.execute(cursor, query, params, **(kwargs or {}))


def in_pipeline(conn: Any) -> bool:
    """Whether ``conn`` is in pipeline mode (statements queued, results at its end)."""
    return bool(conn.pgconn.pipeline_status != pq.PipelineStatus.OFF)


@contextlib.contextmanager
def pipelined(conn: Any) -> Iterator[None]:
    """Send the statements of the block (and those deferred before it) in one
    pipeline: one round trip, counted to the running job; read their cursors
    after the block."""
    count()
    with conn.pipeline():
        yield


class CountingCursor(psycopg.Cursor[Any]):
    """A cursor that counts each ``execute``/``executemany`` as one round trip of
    the job running on its thread (``executemany`` pipelines its rows); on the
    writer's connection the statements deferred there go with it (:func:`defer`)."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        conn = self.connection
        if in_pipeline(conn):  # the pipeline's owner counts its round trip
            _send(conn, self, query, params, kwargs)
            return self
        count()
        if not getattr(conn, "deferred", None):
            return super().execute(query, params, **kwargs)
        _send(conn, self, query, params, kwargs)
        return self

    def executemany(self, *args: Any, **kwargs: Any) -> None:
        self._send_deferred()
        count()
        super().executemany(*args, **kwargs)

    def _send_deferred(self) -> None:
        if getattr(self.connection, "deferred", None):
            count()
            _send(self.connection)
