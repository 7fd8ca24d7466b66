"""Load: concurrent agents streaming through the real ``lcm-proxy serve`` with memory on.

Each agent resends its whole history every turn (as SDK agents do), streams the answer
and keeps going until the time bound; after ``history_turns`` turns it starts a new
conversation (a new session), as an agent does when its task ends or its context
window is full. Pass criteria are correctness: no request failed because of the
proxy, and every turn of every conversation is stored exactly once, in order
(compared with ``lcm-proxy memory export``). The figures — throughput, time to first
byte, the latency the proxy adds (client time minus the upstream's own service time,
which the upstream reports in its last chunk), and the server's RSS — are printed as
a table; only the long run asserts on memory (below).

Memory is judged on the slope after warm-up, not on end minus start. RSS is sampled
every twelfth of the run; the first quarter is warm-up: every executor thread opens
its SQLite connection and fills its page cache (``storage.sqlite_cache_kib``) and
statement cache (``storage.sqlite_statement_cache``), glibc gives each thread an
arena, Tantivy merges its first segments. Those are bounded, so they may raise RSS
once but not keep raising it. After warm-up the least-squares slope of RSS over the
stored turns must stay under ``FLAT_KIB_PER_TURN``: what a turn legitimately adds to
memory is its share of the in-memory vector index (two messages: vector, row, label
map — about 1 KiB with the hashing embedder) plus allocator slack; a per-request
leak or an unbounded cache shows up as several KiB per turn (the statement cache of
128 history-long ``IN`` lists measured 14 KiB per turn before it was bounded). A
slope per turn, rather than per minute, keeps the rule independent of how fast
the machine is. Histories are bounded (``history_turns``) so that the per-request
work, and with it the allocator's high-water mark, stops growing: with ever longer
histories RSS follows the largest request body, which is the workload growing, not
the proxy.

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


FLAT_KIB_PER_TURN = 3.0
"""Largest post-warm-up RSS slope (KiB per stored turn) the long run accepts."""


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of ``(x, y)`` points (0 for fewer than two x values)."""
    if len({x for x, _ in points}) < 2:
        return 0.0
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    return (sum((x - mx) * (y - my) for x, y in points)
            / sum((x - mx) ** 2 for x, _ in points))


def _metric(text: str, name: str, stage: str) -> tuple[float, float]:
    """``(sum, count)`` of a Prometheus histogram's series for ``stage``."""
    values = {}
    for suffix in ("_sum", "_count"):
        prefix = f'{name}{suffix}{{stage="{stage}"}} '
        values[suffix] = next((float(ln[len(prefix):]) for ln in text.splitlines()
                               if ln.startswith(prefix)), 0.0)
    return values["_sum"], values["_count"]


