"""Foreground: the chat requests in flight, which background indexing gives way to.

On a 2-core sidecar the embedder (a C engine with threads of its own, niced but
sharing the cores) and Tantivy's writer, woken by a request's own capture, ran
exactly while that request's memory path (capture wait, history rewrite, block
assembly) was running. In ``lcm-proxy eval``'s 1000-turn session that path took
20 ms with the local embedder against 14 ms with the hashing one. The proxy marks
each memory path and answer-commit wait with :meth:`Foreground.hold`, and each
chat request's whole life with :meth:`Foreground.hold_request` (see
``proxy.handlers.chat.chat_completions``); the index workers call :meth:`Foreground.wait_clear`
before each step and between embedding batches, with a per-step budget
(``search.foreground_wait_ms``): once the budget is spent the step goes on, so
indexing keeps progressing under continuous load. The store's writer holds the
extraction jobs queued after a commit the same way, within the same budget
(:meth:`Foreground.in_flight`, :meth:`Foreground.watch`;
:class:`~memory_core.store.batch.WriteQueue`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

REQUEST_QUIET_SECONDS = 0.02
"""How long after the last request in flight ends the background still counts it in
flight (:attr:`Foreground.in_flight`, ``wait_clear(requests=True)``): an agent's
next request often follows its answer within a millisecond (a tool call run
locally, a client's retry, back-to-back sub-requests), and background work started
in that gap (an extraction, an indexing step: milliseconds of interpreter time
that cannot be cut) is what the next request then waits for. Background work is
delayed by this much after a burst; within ``search.foreground_wait_ms`` as ever."""


class Foreground:
    """Counters of open holds and a condition to wait for none; thread-safe.

    Two kinds of hold. :meth:`hold` marks a request's latency-critical steps (its
    memory path, the wait for its answer's commit): everything in the background
    gives way to those (the index workers, compaction, WAL checkpoints).
    :meth:`hold_request` marks a chat request for its whole life, upstream round
    trip included: only the index workers give way to that too (``requests=True``
    in :meth:`wait_clear`). Woken by the request's own capture, they would
    otherwise embed and index exactly while a quickly answered request relays and
    stores its answer; compaction and checkpoints, which run once a turn, keep to
    the critical steps, so that under steady load they do not wait out their
    budget on every turn. Both are cheap enough for the event loop (one
    uncontended lock, never a wait). :meth:`close` wakes every waiter for good
    (shutdown).
    """

    def __init__(self, quiet: float = 0.0) -> None:
        self.quiet = max(0.0, quiet)
        """Seconds after the last request's end that still count as in flight
        (:data:`REQUEST_QUIET_SECONDS` for the indexer's; 0 by default)."""
        self._ended = -float("inf")  # time.monotonic() when the last request ended
        self._open = 0
        self._requests = 0
        self._closed = False
        self._cond = threading.Condition()
        self._watchers: list[Callable[[], None]] = []

    def watch(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` whenever a hold closes leaving none of either kind open (on
        the closing thread, outside this object's lock: cheap, must not raise), e.g.
        to wake the store's writer holding a job that gives way to requests."""
        self._watchers.append(fn)

    def hold(self) -> contextlib.AbstractContextManager[None]:
        """Mark one request's latency-critical step for the duration of the block."""
        return self._counted("_open")

    def hold_request(self) -> contextlib.AbstractContextManager[None]:
        """Mark one chat request, for the duration of the block (its whole life)."""
        return self._counted("_requests")

    @contextlib.contextmanager
    def _counted(self, counter: str) -> Iterator[None]:
        with self._cond:
            setattr(self, counter, getattr(self, counter) + 1)
        try:
            yield
        finally:
            with self._cond:
                left = getattr(self, counter) - 1
                setattr(self, counter, left)
                if not left:
                    self._cond.notify_all()
                clear = not self._open and not self._requests
                if clear:
                    self._ended = time.monotonic()
            if clear:
                for fn in self._watchers:
                    fn()

    @property
    def busy(self) -> bool:
        """Whether a latency-critical hold (:meth:`hold`) is open now."""
        return self._open > 0

    @property
    def in_flight(self) -> bool:
        """Whether a hold of either kind is open now (a request in flight), or the
        last one ended less than :attr:`quiet` seconds ago."""
        return (self._open > 0 or self._requests > 0
                or time.monotonic() - self._ended < self.quiet)

    @property
    def requests(self) -> int:
        """Chat requests in flight now (:meth:`hold_request`)."""
        return self._requests

    def wait_clear(self, timeout: float, *, requests: bool = False) -> bool:
        """Block until no :meth:`hold` is open, and with ``requests`` no
        :meth:`hold_request` either (or :meth:`close`), at most ``timeout`` seconds.
        Returns ``True`` when clear; ``timeout`` <= 0 never waits."""
        def quiet_left() -> float:
            return self.quiet - (time.monotonic() - self._ended) if requests else 0.0

        def clear() -> bool:
            return not self._open and not (requests and self._requests) \
                and quiet_left() <= 0

        deadline = time.monotonic() + timeout
        with self._cond:
            while not clear() and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                held = self._open or (requests and self._requests)
                # a hold's end wakes the wait; the quiet period's end does not
                self._cond.wait(left if held else min(left, max(quiet_left(), 0.001)))
            return clear()

    def close(self) -> None:
        """Wake every waiter now and make later waits return at once."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class StepBudget:
    """The time one indexer step may spend giving way, shared by all its waits.

    ``seconds``: the budget (``search.foreground_wait_ms`` / 1000). Each
    :meth:`give_way` waits for the foreground at most what is left of it, so a
    step that embeds many batches waits ``seconds`` in all, not per batch.
    """

    def __init__(self, foreground: Foreground, seconds: float) -> None:
        self.foreground = foreground
        self.deadline = time.monotonic() + max(0.0, seconds)

    def give_way(self) -> None:
        """Wait while a request is in flight (either kind of hold), within what is
        left of the budget."""
        self.foreground.wait_clear(self.deadline - time.monotonic(), requests=True)
