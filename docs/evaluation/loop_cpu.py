"""The event loop's CPU and turns per short request, in a proxy process of its own.

Starts ``python -m proxy serve`` from ``TREE`` (fresh data directory, the hashing
embedder) against the bench's fake upstream (:class:`proxy.benchfake.BenchUpstream`,
in this process with the client), sends 40 warm-up requests, then ``N`` of
``lcm-proxy bench short``'s requests (each a new conversation, non-streamed, one at
a time, ``--gap`` ms apart), memory on or ``X-LCM-Memory: off``. Prints per request:
the proxy's main-thread (event loop) CPU, user and system, and its context switches
(``/proc``), and the client's p50. With ``--profile``, the loop thread runs under
cProfile with a thread-CPU clock for the measured requests only (about four times
slower), and it prints the loop's turns, tasks, timers, callbacks and wake-ups by
another thread per request, and the CPU of proxy and memory_core code (own time).

    python docs/evaluation/loop_cpu.py N off|on [--tree TREE] [--gap MS] [--profile]

Figures: docs/evaluation/README.md, "The event loop's work per short request".
"""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def serve_profiled() -> None:
    """The proxy with a thread-CPU cProfile of its main thread: on at SIGUSR1, off
    and written to ``$LOOP_CPU_PROF`` at SIGUSR2."""
    import cProfile

    prof = cProfile.Profile(time.thread_time)
    signal.signal(signal.SIGUSR1, lambda *_: prof.enable())

    def stop(*_: object) -> None:
        prof.disable()
        prof.dump_stats(os.environ["LOOP_CPU_PROF"])

    signal.signal(signal.SIGUSR2, stop)
    from proxy.cli import main

    sys.argv = ["lcm-proxy", *sys.argv[2:]]
    main()


def thread_stat(pid: int) -> tuple[int, int, int, int]:
    """utime and stime ticks, voluntary and involuntary switches of ``pid``'s main thread."""
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    status = Path(f"/proc/{pid}/task/{pid}/status").read_text().splitlines()
    switches = [int(line.split()[1]) for line in status if "ctxt_switches" in line]
    return int(fields[11]), int(fields[12]), switches[0], switches[1]


def counts(path: str, n: int) -> None:
    import pstats

    stats = pstats.Stats(path)
    wanted = {"_run_once": "loop turns", "create_task": "tasks", "call_at": "timers",
              "_run": "callbacks run", "_read_from_self": "wake-ups by another thread"}
    got: dict[str, float] = {}
    own = total = 0.0
    for (file, _line, fn), (_cc, nc, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        total += tt
        if "/proxy/" in file or "/memory_core/" in file:
            own += tt
        if fn in wanted and "asyncio" in file:
            got[wanted[fn]] = got.get(wanted[fn], 0.0) + nc / n
    for name in wanted.values():
        print(f"  {name:32s} {got.get(name, 0.0):6.1f} per request")
    print(f"  profiled loop CPU {total / n * 1e3:.3f} ms per request, of it proxy and"
          f" memory_core code (own time) {own / n * 1e3:.3f} ms")


async def measure(n: int, mode: str, tree: str, gap: float, profile: bool) -> None:
    import aiohttp

    from proxy.benchfake import BenchUpstream
    from proxy.shortbench import _ready, free_port, request_body

    fake = BenchUpstream()
    upstream = await fake.start()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
        env.update(LCM_EMBEDDING__PROVIDER="hashing", LCM_LOG__LEVEL="WARNING",
                   PYTHONPATH=tree, LOOP_CPU_PROF=str(Path(tmp) / "loop.prof"))
        args = [sys.executable, os.path.abspath(__file__), "--serve"] if profile \
            else [sys.executable, "-m", "proxy"]
        proc = subprocess.Popen([*args, "serve", "--port", str(port), "--upstream", upstream,
                                 "--data-dir", str(Path(tmp) / "data")], env=env, cwd=tree,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        headers = {"Authorization": "Bearer sk-x", "Content-Type": "application/json"}
        if mode == "off":
            headers["X-LCM-Memory"] = "off"
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        try:
            async with aiohttp.ClientSession() as session:
                await _ready(session, f"http://127.0.0.1:{port}/lcm/health", proc)

                async def one(i: int) -> float:
                    t0 = time.perf_counter()
                    async with session.post(url, data=request_body(i, stream=False),
                                            headers=headers) as resp:
                        await resp.read()
                        assert resp.status == 200, resp.status
                    return time.perf_counter() - t0

                for i in range(40):
                    await one(i)
                await asyncio.sleep(2.0)
                if profile:
                    proc.send_signal(signal.SIGUSR1)
                    await asyncio.sleep(0.2)
                before, lat = thread_stat(proc.pid), []
                for i in range(n):
                    lat.append(await one(1000 + i))
                    await asyncio.sleep(gap)
                after = thread_stat(proc.pid)
                if profile:
                    proc.send_signal(signal.SIGUSR2)
                    await asyncio.sleep(1.0)
        finally:
            proc.terminate()
            proc.wait()
            await fake.stop()
        tick = 1e3 / os.sysconf("SC_CLK_TCK")
        user, system, vol, invol = ((a - b) / n for a, b in zip(after, before))
        lat.sort()
        print(f"{tree} memory {mode}: loop CPU {(user + system) * tick:.3f} ms per request"
              f" (user {user * tick:.3f}, system {system * tick:.3f}); switches voluntary"
              f" {vol:.1f}, involuntary {invol:.1f}; client p50 {lat[n // 2] * 1e3:.2f} ms")
        if profile:
            counts(str(Path(tmp) / "loop.prof"), n)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve_profiled()
        return
    argv = sys.argv[1:]
    n, mode = int(argv[0]), argv[1]
    tree = argv[argv.index("--tree") + 1] if "--tree" in argv else os.getcwd()
    gap = float(argv[argv.index("--gap") + 1]) / 1e3 if "--gap" in argv else 0.003
    asyncio.run(measure(n, mode, str(Path(tree).resolve()), gap, "--profile" in argv))


if __name__ == "__main__":
    main()