async def run_load(tmp_path: Path, n_agents: int, seconds: float, *,
                   history_turns: int = 40, assert_flat: bool = False) -> None:
    echo = EchoUpstream(pieces=16, pause=0.005)  # ~80 ms of streaming per answer
    await echo.start()
    data = tmp_path / "data"
    server = ServeProcess(echo.base_url, data, tmp_path / "serve.log",
                          env={"LCM_LOG_LEVEL": "WARNING"})
    agents = [Agent(f"agent{i:02d}") for i in range(n_agents)]
    conversations = list(agents)
    ttfb: list[float] = []
    added: list[float] = []
    totals: list[float] = []
    failures: list[str] = []
    rss: list[tuple[float, int, int]] = []  # (seconds, KiB, turns so far)
    try:
        await server.start()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as http:
            # warm-up: one turn each (first capture, tokenizer, index open), not measured
            await asyncio.gather(*(a.turn(http, server.base_url, 1) for a in agents))
            started = time.perf_counter()
            rss.append((0.0, rss_kib(server.pid), 0))
            deadline = started + seconds

            async def agent_loop(agent: Agent) -> None:
                turn, n = 2, 1
                while time.perf_counter() < deadline:
                    if turn > history_turns:  # a new task: a new conversation
                        n += 1
                        agent = Agent(f"{agent.name.split('.')[0]}.{n}")
                        conversations.append(agent)
                        turn = 1
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
                    await asyncio.sleep(seconds / 12)
                    rss.append((time.perf_counter() - started, rss_kib(server.pid),
                                len(totals)))

            sampler = asyncio.ensure_future(sample_rss())
            await asyncio.gather(*(agent_loop(a) for a in agents))
            sampler.cancel()
            elapsed = time.perf_counter() - started
            rss.append((elapsed, rss_kib(server.pid), len(totals)))
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
    print(f"\nload: {n_agents} agents, {elapsed:.1f} s, memory on, streaming, loopback,"
          f" new conversation every {history_turns} turns")
    print(f"{'requests':<28}{n:>10}")
    print(f"{'failed requests':<28}{len(failures):>10}")
    print(f"{'throughput (req/s)':<28}{n / elapsed:>10.1f}")
    print(f"{'conversations':<28}{len(conversations):>10}")
    for name, vals in (("time to first byte", ttfb), ("client total", totals),
                       ("added by the proxy", added)):
        print(f"{name + ' (ms)':<28}" + "".join(
            f"  p{p}={_pct(vals, p) * 1000:8.1f}" for p in (50, 95, 99))
            + f"  max={max(vals) * 1000:8.1f}" if vals else "")
    service_p50 = statistics.median(echo.service_seconds) * 1000
    print(f"{'upstream service p50 (ms)':<28}{service_p50:>10.1f}")
    warm = [p for p in rss if p[0] >= seconds / 4] or rss[-1:]
    kib_per_turn = _slope([(turns, kib) for _, kib, turns in warm])
    mib_per_min = _slope([(t, kib) for t, kib, _ in warm]) * 60 / 1024
    print(f"{'server RSS start (MiB)':<28}{rss[0][1] / 1024:>10.1f}")
    print(f"{'server RSS after warm-up':<28}{warm[0][1] / 1024:>10.1f}"
          f"  (at {warm[0][0]:.0f} s, {warm[0][2]} requests)")
    print(f"{'server RSS end (MiB)':<28}{rss[-1][1] / 1024:>10.1f}")
    print(f"{'server RSS samples (MiB)':<28}" + " ".join(f"{k / 1024:.0f}" for _, k, _ in rss))
    print(f"{'RSS slope after warm-up':<28}{kib_per_turn:>10.2f} KiB/turn"
          f"  ({mib_per_min:.1f} MiB/min; flat below {FLAT_KIB_PER_TURN} KiB/turn)")
    stored = sum(len(a.history) for a in conversations)
    print(f"{'messages stored':<28}{stored:>10}")
    print(f"{'fail-open counters':<28}{(', '.join(fail_open) or 'none'):>10}")
    for stage in ("memory_path", "assemble", "compaction_rewrite"):
        total, count = _metric(metrics, "lcm_stage_latency_seconds", stage)
        if count:
            print(f"{stage + ' mean (ms)':<28}{total / count * 1000:>10.1f}")

    assert failures == [], failures[:5]
    assert exit_code == 0
    # every turn of every conversation stored exactly once, in order
    sessions: dict[str, list[tuple[str, str]]] = {}
    for thread in export(data)["threads"]:
        assert thread["session"] not in sessions, f"{thread['session']}: a second thread"
        msgs = [m for m in thread["messages"] if not m["hidden"]]
        sessions[thread["session"]] = [(m["role"], m["text"]) for m in msgs]
    for a in conversations:
        want = [(m["role"], m["content"]) for m in a.history]
        assert sessions.get(a.name, []) == want, a.name
    if assert_flat:
        assert kib_per_turn < FLAT_KIB_PER_TURN, f"RSS grows {kib_per_turn:.2f} KiB per turn"


async def test_load_short(tmp_path: Path) -> None:
    """16 agents for about 10 s: the CI-sized version of the load test."""
    await run_load(tmp_path, n_agents=16, seconds=10)


@pytest.mark.load
async def test_load_64_agents_two_minutes(tmp_path: Path) -> None:
    await run_load(tmp_path, n_agents=64, seconds=120, assert_flat=True)
