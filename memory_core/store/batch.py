"""The write queue and the end of a write batch, shared by the stores' writer threads
(:class:`~memory_core.store.sqlite.SqliteStore`, :class:`~memory_core.store.pg.PgStore`).

Both queue jobs ``(fn, args, future, then, context)`` in a :class:`WriteQueue` and
run a batch of them as one transaction, each job's outcome kept as a :data:`Done`
row. Jobs run in the order queued, except that an *urgent* job (a request waits for
it: a capture, an inline compaction's node, an agent memory written by a memory
tool, a purge) runs ahead of the jobs that are not, and a running batch ends at the
next job boundary when one arrives (:meth:`WriteQueue.cut`): it waits for at most
one background job (a long message's extraction) instead of a batch of them. A job
queued to *give way* (an extraction queued after a commit) waits while a request is in
flight, within a budget, unless an ordinary job waits behind it (:meth:`WriteQueue.put`).
What a job's ``then`` queues keeps the job's place (:meth:`WriteQueue.following`).
After the commit, :func:`complete_batch` runs the ``after_commit`` hook, then each
committed job's ``then`` (in the job's context), then resolves the futures, in
that order (the stores' contract: what ``then`` queues runs before anything
queued by whoever waits on the future). When the batch as a whole failed,
:func:`fail_batch` fails every job it held with one ``StoreError``.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any

from memory_core.errors import StoreError

log = logging.getLogger("lcm.store")

Job = tuple[Callable[..., Any], tuple[Any, ...], "Future[Any]",
            "Callable[[Any], None] | None", contextvars.Context]
"""A queued write job: ``(fn, args, future, then, context)``."""

Done = tuple["Future[Any]", bool, Any, "Callable[[Any], None] | None", contextvars.Context]
"""A job's outcome in its batch: ``(future, ok, value or exception, then, context)``."""


Position = tuple[int, int]
"""Where an entry stands in the order queued: ``(n, 0)`` for the ``n``-th job queued,
``(n, k)`` (``k > 0``, growing) for a follow-up of the job at ``(n, …)``
(:meth:`WriteQueue.following`): after that job, before every job queued after it."""

Entry = tuple[int, Position, Any, Hashable, float, Hashable]
"""A queued entry: ``(lane, position, job, order key, gives way until, then key)``;
lower lanes run first, each lane by position. ``gives way until``: the
:func:`time.monotonic` deadline of a job queued to give way, ``0.0`` for the others.
``then key``: the order key of the jobs its ``then`` queues (``None``: none)."""

URGENT, NORMAL, STOP = 0, 1, 2
HOLD_RECHECK_SECONDS = 0.02
"""Longest the writer holds a job that gives way without asking ``busy()`` again."""
"""The lanes: urgent jobs, every other job, and the writer's stop (after all)."""

EVERY_KEY: Hashable = object()
"""The order key of an urgent job that keeps its place after *every* job queued
before it, whatever their keys (a purge: nothing queued earlier may write the
purged rows back after it)."""


