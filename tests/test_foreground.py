"""The foreground gate: index workers give way, within a per-step budget, to the chat
requests in flight (memory_core.search.foreground)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from aiohttp import web

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search.foreground import Foreground, StepBudget
from tests.conftest import TEST_KEY, RunningProxy, sql_read, start_proxy
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_search_support import capture_chat, open_service

A = Scope(tenant="tenantA", role="default")


def _waiter(fg: Foreground, timeout: float, out: list[float]) -> threading.Thread:
    def run() -> None:
        t0 = time.monotonic()
        fg.wait_clear(timeout)
        out.append(time.monotonic() - t0)

    t = threading.Thread(target=run)
    t.start()
    return t


def test_wait_clear_returns_when_the_last_hold_ends_and_on_close() -> None:
    fg = Foreground()
    assert fg.wait_clear(0) and not fg.busy
    waited: list[float] = []
    with fg.hold(), fg.hold():  # nested and concurrent holds count
        t = _waiter(fg, 30.0, waited)
        time.sleep(0.2)
        assert fg.busy and not waited
    t.join(10)
    assert waited and waited[0] < 10  # woken by the release, not the timeout
    assert fg.wait_clear(0)  # clear again

    waited.clear()
    with fg.hold():
        t = _waiter(fg, 30.0, waited)
        time.sleep(0.2)
        fg.close()  # shutdown wakes a worker that waits for a request
        t.join(10)
        assert waited and waited[0] < 10
        assert fg.wait_clear(30.0) is False  # closed: no more waiting, still held


def test_a_step_budget_is_shared_by_all_its_waits() -> None:
    fg = Foreground()
    with fg.hold():
        budget = StepBudget(fg, 0.3)
        t0 = time.monotonic()
        for _ in range(5):  # five embedding batches of one step
            budget.give_way()
        assert time.monotonic() - t0 < 1.5  # 0.3 s in all, not 5 × 0.3


def test_an_exception_releases_the_hold() -> None:
    fg = Foreground()
    with pytest.raises(RuntimeError), fg.hold():
        raise RuntimeError("boom")
    assert not fg.busy


def test_indexing_waits_while_held_and_not_past_the_budget(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, foreground_wait_ms=10_000)
    engine.attach_search(svc)
    try:
        assert svc.wait_idle(20)
        with engine.foreground():
            assert svc.indexer.foreground.busy
            # A step that already gave way before the hold still runs: let it end, so
            # both workers are parked at their next give-way before anything is new.
            time.sleep(0.5)
            capture_chat(engine, A, ["the heron nests by the weir"])
            head = svc.indexer.outbox_head()
            time.sleep(0.5)  # the workers are awake (notified on commit) and waiting
            assert svc.indexer.checkpoint(svc.indexer.text_checkpoint) < head
            assert svc.indexer.checkpoint(svc.indexer.vector_checkpoint) < head
            assert svc.search("tenantA", "default", "heron", mode="bm25") == []
        assert not svc.indexer.foreground.busy
        assert svc.wait_idle(20)
        assert svc.search("tenantA", "default", "heron", mode="bm25")
    finally:
        engine.close()

    # A request that never ends cannot stall indexing past the budget.
    engine = Engine(tmp_path / "bounded")
    svc = open_service(tmp_path / "bounded", engine, foreground_wait_ms=200)
    engine.attach_search(svc)
    try:
        with engine.foreground():
            capture_chat(engine, A, ["the kestrel hovers over the verge"])
            assert svc.wait_idle(20)
            assert svc.search("tenantA", "default", "kestrel", mode="bm25")
    finally:
        engine.close()


def test_closing_does_not_wait_for_a_request_that_holds(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, foreground_wait_ms=10_000)
    engine.attach_search(svc)
    with engine.foreground():
        capture_chat(engine, A, ["the osprey fishes at dawn"])
        time.sleep(0.3)  # a worker is now waiting for the hold
        t0 = time.monotonic()
        engine.close()
        assert time.monotonic() - t0 < 8  # not the 10 s budget


def test_foreground_is_a_no_op_without_search(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    try:
        assert isinstance(engine.foreground(), contextlib.nullcontext)
    finally:
        engine.close()


async def test_the_chat_handler_holds_its_critical_steps_and_its_whole_life(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """The critical hold is open while the block is built, not while the upstream
    answers; the whole-request hold is open throughout; both are released once
    the client has its answer, after an upstream error too."""
    proxy: RunningProxy = await start_proxy(upstream.base_url, tmp_path / "d")
    seen: list[tuple[bool, int]] = []
    engine = proxy.engine
    fg = engine.search.indexer.foreground
    real = engine.assemble

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append((fg.busy, fg.requests))
        return real(*args, **kwargs)

    engine.assemble = spy  # type: ignore[method-assign]
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    asked: asyncio.Task[Any] | None = None
    try:
        upstream.push(Reply(content="fine", answer_delay=0.5),
                      Reply(status=500, error={"message": "down", "type": "server_error"}))
        asked = asyncio.create_task(client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "The heron nests by the weir."}]))
        deadline = time.monotonic() + 10
        while not upstream.chat_requests and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert upstream.chat_requests and not asked.done()  # the upstream is answering
        assert seen == [(True, 1)]  # the block was built under both holds
        assert not fg.busy and fg.requests == 1  # the round trip: the whole-request hold
        await asked
        assert not fg.busy and fg.requests == 0  # released once answered
        with pytest.raises(openai.InternalServerError):
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "And the kestrel?"}])
        assert seen == [(True, 1), (True, 1)]
        assert not fg.busy and fg.requests == 0  # released after an error too
    finally:
        if asked is not None and not asked.done():
            asked.cancel()
            with contextlib.suppress(BaseException):
                await asked
        await client.close()
        await proxy.close()


async def test_a_whole_answer_is_sent_while_its_request_is_still_in_flight(
        upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-streamed answer's status line and body go out while the request still
    holds its whole-request mark: once the mark ends, the index workers and the
    compaction check wake and would take the interpreter lock from that write. A
    streamed answer was always sent inside the handler. (The memory tools offered:
    the tool loop answers a plain request whole, the plain relay streams it.)"""
    proxy: RunningProxy = await start_proxy(upstream.base_url, tmp_path / "d",
                                            tools={"offer": "always"})
    fg = proxy.engine.search.indexer.foreground
    seen: list[tuple[bool, int]] = []
    real = web.StreamResponse.prepare

    async def spy(self: web.StreamResponse, request: web.BaseRequest) -> Any:
        if request.app is proxy.app and request.path == "/v1/chat/completions" \
                and not self.prepared:
            seen.append((isinstance(self, web.Response), fg.requests))
        return await real(self, request)

    monkeypatch.setattr(web.StreamResponse, "prepare", spy)
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    try:
        upstream.push(Reply(content="fine"), Reply(content="fine too"))
        raw = await client.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "The heron nests by the weir."}])
        assert raw.parse().choices[0].message.content == "fine"
        assert raw.headers["x-lcm-request-id"].startswith("req_")
        stream = await client.chat.completions.create(
            model="m", stream=True,
            messages=[{"role": "user", "content": "And the kestrel on the post?"}])
        assert "".join([c.choices[0].delta.content or "" async for c in stream
                        if c.choices]) == "fine too"
        assert seen == [(True, 1), (False, 1)]  # both sent inside the mark
        assert fg.requests == 0
    finally:
        await client.close()
        await proxy.close()


