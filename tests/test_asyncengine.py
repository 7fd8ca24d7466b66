"""AsyncEngine: the one owner of the request path's threads (memory-path pool,
default executor, thread futures, give-way). Its memory-path protocol on a real
engine and real thread futures, and a guard that keeps executors and thread
futures out of every other request-path module."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.models import CaptureResult, Scope
from proxy.flow.asyncengine import AsyncEngine

ROOT = Path(__file__).resolve().parents[1]
SCOPE = Scope(tenant="t", role="r")

ALLOWED = "proxy/flow/asyncengine.py"
"""The one request-path module that may use executors and thread futures."""

NOT_REQUEST_PATH = ("proxy/contexts.py", "proxy/allocator.py")
"""Startup and shutdown (opening the engine, loading the tokenizer, closing), and the
process-wide heap release that runs only while no request keeps the proxy busy."""

FORBIDDEN = re.compile(
    r"run_in_executor|wrap_future|\.submit\(|ThreadPoolExecutor|concurrent\.futures|MEMORY_POOL"
    r"|\bengine\.(?:foreground|in_flight|give_way)\(|\[ENGINE\]\.(?:foreground|in_flight)\(")


def _off_request_path(rel: str) -> bool:
    """Offline tools: evaluation harnesses, benchmarks and the CLI."""
    name = rel.rsplit("/", 1)[-1]
    return (rel.startswith(("proxy/evaluation/", "proxy/cli/")) or name.startswith("cli")
            or "bench" in name or rel in NOT_REQUEST_PATH)


def test_only_the_async_engine_touches_threads_on_the_request_path() -> None:
    """No request-path module runs work on an executor, waits on a thread future or
    holds the give-way protocol itself: each goes through ``AsyncEngine``."""
    offenders = []
    checked = 0
    for path in sorted((ROOT / "proxy").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == ALLOWED or _off_request_path(rel):
            continue
        checked += 1
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FORBIDDEN.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert checked > 30  # the walk found the request path
    assert not offenders, "use proxy.flow.asyncengine.AsyncEngine:\n" + "\n".join(offenders)


def test_the_guard_sees_what_it_forbids() -> None:
    for line in ("await loop.run_in_executor(None, f)", "asyncio.wrap_future(fut)",
                 "pool.submit(run)", "with engine.foreground():",
                 "from concurrent.futures import Future",
                 "with request.app[ENGINE].in_flight():"):
        assert FORBIDDEN.search(line), line
    assert not FORBIDDEN.search("with aengine.foreground():")


@pytest.fixture
async def aengine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = Engine(tmp_path / "d")
    facade = AsyncEngine(engine, workers=2)
    try:
        yield facade
    finally:
        await facade.aclose()
        engine.close()


def _result() -> CaptureResult:
    return CaptureResult(thread_id=1, message_ids=(), new_ids=(), head_id=None,
                         head_key=None, created_thread=False, previous_activity_at=None)


async def test_plan_runs_the_job_on_a_memory_path_thread_queued_by_the_capture(
        aengine: AsyncEngine) -> None:
    """The job runs once the capture is done, on the pool, queued by the thread that
    completed the capture: it runs while the event loop is blocked (no round
    through the loop)."""
    capture: Future[CaptureResult] = Future()
    seen: list[str] = []

    def job(result: CaptureResult) -> int:
        seen.append(threading.current_thread().name)
        return result.thread_id + 41

    task = asyncio.ensure_future(aengine.plan(capture, job, 5.0))
    await asyncio.sleep(0.05)
    assert not seen and not task.done()  # nothing runs before the capture
    writer = threading.Thread(target=capture.set_result, args=(_result(),), name="writer")
    writer.start()
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:  # the loop is blocked meanwhile
        time.sleep(0.001)
    writer.join()
    assert seen and seen[0].startswith("lcm-memory-path")
    assert await task == 42


async def test_the_loop_sleeps_from_the_captures_commit_to_the_jobs_end(
        aengine: AsyncEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The event loop is woken once, by the job's end, not also when the capture
    commits (issue 28: it then took the interpreter from the job just starting)."""
    loop = asyncio.get_running_loop()
    woken: list[Any] = []
    wake = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
        woken.append(callback)
        return wake(callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
    capture: Future[CaptureResult] = Future()
    started, release = threading.Event(), threading.Event()

    def job(result: CaptureResult) -> int:
        started.set()
        release.wait(5)
        return 7

    task = asyncio.ensure_future(aengine.plan(capture, job, 5.0))
    await asyncio.sleep(0.01)
    writer = threading.Thread(target=capture.set_result, args=(_result(),), name="writer")
    writer.start()
    writer.join()
    assert started.wait(5)
    await asyncio.sleep(0.05)
    assert woken == [] and not task.done()
    release.set()
    assert await task == 7
    assert len(woken) == 1  # the job's end


async def test_plan_raises_the_captures_own_error_and_never_runs_the_job(
        aengine: AsyncEngine) -> None:
    capture: Future[CaptureResult] = Future()
    ran: list[int] = []
    task = asyncio.ensure_future(aengine.plan(capture, lambda r: ran.append(1), 5.0))
    await asyncio.sleep(0)
    capture.set_exception(OSError("disk full"))
    with pytest.raises(OSError, match="disk full"):
        await task
    assert ran == []


async def test_plan_gives_up_after_the_wait_without_cancelling_the_capture(
        aengine: AsyncEngine) -> None:
    """Past ``wait_seconds``: ``TimeoutError``; the capture goes on (never
    cancelled: it is the request's evidence) and the job never runs."""
    capture: Future[CaptureResult] = Future()
    ran: list[int] = []
    with pytest.raises(TimeoutError):
        await aengine.plan(capture, lambda r: ran.append(1), 0.05)
    assert not capture.cancelled()
    capture.set_result(_result())
    await asyncio.sleep(0.1)
    assert ran == []


async def test_a_cancelled_request_never_runs_its_job(aengine: AsyncEngine) -> None:
    capture: Future[CaptureResult] = Future()
    ran: list[int] = []
    task = asyncio.ensure_future(aengine.plan(capture, lambda r: ran.append(1), 5.0))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    capture.set_result(_result())
    await asyncio.sleep(0.1)
    assert ran == [] and not capture.cancelled()


async def test_a_stopped_pool_fails_the_plan_at_once(aengine: AsyncEngine) -> None:
    """While the proxy stops, a memory path raises at once (the request fails open)
    instead of waiting for a job that never runs; stored-response reads run inline."""
    aengine.stop()
    capture: Future[CaptureResult] = Future()
    capture.set_result(_result())
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(RuntimeError):
        await aengine.plan(capture, lambda r: 1, 30.0)
    assert loop.time() - started < 5
    assert await aengine.stored_response(SCOPE, "resp_unknown") is None


async def test_capture_response_queues_its_write_before_its_first_await(
        aengine: AsyncEngine) -> None:
    """``store_first`` relies on it: the answer's write is queued in the coroutine's
    first step, ahead of anything queued after it (the writer is FIFO)."""
    ticket, capture = aengine.capture_request(
        SCOPE, "rq-1", [{"role": "user", "content": "hello"}], {})
    stored = asyncio.ensure_future(aengine.capture_response(
        ticket, [{"role": "assistant", "content": "hi"}], {"outcome": "complete"}))
    await asyncio.sleep(0)  # its first step: the write is queued
    order: list[str] = []
    later = aengine.engine.store.write_tx(lambda tx: order.append("later"))
    ids = await stored
    await asyncio.wrap_future(later)
    assert ids and order == ["later"] and capture.done()
    texts = [m["text"] for m in aengine.engine.thread_messages(capture.result().thread_id)]
    assert texts == ["hello", "hi"]


async def test_run_tool_gives_up_after_its_timeout(aengine: AsyncEngine) -> None:
    text = await aengine.run_tool(SCOPE, "no_such_tool", "{}", 10.0)
    assert "error" in text
    with pytest.raises(TimeoutError):
        await aengine.run_tool(SCOPE, "no_such_tool", "{}", 0.0)
