"""``lcm-proxy bench proxy``: what going through the proxy adds, against going direct.

One process and one event loop hold everything: a fake upstream
(:mod:`proxy.benchfake`), three real proxies built by :func:`proxy.app.create_app`
(evidence capture on; ``capture.enabled = false``; capture on with the memory
tools offered on every request, ``tools.offer = "always"``, so that every request
goes through the memory-tool loop although the model calls no memory tool) each
with its own data directory in a temporary directory, and the load client. Every
figure is measured in the same run against the same fake, with the four targets
interleaved in
blocks (each block a few dozen requests, the order rotating), so that machine
noise — another process, a CPU frequency change — hits all of them alike. After
each block of a proxy, its background work (response capture, indexing,
compaction) is awaited, so that it is charged to that proxy and never slows the
next target's requests down.

The load client is a bare ``aiohttp.ClientSession``, not the openai SDK: the SDK
parses every answer into pydantic models and would add its own cost to both
sides, hiding the difference we want to see.

Requests look like an agent's: conversations that grow by one user turn per
request (the assistant's previous answers echoed back), eight turns each, so that
capture does what it does in production — match the stored prefix, append the new
user message and, after the answer, the reply.

What the numbers are: loopback latency in milliseconds (client-side wall clock,
from sending the request to the last byte; streaming also to the first body
byte), and throughput in requests per second with ``concurrency`` clients.
What they are not: the client, the proxy and the fake share one CPU core (the
event loop), so throughput through the proxy is bounded by the *sum* of their CPU
costs — the ratio to direct is a lower bound of what a proxy with its own core
would reach. ``cpu_ms_per_request`` (process CPU time per request during the
throughput blocks, the writer thread included) gives the proxy's cost per request
independently of that.
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web
from tqdm import tqdm

from proxy import __version__
from proxy.app import create_app
from proxy.appkeys import ENGINE, TASKS
from proxy.benchfake import REPLY_TEXT, BenchUpstream
from proxy.settings import load_settings

TARGET_ADDED_P50_MS = 1.0
TARGET_ADDED_P99_MS = 5.0
TARGET_THROUGHPUT_RATIO = 0.70
TURNS_PER_CONVERSATION = 8
MODES = ("direct", "proxy_capture_on", "proxy_capture_off", "proxy_tools_offered")
_LABELS = {"direct": "direct", "proxy_capture_on": "proxy (capture on)",
           "proxy_capture_off": "proxy (capture off)",
           "proxy_tools_offered": "proxy (memory tools offered)"}
_PROXIES = {  # mode → (capture.enabled, tools.offer)
    "proxy_capture_on": (True, "history"),
    "proxy_capture_off": (False, "history"),
    "proxy_tools_offered": (True, "always"),
}
_SYSTEM = ("You are a careful coding assistant. Answer briefly, cite files you touch, and "
           "ask before running anything destructive.")


def request_body(phase: str, index: int, *, stream: bool) -> bytes:
    """Return the JSON body of request ``index`` of ``phase``.

    Request ``i`` is turn ``i % 8`` of conversation ``phase-i // 8``: a system
    message, the earlier user turns each followed by the fake's reply, then a new
    user message — 0.4 to 2.4 KB. The same ``(phase, index)`` gives the same bytes
    for every target, so direct and proxied requests carry identical bodies.
    """
    conv, turn = divmod(index, TURNS_PER_CONVERSATION)
    messages: list[dict[str, str]] = [{"role": "system", "content": _SYSTEM}]
    for t in range(turn + 1):
        messages.append({"role": "user", "content": (
            f"[{phase}-{conv}] Turn {t}: please look at module_{t}.py and tell me whether "
            f"the retry timeout of {10 + t} s is applied when the connection drops.")})
        if t < turn:
            messages.append({"role": "assistant", "content": REPLY_TEXT})
    body: dict[str, Any] = {"model": "bench-model", "messages": messages, "temperature": 0}
    if stream:
        body["stream"] = True
    return orjson.dumps(body)


def percentile(values: list[float], q: float) -> float:
    """Return the ``q``-quantile (0..1) of ``values`` by linear interpolation between
    closest ranks (numpy's default). Raises ``ValueError`` on an empty list."""
    if not values:
        raise ValueError("percentile of no values")
    data = sorted(values)
    pos = (len(data) - 1) * q
    low = int(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


@dataclass
class _Samples:
    nonstream: list[float] = field(default_factory=list)
    ttfb: list[float] = field(default_factory=list)
    stream_total: list[float] = field(default_factory=list)
    errors: int = 0
    tput_requests: int = 0
    tput_seconds: float = 0.0
    tput_cpu_seconds: float = 0.0
    messages_stored: int | None = None


class _Target:
    """One place to send requests to (the fake directly, or one of the proxies)."""

    def __init__(self, name: str, base_url: str, concurrency: int,
                 app: web.Application | None = None) -> None:
        self.name = name
        self.app = app
        self.url = base_url + "/chat/completions"
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=max(1, concurrency)),
            headers={"Authorization": "Bearer sk-bench-not-a-real-key",
                     "Content-Type": "application/json"},
        )
        self.samples = _Samples()

    async def nonstream(self, body: bytes) -> float:
        """Send one non-streaming request; return its latency in seconds."""
        t0 = time.perf_counter()
        async with self.session.post(self.url, data=body) as resp:
            data = await resp.read()
            status = resp.status
        elapsed = time.perf_counter() - t0
        if status != 200 or not data:
            self.samples.errors += 1
        return elapsed

    async def stream(self, body: bytes) -> tuple[float, float]:
        """Send one streaming request; return (time to first body byte, total) in seconds."""
        t0 = time.perf_counter()
        async with self.session.post(self.url, data=body) as resp:
            first = await resp.content.readany()
            t_first = time.perf_counter() - t0
            tail = first
            while chunk := await resp.content.readany():
                tail = chunk
            status = resp.status
        elapsed = time.perf_counter() - t0
        if status != 200 or not tail.endswith(b"data: [DONE]\n\n"):
            self.samples.errors += 1
        return t_first, elapsed

    async def settle(self) -> None:
        """Wait until the proxy finished the background work of the requests so far."""
        if self.app is None:
            return
        await self.app[TASKS].drain(60.0)
        await asyncio.get_running_loop().run_in_executor(None, self.app[ENGINE].flush, 60.0)

    def count_messages(self) -> None:
        """Record how many messages the proxy's store holds (``None`` when unknown)."""
        if self.app is None:
            return
        try:
            status = self.app[ENGINE].status()
            self.samples.messages_stored = int(status["counts"]["messages"])
        except Exception:  # noqa: BLE001 - a figure for the report, never fatal
            self.samples.messages_stored = None

    async def close(self) -> None:
        await self.session.close()