def test_only_the_index_workers_wait_for_requests_in_flight() -> None:
    """A whole-request hold keeps a step budget waiting (the index workers), not
    ``wait_clear`` without ``requests`` (compaction, checkpoints); a critical
    hold keeps both waiting."""
    fg = Foreground()
    with fg.hold_request():
        assert fg.requests == 1 and not fg.busy
        assert fg.wait_clear(0.5)  # compaction and checkpoints: clear at once
        started = time.monotonic()
        StepBudget(fg, 0.2).give_way()
        assert time.monotonic() - started >= 0.15  # an index worker waited its budget
        assert not fg.wait_clear(0.05, requests=True)
        with fg.hold():
            assert fg.busy and not fg.wait_clear(0.05)
    assert fg.requests == 0 and fg.wait_clear(0, requests=True)
    done = threading.Event()

    def worker() -> None:
        StepBudget(fg, 10).give_way()
        done.set()

    with fg.hold_request():
        t = threading.Thread(target=worker)
        t.start()
        assert not done.wait(0.1)
    assert done.wait(5)  # released: the worker goes on at once
    t.join()


async def test_the_forwarded_record_and_the_compaction_check_wait_for_the_request(
        tmp_path: Path) -> None:
    """Background work a request queues while it runs (its forwarded body's record,
    the compaction check) starts once no request is in flight, not while that
    request still relays its answer; bounded by ``search.foreground_wait_ms``."""
    from proxy.flow.asyncengine import AsyncEngine

    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, foreground_wait_ms=10_000)
    engine.attach_search(svc, start=False)  # only its foreground is used here
    aengine = AsyncEngine(engine, workers=1)
    try:
        with engine.in_flight():
            record = engine.record_forwarded(A, "req-1", b'{"model":"m","messages":[]}',
                                             {"state": "skipped"}, keep=10, max_bytes=1 << 20)
            assert record is not None
            compaction = asyncio.ensure_future(aengine.compact(A, 0, [], None))
            await asyncio.sleep(0.4)
            assert not record.done() and not compaction.done()
        assert record.result(5) > 0
        assert await asyncio.wait_for(compaction, 5) == []
        # No request in flight: neither waits.
        started = time.monotonic()
        again = engine.record_forwarded(A, "req-2", b'{"model":"m","messages":[]}',
                                        {"state": "skipped"}, keep=10, max_bytes=1 << 20)
        assert again is not None and again.result(5) > 0
        assert await asyncio.wait_for(aengine.compact(A, 0, [], None), 5) == []
        assert time.monotonic() - started < 3
    finally:
        await aengine.aclose()
        engine.close()

    # A request that never ends delays them by the budget at most.
    engine = Engine(tmp_path / "bounded")
    svc = open_service(tmp_path / "bounded", engine, foreground_wait_ms=200)
    engine.attach_search(svc, start=False)
    try:
        with engine.in_flight():
            record = engine.record_forwarded(A, "req-3", b'{"model":"m","messages":[]}',
                                             {"state": "skipped"}, keep=10, max_bytes=1 << 20)
            assert record is not None and record.result(5) > 0
    finally:
        engine.close()


