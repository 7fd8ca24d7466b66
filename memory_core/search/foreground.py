"""Foreground: the chat requests in flight, which background indexing gives way to.

On a 2-core sidecar the embedder (a C engine with threads of its own, niced but
sharing the cores) and Tantivy's writer, woken by a request's own capture, ran
exactly while that request's memory path (capture wait, history rewrite, block
assembly) was running. In ``lcm-proxy eval``'s 1000-turn session that path took
20 ms with the local embedder against 14 ms with the hashing one. The proxy marks
each chat request, for its whole life, with :meth:`Foreground.hold` (see
``proxy.handlers.chat.chat_completions``); the index workers call :meth:`Foreground.wait_clear`
before each step and between embedding batches, with a per-step budget
(``search.foreground_wait_ms``): once the budget is spent the step goes on, so
indexing keeps progressing under continuous load.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator


class Foreground:
    """A counter of open holds and a condition to wait for none; thread-safe.

    :meth:`hold` is cheap enough for the event loop (one uncontended lock, never a
    wait). :meth:`close` wakes every waiter for good (shutdown).
    """

    def __init__(self) -> None:
        self._open = 0
        self._closed = False
        self._cond = threading.Condition()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Mark one request on the latency path for the duration of the block."""
        with self._cond:
            self._open += 1
        try:
            yield
        finally:
            with self._cond:
                self._open -= 1
                if not self._open:
                    self._cond.notify_all()

    @property
    def busy(self) -> bool:
        """Whether a hold is open now."""
        return self._open > 0

    def wait_clear(self, timeout: float) -> bool:
        """Block until no hold is open (or :meth:`close`), at most ``timeout``
        seconds. Returns ``True`` when clear; ``timeout`` <= 0 never waits."""
        with self._cond:
            if timeout > 0:
                self._cond.wait_for(lambda: not self._open or self._closed, timeout)
            return not self._open

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
        """Wait while a request is in flight, within what is left of the budget."""
        self.foreground.wait_clear(self.deadline - time.monotonic())
