"""The write queue and the end of a write batch, shared by the stores' writer threads
(:class:`~memory_core.store.sqlite.SqliteStore`, :class:`~memory_core.store.pg.PgStore`).

Both queue jobs ``(fn, args, future, then, context)`` in a :class:`WriteQueue` and
run a batch of them as one transaction, each job's outcome kept as a :data:`Done`
row. Jobs run in the order queued, except that an *urgent* job (a request waits for
it: an inline compaction's node, an agent memory written by a memory tool) runs
ahead of the jobs that are not, and a running batch ends at the next job boundary
when one arrives (:meth:`WriteQueue.cut`): it waits for at most one background job
(a long message's extraction) instead of a batch of them. After the
commit, :func:`complete_batch` runs the ``after_commit`` hook, then each
committed job's ``then`` (in the job's context), then resolves the futures, in
that order (the stores' contract: what ``then`` queues runs before anything
queued by whoever waits on the future). When the batch as a whole failed,
:func:`fail_batch` fails every job that had started with one ``StoreError``.
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from memory_core.errors import StoreError

log = logging.getLogger("lcm.store")

Job = tuple[Callable[..., Any], tuple[Any, ...], "Future[Any]",
            "Callable[[Any], None] | None", contextvars.Context]
"""A queued write job: ``(fn, args, future, then, context)``."""

Done = tuple["Future[Any]", bool, Any, "Callable[[Any], None] | None", contextvars.Context]
"""A job's outcome in its batch: ``(future, ok, value or exception, then, context)``."""


Entry = tuple[int, int, Any]
"""A queued entry: ``(lane, sequence number, job)``; lower lanes run first, each
lane in the order queued."""

URGENT, NORMAL, STOP = 0, 1, 2
"""The lanes: urgent jobs, every other job, and the writer's stop (after all)."""


class WriteQueue:
    """The writer thread's queue of :data:`Job` entries, by lane then order queued.

    Thread-safe; one consumer (the writer thread) calls :meth:`take`,
    :meth:`cut` and :meth:`put_back`.
    """

    def __init__(self) -> None:
        self._heap: list[Entry] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._urgent = 0

    def put(self, job: Job, *, urgent: bool = False) -> None:
        """Queue ``job``; ``urgent``: ahead of every queued job that is not."""
        self._push((URGENT if urgent else NORMAL, next(self._seq), job))

    def stop(self) -> None:
        """Queue the writer's stop, after every job queued before or after it."""
        self._push((STOP, next(self._seq), None))

    def _push(self, entry: Entry) -> None:
        with self._cond:
            heapq.heappush(self._heap, entry)
            self._urgent += entry[0] == URGENT
            self._cond.notify()

    def take(self, limit: int) -> tuple[list[Entry], bool]:
        """Wait for a job; return ``(entries, stop)``: up to ``limit`` entries in the
        order they run, and whether the stop was reached (nothing is left). A batch
        of urgent jobs holds only those: they resolve at its commit."""
        with self._cond:
            while not self._heap:
                self._cond.wait()
            out: list[Entry] = []
            while self._heap and len(out) < limit:
                if out and out[0][0] == URGENT and self._heap[0][0] != URGENT:
                    break
                entry = heapq.heappop(self._heap)
                if entry[0] == STOP:
                    return out, True
                self._urgent -= entry[0] == URGENT
                out.append(entry)
            return out, False

    def cut(self, ran: int, entry: Entry) -> bool:
        """Whether a batch that has run ``ran`` jobs ends before ``entry``: an urgent
        job is waiting and ``entry`` is not urgent (at least one job runs a batch)."""
        return ran > 0 and entry[0] != URGENT and self._urgent > 0

    def put_back(self, entries: Iterable[Entry]) -> None:
        """Return entries a batch did not start, in their places."""
        with self._cond:
            for entry in entries:
                heapq.heappush(self._heap, entry)
                self._urgent += entry[0] == URGENT
            self._cond.notify()

    def qsize(self) -> int:
        """Jobs queued and not yet taken (approximate)."""
        return len(self._heap)


def complete_batch(done: Iterable[Done], after_commit: Callable[[], None] | None) -> None:
    """After a batch committed: ``after_commit()``, each ``then(value)`` of the jobs
    that succeeded, then every future (its value, or the job's own exception).
    Neither the hook nor a ``then`` that raises stops the rest (logged)."""
    done = list(done)
    if after_commit is not None:
        try:
            after_commit()
        except Exception:  # noqa: BLE001 - a hook never breaks writes
            log.exception("after_commit hook failed")
    for _fut, ok, value, then, ctx in done:
        if ok and then is not None:
            try:
                ctx.run(then, value)
            except BaseException:  # noqa: BLE001 - the job itself has committed
                log.exception("a write's follow-up failed")
    for fut, ok, value, _then, _ctx in done:
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)


def fail_batch(jobs: Iterable[Job], exc: BaseException) -> None:
    """The batch's transaction failed as a whole (rolled back, or lost at
    ``COMMIT``): fail every job that had started with ``StoreError``."""
    err = StoreError(f"write failed: {exc}")
    for _fn, _args, fut, _then, _ctx in jobs:
        if fut.running():
            fut.set_exception(err)