def test_watchers_are_called_when_the_last_hold_of_either_kind_ends() -> None:
    fg = Foreground()
    calls: list[bool] = []
    fg.watch(lambda: calls.append(fg.in_flight))
    with fg.hold_request():
        with fg.hold():
            assert fg.in_flight
        assert calls == []  # the request is still in flight
    assert calls == [False] and not fg.in_flight


def test_a_memory_off_requests_extraction_waits_for_the_requests_in_flight(
        tmp_path: Path) -> None:
    """The extraction queued once a memory-off answer commits starts when no request
    is in flight, not while its own request still relays that answer (the writer
    would take the interpreter from the event loop); the persona's next capture
    takes it ahead (items in message order); a request that never ends delays it
    by ``search.foreground_wait_ms`` at most."""
    said = {"role": "user", "content": "Keep in mind: the staging database runs on port"
            " 5433. We decided to use Redis for the session cache."}
    reply = {"role": "assistant", "content": "I suggest we use Postgres for the job queue."}

    def pending(c: Any) -> list[int]:
        return [r[0] for r in c.execute("SELECT message_id FROM extraction_queue")]

    def items(c: Any) -> list[str]:
        return [r[0] for r in c.execute("SELECT text FROM memory_items ORDER BY id")]

    def answered(engine: Engine, rid: str, user: Any = said, answer: Any = reply) -> None:
        ticket, fut = engine.capture_request(A, rid, [user], {}, extract_after_answer=True)
        fut.result(5)
        engine.capture_response(ticket, [answer], {}).result(5)

    engine = Engine(tmp_path / "a")
    svc = open_service(tmp_path / "a", engine, foreground_wait_ms=10_000)
    engine.attach_search(svc, start=False)  # only its foreground is used here
    try:
        with engine.in_flight():
            answered(engine, "r1")
            time.sleep(0.3)
            assert len(sql_read(engine, pending)) == 2 and sql_read(engine, items) == []
        deadline = time.monotonic() + 5
        while sql_read(engine, pending) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sql_read(engine, pending) == []
        alone = sql_read(engine, items)
        assert len(alone) >= 3
        said2 = {"role": "user", "content": "We decided to use Kafka for the event bus."}
        reply2 = {"role": "assistant", "content": "I suggest we use Grafana for dashboards."}
        with engine.in_flight():
            answered(engine, "r2", said2, reply2)
            # the next capture (memory on: extracted inline) takes them ahead
            engine.capture_request(A, "r3", [said2, reply2, {
                "role": "user", "content": "We decided to deploy on Fridays."}], {}
            )[1].result(5)
            assert sql_read(engine, pending) == []
            assert sql_read(engine, items)[len(alone):] == [
                said2["content"], reply2["content"], "We decided to deploy on Fridays."]
    finally:
        engine.close()

    engine = Engine(tmp_path / "b")
    svc = open_service(tmp_path / "b", engine, foreground_wait_ms=200)
    engine.attach_search(svc, start=False)
    try:
        with engine.in_flight():
            answered(engine, "r4")
            deadline = time.monotonic() + 5
            while sql_read(engine, pending) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert sql_read(engine, pending) == []
    finally:
        engine.close()


