"""A request's plan on the store's writer thread (issue 28: one hand-off fewer).

When a request is alone in flight and no other write waits, its memory-path plan
runs on the writer right after its capture's commit
(:meth:`proxy.flow.asyncengine.AsyncEngine.plan`,
:func:`memory_core.store.batch.after_batch`); otherwise on the memory-path pool.
End to end (the real SDK → the proxy → the fake upstream), in both modes: the
plan reads what this turn's capture committed (an item the message supersedes is
not shown as current), and concurrent conversations each get their answer and
their own block. On both stores: a write the writer-side work waits for runs in
turn on the same thread (no deadlock), and queued writes send the work elsewhere.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from memory_core.store import batch
from memory_core.store.sqlite import SqliteStore
from proxy.appkeys import AENGINE
from proxy.flow import plan
from tests import pgcluster
from tests.conftest import RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

WRITERS = ("lcm-sqlite-writer", "lcm-pg-writer")
VIEW = {"in_view_tokens": 0}
"""Repeat what is in view: a short conversation has a block."""


def _spy_plans(monkeypatch: pytest.MonkeyPatch, proxy: RunningProxy) -> list[tuple[str, int]]:
    """Record (thread name, chat requests in flight) of every plan the proxy makes."""
    seen: list[tuple[str, int]] = []
    prepare = plan.prepare
    aengine = proxy.app[AENGINE]

    def spied(*args: Any, **kwargs: Any) -> Any:
        seen.append((threading.current_thread().name, aengine._requests))
        return prepare(*args, **kwargs)

    monkeypatch.setattr(plan, "prepare", spied)
    return seen


def _capture_after_plan(proxy: RunningProxy, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make each turn's capture commit after its request waits for it: a write job
    holds the writer until the request calls ``AsyncEngine.plan`` (a capture that
    commits earlier is found done, and its plan goes to the pool from the loop).
    Returns ``hold()``, to call before each turn."""
    aengine = proxy.app[AENGINE]
    release = threading.Event()
    planned = aengine.plan

    async def plan_called(*args: Any, **kwargs: Any) -> Any:
        waiting = planned(*args, **kwargs)
        # released once the plan waits (its first await: the capture's callback is set)
        asyncio.get_running_loop().call_soon(release.set)
        return await waiting

    monkeypatch.setattr(aengine, "plan", plan_called)

    def hold() -> None:
        release.clear()
        running = threading.Event()

        def job(tx: Any) -> None:
            running.set()
            release.wait(10)

        proxy.engine.store.write_tx(job)
        assert running.wait(10)  # taken: the capture queues behind it, not beside it

    return hold


async def _superseded_in_its_own_turn(proxy: RunningProxy, upstream: FakeUpstream,
                                      hold: Any) -> None:
    """One conversation (the proxy repeats what is in view: ``in_view_tokens = 0``):
    the turn that corrects a value has a block without the old value as current."""
    agent = Agent(proxy, upstream)
    for text in ("The API timeout is 30 s when offline.",
                 "Remind me, what is the API timeout when offline?"):
        await proxy.settle()  # the turn's writes done: its capture finds an idle writer
        hold()
        await agent.say(text)
    assert "30 s" in block_of(agent.upstream_last_user())  # the item the next turn hides
    await proxy.settle()
    hold()
    await agent.say("Correction: the API timeout is 45 s when offline.")
    block = block_of(agent.upstream_last_user())
    for line in block.splitlines():
        if "30 s" in line:
            assert "superseded" in line, block  # never shown as current
    await proxy.settle()
    status = {h["value"]: h["status"] for h in
              proxy.engine.search_memory("API timeout", include_messages=False)
              if h["value"] is not None}
    assert status == {30.0: "superseded", 45.0: "active"}


@pytest.mark.parametrize("on_writer", [True, False], ids=["writer", "pool"])
async def test_the_plan_reads_its_own_turns_capture(
        upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        on_writer: bool) -> None:
    """The block of the turn that corrects a value does not show the old value as
    current, whichever thread plans it; one request at a time plans on the writer
    (pool mode: never)."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", injection=VIEW)
    try:
        proxy.app[AENGINE].plan_on_writer = on_writer
        seen = _spy_plans(monkeypatch, proxy)
        await _superseded_in_its_own_turn(proxy, upstream,
                                          _capture_after_plan(proxy, monkeypatch))
        threads = {name.rsplit("_", 1)[0] for name, _ in seen}
        assert len(seen) == 3
        assert threads == ({"lcm-sqlite-writer"} if on_writer else {"lcm-memory-path"}), seen
    finally:
        await proxy.close()


async def test_the_plan_on_the_writer_reads_its_capture_on_postgresql(
        upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        pg_url: str) -> None:  # noqa: F811
    """The same on PostgreSQL: the plan's reads (the read pool) see the capture the
    writer connection committed just before, on the writer's thread."""
    url = pgcluster.fresh_database(pg_url, "plan_on_writer")
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", storage={"url": url},
                              injection=VIEW)
    try:
        seen = _spy_plans(monkeypatch, proxy)
        await _superseded_in_its_own_turn(proxy, upstream,
                                          _capture_after_plan(proxy, monkeypatch))
        assert {name for name, _ in seen} == {"lcm-pg-writer"}
    finally:
        await proxy.close()


