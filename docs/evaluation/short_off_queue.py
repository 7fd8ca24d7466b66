"""What a memory-off short request's answer waits for on the store's writer.

``lcm-proxy bench short``'s memory-off requests (each a new conversation,
``X-LCM-Memory: off``, non-streamed, one at a time as the bench paces them) through
one in-process proxy (SQLite, the hashing embedder, defaults otherwise) and the
bench's fake upstream. Every write job is timed as the writer runs it (wall and
thread CPU) with the lane it was queued in and the lane it ran in (an urgent job
promotes its order key's queued jobs), and every batch's commit. For each request
the answer's commit wait (``store_first``: from queueing the answer's capture to
the handler going on) is split into:

- queue wait: queued to its job's start, and which jobs ran meanwhile (by kind and
  whose request they were: this one's or earlier ones'), promoted or not;
- its job; then the rest of its batch and the ``COMMIT``;
- the commit to its future resolved (the ``after_commit`` hook and ``then``
  callbacks on the writer thread);
- the future resolved to the handler going on (the event loop's wake-up).

Prints medians and means (ms) and the share of requests whose queue wait held each
kind of job.

    PYTHONPATH=TREE python docs/evaluation/short_off_queue.py 150 [--gap MS] [--extract-worker]

``--extract-worker``: with ``injection.extract_worker`` (extraction in a child process;
its counts are printed at the end).

``--gap``: sleep that long after each request (the writer's background then runs
between requests, as between a real agent's turns).

Figures: docs/evaluation/README.md, "The memory-off answer's commit wait: what the
writer runs meanwhile".
"""
import asyncio
import functools
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

import memory_core.store.sqlite as sqlite_store
from memory_core.capture.jobs import CaptureJobs
from memory_core.store import batch
from proxy.app import create_app
from proxy.benchfake import BenchUpstream
from proxy.settings import load_settings
from proxy.shortbench import request_body

CURRENT = [-1]
"""The index of the request being sent (set by the driver)."""
JOBS: list[dict[str, Any]] = []
"""Every write job run: label, owner (request index), lanes, start, end, cpu."""
COMMITS: list[float] = []
"""perf_counter of every batch's commit (``complete_batch`` starting)."""
MARKS: dict[int, dict[str, float]] = defaultdict(dict)
"""Per request: ``queued`` (answer capture queued), ``resolved`` (its future set),
``resumed`` (the awaiting coroutine went on), ``store_first_end``."""
BY_JOB: dict[int, dict[str, Any]] = {}
"""id of a queued job tuple -> its record (to mark it promoted)."""
OWNER: dict[int, int] = {}
"""message id -> index of the request whose capture stored it."""


def label_of(job: Any) -> tuple[str, Any]:
    fn, args = job[0], job[1]
    if getattr(fn, "__name__", "") == "_on_writer":
        fn, args = args[0], args[1]
    name = getattr(fn, "__name__", repr(fn))
    return name, args[0] if name == "_extract_pending" and args else None