def test_a_request_counts_in_flight_for_a_quiet_period_after_it_ends() -> None:
    """Background work does not start in the gap between one request's end and an
    agent's next request: the request counts in flight for ``quiet`` seconds more
    (the index workers and the writer's held jobs), critical holds do not."""
    fg = Foreground(quiet=0.5)
    with fg.hold_request():
        pass
    assert fg.in_flight and not fg.busy
    assert fg.wait_clear(0, requests=True) is False
    assert fg.wait_clear(0)  # compaction and checkpoints: clear at once
    started = time.monotonic()
    assert fg.wait_clear(30, requests=True)  # woken by the period's end, not a hold's
    assert 0.4 <= time.monotonic() - started < 10
    assert not fg.in_flight


def test_a_held_extraction_starts_once_the_quiet_period_is_over(tmp_path: Path) -> None:
    """The writer looks again at a job that gives way when the quiet period after
    the last request ends (nothing wakes it then): the extraction a memory-off
    answer queued starts then, not while it is quiet, and not only after its whole
    budget (``search.foreground_wait_ms``, 60 s here)."""
    said = {"role": "user", "content": "Keep in mind: the staging database runs on port"
            " 5433."}

    def pending(c: Any) -> list[int]:
        return [r[0] for r in c.execute("SELECT message_id FROM extraction_queue")]

    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, foreground_wait_ms=60_000)
    engine.attach_search(svc, start=False)
    svc.indexer.foreground.quiet = 2.0
    try:
        with engine.in_flight():
            ticket, fut = engine.capture_request(A, "q1", [said], {},
                                                 extract_after_answer=True)
            fut.result(5)
            engine.capture_response(ticket, [{"role": "assistant", "content": "ok"}],
                                    {}).result(5)
        ended = time.monotonic()
        assert len(sql_read(engine, pending)) == 2  # quiet: held
        while sql_read(engine, pending) and time.monotonic() - ended < 20:
            time.sleep(0.02)
        assert sql_read(engine, pending) == []
        assert 1.5 <= time.monotonic() - ended < 8
    finally:
        engine.close()
