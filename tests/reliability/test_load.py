"""Load: concurrent agents streaming through the real ``lcm-proxy serve`` with memory on.

Each agent resends its whole history every turn (as SDK agents do), streams the answer
and keeps going until the time or turn bound. Pass criteria are correctness only: no
request failed because of the proxy, and every turn of every agent is stored exactly
once, in order (compared with ``lcm-proxy memory export``). The figures — throughput,
time to first byte, the latency the proxy adds (client time minus the upstream's own
service time, which the upstream reports in its last chunk), and the server's RSS at
start and end — are printed as a table, never asserted.

The full run (64 agents, 2 minutes) is behind the ``load`` marker::

    python -m pytest -m load -s -p no:cacheprovider tests/reliability/test_load.py

A short run (16 agents, about 10 seconds) runs with the rest of the suite.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import aiohttp
import pytest

from tests.reliability.support import Agent, EchoUpstream, ServeProcess, export, rss_kib


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def _metric(text: str, name: str, stage: str) -> tuple[float, float]:
    """``(sum, count)`` of a Prometheus histogram's series for ``stage``."""
    values = {}
    for suffix in ("_sum", "_count"):
        prefix = f'{name}{suffix}{{stage="{stage}"}} '
        values[suffix] = next((float(ln[len(prefix):]) for ln in text.splitlines()
                               if ln.startswith(prefix)), 0.0)
    return values["_sum"], values["_count"]


async def run_load(tmp_path: Path, n_agents: int, seconds: float, max_turns: int) -> None:
    echo = EchoUpstream(pieces=16, pause=0.005)  # ~80 ms of streaming per answer
    await echo.start()
    data = tmp_path / "data"
    server = ServeProcess(echo.base_url, data, tmp_path / "serve.log",
                          env={"LCM_LOG_LEVEL": "WARNING"})
    agents = [Agent(f"agent{i:02d}") for i in range(n_agents)]
    ttfb: list[float] = []
    added: list[float] = []
    totals: list[float] = []
    failures: list[str] = []
    rss_series: list[int] = []
    try:
        await server.start()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as http:
            # warm-up: one turn each (first capture, tokenizer, index open), not measured
            await asyncio.gather(*(a.turn(http, server.base_url, 1) for a in agents))
            rss_start = rss_kib(server.pid)
            started = time.perf_counter()
            deadline = started + seconds

            async def agent_loop(agent: Agent) -> None:
                turn = 2
                while time.perf_counter() < deadline and turn <= max_turns:
                    try:
                        await agent.turn(http, server.base_url, turn)
                    except Exception as exc:  # noqa: BLE001 - counted, then asserted
                        failures.append(f"{agent.name} turn {turn}: {exc!r}"[:300])
                        return
                    ttfb.append(agent.last_ttfb)
                    totals.append(agent.last_total)
                    added.append(agent.last_total - agent.last_service)
                    turn += 1

            async def sample_rss() -> None:
                while time.perf_counter() < deadline:
                    await asyncio.sleep(seconds / 6)
                    rss_series.append(rss_kib(server.pid))

            sampler = asyncio.ensure_future(sample_rss())
            await asyncio.gather(*(agent_loop(a) for a in agents))
            sampler.cancel()
            elapsed = time.perf_counter() - started
            rss_end = rss_kib(server.pid)
            async with http.get(server.root + "/lcm/metrics") as r:
                metrics = await r.text()
        server.terminate()
        exit_code = await server.wait_exit(120)
    finally:
        server.stop()
        await echo.stop()

    n = len(totals)
    fail_open = [ln for ln in metrics.splitlines()
                 if ln.startswith("lcm_fail_open_total{") and not ln.endswith(" 0.0")]
    print(f"\nload: {n_agents} agents, {elapsed:.1f} s, memory on, streaming, loopback")
    print(f"{'requests':<28}{n:>10}")
    print(f"{'failed requests':<28}{len(failures):>10}")
    print(f"{'throughput (req/s)':<28}{n / elapsed:>10.1f}")
    print(f"{'turns per agent (max)':<28}{max(a.completed for a in agents):>10}")
    for name, vals in (("time to first byte", ttfb), ("client total", totals),
                       ("added by the proxy", added)):
        print(f"{name + ' (ms)':<28}" + "".join(
            f"  p{p}={_pct(vals, p) * 1000:8.1f}" for p in (50, 95, 99))
            + f"  max={max(vals) * 1000:8.1f}" if vals else "")
    service_p50 = statistics.median(echo.service_seconds) * 1000
    print(f"{'upstream service p50 (ms)':<28}{service_p50:>10.1f}")
    print(f"{'server RSS start (MiB)':<28}{rss_start / 1024:>10.1f}")
    print(f"{'server RSS end (MiB)':<28}{rss_end / 1024:>10.1f}")
    print(f"{'server RSS during (MiB)':<28}" + " ".join(f"{r / 1024:.0f}" for r in rss_series))
    stored = sum(len(a.history) for a in agents)
    print(f"{'messages stored':<28}{stored:>10}")
    print(f"{'fail-open counters':<28}{(', '.join(fail_open) or 'none'):>10}")
    for stage in ("memory_path", "assemble", "compaction_rewrite"):
        total, count = _metric(metrics, "lcm_stage_latency_seconds", stage)
        if count:
            print(f"{stage + ' mean (ms)':<28}{total / count * 1000:>10.1f}")

    assert failures == [], failures[:5]
    assert exit_code == 0
    # every turn of every agent stored exactly once, in order
    sessions: dict[str, list[tuple[str, str]]] = {}
    for thread in export(data)["threads"]:
        assert thread["session"] not in sessions, f"{thread['session']}: a second thread"
        msgs = [m for m in thread["messages"] if not m["hidden"]]
        sessions[thread["session"]] = [(m["role"], m["text"]) for m in msgs]
    for a in agents:
        want = [(m["role"], m["content"]) for m in a.history]
        assert sessions[a.name] == want, a.name


async def test_load_short(tmp_path: Path) -> None:
    """16 agents for about 10 s: the CI-sized version of the load test."""
    await run_load(tmp_path, n_agents=16, seconds=10, max_turns=10_000)


@pytest.mark.load
async def test_load_64_agents_two_minutes(tmp_path: Path) -> None:
    await run_load(tmp_path, n_agents=64, seconds=120, max_turns=100_000)