async def test_concurrent_conversations_get_their_answers_and_blocks(
        upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight conversations at once: each answer arrives, each block holds the
    conversation's own earlier fact, and no plan ran on the writer while another
    request was in flight (its writes would have waited behind the plan)."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              injection=VIEW)
    try:
        seen = _spy_plans(monkeypatch, proxy)
        agents = [Agent(proxy, upstream, role=f"team{i}") for i in range(8)]

        async def talk(i: int, agent: Agent) -> str:
            await agent.say(f"The build server for team {i} listens on port {7100 + i}.")
            await agent.say(f"Step one for team {i}: update the changelog.")
            question = f"Which port does the build server for team {i} use?"
            assert await agent.say(question)  # answered
            # the fake upstream's log is shared: this conversation's request in it
            sent = [r["json"]["messages"][-1]["content"] for r in upstream.chat_requests]
            return next(block_of(text) for text in sent if text.endswith(question))

        blocks = await asyncio.gather(*(talk(i, a) for i, a in enumerate(agents)))
        for i, block in enumerate(blocks):
            assert str(7100 + i) in block
            assert not any(str(7100 + j) in block for j in range(8) if j != i)
        assert len(seen) == 24
        assert all(requests == 1 for name, requests in seen if name in WRITERS), seen
    finally:
        await proxy.close()


# -- the store's side: work left to the writer thread -------------------------------

@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        opened: Any = SqliteStore(tmp_path / "s")
    else:
        cluster_url = request.getfixturevalue("pg_url")  # skips (or fails in CI) first
        from memory_core.store.pg import PgStore

        opened = PgStore(pgcluster.fresh_database(cluster_url, "after_batch"))
    try:
        yield opened
    finally:
        opened.close()


def _leave(store: Any, work: Any, fallback: Any, *, before: Any = None) -> Future[Any]:
    """A write whose future's callback leaves ``work`` to the writer (``before``:
    run inside the write job, on the writer)."""
    done = threading.Event()

    def job(tx: Any) -> int:
        if before is not None:
            before()
        return 1

    fut = store.write_tx(job)
    fut.add_done_callback(lambda f: batch.after_batch(work, fallback))
    fut.add_done_callback(lambda f: done.set())
    return fut


def test_work_left_to_an_idle_writer_runs_there_and_may_wait_for_writes(store: Any) -> None:
    """The work runs on the writer thread once the batch is resolved; a write it
    waits for (``write_tx_sync``, ``flush``) runs in turn on that thread instead
    of waiting for it forever."""
    ran: list[Any] = []
    finished = threading.Event()

    def work() -> None:
        ran.append(threading.current_thread().name)
        ran.append(store.write_tx_sync(lambda tx: "written", timeout=10))
        store.flush(timeout=10)
        finished.set()

    _leave(store, work, lambda: ran.append("fallback")).result(10)
    assert finished.wait(10), ran
    assert ran[0] in WRITERS and ran[1:] == ["written"]
    assert store.write_tx_sync(lambda tx: 2, timeout=10) == 2  # the writer goes on


def test_a_queued_write_sends_the_work_elsewhere(store: Any) -> None:
    """An ordinary write queued when the batch ends would wait behind the work: the
    fallback runs instead (on the writer thread, which hands the work off)."""
    ran: list[str] = []
    _leave(store, lambda: ran.append("work"),
           lambda: ran.append("fallback:" + threading.current_thread().name),
           before=lambda: store.write_tx(lambda tx: None)).result(10)
    store.flush(timeout=10)
    assert len(ran) == 1 and ran[0].startswith("fallback:lcm-")


def test_off_the_writer_the_fallback_runs_at_once() -> None:
    ran: list[str] = []
    batch.after_batch(lambda: ran.append("work"), lambda: ran.append("fallback"))
    assert ran == ["fallback"]