class WriteQueue:
    """The writer thread's queue of :data:`Job` entries, by lane then order queued.

    An urgent job runs ahead of the queued jobs that are not, so only a job whose
    outcome does not depend on its order against them may be urgent, unless they
    share its *order key*: jobs with one key keep their order whatever their
    lanes (an urgent job takes the queued jobs of its key ahead with it, and one
    keyed :data:`EVERY_KEY` all of them). The engine keys a persona's captures and
    extraction jobs, so that its items are still stored in message order.

    A job that is not urgent never runs ahead of an urgent job queued before it.
    Background work is not starved: after an urgent batch, the oldest job that is
    not urgent runs alone next when it was queued before every waiting urgent job,
    so under a steady stream of urgent jobs the others still advance in order.

    A job queued to *give way* (``put(gives_way=True)``) does not start while
    :meth:`hold_background`'s ``busy()`` says a request is in flight, for at most
    its ``seconds`` after it was queued, nor do the jobs behind it: the writer
    would otherwise run it (extraction: pure interpreter work) exactly while that
    request relays its answer, and take the interpreter from the event loop. It
    starts at once when an ordinary job waits behind it (a ``flush``, an
    operator's write: nobody waits on a giving-way job's lane for a budget), when
    an urgent job takes it ahead (its order key), or when :meth:`wake` finds the
    requests gone. Order is unchanged: a held job holds the jobs behind it.

    A job's *follow-ups* (what its ``then`` queues on the writer thread after its
    commit: :meth:`following`) keep its place: each runs after the jobs queued
    before the job and before every job queued after it, in the urgent lane when an
    urgent job of its key (or :data:`EVERY_KEY`) waits, so that the next capture of
    a persona never runs ahead of the extraction its previous answer queued. A batch
    holding a job whose follow-ups may take a key (``then_key``, by default its own
    key) ends before a job of that key (or :data:`EVERY_KEY`), so that they can
    still come first.

    Thread-safe; one consumer (the writer thread) calls :meth:`take`,
    :meth:`cut` and :meth:`put_back`.
    """

    def __init__(self) -> None:
        self._heap: list[Entry] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._sub = itertools.count(1)  # follow-ups' second position field
        self._parent = threading.local()  # .at: the Position whose follow-ups are queued
        self._urgent = 0
        self._urgent_keys: Counter[Hashable] = Counter()  # queued urgent entries per key
        self._owed = False  # an urgent batch ran since the last one that was not
        self._plain = 0  # queued ordinary jobs (not urgent) that do not give way
        self._busy: Callable[[], bool] | None = None
        self._budget = 0.0

    def hold_background(self, busy: Callable[[], bool] | None, seconds: float) -> None:
        """Make jobs queued to give way wait while ``busy()`` (cheap, thread-safe:
        a request is in flight) for at most ``seconds`` each; ``None``: never.
        Call :meth:`wake` when ``busy()`` turns false."""
        with self._cond:
            self._busy, self._budget = busy, max(0.0, seconds)
            self._cond.notify()

    def wake(self) -> None:
        """Have the writer look again at a held job (``busy()`` may have cleared).
        Cheap; any thread."""
        with self._cond:
            self._cond.notify()

    def put(self, job: Job, *, urgent: bool = False, key: Hashable = None,
            gives_way: bool = False, then_key: Hashable = None) -> None:
        """Queue ``job``; ``urgent``: ahead of every queued job that is not, except
        those with its ``key`` (not ``None``; :data:`EVERY_KEY`: all of them), which
        go ahead with it. ``gives_way`` (not urgent): it waits while a request is in
        flight (:meth:`hold_background`), as the class says. ``then_key``: the order
        key of the jobs the job's ``then`` queues, when not ``key`` (a batch ends
        after the job before a job of that key). Inside :meth:`following` (on its
        thread) the job is a follow-up and keeps its parent's place."""
        with self._cond:
            if urgent and key is not None:
                self._promote(lambda entry: key is EVERY_KEY or entry[3] == key)
            parent: Position | None = getattr(self._parent, "at", None)
            at = (next(self._seq), 0) if parent is None else (parent[0], next(self._sub))
            lane = URGENT if urgent else NORMAL
            if parent is not None and not urgent and self._held_key(key):
                lane = URGENT  # ahead of its key's urgent job, queued after its parent
            until = (time.monotonic() + self._budget
                     if gives_way and lane == NORMAL and self._busy is not None else 0.0)
            self._push((lane, at, job, key, until,
                        key if then_key is None else then_key))
            self._cond.notify()

    @contextlib.contextmanager
    def following(self, entry: Entry) -> Iterator[None]:
        """While inside (this thread only), jobs :meth:`put` are follow-ups of
        ``entry`` (a job taken and committed: its ``then`` runs): each runs after
        the jobs queued before ``entry`` and before those queued after it, by lane
        as the class says; nested follow-ups keep the same place."""
        prior = getattr(self._parent, "at", None)
        self._parent.at = entry[1]
        try:
            yield
        finally:
            self._parent.at = prior

    def stop(self) -> None:
        """Queue the writer's stop, after every job queued before or after it."""
        with self._cond:
            self._push((STOP, (next(self._seq), 0), None, None, 0.0, None))
            self._cond.notify()

    def _push(self, entry: Entry) -> None:
        heapq.heappush(self._heap, entry)
        self._count(entry, 1)

    def _count(self, entry: Entry, n: int) -> None:
        if entry[0] == NORMAL and not entry[4]:
            self._plain += n
        if entry[0] == URGENT:
            self._urgent += n
            if entry[3] is not None:
                self._urgent_keys[entry[3]] += n
                if not self._urgent_keys[entry[3]]:
                    del self._urgent_keys[entry[3]]

    def _held(self, entry: Entry) -> bool:
        """Whether a queued urgent job keeps ``entry`` (not urgent) ahead of it."""
        return self._held_key(entry[3])

    def _held_key(self, key: Hashable) -> bool:
        """Whether a queued urgent job keeps a job keyed ``key`` ahead of it."""
        return bool(self._urgent_keys[EVERY_KEY]) or (
            key is not None and bool(self._urgent_keys[key]))

    def _promote(self, which: Callable[[Entry], bool]) -> None:
        """Move the queued entries ``which`` selects to the urgent lane (in place)."""
        moved = False
        for at, entry in enumerate(self._heap):
            if entry[0] == NORMAL and which(entry):
                self._count(entry, -1)
                self._heap[at] = (URGENT, entry[1], entry[2], entry[3], 0.0, entry[5])
                self._count(self._heap[at], 1)
                moved = True
        if moved:
            heapq.heapify(self._heap)

    def take(self, limit: int) -> tuple[list[Entry], bool]:
        """Wait for a job; return ``(entries, stop)``: up to ``limit`` entries in the
        order they run, and whether the writer stops (nothing else is queued). A
        batch holds urgent jobs only or none: urgent ones resolve at its commit."""
        with self._cond:
            while True:
                while not self._heap:
                    self._cond.wait()
                wait = self._holding(self._heap[0])
                if not wait:
                    break
                self._cond.wait(wait)  # put, wake, or its budget spent
            if self._owed and self._heap[0][0] == URGENT:
                self._owed = False
                turn = self._oldest_before(self._heap[0][1])
                if turn is not None and not self._holding(self._heap[turn]):
                    # one job for the background, then urgent again
                    entry = self._heap[turn]
                    self._heap[turn] = self._heap[-1]
                    self._heap.pop()
                    heapq.heapify(self._heap)
                    self._count(entry, -1)
                    return [entry], False
            out: list[Entry] = []
            ahead: set[Hashable] = set()  # then keys of the batch's jobs with a then
            while self._heap and len(out) < limit:
                top = self._heap[0]
                if top[0] == STOP:
                    if out:  # stays queued: a cut batch's jobs go back ahead of it
                        break
                    heapq.heappop(self._heap)
                    return out, True
                if out and out[0][0] == URGENT and top[0] != URGENT:
                    break
                if out and self._holding(top):  # a later job still giving way
                    break
                if ahead and (top[3] is EVERY_KEY or top[3] in ahead):
                    break  # the follow-ups of a job in the batch may take its key
                out.append(heapq.heappop(self._heap))
                self._count(top, -1)
                if top[2][3] is not None and top[5] is not None:
                    ahead.add(top[5])
            self._owed = bool(out) and out[0][0] == URGENT
            return out, False

    def _holding(self, entry: Entry) -> float:
        """Seconds ``entry`` still gives way for (``0.0``: it may start now): it was
        queued to give way, its budget is not spent, no ordinary job waits behind
        it and a request is in flight."""
        if entry[0] != NORMAL or not entry[4] or self._plain or self._busy is None:
            return 0.0
        left = entry[4] - time.monotonic()
        if left <= 0:
            return 0.0
        try:
            # busy() may turn false with no wake (a quiet period after the last
            # request, memory_core.search.foreground): look again within
            # HOLD_RECHECK_SECONDS
            return min(left, HOLD_RECHECK_SECONDS) if self._busy() else 0.0
        except Exception:  # noqa: BLE001 - a broken hook never stalls the writer
            log.exception("the writer's busy() hook failed")
            return 0.0

    def _oldest_before(self, seq: Position) -> int | None:
        """The heap index of the oldest entry that is not urgent, when it was queued
        before position ``seq``, else ``None``."""
        best: int | None = None
        for at, entry in enumerate(self._heap):
            if entry[0] == NORMAL and (best is None or entry[1] < self._heap[best][1]):
                best = at
        return best if best is not None and self._heap[best][1] < seq else None

    def cut(self, ran: int, entry: Entry) -> bool:
        """Whether a batch that has run ``ran`` jobs ends before ``entry``: an urgent
        job is waiting and ``entry`` is not urgent (at least one job runs a batch)."""
        return ran > 0 and entry[0] != URGENT and self._urgent > 0

    def put_back(self, entries: Iterable[Entry]) -> None:
        """Return entries a batch did not start, in their places (in the urgent lane
        when a waiting urgent job holds them: they were queued before it)."""
        with self._cond:
            for entry in entries:
                if entry[0] == NORMAL and self._held(entry):
                    entry = (URGENT, entry[1], entry[2], entry[3], 0.0, entry[5])
                self._push(entry)
            self._cond.notify()

    def qsize(self) -> int:
        """Jobs queued and not yet taken (approximate)."""
        return len(self._heap)


