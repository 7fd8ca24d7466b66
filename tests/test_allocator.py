"""The C allocator of a long-running proxy (proxy/allocator.py): glibc's arena cap
(``proxy.malloc_arena_max``) and the return of freed memory once the proxy is quiet
(``proxy.memory_release_idle_seconds``), on the real glibc in child processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest

from proxy import allocator
from proxy.allocator import MIN_WORK_CPU_S, IdleTrim, operator_set_arenas
from proxy.appkeys import TASKS
from tests.conftest import TEST_KEY, RunningProxy
from tests.fake_upstream import FakeUpstream

MakeProxy = Callable[..., Awaitable[RunningProxy]]

ROOT = Path(__file__).resolve().parents[1]
glibc_only = pytest.mark.skipif(not allocator.available(), reason="glibc's malloc only")

# A child process: optionally cap the arenas, then let eight threads allocate at
# once (each keeping what it allocated until all are done, so they overlap), and
# print how many arenas glibc made (malloc_info's <heap> entries).
_ARENAS = r"""
import ctypes, json, os, re, sys, tempfile, threading
sys.path.insert(0, sys.argv[1])
from proxy import allocator
limited = allocator.limit_arenas(int(sys.argv[2]))
barrier = threading.Barrier(8)
def work():
    keep = [bytearray(4096) for _ in range(200)]
    barrier.wait()
    keep += [bytearray(4096) for _ in range(200)]
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
path = tempfile.mktemp()
f = libc.fopen(path.encode(), b"w"); libc.malloc_info(0, f); libc.fclose(f)
text = open(path).read(); os.unlink(path)
print(json.dumps({"limited": limited, "arenas": len(re.findall(r'<heap nr="', text))}))
"""


def _arenas(limit: int, **env: str) -> dict[str, object]:
    base = {k: v for k, v in os.environ.items()
            if k != "MALLOC_ARENA_MAX" and k != "GLIBC_TUNABLES"}
    out = subprocess.run([sys.executable, "-c", _ARENAS, str(ROOT), str(limit)],
                         env={**base, **env}, capture_output=True, text=True, timeout=60,
                         check=True)
    result: dict[str, object] = json.loads(out.stdout)
    return result


@glibc_only
def test_the_arena_cap_holds_threads_to_two_heaps() -> None:
    capped = _arenas(2)
    assert capped == {"limited": True, "arenas": 2}
    free = _arenas(0)  # glibc's default: a heap per thread that allocates at once
    assert free["limited"] is False and int(str(free["arenas"])) > 2


@glibc_only
def test_the_operators_malloc_arena_max_wins() -> None:
    assert _arenas(2, MALLOC_ARENA_MAX="3") == {"limited": False, "arenas": 3}
    assert operator_set_arenas({"GLIBC_TUNABLES": "glibc.malloc.arena_max=4"})
    assert not operator_set_arenas({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"})


# A child process: a thread fills its arena with 64 MiB of small blocks, keeps one
# block allocated above them and frees the rest (free() cannot shrink the heap
# under a live block); print the RSS before and after allocator.trim().
_TRIM = r"""
import json, sys, threading
sys.path.insert(0, sys.argv[1])
from proxy import allocator
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
def work():
    blocks = [bytearray(32 * 1024) for _ in range(2048)]
    top = bytearray(32 * 1024)
    del blocks
    out.append(rss())
    out.append(allocator.trim())
    out.append(rss())
    del top
