"""Crashes and hostile storage: SIGKILL mid-stream and under write load, SIGTERM drains,
a locked database, a full disk and a corrupt index — nothing a client fully received is
lost, the database stays sound, the indexes catch up, chats keep working.

The SIGKILL/SIGTERM tests run the real ``lcm-proxy serve`` in a subprocess against an
upstream served by the test's own event loop (both on 127.0.0.1); the subprocess is
killed in ``finally`` whatever happens. Transcripts are compared with
``lcm-proxy memory export``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from memory_core.engine import Engine
from memory_core.search import HashingEmbedder, SearchConfig, SearchService, SerialEmbedder
from proxy.appkeys import METRICS
from tests.conftest import RunningProxy, sql_read, start_proxy, writer_stalled
from tests.reliability.support import Agent, EchoUpstream, ServeProcess, export, integrity


@pytest.fixture
async def echo() -> AsyncIterator[EchoUpstream]:
    up = EchoUpstream(pieces=8)
    await up.start()
    yield up
    await up.stop()


def stored_paths(data_dir: Path) -> dict[str, list[tuple[str, str]]]:
    """Per session: the (role, text) path from the root to the head of its newest thread,
    read with ``lcm-proxy memory export``; every stored message of the session must be
    on that path (no duplicates, no stray half answers)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for thread in export(data_dir)["threads"]:
        by_id = {m["id"]: m for m in thread["messages"]}
        path, cur = [], thread["head_message_id"]
        while cur is not None and cur in by_id:
            path.append((by_id[cur]["role"], by_id[cur]["text"]))
            cur = by_id[cur]["parent_id"]
        session = thread["session"]
        assert session not in out or not thread["messages"], f"{session}: a second thread"
        out[session] = path[::-1]
    return out


def transcript(agent: Agent) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in agent.history]


async def run_turns(agents: list[Agent], base_url: str, first: int, last: int, *,
                    stream: bool = True) -> None:
    """Every agent does turns ``first..last``, concurrently."""
    async with aiohttp.ClientSession() as http:
        async def one(agent: Agent) -> None:
            for turn in range(first, last + 1):
                await agent.turn(http, base_url, turn, stream=stream)

        await asyncio.gather(*(one(a) for a in agents))


