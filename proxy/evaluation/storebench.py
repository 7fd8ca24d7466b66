"""``lcm-proxy bench store``: SQLite against PostgreSQL on the request path, in one run.

For each backend (the embedded SQLite store, then PostgreSQL: a given URL or a
throwaway cluster on loopback) one fresh proxy, one fake upstream, and:

1. **Depth.** One generated conversation (the eval's generator, as ``bench
   history``) of ``turns`` user turns: all but the last ``measure`` reach the proxy
   as one request, background work settles, then the last ``measure`` turns are
   sent one by one with the real SDK, each body straight to the fake upstream and
   through the proxy (alternating which goes first), background work settling
   before each turn. Added latency = proxy − direct per request (p50, p95).
2. **Round trips** (PostgreSQL): the store counts every statement it sends, by job
   (:mod:`memory_core.store.pg_trips`). Per measured turn: the request's own jobs
   (capture of the request and the answer, the memory path's reads, the assembly
   log), from the request's start to its answer's commit (with ``capture.journal``
   that commit comes after the client's end: the window waits for the request's
   ``capture-response-<request id>`` task), and those of the background work that
   the turn left (extraction, indexing, compaction), by job name.
3. **Throughput.** ``concurrency`` clients at once, each a new conversation of
   ``per_client`` turns sent back to back (no settling), straight to the upstream
   then through the proxy: requests per second and the proxy's latency p50/p95.

Nothing is simulated but the model (the fake upstream answers at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from proxy.app import create_app, freeze_startup_heap
from proxy.evaluation import runner
from proxy.evaluation.fake import DIRECT_HEADER, EvalUpstream
from proxy.evaluation.generator import generate_session
from proxy.evaluation.historybench import _messages_of
from proxy.evaluation.metrics import percentile

BACKGROUND = ("extract", "Indexer", "indexer", "checkpoint", "vectors", "compact",
              "compressor.", "summar", "prune", "merge_duplicate")
"""Parts of job names of background work (not waited on by a request)."""


def stage_of(job: str) -> str:
    """The stage a job (``module.qualname`` of its function) belongs to."""
    if "._capture_" in job:
        return "capture"
    if job.endswith("_log_assembly") or job.startswith("forwarded."):
        return "logs (queued, not waited)"
    if "PgStore.flush" in job:
        return "harness (flush)"
    if any(part in job for part in BACKGROUND):
        return "background"
    if job.startswith("(write batch)"):
        return "write batches"
    return "memory path reads"


WAITED = ("capture", "memory path reads", "write batches")
"""Stages a request waits for."""


def _delta(after: dict[str, tuple[int, int]], before: dict[str, tuple[int, int]]
           ) -> dict[str, tuple[int, int]]:
    out = {}
    for k, (jobs, trips) in after.items():
        j0, t0 = before.get(k, (0, 0))
        if jobs - j0 or trips - t0:
            out[k] = (jobs - j0, trips - t0)
    return out


def _stats(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 0.5), 2), "p95": round(percentile(values, 0.95), 2),
            "mean": round(statistics.fmean(values), 2)}


@contextlib.contextmanager
def _postgres(url: str | None) -> Iterator[str]:
    """A fresh database: in the cluster at ``url``, or in a throwaway cluster."""
    try:
        from tests import pgcluster
    except ImportError as exc:  # an installed package has no tests/: give a URL
        if url is None:
            raise RuntimeError("no PostgreSQL URL given and tests/pgcluster.py (a"
                               " throwaway cluster) is not importable") from exc
        pgcluster = None  # type: ignore[assignment]
    name = f"lcm_bench_{os.getpid()}"
    if url is not None:
        from memory_core.store.factory import scratch_database

        with scratch_database(url, name) as scratch_url:
            yield scratch_url
        return
    assert pgcluster is not None
    with pgcluster.cluster() as cluster_url:
        yield pgcluster.fresh_database(cluster_url, name)


async def _backend(session: Any, measure: int, concurrency: int, per_client: int,
                   store_url: str, root: Path, embedding: str | None,
                   tick: Callable[[], None]) -> dict[str, Any]:
    import openai
    from openai._response import AsyncAPIResponse
    from openai.types.chat import ChatCompletion

    from proxy.appkeys import ENGINE, TASKS

    fake = EvalUpstream()
    await fake.start()
    settings = runner._settings("lcm", fake.base_url, root, embedding)
    settings = dataclasses.replace(settings, storage=dataclasses.replace(
        settings.storage, url=store_url))
    app = create_app(settings)
    site_runner = web.AppRunner(app, access_log=None)
    await site_runner.setup()
    await web.TCPSite(site_runner, "127.0.0.1", 0).start()
    freeze_startup_heap()
    url = f"http://127.0.0.1:{site_runner.addresses[0][1]}/v1"
    store = app[ENGINE].store
    trips = getattr(store, "round_trips", None)

    def snap() -> dict[str, tuple[int, int]]:
        return trips.snapshot() if trips is not None else {}

    clients = {
        "direct": openai.AsyncOpenAI(base_url=fake.base_url, api_key=runner.API_KEY,
                                     max_retries=0, timeout=600,
                                     default_headers={DIRECT_HEADER: "1"}),
        "proxy": openai.AsyncOpenAI(base_url=url, api_key=runner.API_KEY, max_retries=0,
                                    timeout=600),
    }

    async def send(name: str, body: dict[str, Any]) -> tuple[float, str]:
        """(ms to the answer's end, the proxy's request id or "")."""
        t0 = time.perf_counter()
        resp = await clients[name].post("/chat/completions", body=body,
                                        cast_to=AsyncAPIResponse[ChatCompletion])
        await resp.parse()
        return (time.perf_counter() - t0) * 1000.0, resp.headers.get("x-lcm-request-id", "")

    async def call(name: str, body: dict[str, Any]) -> float:
        return (await send(name, body))[0]

    history: list[dict[str, Any]] = [{"role": "system", "content": session.system}]
    before, measured = session.turns[:-measure], session.turns[-measure:]
    series: dict[str, list[float]] = {"direct": [], "proxy": []}
    request_jobs: list[dict[str, tuple[int, int]]] = []
    after_jobs: list[dict[str, tuple[int, int]]] = []
    try:
        started = time.perf_counter()
        for turn in before[:-1]:
            history += _messages_of(turn)
        last = _messages_of(before[-1])
        history += last[:-1]
        fake.script(before[-1].reply)
        await call("proxy", {"model": "bench-model", "messages": history})
        history.append(last[-1])
        await runner._settle(app)
        preload_s = time.perf_counter() - started
        for n, turn in enumerate(measured):
            steps = _messages_of(turn)
            history += steps[:-1]
            fake.script(turn.reply)
            body = {"model": "bench-model", "messages": history}
            for name in (("direct", "proxy") if n % 2 else ("proxy", "direct")):
                if name == "proxy":
                    s0 = snap()
                    ms, rid = await send(name, body)
                    series[name].append(ms)
                    if not rid or not await app[TASKS].wait(f"capture-response-{rid}",
                                                            runner.SETTLE_TIMEOUT_S):
                        raise runner.EvalAborted(
                            f"the answer's capture of request {rid!r} did not end")
                    s1 = snap()
                    await runner._settle(app)
                    request_jobs.append(_delta(s1, s0))
                    after_jobs.append(_delta(snap(), s1))
                else:
                    series[name].append(await call(name, body))
            history.append(steps[-1])
            tick()
        tools = await asyncio.get_running_loop().run_in_executor(
            None, _tool_reads, app[ENGINE], measured, snap)
        throughput = await _throughput(app, fake, call, session, concurrency, per_client)
    finally:
        for c in clients.values():
            await c.close()
        await site_runner.cleanup()
        await fake.stop()
        gc.unfreeze()
    added = [p - d for p, d in zip(series["proxy"], series["direct"], strict=True)]
    out: dict[str, Any] = {
        "direct_ms": _stats(series["direct"]), "proxy_ms": _stats(series["proxy"]),
        "added_ms": _stats(added), "preload_s": round(preload_s, 1),
        "messages": len(history), **throughput,
    }
    if trips is not None:
        out["round_trips"] = _per_turn(request_jobs, after_jobs)
        out["round_trips"]["tools"] = tools
    return out


TOOL_CALLS = (("memory_search", "query"), ("memory_grep", "query"),
              ("view_message", "message_id"), ("view_chat_history_summary", None))
"""The read tools a model may call, and the argument each gets."""


def _tool_reads(engine: Any, measured: list[Any],
                snap: Callable[[], dict[str, tuple[int, int]]]) -> dict[str, float]:
    """Round trips of each read tool (mean of a call per measured turn's words),
    called as the proxy calls them, in the conversation's scope."""
    from memory_core.models import Scope
    from memory_core.tools.memory_tools import run_tool

    scopes = engine.store.read_tx(lambda tx: tx.inspection.recent_scopes(
        tenant=None, role=None, session=None, limit=1))
    if not scopes:
        return {}
    scope = Scope(scopes[0][0], scopes[0][1], "")
    newest = engine.store.read_tx(lambda tx: tx.inspection.keyword_messages(
        tenant=scope.tenant, role=scope.role, session=None, limit=len(measured)))
    ids = [int(r["id"]) for r in newest] or [1]
    out: dict[str, float] = {}
    for name, arg in TOOL_CALLS:
        total = 0
        for n, turn in enumerate(measured):
            value: Any = (ids[n % len(ids)] if arg == "message_id"
                          else " ".join(turn.text.split()[:4]))
            before = snap()
            run_tool(engine, scope, name, orjson.dumps({arg: value} if arg else {}).decode())
            total += sum(t for _j, t in _delta(snap(), before).values())
        out[name] = round(total / max(1, len(measured)), 1)
    return out


async def _throughput(app: web.Application, fake: EvalUpstream,
                      call: Callable[[str, dict[str, Any]], Any], session: Any,
                      concurrency: int, per_client: int) -> dict[str, Any]:
    """Requests per second with ``concurrency`` new conversations at once, direct
    then through the proxy (the same bodies)."""
    turns = session.turns[:per_client]
    fake.script(turns[0].reply)
    out: dict[str, Any] = {"concurrency": concurrency, "per_client": per_client}
    for name in ("direct", "proxy"):
        lat: list[float] = []

        async def client(c: int, name: str = name, lat: list[float] = lat) -> None:
            hist: list[dict[str, Any]] = [{"role": "system",
                                           "content": f"client {c} of {name}. {session.system}"}]
            for turn in turns:
                steps = _messages_of(turn)
                hist += steps[:-1]
                lat.append(await call(name, {"model": "bench-model", "messages": list(hist)}))
                hist.append(steps[-1])

        started = time.perf_counter()
        await asyncio.gather(*(client(c) for c in range(concurrency)))
        wall = time.perf_counter() - started
        out[f"{name}_rps"] = round(len(lat) / wall, 1)
        out[f"{name}_c_ms"] = _stats(lat)
    await runner._settle(app)
    return out


def _per_turn(request_jobs: list[dict[str, tuple[int, int]]],
              after_jobs: list[dict[str, tuple[int, int]]]) -> dict[str, Any]:
    """Round trips per measured turn: by stage (p50 and mean of the per-turn sums)
    and by job name (mean jobs and round trips a turn)."""
    turns = len(request_jobs)
    stages: dict[str, list[int]] = {}
    jobs: dict[str, list[float]] = {}
    for window, label in ((request_jobs, "request"), (after_jobs, "after")):
        for n, delta in enumerate(window):
            for job, (count, trips) in delta.items():
                stage = stage_of(job)
                if label == "after" and stage not in ("background", "harness (flush)"):
                    stage = f"{stage} (after the answer)"
                stages.setdefault(stage, [0] * turns)[n] += trips
                entry = jobs.setdefault(job, [0.0, 0.0])
                entry[0] += count / turns
                entry[1] += trips / turns
    in_flight = [sum(trips for job, (_c, trips) in d.items() if stage_of(job) in WAITED)
                 for d in request_jobs]
    return {
        "request_path": {"p50": statistics.median(in_flight), "max": max(in_flight),
                         "mean": round(statistics.fmean(in_flight), 1)},
        "stages": {k: {"p50": statistics.median(v), "mean": round(statistics.fmean(v), 1)}
                   for k, v in sorted(stages.items())},
        "jobs": {k: {"jobs": round(v[0], 2), "round_trips": round(v[1], 1)}
                 for k, v in sorted(jobs.items(), key=lambda kv: -kv[1][1])},
    }


async def run_store_bench_async(turns: int = 1000, measure: int = 60, *,
                                 concurrency: int = 16, per_client: int = 10,
                                 pg_url: str | None = None, seed: int = 1,
                                 embedding: str | None = "hashing",
                                 tick: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Run the benchmark (module docstring) on SQLite then PostgreSQL (``pg_url``: a
    server to create a scratch database in; ``None``: a throwaway cluster, from
    tests/pgcluster.py). Returns the figures per backend and ``table``."""
    if turns < 24 or not 1 <= measure < turns or concurrency < 1 or per_client < 1:
        raise ValueError("need turns >= 24, 1 <= measure < turns, concurrency and"
                         " per_client >= 1")
    session = generate_session(seed, f"bench-{turns}en", turns, "en")
    out: dict[str, Any] = {"turns": turns, "measure": measure, "embedding": embedding}
    with tempfile.TemporaryDirectory(prefix="lcm-storebench-") as tmp:
        out["sqlite"] = await _backend(session, measure, concurrency, per_client, "",
                                       Path(tmp, "sqlite"), embedding, tick)
        with _postgres(pg_url) as url:
            out["postgresql"] = await _backend(session, measure, concurrency, per_client,
                                               url, Path(tmp, "pg"), embedding, tick)
    out["table"] = format_table(out)
    return out


def run_store_bench(turns: int = 1000, measure: int = 60, **kw: Any) -> dict[str, Any]:
    """:func:`run_store_bench_async` in a new event loop (call it outside one)."""
    return asyncio.run(run_store_bench_async(turns, measure, **kw))


def format_table(out: dict[str, Any]) -> str:
    """Markdown: one row per backend, then the round trips by stage and by job."""
    lines = [f"| store | direct p50 | added p50 / p95 at {out['turns']:,} turns "
             f"| round trips a turn (waited) | direct req/s "
             f"@{out['sqlite']['concurrency']} | proxy req/s | proxy p50 / p95 at that "
             "concurrency | preload s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, label in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL (loopback)")):
        r = out[name]
        rt = r.get("round_trips")
        trips = (f"{rt['request_path']['p50']:g} (max {rt['request_path']['max']})"
                 if rt else "in-process")
        lines.append(
            f"| {label} | {r['direct_ms']['p50']:.2f} | {r['added_ms']['p50']:+.2f} / "
            f"{r['added_ms']['p95']:+.2f} | {trips} | {r['direct_rps']:.0f} | "
            f"{r['proxy_rps']:.0f} | {r['proxy_c_ms']['p50']:.1f} / "
            f"{r['proxy_c_ms']['p95']:.1f} | {r['preload_s']} |")
    rt = out["postgresql"].get("round_trips")
    if rt:
        lines += ["", "| PostgreSQL stage | round trips a turn, p50 | mean |", "|---|---:|---:|"]
        lines += [f"| {k} | {v['p50']:g} | {v['mean']:g} |" for k, v in rt["stages"].items()]
        if rt.get("tools"):
            lines += ["", "| PostgreSQL read tool (a model's call) | round trips a call |",
                      "|---|---:|"]
            lines += [f"| `{k}` | {v:g} |" for k, v in rt["tools"].items()]
        lines += ["", "| job | jobs a turn | round trips a turn |", "|---|---:|---:|"]
        lines += [f"| `{k}` | {v['jobs']:g} | {v['round_trips']:g} |"
                  for k, v in rt["jobs"].items()]
    lines.append("")
    lines.append(
        f"ms; added = proxy − direct per request, {out['measure']} measured turns each"
        f" backend; req/s: {out['sqlite']['concurrency']} new conversations at once x"
        f" {out['sqlite']['per_client']} turns, direct then through the proxy. Round"
        " trips (waited): statements sent to PostgreSQL (a write batch's BEGIN, lock,"
        " savepoints and COMMIT included) by the capture and memory-path jobs of the"
        " request, from its start to its answer's commit; the logs it queues and the"
        " background work"
        f" it leaves are listed below. Embedding {out['embedding']}. {os.cpu_count()} CPUs,"
        f" Python {platform.python_version()},"
        f" {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC.")
    return "\n".join(lines)
