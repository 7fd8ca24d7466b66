"""Latency figures the engine keeps for whoever exports them (the proxy's metrics).

memory_core never imports a metrics library: its threads record durations in a
:class:`LatencyStats` and a reader (``proxy.metrics``, at scrape time) copies a
:class:`LatencySnapshot` into whatever format it serves.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

LATENCY_BOUNDS: tuple[float, ...] = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                     0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
"""Default bucket upper bounds, in seconds (a last ``+Inf`` bucket is implied)."""


@dataclass(frozen=True, slots=True)
class LatencySnapshot:
    """A copy of a :class:`LatencyStats`: ``buckets`` are ``(upper bound in seconds,
    cumulative count)`` pairs ending with ``(inf, count)``; ``total`` is the sum of
    the observed durations in seconds."""

    buckets: tuple[tuple[float, int], ...]
    count: int
    total: float


class LatencyStats:
    """A thread-safe histogram of durations in seconds (fixed ``bounds``)."""

    def __init__(self, bounds: tuple[float, ...] = LATENCY_BOUNDS) -> None:
        self.bounds = tuple(sorted(bounds))
        self._counts = [0] * (len(self.bounds) + 1)
        self._total = 0.0
        self._lock = threading.Lock()

    def observe(self, seconds: float) -> None:
        """Record one duration (seconds; negative values count as 0)."""
        seconds = max(0.0, float(seconds))
        i = bisect.bisect_left(self.bounds, seconds)
        with self._lock:
            self._counts[i] += 1
            self._total += seconds

    def snapshot(self) -> LatencySnapshot:
        """Return the cumulative buckets, count and sum as of now."""
        with self._lock:
            counts, total = list(self._counts), self._total
        running, buckets = 0, []
        for bound, n in zip((*self.bounds, float("inf")), counts, strict=True):
            running += n
            buckets.append((bound, running))
        return LatencySnapshot(tuple(buckets), running, total)