async def _start_proxy(upstream: str, data_dir: Path, capture: bool,
                       offer: str = "history") -> tuple[web.AppRunner, str]:
    settings = load_settings(None, environ={}, overrides={
        "proxy": {"upstream": upstream, "host": "127.0.0.1", "port": 0},
        "storage": {"data_dir": str(data_dir)},
        "capture": {"enabled": capture},
        "tools": {"offer": offer},
    })
    runner = web.AppRunner(create_app(settings), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}/v1"


async def _burst(target: _Target, phase: str, start: int, count: int, concurrency: int,
                 tick: Callable[[], None]) -> None:
    """Send ``count`` non-streaming requests with ``concurrency`` workers."""
    next_index = start
    stop = start + count

    async def worker() -> None:
        nonlocal next_index
        while next_index < stop:
            i = next_index
            next_index += 1
            await target.nonstream(request_body(phase, i, stream=False))
            tick()

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, count)))))


def _blocks(n: int, size: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into consecutive ``(start, count)`` blocks of ``size``."""
    return [(start, min(size, n - start)) for start in range(0, n, max(1, size))]


async def _interleaved(targets: list[_Target], n: int, block: int,
                       one: Callable[[_Target, int], Awaitable[None]],
                       tick: Callable[[], None]) -> None:
    """Run ``one(target, i)`` for i < n on every target, sequentially, in blocks of
    ``block`` requests per target, rotating the target order every block and letting
    each target settle after its block."""
    k = len(targets)
    for b, (start, count) in enumerate(_blocks(n, block)):
        for j in range(k):
            target = targets[(b + j) % k]
            for i in range(start, start + count):
                await one(target, i)
                tick()
            await target.settle()


async def run_proxy_bench_async(n_requests: int, concurrency: int, *,
                                progress: bool = True) -> dict[str, Any]:
    """Async form of :func:`run_proxy_bench` (for callers already inside a loop)."""
    n = max(1, int(n_requests))
    concurrency = max(1, int(concurrency))
    warm = max(20, min(300, n // 10))
    block = max(10, min(100, n // 20))
    rounds = max(1, min(5, n // max(1, concurrency)))
    fake = BenchUpstream()
    upstream = await fake.start()
    runners: list[web.AppRunner] = []
    targets: list[_Target] = []
    with tempfile.TemporaryDirectory(prefix="lcm-bench-") as tmp:
        try:
            targets.append(_Target("direct", upstream, concurrency))
            for mode, (capture, offer) in _PROXIES.items():
                runner, url = await _start_proxy(upstream, Path(tmp) / mode, capture, offer)
                runners.append(runner)
                targets.append(_Target(mode, url, concurrency, runner.app))
            total = len(targets) * (2 * warm + 3 * n)
            bar = tqdm(total=total, file=sys.stderr, unit="req", desc="bench proxy",
                       disable=not progress, mininterval=0.5, leave=False)
            try:
                await _measure(targets, n, warm, block, rounds, concurrency,
                               lambda: bar.update(1))
            finally:
                bar.close()
            for t in targets:
                t.count_messages()
        finally:
            for t in targets:
                await t.close()
            for runner in runners:
                await runner.cleanup()
            await fake.stop()
    return _report({t.name: t.samples for t in targets}, n, concurrency)


async def _measure(targets: list[_Target], n: int, warm: int, block: int, rounds: int,
                   concurrency: int, tick: Callable[[], None]) -> None:
    async def warm_one(t: _Target, i: int) -> None:
        await t.nonstream(request_body("warm", i, stream=False))
        tick()
        await t.stream(request_body("warmstream", i, stream=True))

    await _interleaved(targets, warm, block, warm_one, tick)
    for t in targets:
        t.samples.errors = 0

    async def nonstream_one(t: _Target, i: int) -> None:
        t.samples.nonstream.append(await t.nonstream(request_body("lat", i, stream=False)))

    async def stream_one(t: _Target, i: int) -> None:
        first, whole = await t.stream(request_body("sse", i, stream=True))
        t.samples.ttfb.append(first)
        t.samples.stream_total.append(whole)

    await _interleaved(targets, n, block, nonstream_one, tick)
    await _interleaved(targets, n, block, stream_one, tick)

    # Throughput: `rounds` blocks per target; a block's time and CPU include the
    # proxy's background work for it (settle), which a sustained load also pays.
    for r, (start, count) in enumerate(_blocks(n, -(-n // rounds))):
        for j in range(len(targets)):
            t = targets[(r + j) % len(targets)]
            cpu0, t0 = time.process_time(), time.perf_counter()
            await _burst(t, "tput", start, count, concurrency, tick)
            await t.settle()
            t.samples.tput_seconds += time.perf_counter() - t0
            t.samples.tput_cpu_seconds += time.process_time() - cpu0
            t.samples.tput_requests += count


def run_proxy_bench(n_requests: int, concurrency: int, *, progress: bool = True
                    ) -> dict[str, Any]:
    """Measure the proxy against direct access to a loopback fake upstream.

    ``n_requests``: requests per target for each of non-streaming latency,
    streaming latency and throughput (plus a warm-up of n/10, 20..300).
    ``concurrency``: concurrent clients in the throughput blocks. ``progress``: show
    a tqdm bar on stderr. Starts its own event loop (raises ``RuntimeError`` when
    called from a running loop; use :func:`run_proxy_bench_async` there).

    Returns a JSON-serialisable dict: ``table`` (printable text), ``meta``
    (machine, versions, date, n, concurrency), ``modes`` ({direct,
    proxy_capture_on, proxy_capture_off} → latency figures in ms, throughput in
    requests/s, CPU ms per request, errors), ``added`` (per proxy mode: proxy minus
    direct in ms, ratios), ``targets`` and ``verdict`` (per proxy mode: target →
    bool).
    """
    return asyncio.run(run_proxy_bench_async(n_requests, concurrency, progress=progress))


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 4)


def _mode_figures(s: _Samples) -> dict[str, Any]:
    return {
        "nonstream_p50_ms": _ms(percentile(s.nonstream, 0.50)),
        "nonstream_p99_ms": _ms(percentile(s.nonstream, 0.99)),
        "nonstream_mean_ms": _ms(statistics.fmean(s.nonstream)),
        "stream_ttfb_p50_ms": _ms(percentile(s.ttfb, 0.50)),
        "stream_ttfb_p99_ms": _ms(percentile(s.ttfb, 0.99)),
        "stream_total_p50_ms": _ms(percentile(s.stream_total, 0.50)),
        "stream_total_p99_ms": _ms(percentile(s.stream_total, 0.99)),
        "throughput_rps": round(s.tput_requests / s.tput_seconds, 2) if s.tput_seconds else 0.0,
        "cpu_ms_per_request": _ms(s.tput_cpu_seconds / max(1, s.tput_requests)),
        "errors": s.errors,
        "samples": len(s.nonstream),
        "messages_stored": s.messages_stored,
    }


_LATENCY_KEYS = ("nonstream_p50_ms", "nonstream_p99_ms", "nonstream_mean_ms",
                 "stream_ttfb_p50_ms", "stream_ttfb_p99_ms", "stream_total_p50_ms",
                 "stream_total_p99_ms", "cpu_ms_per_request")


def _report(samples: dict[str, _Samples], n: int, concurrency: int) -> dict[str, Any]:
    modes = {name: _mode_figures(s) for name, s in samples.items()}
    direct = modes["direct"]
    added: dict[str, dict[str, float]] = {}
    verdict: dict[str, dict[str, bool]] = {}
    for mode in MODES[1:]:
        m = modes[mode]
        a = {f"{k}_added": round(m[k] - direct[k], 4) for k in _LATENCY_KEYS}
        a.update({f"{k}_ratio": round(m[k] / direct[k], 3) if direct[k] else 0.0
                  for k in _LATENCY_KEYS})
        a["throughput_ratio"] = (round(m["throughput_rps"] / direct["throughput_rps"], 3)
                                 if direct["throughput_rps"] else 0.0)
        added[mode] = a
        verdict[mode] = {
            "added_p50_under_1ms": a["nonstream_p50_ms_added"] < TARGET_ADDED_P50_MS,
            "added_p99_under_5ms": a["nonstream_p99_ms_added"] < TARGET_ADDED_P99_MS,
            "throughput_at_least_70pct": a["throughput_ratio"] >= TARGET_THROUGHPUT_RATIO,
        }
    meta = {
        "lcm_proxy": __version__,
        "python": platform.python_version(),
        "aiohttp": aiohttp.__version__,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "n_requests": n,
        "concurrency": concurrency,
        "stream_chunks": 20,
    }
    out: dict[str, Any] = {
        "meta": meta,
        "targets": {"added_p50_ms": TARGET_ADDED_P50_MS, "added_p99_ms": TARGET_ADDED_P99_MS,
                    "throughput_ratio": TARGET_THROUGHPUT_RATIO},
        "modes": modes, "added": added, "verdict": verdict,
    }
    out["table"] = format_table(out)
    return out


def format_table(result: dict[str, Any]) -> str:
    """Render a :func:`run_proxy_bench` result as aligned markdown-style text."""
    meta, modes, added = result["meta"], result["modes"], result["added"]
    c = meta["concurrency"]
    rows: list[tuple[str, str]] = [
        ("non-stream p50 (ms)", "nonstream_p50_ms"), ("non-stream p99 (ms)", "nonstream_p99_ms"),
        ("non-stream mean (ms)", "nonstream_mean_ms"),
        ("stream first byte p50 (ms)", "stream_ttfb_p50_ms"),
        ("stream first byte p99 (ms)", "stream_ttfb_p99_ms"),
        ("stream total p50 (ms)", "stream_total_p50_ms"),
        ("stream total p99 (ms)", "stream_total_p99_ms"),
        (f"throughput @{c} clients (req/s)", "throughput_rps"),
        ("CPU per request @throughput (ms)", "cpu_ms_per_request"),
    ]
    header = ["metric", "direct"]
    for mode in MODES[1:]:
        header += [_LABELS[mode], "added", "ratio"]
    table = [header]
    for label, key in rows:
        line = [label, f"{modes['direct'][key]:.3f}" if key != "throughput_rps"
                else f"{modes['direct'][key]:.0f}"]
        for mode in MODES[1:]:
            value = modes[mode][key]
            if key == "throughput_rps":
                line += [f"{value:.0f}", f"{value - modes['direct'][key]:+.0f}",
                         f"{added[mode]['throughput_ratio'] * 100:.0f}%"]
            else:
                line += [f"{value:.3f}", f"{added[mode][key + '_added']:+.3f}",
                         f"x{added[mode][key + '_ratio']:.2f}"]
        table.append(line)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]

    def fmt(r: list[str]) -> str:
        cells = [r[0].ljust(widths[0])] + [v.rjust(w) for v, w in
                                           zip(r[1:], widths[1:], strict=True)]
        return "| " + " | ".join(cells) + " |"

    sep = "|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|"
    lines = [
        f"lcm-proxy {meta['lcm_proxy']} bench proxy: {meta['n_requests']} requests per "
        f"measurement and target, {c} concurrent clients (throughput), SSE of "
        f"{meta['stream_chunks']} chunks",
        f"Python {meta['python']}, aiohttp {meta['aiohttp']}, {meta['cpus']} CPUs, "
        f"{meta['platform']}, {meta['date_utc']} UTC",
        "",
        fmt(table[0]), sep, *(fmt(r) for r in table[1:]),
        "",
    ]
    errors = {m: modes[m]["errors"] for m in MODES if modes[m]["errors"]}
    if errors:
        lines.append(f"ERRORS (non-200 or truncated answers): {errors}")
    for mode in MODES[1:]:
        a, v = added[mode], result["verdict"][mode]
        lines.append(
            f"{_LABELS[mode]}: added p50 {a['nonstream_p50_ms_added']:+.3f} ms "
            f"(target < {TARGET_ADDED_P50_MS:g}: {_ok(v['added_p50_under_1ms'])}), "
            f"added p99 {a['nonstream_p99_ms_added']:+.3f} ms "
            f"(target < {TARGET_ADDED_P99_MS:g}: {_ok(v['added_p99_under_5ms'])}), "
            f"throughput {a['throughput_ratio'] * 100:.0f}% of direct "
            f"(target >= {TARGET_THROUGHPUT_RATIO * 100:.0f}%: "
            f"{_ok(v['throughput_at_least_70pct'])})"
        )
    stored = modes["proxy_capture_on"]["messages_stored"]
    if stored is not None:
        lines.append(f"capture on: {stored} messages stored by the end of the run")
    lines.append("client, proxies and fake upstream share one event loop: throughput ratios "
                 "are a lower bound (see module docstring of proxy.bench)")
    return "\n".join(lines)


def _ok(flag: bool) -> str:
    return "met" if flag else "MISSED"