async def wait_index_idle(server: ServeProcess, timeout: float = 60.0) -> None:
    """Poll the admin status (loopback, no token) until both indexers have no lag."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with aiohttp.ClientSession() as http:
        while loop.time() < deadline:
            async with http.get(server.root + "/lcm/v1/status") as r:
                lag = (await r.json())["index"]["indexers"]
            if lag and all(v["lag"] == 0 for v in lag.values()):
                return
            await asyncio.sleep(0.2)
    raise AssertionError(f"indexes did not catch up: {lag}")


def search_finds(data_dir: Path) -> None:
    """Open the Tantivy index the server left (not started: no catch-up here) and find
    every user message of every agent by its unique marker."""
    engine = Engine(data_dir)
    svc = SearchService(engine.store, data_dir, SearchConfig(),
                        SerialEmbedder(HashingEmbedder(64)))
    try:
        rows = sql_read(engine, lambda c: c.execute(
            "SELECT id, tenant, role, text FROM messages WHERE msg_role='user'").fetchall())
        assert rows
        for mid, tenant, role, text in rows:
            marker = next(w for w in text.split() if w.startswith("marker"))
            hits = svc.search(tenant, role, marker, mode="bm25", k=5)
            assert mid in [h.ref_id for h in hits], (marker, hits)
    finally:
        svc.close()
        engine.close()


# -- SIGKILL --------------------------------------------------------------------------------
async def test_sigkill_mid_stream_loses_nothing_the_clients_received(
        echo: EchoUpstream, tmp_path: Path) -> None:
    data = tmp_path / "data"
    agents = [Agent(f"a{i}") for i in range(8)]
    server = ServeProcess(echo.base_url, data, tmp_path / "serve.log")
    try:
        await server.start()
        await run_turns(agents, server.base_url, 1, 3)
        # Turn 4 streams slowly; kill -9 once every agent holds a partial answer.
        echo.pause = 0.3
        for a in agents:
            a.first_bytes = False
        async with aiohttp.ClientSession() as http:
            tasks = [asyncio.ensure_future(a.turn(http, server.base_url, 4)) for a in agents]
            while not all(a.first_bytes for a in agents):
                await asyncio.sleep(0.02)
            server.kill()
            results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, Exception) for r in results)  # every stream was cut
        assert all(a.completed == 3 for a in agents)
        echo.pause = 0.0

        # (vectors are saved, and their checkpoint moved, every second instead of 30)
        server = ServeProcess(echo.base_url, data, tmp_path / "serve2.log",
                              env={"LCM_SEARCH__VECTOR_SAVE_INTERVAL_SECONDS": "1"})
        await server.start()
        assert integrity(data) == ["ok"]
        paths = stored_paths(data)
        for a in agents:
            # turns 1-3 whole, turn 4's question (stored before it was forwarded), and no
            # half answer stored as a reply
            expected = [*transcript(a), ("user", a.user_text(4))]
            assert paths[a.name] == expected, a.name
        # the agents retry turn 4 and go on: each turn is stored once, in order
        await run_turns(agents, server.base_url, 4, 5)
        await wait_index_idle(server)
        paths = stored_paths(data)
        for a in agents:
            assert paths[a.name] == transcript(a), a.name
        server.terminate()
        assert await server.wait_exit(60) == 0
    finally:
        server.stop()
    assert integrity(data) == ["ok"]
    search_finds(data)


async def test_sigkill_under_write_load(echo: EchoUpstream, tmp_path: Path) -> None:
    """16 agents send non-streamed turns as fast as they can; SIGKILL lands wherever.
    With ``capture.response_wait_seconds`` > 0 (default 2 s), every answer an agent
    fully received is stored (the proxy stores an answer before the client gets
    the end of its body); after the agents resume, every turn is stored once."""
    data = tmp_path / "data"
    agents = [Agent(f"w{i}") for i in range(16)]
    server = ServeProcess(echo.base_url, data, tmp_path / "serve.log",
                          env={"LCM_CAPTURE__RESPONSE_WAIT_SECONDS": "2"})
    try:
        await server.start()
        async with aiohttp.ClientSession() as http:
            async def run(agent: Agent) -> None:
                turn = 1
                while True:
                    await agent.turn(http, server.base_url, turn, stream=False)
                    turn += 1

            tasks = [asyncio.ensure_future(run(a)) for a in agents]
            while sum(a.completed for a in agents) < 120:
                await asyncio.sleep(0.01)
            server.kill()
            await asyncio.gather(*tasks, return_exceptions=True)
        server = ServeProcess(echo.base_url, data, tmp_path / "serve2.log")
        await server.start()
        assert integrity(data) == ["ok"]
        paths = stored_paths(data)
        in_flight = 0
        for a in agents:
            got, want = paths.get(a.name, []), transcript(a)
            # everything the agent received is stored, in order; beyond that at most
            # the question it was waiting on at the kill (and its stored answer)
            assert got[:len(want)] == want, (a.name, len(got), len(want))
            assert len(got) <= len(want) + 2, (a.name, len(got), len(want))
            in_flight += len(got) > len(want)
        print(f"turns stored whose answers never reached the agent: {in_flight}")
        # resume: each agent sends its next turn (again) with the whole history
        async with aiohttp.ClientSession() as http:
            await asyncio.gather(*(a.turn(http, server.base_url, a.completed + 1,
                                          stream=False) for a in agents))
        paths = stored_paths(data)
        for a in agents:
            assert paths[a.name] == transcript(a), a.name
    finally:
        server.stop()
    assert integrity(data) == ["ok"]


# -- SIGTERM ---------------------------------------------------------------------------------
async def test_sigterm_drains_a_stream_in_flight(echo: EchoUpstream, tmp_path: Path) -> None:
    data = tmp_path / "data"
    agent = Agent("drain")
    server = ServeProcess(echo.base_url, data, tmp_path / "serve.log")
    try:
        await server.start()
        echo.pause = 0.25  # about 2 s of streaming
        async with aiohttp.ClientSession() as http:
            agent.first_bytes = False
            task = asyncio.ensure_future(agent.turn(http, server.base_url, 1))
            while not agent.first_bytes:
                await asyncio.sleep(0.02)
            server.terminate()
            text = await task  # the stream completes, [DONE] included
        assert text == "echo: " + agent.user_text(1)
        assert await server.wait_exit(60) == 0
    finally:
        server.stop()
    assert stored_paths(data)["drain"] == transcript(agent)


# -- a locked database ---------------------------------------------------------------------------
async def _chat_through_a_lock(proxy: RunningProxy, agents: list[Agent]) -> tuple[str, str]:
    """Turn 2 of every agent while the store's writer is stalled (as by another
    connection holding SQLite's write lock) for 1.5 s; returns the probe's
    ``x-lcm-memory`` and the metrics text scraped meanwhile."""
    with writer_stalled(proxy.engine):
        async with aiohttp.ClientSession() as http:
            await asyncio.gather(*(a.turn(http, proxy.base_url, 2, stream=a.name < "l2")
                                   for a in agents))
            async with http.get(proxy.root + "/lcm/metrics") as r:
                metrics = await r.text()
            body = {"model": "m", "messages": [{"role": "user", "content": "probe"}]}
            async with http.post(proxy.base_url + "/chat/completions", json=body) as r:
                state = r.headers["x-lcm-memory"]
        await asyncio.sleep(1.5)
    await proxy.settle()
    return state, metrics


def _path(proxy: RunningProxy, session: str) -> list[tuple[str, str]]:
    return [(m["msg_role"], m["text"]) for m in proxy.engine.thread_messages(
        _thread_of(proxy, session))]


async def test_a_locked_database_fails_open_and_catches_up(
        echo: EchoUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Chats are answered at once, unmodified (``x-lcm-memory: failed-open``), with a log
    line and the fail-open metric; once the lock is gone the next turn (which carries the
    whole history) leaves every message stored once."""
    proxy = await start_proxy(echo.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": 0.3})
    agents = [Agent(f"l{i}") for i in range(4)]
    try:
        await run_turns(agents, proxy.base_url, 1, 1)
        state, metrics = await _chat_through_a_lock(proxy, agents)
        assert state == "failed-open"
        assert re.search(r'lcm_fail_open_total\{stage="memory_path"\} [1-9]', metrics)
        assert any("memory path failed" in r.getMessage() and r.exc_info
                   for r in caplog.records)
        await run_turns(agents, proxy.base_url, 3, 3)
        await proxy.settle()
        for a in agents:
            assert _path(proxy, a.name) == transcript(a), a.name
        assert proxy.engine.integrity_check() == ["ok"]
    finally:
        await proxy.close()


async def test_requests_answered_during_a_lock_are_stored_without_another_turn(
        echo: EchoUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(echo.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": 0.3})
    agents = [Agent(f"l{i}") for i in range(4)]
    try:
        await run_turns(agents, proxy.base_url, 1, 1)
        await _chat_through_a_lock(proxy, agents)
        for a in agents:
            assert _path(proxy, a.name) == transcript(a), a.name
    finally:
        await proxy.close()


def _thread_of(proxy: RunningProxy, session: str) -> int:
    return int(sql_read(proxy.engine, lambda c: c.execute(
        "SELECT id FROM threads WHERE session=? ORDER BY id DESC", (session,)).fetchone()[0]))


# -- a full disk ---------------------------------------------------------------------------
@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    """A 2 MiB tmpfs (needs root; skipped where mounting is not allowed)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def _fill(path: Path) -> None:
    """Write zeros to ``path`` until the file system is full. Unbuffered, and the
    file's close inside the suppression: a buffered writer's close flushed the part
    of a write the full disk refused and raised ENOSPC again (an occasional failure)."""
    with contextlib.suppress(OSError), open(path, "wb", buffering=0) as fh:
        while True:
            fh.write(b"\0" * 65536)
            os.fsync(fh.fileno())


@pytest.mark.sqlite_only("fills the disk under the data dir's SQLite file")
async def test_a_full_disk_fails_open_and_recovers(
        echo: EchoUpstream, tiny_disk: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = tiny_disk / "data"
    proxy = await start_proxy(echo.base_url, data, search={"enabled": False},
                              injection={"capture_wait_seconds": 2})
    agent = Agent("disk")
    try:
        await run_turns([agent], proxy.base_url, 1, 1)
        await proxy.settle()
        _fill(tiny_disk / "filler")
        try:
            async with aiohttp.ClientSession() as http:
                for turn in (2, 3):  # answered although nothing can be written
                    await agent.turn(http, proxy.base_url, turn, stream=turn == 3)
                async with http.get(proxy.root + "/lcm/metrics") as r:
                    metrics = await r.text()
                async with http.get(proxy.root + "/lcm/health") as r:
                    assert r.status == 200
            await proxy.settle()
        finally:
            (tiny_disk / "filler").unlink(missing_ok=True)
        assert re.search(r'lcm_fail_open_total\{stage="memory_path"\} [1-9]', metrics)
        assert any("write batch failed" in r.getMessage() and r.levelno >= logging.ERROR
                   for r in caplog.records)
        # space is back: the next turn carries the whole history, so nothing is missing
        await run_turns([agent], proxy.base_url, 4, 4)
        await proxy.settle()
        path = proxy.engine.thread_messages(_thread_of(proxy, "disk"))
        assert [(m["msg_role"], m["text"]) for m in path] == transcript(agent)
        assert proxy.engine.integrity_check() == ["ok"]
    finally:
        await proxy.close()


# -- a corrupt index ---------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["truncate text segments", "garble text meta",
                                    "garble vectors", "delete a segment"])
async def test_a_corrupt_index_rebuilds_itself(echo: EchoUpstream, tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture,
                                               damage: str) -> None:
    data = tmp_path / "d"
    agents = [Agent(f"c{i}") for i in range(3)]
    proxy = await start_proxy(echo.base_url, data)
    try:
        await run_turns(agents, proxy.base_url, 1, 2)
        await proxy.settle()
    finally:
        await proxy.close()
    text_dir, vec_dir = data / "index" / "text", data / "index" / "vectors"
    segments = [p for p in text_dir.iterdir() if p.suffix in (".term", ".idx", ".store")]
    assert segments
    # Damaged copies replace the files (a new inode each): this process may still map
    # the closed proxy's segments, and a mapped file cut short in place is a SIGBUS.
    def replace(p: Path, data: bytes) -> None:
        tmp = p.with_name(p.name + ".damaged")
        tmp.write_bytes(data)
        os.replace(tmp, p)

    if damage == "truncate text segments":
        for p in segments:
            replace(p, p.read_bytes()[: p.stat().st_size // 2])
    elif damage == "garble text meta":
        replace(text_dir / "meta.json", b'{"segments": [garbage')
    elif damage == "delete a segment":
        segments[0].unlink()
    else:
        for p in vec_dir.glob("*.npz"):
            replace(p, b"\x00garbage" * 10)
    proxy = await start_proxy(echo.base_url, data)
    try:
        assert proxy.engine.search is not None  # running with search, not without
        await run_turns(agents, proxy.base_url, 3, 3)  # chats work meanwhile
        await proxy.settle()
        if damage != "garble vectors":  # the vector index repairs itself quietly
            assert proxy.app[METRICS].fail_open.labels("search_index")._value.get() == 1
            assert any("search index unreadable" in r.getMessage() for r in caplog.records)
        svc = proxy.engine.search
        rows = sql_read(proxy.engine, lambda c: c.execute(
            "SELECT id, tenant, role, text FROM messages WHERE msg_role='user'").fetchall())
        for mid, tenant, role, text in rows:
            marker = next(w for w in text.split() if w.startswith("marker"))
            assert mid in [h.ref_id for h in svc.search(tenant, role, marker, mode="bm25")]
            assert mid in [h.ref_id for h in svc.search(tenant, role, text, mode="vector",
                                                        k=50)]
    finally:
        await proxy.close()


async def test_an_index_locked_by_another_process_is_left_alone(
        echo: EchoUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``LockBusy`` is not corruption: nothing is deleted, keyword retrieval serves."""
    from memory_core.search.fulltext import TantivyTextIndex

    data = tmp_path / "d"
    proxy = await start_proxy(echo.base_url, data)
    await run_turns([Agent("k")], proxy.base_url, 1, 1)
    await proxy.settle()
    await proxy.close()
    holder = TantivyTextIndex(data / "index" / "text", index_dates=True)  # the writer lock
    try:
        files = sorted(p.name for p in (data / "index" / "text").iterdir())
        proxy = await start_proxy(echo.base_url, data)
        try:
            assert proxy.engine.search is None
            await run_turns([Agent("k2")], proxy.base_url, 1, 1)
            assert proxy.app[METRICS].fail_open.labels("search_index")._value.get() == 0
        finally:
            await proxy.close()
        assert sorted(p.name for p in (data / "index" / "text").iterdir()) == files
    finally:
        holder.close()
    assert json.loads((data / "index" / "text" / "lcm-index.json").read_text())


async def test_more_requests_than_memory_path_threads_each_wait_once_for_a_stuck_writer(
        echo: EchoUpstream, tmp_path: Path) -> None:
    """Twenty agents at once (more than the memory-path pool's threads) while the
    writer is stuck behind another connection's write lock: no thread waits for a
    capture, so each request fails open after one ``capture_wait_seconds``, not in
    waves as threads free up; once the lock is gone every message is stored once."""
    wait = 0.5
    # The answer's own capture is not waited for here (the writer is stuck for it
    # too): first bytes then measure the request's wait alone.
    proxy = await start_proxy(echo.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": wait},
                              capture={"response_wait_seconds": 0})
    agents = [Agent(f"w{i:02d}") for i in range(20)]
    try:
        await run_turns(agents, proxy.base_url, 1, 1)
        with writer_stalled(proxy.engine):
            async with aiohttp.ClientSession() as http:
                await asyncio.gather(*(a.turn(http, proxy.base_url, 2) for a in agents))
        # Three or four waves of six threads would put the last first bytes past 1.5 s.
        assert max(a.last_ttfb for a in agents) < wait + 1.0, sorted(
            round(a.last_ttfb, 2) for a in agents)
        await proxy.settle()
        for a in agents:
            assert _path(proxy, a.name) == transcript(a), a.name
    finally:
        await proxy.close()


async def test_a_request_that_gave_up_on_its_capture_builds_no_block_later(
        echo: EchoUpstream, tmp_path: Path) -> None:
    """A request fails open after ``capture_wait_seconds`` while the writer is stuck;
    once its capture commits, nothing is prepared for it (no block is assembled
    for a request already forwarded), and it is stored all the same."""
    proxy = await start_proxy(echo.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": 0.3})
    engine = proxy.engine
    built: list[str] = []
    real = engine.assemble

    def spy(*args: Any, **kwargs: Any) -> Any:
        built.append(args[2])
        return real(*args, **kwargs)

    engine.assemble = spy  # type: ignore[method-assign]
    agent = Agent("late")
    try:
        await run_turns([agent], proxy.base_url, 1, 1)
        assert built == [agent.user_text(1)]
        with writer_stalled(engine):
            async with aiohttp.ClientSession() as http:
                await agent.turn(http, proxy.base_url, 2)
        await proxy.settle()
        assert built == [agent.user_text(1)]  # nothing built once the request gave up
        assert _path(proxy, agent.name) == transcript(agent)  # stored all the same
    finally:
        await proxy.close()


async def test_a_memory_path_that_cannot_be_queued_fails_open_instead_of_waiting(
        echo: EchoUpstream, tmp_path: Path) -> None:
    """With the memory-path pool gone (as while the proxy stops), a request is
    answered unmodified at once and stored; it does not wait for a job that never
    runs."""
    from proxy.appkeys import AENGINE

    proxy = await start_proxy(echo.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": 30})
    agent = Agent("stopping")
    try:
        await run_turns([agent], proxy.base_url, 1, 1)
        proxy.app[AENGINE].stop()
        body = {"model": "m", "messages": [*agent.history,
                                           {"role": "user", "content": "still there?"}]}
        async with aiohttp.ClientSession() as http:
            async with http.post(proxy.base_url + "/chat/completions", json=body,
                                 headers=agent.headers,
                                 timeout=aiohttp.ClientTimeout(total=10)) as r:
                assert r.status == 200 and r.headers["x-lcm-memory"] == "failed-open"
                await r.read()
        await proxy.settle()
        texts = [m["text"] for m in proxy.engine.thread_messages(_thread_of(proxy, "stopping"))]
        assert "still there?" in texts
    finally:
        await proxy.close()
