"""What a request's capture waits for before it starts, deep in a conversation.

Runs ``docs/evaluation/request_path_waits.py numbers TURNS MEASURE`` in this process
and, for each measured request, prints the time from the capture's queueing
(``Engine.capture_request``, on the event loop) to the capture job's start on the
writer, whether the writer was running a batch then, and when the block's
search-ahead job (``Engine.search_ahead``, the memory-path pool) started relative to
the queueing, with its wall and thread-CPU time; sorted by the wait. ms.

    cd TREE && PYTHONPATH=$PWD python docs/evaluation/capture_start_probe.py [TURNS] [MEASURE]

(defaults 1000 30). Figures: docs/evaluation/README.md, "The plan on the writer
thread".
"""
from __future__ import annotations

import os
import runpy
import sys
import time
from typing import Any

sys.path.insert(0, os.getcwd())

from memory_core import engine as eng  # noqa: E402
from memory_core.capture.jobs import CaptureJobs  # noqa: E402
from memory_core.store import sqlite  # noqa: E402

QUEUED: list[float] = []
STARTED: list[float] = []
BATCHES: list[tuple[float, float]] = []
SEARCHES: list[tuple[float, float, float]] = []  # start, end, thread CPU s


def _patch() -> None:
    run_batch = sqlite.SqliteStore._run_batch
    capture_request = eng.Engine.capture_request
    job = CaptureJobs._capture_request_job
    search_ahead = eng.Engine.search_ahead

    def batch(self: Any, *a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return run_batch(self, *a, **k)
        finally:
            BATCHES.append((t, time.perf_counter()))

    def queued(self: Any, *a: Any, **k: Any) -> Any:
        QUEUED.append(time.perf_counter())
        return capture_request(self, *a, **k)

    def started(*a: Any, **k: Any) -> Any:
        STARTED.append(time.perf_counter())
        return job(*a, **k)

    def searched(self: Any, *a: Any, **k: Any) -> Any:
        t, c = time.perf_counter(), time.thread_time()
        try:
            return search_ahead(self, *a, **k)
        finally:
            SEARCHES.append((t, time.perf_counter(), time.thread_time() - c))

    sqlite.SqliteStore._run_batch = batch  # type: ignore[method-assign]
    eng.Engine.capture_request = queued  # type: ignore[method-assign]
    CaptureJobs._capture_request_job = started  # type: ignore[method-assign]
    eng.Engine.search_ahead = searched  # type: ignore[method-assign]


def main() -> None:
    turns, measure = (sys.argv[1:] + ["1000", "30"][len(sys.argv) - 1:])[:2]
    _patch()
    sys.argv = ["request_path_waits.py", "numbers", turns, measure]
    runpy.run_path("docs/evaluation/request_path_waits.py", run_name="__main__")
    rows = []
    for q, s in list(zip(QUEUED, STARTED))[-(int(measure) - 1):]:
        busy = any(b0 < q < b1 for b0, b1 in BATCHES)
        near = [x for x in SEARCHES if q - 0.005 < x[0] < s + 0.02]
        rows.append((s - q, busy, near[0] if near else None, q))
    print("\n| wait to start | writer busy when queued | search starts after queueing "
          "| search wall / CPU |")
    print("|---:|---|---:|---|")
    for wait, busy, found, q in sorted(rows, key=lambda r: r[0]):
        search = (f"{(found[0] - q) * 1e3:+.2f} | {(found[1] - found[0]) * 1e3:.2f} / "
                  f"{found[2] * 1e3:.2f}") if found else "none | "
        print(f"| {wait * 1e3:.2f} | {'yes' if busy else 'no'} | {search} |")


if __name__ == "__main__":
    main()