out = []
t = threading.Thread(target=work); t.start(); t.join()
print(json.dumps(out))
"""


@glibc_only
def test_trim_hands_freed_memory_back() -> None:
    out = subprocess.run([sys.executable, "-c", _TRIM, str(ROOT)], capture_output=True,
                         text=True, timeout=60, check=True)
    before, released, after = json.loads(out.stdout)
    assert released is True
    assert before - after > 40, (before, after)  # of the 64 MiB freed


def test_idle_trim_waits_for_quiet_after_work() -> None:
    decide = IdleTrim(2.0, cpu=5.0, now=0.0)  # the start itself was work (5 s of CPU)
    assert not decide.due(1.0, 5.0)  # quiet, but not for 2 s yet
    assert decide.due(2.0, 5.01)  # 2 s under 5 % of a core after the work: trim
    assert not decide.due(3.0, 5.01)  # idle since: nothing new to hand back
    assert not decide.due(60.0, 5.02)
    # busy: never while the process works, however long
    for t in range(61, 70):
        assert not decide.due(float(t), 5.02 + (t - 60) * 0.5)
    cpu = 5.02 + 9 * 0.5  # the last busy second ended at 69
    assert not decide.due(70.0, cpu)  # the window still holds a busy second
    assert decide.due(71.0, cpu)  # quiet for 2 s after the work
    # a little CPU (a scrape, a health check) is not work worth a trim
    assert not decide.due(90.0, cpu + MIN_WORK_CPU_S / 2)
    assert not decide.due(95.0, cpu + MIN_WORK_CPU_S / 2)


def test_idle_trim_counts_a_slow_trickle_as_quiet() -> None:
    """Under QUIET_CPU_SHARE of a core over the window is quiet, even when the work
    since the last trim adds up: a trickle of cheap requests is trimmed between."""
    decide = IdleTrim(2.0, cpu=0.0, now=0.0)
    cpu, due = 0.0, []
    for t in range(1, 200):
        cpu += 0.01  # 1 % of a core
        due.append(decide.due(float(t), cpu))
    assert 5 <= sum(due) <= 15  # every MIN_WORK_CPU_S of CPU, about


@glibc_only
async def test_a_quiet_proxy_hands_freed_memory_back(make_proxy: MakeProxy,
                                                     upstream: FakeUpstream) -> None:
    proxy = await make_proxy(proxy={"memory_release_idle_seconds": 0.5})
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.base_url + "/chat/completions", json=body,
                             headers={"Authorization": f"Bearer {TEST_KEY}"}) as r:
            assert r.status == 200
        deadline = time.monotonic() + 30
        while True:
            async with http.get(proxy.root + "/lcm/metrics") as r:
                text = await r.text()
            count = [line for line in text.splitlines()
                     if line.startswith("lcm_memory_release_seconds_count")]
            if count and float(count[0].split()[-1]) >= 1:
                break
            assert time.monotonic() < deadline, "no trim within 30 s of quiet"
            await asyncio.sleep(0.5)


async def test_memory_release_can_be_turned_off(make_proxy: MakeProxy,
                                                upstream: FakeUpstream) -> None:
    proxy = await make_proxy(proxy={"memory_release_idle_seconds": 0})
    await asyncio.sleep(2.5)
    async with aiohttp.ClientSession() as http, http.get(proxy.root + "/lcm/metrics") as r:
        text = await r.text()
    assert "lcm_memory_release_seconds_count 0.0" in text


@glibc_only
async def test_waiting_for_background_work_leaves_the_release_loop_running(
        make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    """The release loop never ends by itself: it is not one of the requests'
    background tasks, which shutdown, benches and tests drain (wait for, then
    cancel). In that group every such wait lasted its whole timeout and then
    cancelled the loop."""
    proxy = await make_proxy(proxy={"memory_release_idle_seconds": 0.5})
    await proxy.app[TASKS].drain(0.2)
    loops = [t for t in asyncio.all_tasks() if t.get_name() == "memory-release"]
    assert len(loops) == 1 and not loops[0].done()
    assert len(proxy.app[TASKS]) == 0


def test_release_collects_cyclic_garbage_before_trimming() -> None:
    """The proxy raises the collector's first threshold, so a finished request's
    cycle (exchange, parsed body) can outlive it until a full collection: the idle
    release runs one (:func:`allocator.release`, ``idle_trim_loop``'s default)."""
    import gc
    import inspect
    import weakref

    class Exchange:
        pass

    before = gc.get_threshold()
    gc.set_threshold(1_000_000, *before[1:])  # as the proxy's, and more
    try:
        ex = Exchange()
        ex.body = {"messages": [{"role": "user", "content": "x" * 10_000}] * 100}
        ex.self_ref = ex  # a cycle: reference counting alone never frees it
        gone = weakref.ref(ex)
        del ex
        assert gone() is not None
        allocator.release()
        assert gone() is None
    finally:
        gc.set_threshold(*before)
    default = inspect.signature(allocator.idle_trim_loop).parameters["release"].default
    assert default is allocator.release
