"""The C allocator of a long-running proxy: fewer heaps, freed memory handed back.

Most of the proxy's resident memory is native: the embedding models, onnxruntime's
and Tantivy's buffers, SQLite's page caches, all from glibc's ``malloc``. Two of
glibc's defaults cost a long-running, many-threaded process resident memory it no
longer uses (figures: docs/evaluation/README.md, "Resident memory: arenas and
idle trim"):

- glibc gives threads their own heaps ("arenas", up to eight per core), and each
  keeps what its threads freed for them alone. The proxy's threads (writer,
  indexers, embedder, memory path, executors) allocate in bursts, so most arenas
  hold free memory. :func:`limit_arenas` caps their number
  (``proxy.malloc_arena_max``), as ``MALLOC_ARENA_MAX`` would.
- ``free`` returns memory to the system only from the top of a heap; freed
  blocks below a live one stay resident (after an embedding batch or a Tantivy
  commit, tens of MiB). :class:`IdleTrim` decides when to run :func:`release`
  (a full garbage collection, then ``malloc_trim``),
  which releases every free page of every arena: once the process has been quiet
  for a while after doing some work (``proxy.memory_release_idle_seconds``), so
  never while requests or the indexer are busy, and never again while idle.

Only glibc has these calls; elsewhere (musl, macOS) every function here is a no-op
that returns ``False`` (:func:`release` still collects Python's garbage). An
operator's ``MALLOC_ARENA_MAX`` (or the glibc tunable ``glibc.malloc.arena_max``)
wins over the setting.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any

M_ARENA_MAX = -8
"""``mallopt`` parameter number of the arena limit (glibc's malloc.h)."""
QUIET_CPU_SHARE = 0.05
"""Process CPU, as a share of one core, below which the process counts as quiet."""
MIN_WORK_CPU_S = 0.2
"""CPU seconds the process must have used since the last trim for another to be
worth its cost (walking the arenas, and page faults when the memory is used again)."""


def _glibc() -> Any | None:
    """The C library when it is glibc (``None`` elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return None
        libc = ctypes.CDLL(None)
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except (OSError, ValueError, AttributeError):
        return None


_LIBC = _glibc()


def operator_set_arenas(env: dict[str, str] | None = None) -> bool:
    """Whether the environment already sets glibc's arena limit (``MALLOC_ARENA_MAX``
    or ``GLIBC_TUNABLES`` with ``glibc.malloc.arena_max``)."""
    env = dict(os.environ) if env is None else env
    return bool(env.get("MALLOC_ARENA_MAX")) or "glibc.malloc.arena_max" in env.get(
        "GLIBC_TUNABLES", "")


def limit_arenas(n: int) -> bool:
    """Cap glibc's arenas at ``n`` (``mallopt(M_ARENA_MAX, n)``) for the threads that
    allocate from now on; call it before the proxy starts its threads. ``0`` keeps
    glibc's default. Returns whether the limit was set (``False`` for ``0``, without
    glibc, or when the operator's environment sets it: :func:`operator_set_arenas`)."""
    if n <= 0 or _LIBC is None or operator_set_arenas():
        return False
    return bool(_LIBC.mallopt(M_ARENA_MAX, n))


def trim() -> bool:
    """Hand every free page of every arena back to the system (``malloc_trim(0)``).
    Returns whether glibc released anything (``False`` without glibc)."""
    return bool(_LIBC.malloc_trim(0)) if _LIBC is not None else False


def release() -> bool:
    """What an idle proxy hands back: a full :func:`gc.collect` first, then
    :func:`trim`. The proxy raises the collector's first threshold
    (:data:`proxy.app.GC_GEN0_THRESHOLD`) and a request's objects are cyclic (the
    exchange, its parsed body, its tasks), so the bodies of the last requests wait
    for a full collection: at 400 turns of one conversation about 19 MiB of parsed,
    raw and rewritten bodies (docs/evaluation/README.md, "Resident memory:
    attribution of the growth"). Returns :func:`trim`'s answer."""
    import gc

    gc.collect()
    return trim()


def available() -> bool:
    """Whether the C library is glibc (the calls here do something)."""
    return _LIBC is not None


class IdleTrim:
    """When to trim: after ``idle_seconds`` of quiet that follow some work.

    Fed samples of the process's CPU time (:meth:`due`, sans-io: the caller owns
    the clock and the trim). Quiet: in each interval between samples over the last
    ``idle_seconds`` the process used less than ``QUIET_CPU_SHARE`` of a core.
    Work: at least ``MIN_WORK_CPU_S`` of CPU since the last trim, or since the
    process started (``cpu`` is its CPU time: loading the models leaves freed
    memory too). So a busy process is never
    trimmed (its freed memory is about to be used again), and an idle one once.
    """

    def __init__(self, idle_seconds: float, cpu: float, now: float) -> None:
        self.idle_seconds = idle_seconds
        self._samples: deque[tuple[float, float]] = deque([(now, cpu)])
        self._after_trim = 0.0

    def due(self, now: float, cpu: float) -> bool:
        """Record a sample (monotonic seconds, process CPU seconds); return whether to
        trim now. When it returns ``True`` the trim is taken as done."""
        samples = self._samples
        samples.append((now, cpu))
        while len(samples) > 2 and now - samples[1][0] >= self.idle_seconds:
            samples.popleft()
        if now - samples[0][0] < self.idle_seconds or cpu - self._after_trim < MIN_WORK_CPU_S:
            return False
        pairs = zip(list(samples), list(samples)[1:], strict=False)
        if any(c1 - c0 >= QUIET_CPU_SHARE * (t1 - t0) for (t0, c0), (t1, c1) in pairs):
            return False
        self._after_trim = cpu
        return True


async def idle_trim_loop(idle_seconds: float, *, tick: float = 1.0,
                         cpu: Callable[[], float] = time.process_time,
                         release: Callable[[], bool] = release,
                         on_trim: Callable[[float], None] | None = None) -> None:
    """Run forever (cancel it to stop): every ``tick`` seconds feed :class:`IdleTrim`
    and run ``release`` (default :func:`release`) in the loop's default executor when it
    is due; ``on_trim(seconds)`` is told how long each took."""
    import asyncio

    loop = asyncio.get_running_loop()
    decide = IdleTrim(idle_seconds, cpu(), loop.time())
    while True:
        await asyncio.sleep(tick)
        if decide.due(loop.time(), cpu()):
            started = time.perf_counter()
            await loop.run_in_executor(None, release)
            if on_trim is not None:
                on_trim(time.perf_counter() - started)