def instrument() -> None:
    put, promote = batch.WriteQueue.put, batch.WriteQueue._promote

    def put_timed(self: batch.WriteQueue, job: Any, *, urgent: bool = False,
                  key: Any = None, **more: Any) -> None:  # gives_way, where it exists
        name, mid = label_of(job)
        rec = {"label": name, "mid": mid, "owner": CURRENT[0], "queued": time.perf_counter(),
               "urgent": urgent, "promoted": False}
        fn = job[0]

        @functools.wraps(fn)
        def run(*a: Any, **k: Any) -> Any:
            rec["start"], c0 = time.perf_counter(), time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                rec["end"], rec["cpu"] = time.perf_counter(), time.thread_time() - c0
                JOBS.append(rec)
        job = (run, *job[1:])
        BY_JOB[id(job)] = rec
        put(self, job, urgent=urgent, key=key, **more)

    def promote_marked(self: batch.WriteQueue, which: Any) -> None:
        for entry in self._heap:
            if entry[0] == batch.NORMAL and which(entry):
                rec = BY_JOB.get(id(entry[2]))
                if rec is not None:
                    rec["promoted"] = True
        promote(self, which)

    batch.WriteQueue.put = put_timed  # type: ignore[method-assign]
    batch.WriteQueue._promote = promote_marked  # type: ignore[method-assign]

    complete = sqlite_store.complete_batch

    def complete_timed(done: Any, after_commit: Any) -> None:
        COMMITS.append(time.perf_counter())
        complete(done, after_commit)
    sqlite_store.complete_batch = complete_timed  # type: ignore[assignment]

    capture_response = CaptureJobs.capture_response

    def capture_response_timed(self: CaptureJobs, *a: Any, **k: Any) -> Any:
        i = CURRENT[0]
        MARKS[i]["queued"] = time.perf_counter()
        fut = capture_response(self, *a, **k)

        def resolved(f: Any) -> None:
            MARKS[i]["resolved"] = time.perf_counter()
            if not f.exception():
                for mid in f.result():
                    OWNER[mid] = i
        fut.add_done_callback(resolved)
        return fut
    CaptureJobs.capture_response = capture_response_timed  # type: ignore[method-assign]

    capture_request = CaptureJobs.capture_request

    def capture_request_timed(self: CaptureJobs, *a: Any, **k: Any) -> Any:
        i = CURRENT[0]
        ticket, fut = capture_request(self, *a, **k)

        def done(f: Any) -> None:
            if not f.exception():
                for mid in f.result().new_ids:
                    OWNER[mid] = i
        fut.add_done_callback(done)
        return ticket, fut
    CaptureJobs.capture_request = capture_request_timed  # type: ignore[method-assign]

    import proxy.flow.asyncengine as asyncengine
    import proxy.flow.record as record
    aresp = asyncengine.AsyncEngine.capture_response

    async def aresp_timed(self: Any, *a: Any, **k: Any) -> Any:
        i = CURRENT[0]
        try:
            return await aresp(self, *a, **k)
        finally:
            MARKS[i]["resumed"] = time.perf_counter()
    asyncengine.AsyncEngine.capture_response = aresp_timed  # type: ignore[method-assign]

    store_first = record.store_first

    async def store_first_timed(ex: Any, job: Any) -> None:
        i = CURRENT[0]
        try:
            await store_first(ex, job)
        finally:
            MARKS[i]["store_first_end"] = time.perf_counter()
    record.store_first = store_first_timed  # type: ignore[assignment]


def kind(rec: dict[str, Any], i: int) -> str:
    name = {"_capture_request_job": "request capture", "_capture_response_job":
            "answer capture", "_extract_pending": "extraction"}.get(rec["label"], rec["label"])
    if rec["label"] == "_extract_pending":
        owner = OWNER.get(rec["mid"], rec["owner"])
    else:
        owner = rec["owner"]
    whose = "this" if owner == i else "earlier"
    return f"{name} ({whose}{', promoted' if rec['promoted'] else ''})"


def overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


