"""Where a short non-streamed request's time goes, segment by segment (c=1).

Runs ``lcm-proxy bench proxy``'s requests (conversations of eight turns, capture
on, the defaults) one at a time through one in-process proxy and the bench's fake
upstream, and splits each request's wall clock at the steps it waits for: the
handler's start, the memory path (waiting for the request's capture on the
writer, the hop to the memory-path thread, the plan, the hop back), the upstream
round trip, the wait for the answer's commit, and from the handler's return to
the client's last byte. Prints the median and mean of each segment, and the CPU
of the capture and plan jobs. Background work is awaited every 15 requests, as
the bench does. Works on the tree before the exchange redesign (``598bc15``) too,
so one command compares two checkouts:

    cd /tmp && PYTHONPATH=TREE python TREE/docs/evaluation/short_request_timeline.py 150

(run it from this tree with ``PYTHONPATH`` set to the other one to time an older
tree). Figures: docs/evaluation/README.md, "Short non-streamed requests: what main
added".
"""
import asyncio
import functools
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from aiohttp import web

try:  # memory_core in folders (since 2d18265)
    from memory_core.capture.jobs import CaptureJobs
except ImportError:  # an older tree: the capture jobs on the engine
    from memory_core.engine import Engine as CaptureJobs  # type: ignore[assignment]
from proxy import bench
from proxy.app import create_app
from proxy.benchfake import BenchUpstream
from proxy.settings import load_settings

EVENTS: list[tuple[str, float, float, float]] = []
"""(label, start, end, thread CPU seconds) of every timed call."""


def timed(owner: Any, attr: str, label: str) -> None:
    """Record each call of ``owner.attr`` (a function or a coroutine function)."""
    fn = getattr(owner, attr)
    if asyncio.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run_async(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await fn(*a, **k)
            finally:
                EVENTS.append((label, t0, time.perf_counter(), 0.0))
        setattr(owner, attr, run_async)
        return

    @functools.wraps(fn)
    def run(*a: Any, **k: Any) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            EVENTS.append((label, t0, time.perf_counter(), time.thread_time() - c0))
    setattr(owner, attr, run)


def instrument() -> None:
    timed(CaptureJobs, "_capture_request_job", "capture")
    try:  # after the redesign (proxy/flow/)
        import proxy.flow.plan as plan
        import proxy.flow.record as record
        import proxy.flow.recovery as recovery
        import proxy.flow.steps as steps
        import proxy.flow.toolloop as toolloop
        import proxy.handlers.chat as chat
        timed(plan, "prepare", "plan")
        timed(steps, "prepare_upstream", "memory_path")
        timed(record, "bounded", "commit_wait")
        timed(toolloop, "send", "upstream")
        timed(recovery, "send", "upstream")
    except ImportError:  # 598bc15
        import proxy.memorypath as memorypath
        import proxy.toolloop as toolloop

        import proxy.handlers.chat as chat
        timed(memorypath, "_prepare", "plan")
        timed(chat, "prepare_upstream", "memory_path")
        timed(chat, "_bounded", "commit_wait")
        timed(toolloop, "send", "upstream")
        timed(chat, "send", "upstream")
    timed(chat, "chat_completions", "handler")


SEGMENTS = (
    ("to handler", "start", ("handler", 1)),
    ("parse, scope, queue capture", ("handler", 1), ("memory_path", 1)),
    ("wait for the capture", ("memory_path", 1), ("capture", 2)),
    ("hop to the plan", ("capture", 2), ("plan", 1)),
    ("plan", ("plan", 1), ("plan", 2)),
    ("hop back", ("plan", 2), ("memory_path", 2)),
    ("to the upstream call", ("memory_path", 2), ("upstream", 1)),
    ("upstream round trip", ("upstream", 1), ("upstream", 2)),
    ("read the answer", ("upstream", 2), ("commit_wait", 1)),
    ("commit wait", ("commit_wait", 1), ("commit_wait", 2)),
    ("to the handler's return", ("commit_wait", 2), ("handler", 2)),
    ("handler return to last byte", ("handler", 2), "end"),
)


def _at(point: Any, start: float, end: float, first: dict[str, Any]) -> float:
    """A segment bound: the request's start or end, or ``(label, 1|2)``: the start or
    end of that call's first record in the request."""
    if point == "start":
        return start
    if point == "end":
        return end
    return float(first[point[0]][point[1]])


async def measure(n: int) -> dict[str, Any]:
    fake = BenchUpstream()
    upstream = await fake.start()
    rows: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, environ={}, overrides={
            "proxy": {"upstream": upstream, "host": "127.0.0.1", "port": 0},
            "storage": {"data_dir": str(Path(tmp) / "p")}})
        runner = web.AppRunner(create_app(settings), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        target = bench._Target("p", f"http://127.0.0.1:{runner.addresses[0][1]}/v1", 1,
                               runner.app)
        try:
            for i in range(40):
                await target.nonstream(bench.request_body("warm", i, stream=False))
            await target.settle()
            for i in range(n):
                body = bench.request_body("lat", i, stream=False)
                EVENTS.clear()
                start = time.perf_counter()
                await target.nonstream(body)
                end = time.perf_counter()
                first = {}
                for ev in EVENTS:
                    if start <= ev[1] <= end:
                        first.setdefault(ev[0], ev)
                if all(k in first for k in ("handler", "memory_path", "capture", "plan",
                                             "upstream", "commit_wait")):
                    for name, a, b in SEGMENTS:
                        rows[name].append((_at(b, start, end, first)
                                           - _at(a, start, end, first)) * 1e3)
                    rows["(capture job CPU)"].append(first["capture"][3] * 1e3)
                    rows["(plan CPU)"].append(first["plan"][3] * 1e3)
                rows["total"].append((end - start) * 1e3)
                if i % 15 == 14:
                    await target.settle()
        finally:
            await target.close()
            await runner.cleanup()
            await fake.stop()
    return {k: (statistics.median(v), statistics.fmean(v), len(v)) for k, v in rows.items()}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    instrument()
    out = asyncio.run(measure(n))
    if "--json" in sys.argv:
        print(json.dumps(out))
        return
    print(f"{'segment (ms)':32s} {'median':>8s} {'mean':>8s}")
    for k, (med, mean, _count) in out.items():
        print(f"{k:32s} {med:8.2f} {mean:8.2f}")


if __name__ == "__main__":
    main()
