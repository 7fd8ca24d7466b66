"""Round trips of :class:`~memory_core.store.pg.PgStore`, counted per job.

Every statement a job sends to the server is one round trip (psycopg 3 outside
pipeline mode waits for each statement's result), and so are the write batch's
own ``BEGIN`` (with the advisory lock), savepoints and ``COMMIT``. The store's
connections make their cursors with :class:`CountingCursor`, which adds one to
the job running on the calling thread; :class:`RoundTrips` keeps the sums by the
job's name (its function's ``__qualname__``), so a benchmark can tell capture's
round trips from the assembly's reads. One lock and two additions a statement:
cheap next to a round trip, so it is always on.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg

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


class CountingCursor(psycopg.Cursor[Any]):
    """A cursor that counts each ``execute``/``executemany`` as one round trip of
    the job running on its thread (``executemany`` pipelines its rows)."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        count()
        return super().execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> None:
        count()
        super().executemany(*args, **kwargs)