async def measure(n: int, gap: float = 0.0) -> tuple[dict[str, list[float]], dict[str, int]]:
    fake = BenchUpstream()
    upstream = await fake.start()
    rows: dict[str, list[float]] = defaultdict(list)
    held: dict[str, int] = defaultdict(int)
    headers = {"Authorization": "Bearer sk-x", "Content-Type": "application/json",
               "X-LCM-Memory": "off"}
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, environ={}, overrides={
            "proxy": {"upstream": upstream, "host": "127.0.0.1", "port": 0},
            "storage": {"data_dir": str(Path(tmp) / "p")},
            "embedding": {"provider": "hashing"},
            "injection": {"extract_worker": "--extract-worker" in sys.argv}})
        runner = web.AppRunner(create_app(settings), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1/chat/completions"
        async with aiohttp.ClientSession() as session:
            async def one(i: int) -> None:
                CURRENT[0] = i
                t0 = time.perf_counter()
                async with session.post(url, data=request_body(i, stream=False),
                                        headers=headers) as resp:
                    await resp.read()
                    assert resp.status == 200, resp.status
                MARKS[i]["total"] = (time.perf_counter() - t0) * 1e3
            for i in range(-30, 0):
                await one(i)
            await asyncio.sleep(1.0)
            for i in range(n):
                await one(i)
                if gap:
                    await asyncio.sleep(gap)
            await asyncio.sleep(0.5)
        await runner.cleanup()
    await fake.stop()
    for i in range(n):
        m = MARKS[i]
        answer = [r for r in JOBS if r["owner"] == i and r["label"] == "_capture_response_job"]
        if not answer or not {"queued", "resolved", "resumed", "store_first_end"} <= m.keys():
            continue
        a = answer[0]
        rows["request total (client's view)"].append(m["total"])
        commit = min(c for c in COMMITS if c >= a["end"])
        q, s = m["queued"], a["start"]
        rows["commit wait (queued to handler going on)"].append((m["store_first_end"] - q) * 1e3)
        rows["  queue wait (queued to its job's start)"].append((s - q) * 1e3)
        seen: set[str] = set()
        busy: dict[str, float] = defaultdict(float)
        for r in JOBS:
            if r is a:
                continue
            o = overlap(r["start"], r["end"], q, s)
            if o > 0:
                busy[kind(r, i)] += o
                seen.add(kind(r, i))
        for k in seen:
            held[k] += 1
        for k, v in busy.items():
            rows[f"    of it running {k}"].append(v * 1e3)
        rows["    of it the writer idle or between jobs"].append(
            ((s - q) - sum(busy.values())) * 1e3)
        rows["  its job (wall)"].append((a["end"] - s) * 1e3)
        rows["  its job (CPU)"].append(a["cpu"] * 1e3)
        rows["  job end to COMMIT done"].append((commit - a["end"]) * 1e3)
        rows["  COMMIT done to future resolved"].append((m["resolved"] - commit) * 1e3)
        rows["  future resolved to the coroutine resumed"].append(
            (m["resumed"] - m["resolved"]) * 1e3)
        rows["  resumed to store_first's end"].append((m["store_first_end"] - m["resumed"]) * 1e3)
        for r in JOBS:
            o = overlap(r["start"], r["end"], m["resolved"], m["store_first_end"])
            if o > 0:
                rows[f"    writer running {kind(r, i)} meanwhile"].append(o * 1e3)
    for r in JOBS:
        if r["label"] == "_extract_pending" and r["owner"] >= 0:
            rows["any extraction job (wall)"].append((r["end"] - r["start"]) * 1e3)
            rows["any extraction job (writer thread CPU)"].append(r["cpu"] * 1e3)
    return rows, held


WORKER_STATS: list[dict[str, Any]] = []
"""The extraction worker's counts at its close (``--extract-worker``)."""


def watch_worker() -> None:
    from memory_core.extraction.worker import ExtractWorker

    close = ExtractWorker.close

    def closing(self: ExtractWorker) -> None:
        WORKER_STATS.append(self.stats())
        close(self)

    ExtractWorker.close = closing  # type: ignore[method-assign]


def main() -> None:
    watch_worker()
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 150
    gap = float(sys.argv[sys.argv.index("--gap") + 1]) / 1e3 if "--gap" in sys.argv else 0.0
    instrument()
    rows, held = asyncio.run(measure(n, gap))
    total = len(rows["commit wait (queued to handler going on)"])
    print(f"{total} requests; medians/means over the requests where the segment occurred"
          " (n), ms")
    print(f"{'segment':58s} {'median':>8s} {'mean':>8s} {'n':>5s}")
    for k, v in rows.items():
        print(f"{k:58s} {statistics.median(v):8.2f} {statistics.fmean(v):8.2f} {len(v):5d}")
    print("\nshare of requests whose queue wait ran each kind of job:")
    for k, c in sorted(held.items(), key=lambda kv: -kv[1]):
        print(f"  {k:56s} {c / max(total, 1):6.0%}")
    if WORKER_STATS:
        print("extraction worker:", WORKER_STATS)


if __name__ == "__main__":
    main()