def complete_batch(done: Iterable[Done], after_commit: Callable[[], None] | None,
                   queue: WriteQueue | None = None,
                   taken: Iterable[Entry] = ()) -> None:
    """After a batch committed: ``after_commit()``, each ``then(value)`` of the jobs
    that succeeded, then every future (its value, or the job's own exception).
    Neither the hook nor a ``then`` that raises stops the rest (logged). With
    ``queue`` and the batch's ``taken`` entries, what a ``then`` queues there is a
    follow-up of its job (:meth:`WriteQueue.following`)."""
    done = list(done)
    place = {id(entry[2][2]): entry for entry in taken}  # a job's future → its entry
    if after_commit is not None:
        try:
            after_commit()
        except Exception:  # noqa: BLE001 - a hook never breaks writes
            log.exception("after_commit hook failed")
    for fut, ok, value, then, ctx in done:
        if ok and then is not None:
            entry = place.get(id(fut))
            try:
                if queue is not None and entry is not None:
                    with queue.following(entry):
                        ctx.run(then, value)
                else:
                    ctx.run(then, value)
            except BaseException:  # noqa: BLE001 - the job itself has committed
                log.exception("a write's follow-up failed")
    for fut, ok, value, _then, _ctx in done:
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)


def fail_batch(jobs: Iterable[Job], exc: BaseException) -> None:
    """The batch's transaction failed as a whole (rolled back, lost at ``COMMIT``,
    or never begun): fail each of its jobs with ``StoreError``, those that had not
    started yet too (a job cancelled before it started stays cancelled)."""
    err = StoreError(f"write failed: {exc}")
    for _fn, _args, fut, _then, _ctx in jobs:
        if fut.running() or (not fut.done() and fut.set_running_or_notify_cancel()):
            fut.set_exception(err)
