"""The short request's path: what a request no longer waits for, and why nothing is lost.

A request with ``X-LCM-Memory: off`` that the memory path cannot change is
forwarded without waiting for its capture; an answer is queued for storing before
the client's end, and with ``capture.response_wait_seconds = 0`` not waited for: the
store's writer runs jobs in order, so the next turn still finds it. Real proxy,
real openai SDK, real fake upstream on loopback, real SQLite (the writer is held
up by a second connection's write lock).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import openai

from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read, start_proxy
from tests.fake_upstream import FakeUpstream

OFF = {"X-LCM-Memory": "off"}


def _client(proxy: RunningProxy, key: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=key, max_retries=0)


def _threads(proxy: RunningProxy) -> list[list[tuple[str, str]]]:
    """Every stored thread's path, as (role, text)."""
    engine = proxy.engine
    ids = sql_read(engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM threads ORDER BY id")])
    return [[(m["msg_role"], m["text"]) for m in engine.thread_messages(t)] for t in ids]


async def test_memory_off_is_answered_while_the_writer_is_stuck_and_stored_in_order(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """Two turns with memory off while the store's writer is stuck on a long job:
    both are answered at once, unchanged (no capture wait, no commit wait); once the
    job is done, the second turn continues the first one's thread (its prefix, the
    first answer included, matched: the answer was queued before the second turn's
    capture), each message stored once."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": 5.0},
                              capture={"response_wait_seconds": 0.0})
    client = _client(proxy, "sk-short-000000000001")
    try:
        release = threading.Event()  # the writer stuck on a job (either backend)
        stuck = proxy.engine.store.write_tx(lambda tx: release.wait(30))
        try:
            messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"},
                                              {"role": "user", "content": "first question"}]
            started = time.perf_counter()
            raw = await client.chat.completions.with_raw_response.create(
                model="m", messages=messages, extra_headers=OFF)
            assert raw.headers["x-lcm-memory"] == "skipped"
            assert raw.headers["x-lcm-memory-reason"] == "memory-off-header"
            assert "budget=" in raw.headers["x-lcm-context"]
            messages.append({"role": "assistant",
                             "content": raw.parse().choices[0].message.content})
            messages.append({"role": "user", "content": "second question"})
            await client.chat.completions.create(model="m", messages=messages,
                                                 extra_headers=OFF)
            assert time.perf_counter() - started < 2.0  # neither waited for the writer
            assert upstream.chat_requests[-1]["json"]["messages"] == messages
        finally:
            release.set()
        stuck.result(30)
        await proxy.settle()
        threads = _threads(proxy)
        assert len(threads) == 1, threads
        assert [role for role, _ in threads[0]] == [
            "system", "user", "assistant", "user", "assistant"]
        assert threads[0][:4] == [(m["role"], m["content"]) for m in messages]
    finally:
        await proxy.close()


async def test_memory_off_in_a_compacted_conversation_still_gets_its_scaffold(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """The quick decision is only taken where the memory path could not change the
    request: a scope with summary nodes takes the exact path, and the compacted
    range is replaced as with memory on."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    client = _client(proxy, "sk-short-000000000002")
    try:
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(10):
            messages.append({"role": "user", "content": f"step {i}: " + "words " * 80})
            r = await client.chat.completions.create(model="m", messages=messages,
                                                     extra_headers=OFF)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
        messages.append({"role": "user", "content": "final"})
        raw = await client.chat.completions.with_raw_response.create(
            model="m", messages=messages, extra_headers=OFF)
        assert int(raw.headers["x-lcm-compacted-messages"]) > 0
        assert len(upstream.chat_requests[-1]["json"]["messages"]) < len(messages)
    finally:
        await proxy.close()


async def test_has_summaries_is_cached_and_set_before_a_node_is_written(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """``Engine.has_summaries``: False for a scope without nodes (kept for a while,
    read again after ``SUMMARIES_RECHECK_SECONDS``), True once this engine compacts."""
    from memory_core import engine as engine_module

    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    engine = proxy.engine
    client = _client(proxy, "sk-short-000000000003")
    try:
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        messages.append({"role": "user", "content": "hello"})
        await client.chat.completions.create(model="m", messages=messages)
        await proxy.settle()
        tenant = sql_read(engine, lambda c: c.execute(
            "SELECT tenant, role FROM threads").fetchone())
        scope = Scope(tenant=tenant[0], role=tenant[1])
        assert engine.has_summaries(scope) is False
        # A node written by another connection (another process) is seen once the
        # False has aged out.
        engine._has_summaries[(scope.tenant, scope.role)] = (
            False, time.monotonic() - engine_module.SUMMARIES_RECHECK_SECONDS - 1)
        for i in range(10):
            messages.append({"role": "assistant", "content": f"answer {i}"})
            messages.append({"role": "user", "content": f"step {i}: " + "words " * 80})
            await client.chat.completions.create(model="m", messages=messages)
            await proxy.settle()
        assert sql_read(engine, lambda c: c.execute(
            "SELECT count(*) FROM summary_nodes").fetchone()[0]) > 0
        assert engine.has_summaries(scope) is True
    finally:
        await proxy.close()


async def test_the_next_turn_finds_an_answer_that_was_not_waited_for(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """Memory on, back-to-back turns with no commit wait: every turn continues the
    one thread (the answer was always queued ahead of the next turn's capture)."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              capture={"response_wait_seconds": 0.0})
    client = _client(proxy, "sk-short-000000000004")
    try:
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(6):
            messages.append({"role": "user", "content": f"question {i}"})
            r = await client.chat.completions.create(model="m", messages=messages,
                                                     stream=i % 2 == 1)
            if i % 2 == 1:
                text = "".join([c.choices[0].delta.content or "" async for c in r
                                if c.choices])
            else:
                text = r.choices[0].message.content
            messages.append({"role": "assistant", "content": text})
        await proxy.settle()
        threads = _threads(proxy)
        assert len(threads) == 1
        assert threads[0] == [(m["role"], m["content"]) for m in messages]
    finally:
        await proxy.close()
