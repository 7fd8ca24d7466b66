"""Where a memory-off short request's time goes, and what the writer does meanwhile.

``lcm-proxy bench short``'s requests (each a new conversation, ``X-LCM-Memory: off``,
non-streamed, one at a time: the next starts when the previous one's last byte
arrived, as the bench paces them) through one in-process proxy (the hashing
embedder, defaults otherwise) and the bench's fake upstream. Each request's wall
clock is split at: the handler's start, the start of the answer's capture
(``store_first``: the upstream's answer is read), its end (the commit wait over),
the handler's return and the client's last byte. For the same window it sums the
wall time and thread CPU of the writer's jobs (the request's capture, the
answer's capture, the extraction jobs) that ran inside it, by whose request they
were (this one's or earlier ones'). Prints medians and means, ms.

    PYTHONPATH=TREE python docs/evaluation/short_off_timeline.py 200 [--gap MS] [--extract-worker]

``--extract-worker``: with ``injection.extract_worker`` (extraction in a child process;
its counts are printed at the end).

``--gap``: sleep that long between requests (the previous one's background done).
Figures: docs/evaluation/README.md, "Memory-off short requests: the writer, the
GIL and the pacing".
"""
import asyncio
import functools
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from memory_core.capture.jobs import CaptureJobs
from proxy.app import create_app
from proxy.benchfake import BenchUpstream
from proxy.settings import load_settings
from proxy.shortbench import request_body

EVENTS: list[tuple[str, float, float, float, str]] = []
"""(label, start, end, thread CPU seconds, thread name) of every timed call."""


def timed(owner: Any, attr: str, label: str) -> None:
    fn = getattr(owner, attr)
    if asyncio.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run_async(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await fn(*a, **k)
            finally:
                EVENTS.append((label, t0, time.perf_counter(), 0.0, "loop"))
        setattr(owner, attr, run_async)
        return

    @functools.wraps(fn)
    def run(*a: Any, **k: Any) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            EVENTS.append((label, t0, time.perf_counter(), time.thread_time() - c0,
                           threading.current_thread().name))
    setattr(owner, attr, run)


def instrument() -> None:
    import proxy.flow.record as record
    import proxy.handlers.chat as chat
    timed(CaptureJobs, "_capture_request_job", "w:request capture")
    timed(CaptureJobs, "_capture_response_job", "w:answer capture")
    timed(CaptureJobs, "_extract_pending", "w:extraction")
    timed(record, "store_first", "store_first")
    timed(chat, "chat_completions", "handler")


def overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


async def measure(n: int, gap: float) -> dict[str, list[float]]:
    fake = BenchUpstream()
    upstream = await fake.start()
    rows: dict[str, list[float]] = defaultdict(list)
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
            async def one(i: int) -> tuple[float, float]:
                t0 = time.perf_counter()
                async with session.post(url, data=request_body(i, stream=False),
                                        headers=headers) as resp:
                    await resp.read()
                    assert resp.status == 200, resp.status
                return t0, time.perf_counter()
            direct = upstream + "/chat/completions"
            for i in range(30):
                await one(i)
            await asyncio.sleep(1.0)
            for i in range(n):
                EVENTS.clear()
                # the fake alone, right before: the upstream's own time in this state
                d0 = time.perf_counter()
                async with session.post(direct, data=request_body(10_000 + i, stream=False),
                                        headers=headers) as resp:
                    await resp.read()
                rows["direct (the fake alone)"].append((time.perf_counter() - d0) * 1e3)
                start, end = await one(1000 + i)
                first: dict[str, Any] = {}
                for ev in EVENTS:
                    if ev[0] in ("handler", "store_first") and start <= ev[1] <= end:
                        first.setdefault(ev[0], ev)
                if "handler" in first and "store_first" in first:
                    h, s = first["handler"], first["store_first"]
                    for name, a, b in (("to the handler", start, h[1]),
                                       ("handler start to the answer read", h[1], s[1]),
                                       ("answer's capture queued + commit wait", s[1], s[2]),
                                       ("to the handler's return", s[2], h[2]),
                                       ("handler return to last byte", h[2], end)):
                        rows[name].append((b - a) * 1e3)
                    win = (h[1], s[1])
                    busy = cpu = 0.0
                    for ev in EVENTS:
                        if ev[0].startswith("w:"):
                            o = overlap(ev[1], ev[2], *win)
                            busy += o
                            if ev[2] > ev[1]:
                                cpu += ev[3] * o / (ev[2] - ev[1])
                    rows["writer busy, handler start to answer read"].append(busy * 1e3)
                    rows["  of it CPU"].append(cpu * 1e3)
                    for label in ("w:request capture", "w:answer capture", "w:extraction"):
                        evs = [ev for ev in EVENTS if ev[0] == label and ev[1] >= start]
                        if evs:
                            rows[f"{label[2:]} job (wall)"].append((evs[0][2] - evs[0][1]) * 1e3)
                            rows[f"{label[2:]} job (CPU)"].append(evs[0][3] * 1e3)
                rows["total"].append((end - start) * 1e3)
                if gap:
                    await asyncio.sleep(gap)
        await runner.cleanup()
    await fake.stop()
    return rows


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
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200
    gap = float(sys.argv[sys.argv.index("--gap") + 1]) / 1e3 if "--gap" in sys.argv else 0.0
    instrument()
    rows = asyncio.run(measure(n, gap))
    print(f"{'segment (ms)':46s} {'median':>8s} {'mean':>8s} {'n':>5s}")
    for k, v in rows.items():
        print(f"{k:46s} {statistics.median(v):8.2f} {statistics.fmean(v):8.2f} {len(v):5d}")
    if WORKER_STATS:
        print("extraction worker:", WORKER_STATS)


if __name__ == "__main__":
    main()
