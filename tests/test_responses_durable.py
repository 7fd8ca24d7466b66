"""The Responses API's map from response id to thread, kept in the store.

The real ``openai`` SDK as client, the fake Responses upstream on loopback, real
SQLite: a ``previous_response_id`` session goes on with memory and one evidence
thread across a proxy restart on the same data dir; an id never resolves in another
tenant; a purge removes the rows with their thread.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest

from memory_core.assembly.block import CURRENT_REQUEST
from tests.conftest import TEST_KEY, RunningProxy, SqlRow, start_proxy, store_sql
from tests.fake_upstream import FakeUpstream

INSTRUCTIONS = "You are terse."
TURNS = ["Goal: ship the importer by Friday", "Decision: use pyarrow for parsing",
         "what was the goal again?"]


def _rows(proxy: RunningProxy, sql: str, *args: Any) -> list[SqlRow]:
    return store_sql(proxy.engine, sql, args)


def _client(proxy: RunningProxy, key: str = TEST_KEY) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=key, max_retries=0)


async def _turn(proxy: RunningProxy, text: str, prev: str | None = None,
                key: str = TEST_KEY, **kwargs: Any) -> Any:
    extra: dict[str, Any] = {"previous_response_id": prev} if prev else {}
    async with _client(proxy, key) as client:
        r = await client.responses.with_raw_response.create(
            model="m", instructions=INSTRUCTIONS, input=[{"role": "user", "content": text}],
            **extra, **kwargs)
    await proxy.settle()
    return r


async def _two_turns_then_restart(upstream: FakeUpstream, data: Path, **sections: Any
                                  ) -> tuple[RunningProxy, list[str]]:
    first = await start_proxy(upstream.base_url, data, **sections)
    try:
        r1 = (await _turn(first, TURNS[0])).parse()
        r2 = (await _turn(first, TURNS[1], r1.id)).parse()
    finally:
        await first.close()
    return await start_proxy(upstream.base_url, data, **sections), [r1.id, r2.id]


@pytest.mark.parametrize("tools", [True, False])
async def test_a_session_continues_on_one_thread_after_a_restart(
        upstream: FakeUpstream, tmp_path: Path, tools: bool) -> None:
    proxy, ids = await _two_turns_then_restart(upstream, tmp_path / "data",
                                               tools={"enabled": tools})
    try:
        raw = await _turn(proxy, TURNS[2], ids[-1])
        r3 = raw.parse()
        assert r3.output_text == f"echo: {TURNS[2]}"
        assert raw.headers["x-lcm-memory"] == "injected"
        assert raw.headers["x-lcm-responses-mode"] == "stateless-replay"
        sent = upstream.responses_requests[-1]["json"]
        assert "previous_response_id" not in sent  # the whole thread, from the store
        users = [i for i in sent["input"] if i.get("role") == "user"]
        assert [u["content"] for u in users[:-1]] == TURNS[:2]
        block = users[-1]["content"][0]["text"]
        assert CURRENT_REQUEST in block and "ship the importer" in block
        # The client sees the id it continued, as the upstream would have answered.
        assert r3.previous_response_id == ids[-1]
        rows = _rows(proxy, "SELECT msg_role, thread_id FROM messages ORDER BY id")
        assert [r["msg_role"] for r in rows] == ["system"] + ["user", "assistant"] * 3
        assert len({r["thread_id"] for r in rows}) == 1
        mapped = _rows(proxy, "SELECT response_id, parent_response_id, thread_id"
                              " FROM response_threads ORDER BY created_at")
        assert [(m["response_id"], m["parent_response_id"]) for m in mapped] == [
            (ids[0], None), (ids[1], ids[0]), (r3.id, ids[1])]
        assert {m["thread_id"] for m in mapped} == {rows[0]["thread_id"]}
    finally:
        await proxy.close()


@pytest.mark.parametrize("tools", [True, False])
async def test_a_stream_after_a_restart_continues_and_shows_its_previous_id(
        upstream: FakeUpstream, tmp_path: Path, tools: bool) -> None:
    proxy, ids = await _two_turns_then_restart(upstream, tmp_path / "data",
                                               tools={"enabled": tools})
    try:
        async with _client(proxy) as client:
            stream = await client.responses.create(
                model="m", instructions=INSTRUCTIONS, previous_response_id=ids[-1],
                input=[{"role": "user", "content": TURNS[2]}], stream=True)
            events = [e async for e in stream]
        await proxy.settle()
        assert "previous_response_id" not in upstream.responses_requests[-1]["json"]
        shown = [e.response.previous_response_id for e in events
                 if e.type in ("response.created", "response.in_progress",
                               "response.completed")]
        assert shown and all(p == ids[-1] for p in shown)
        rows = _rows(proxy, "SELECT DISTINCT thread_id FROM messages")
        assert len(rows) == 1
    finally:
        await proxy.close()


async def test_an_id_from_another_tenant_does_not_resolve(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy, ids = await _two_turns_then_restart(upstream, tmp_path / "data")
    try:
        # The upstream knows the id (it does not scope by key); the proxy must not
        # lend the other tenant's thread.
        raw = await _turn(proxy, "tell me their goal", ids[-1], key="sk-other-tenant-key")
        assert raw.headers["x-lcm-memory-reason"] == "unknown-previous-response"
        assert upstream.responses_requests[-1]["json"]["previous_response_id"] == ids[-1]
        tenants = {r["tenant"] for r in _rows(proxy, "SELECT tenant FROM messages")}
        assert len(tenants) == 1  # nothing captured for the other tenant
        # Within the process (the cache), too.
        again = await _turn(proxy, "and now?", ids[-1], key="sk-other-tenant-key")
        assert again.headers["x-lcm-memory-reason"] == "unknown-previous-response"
    finally:
        await proxy.close()


async def test_purge_removes_the_map_rows_with_their_thread(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    data = tmp_path / "data"
    proxy, ids = await _two_turns_then_restart(upstream, data)
    try:
        tenant = _rows(proxy, "SELECT tenant FROM messages")[0]["tenant"]
        assert len(_rows(proxy, "SELECT 1 FROM response_threads")) == 2
        preview = proxy.engine.purge(tenant=tenant, dry_run=True)
        assert preview["response_threads"] == 2
        removed = proxy.engine.purge(tenant=tenant)
        assert removed["response_threads"] == 2
        assert not _rows(proxy, "SELECT 1 FROM response_threads")
    finally:
        await proxy.close()
    proxy = await start_proxy(upstream.base_url, data)
    try:
        raw = await _turn(proxy, TURNS[2], ids[-1])
        assert raw.headers["x-lcm-memory-reason"] == "unknown-previous-response"
    finally:
        await proxy.close()


@pytest.mark.parametrize("where", ["first", "second"])
async def test_a_turn_with_a_secret_stays_out_of_the_store(
        upstream: FakeUpstream, tmp_path: Path, where: str) -> None:
    """Redaction on (the default): a row would keep the secret unmasked, so there is
    none; that turn and the ones after it resolve only until the restart."""
    data = tmp_path / "data"
    secret = "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123"
    texts = [secret, TURNS[1]] if where == "first" else [TURNS[0], secret]
    proxy = await start_proxy(upstream.base_url, data)
    try:
        r1 = (await _turn(proxy, texts[0])).parse()
        raw = await _turn(proxy, texts[1], r1.id)
        assert raw.headers.get("x-lcm-memory-reason") != "unknown-previous-response"
        r2 = raw.parse()
        stored = {r["response_id"] for r in _rows(proxy, "SELECT response_id"
                                                         " FROM response_threads")}
        assert stored == ({r2.id} if where == "first" else {r1.id})
        for row in _rows(proxy, "SELECT items FROM response_threads"):
            assert b"sk-proj" not in zlib.decompress(row["items"])
    finally:
        await proxy.close()
    proxy = await start_proxy(upstream.base_url, data)
    try:
        raw = await _turn(proxy, TURNS[2], r2.id)
        assert raw.headers["x-lcm-memory-reason"] == "unknown-previous-response"
    finally:
        await proxy.close()


# -- conversations: captured as evidence, forwarded as sent ------------------------------
async def test_a_conversation_is_captured_on_one_thread_across_a_restart(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    data = tmp_path / "data"
    conv = {"id": "conv_abc"}
    proxy = await start_proxy(upstream.base_url, data)
    try:
        r1 = await _turn(proxy, TURNS[0], conversation=conv)
        assert r1.headers["x-lcm-memory"] == "skipped"
        assert r1.headers["x-lcm-memory-reason"] == "conversation"
        await _turn(proxy, TURNS[1], conversation="conv_abc")  # the id as a string
    finally:
        await proxy.close()
    proxy = await start_proxy(upstream.base_url, data)
    try:
        raw = await _turn(proxy, TURNS[2], conversation=conv)
        r3 = raw.parse()
        assert r3.output_text == f"echo: {TURNS[2]}"
        sent = upstream.responses_requests[-1]["json"]
        assert sent["conversation"] == conv  # as sent: only the new item, no block
        assert sent["input"] == [{"role": "user", "content": TURNS[2]}]
        assert "memory_grep" not in orjson_text(sent)
        rows = _rows(proxy, "SELECT msg_role, text, thread_id FROM messages ORDER BY id")
        assert [r["msg_role"] for r in rows] == ["system"] + ["user", "assistant"] * 3
        assert [r["text"] for r in rows if r["msg_role"] == "user"] == TURNS
        assert len({r["thread_id"] for r in rows}) == 1
        head = _rows(proxy, "SELECT response_id, thread_id FROM response_conversations")
        assert [(h["response_id"], h["thread_id"]) for h in head] == [
            (r3.id, rows[0]["thread_id"])]
        # Another tenant's request in a conversation of the same id starts its own.
        await _turn(proxy, "hello", key="sk-other-tenant-key", conversation=conv)
        other = _rows(proxy, "SELECT DISTINCT thread_id FROM messages WHERE thread_id != ?",
                      rows[0]["thread_id"])
        assert len(other) == 1
        assert len(_rows(proxy, "SELECT 1 FROM messages WHERE thread_id=?",
                         other[0]["thread_id"])) == 3  # system, user, assistant
        removed = proxy.engine.purge(tenant=_rows(proxy, "SELECT tenant FROM messages"
                                                         " WHERE id=?", 1)[0]["tenant"])
        assert removed["response_conversations"] == 1 and removed["response_threads"] == 3
    finally:
        await proxy.close()


def orjson_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _spy_reads(proxy: RunningProxy) -> list[tuple[str, bool]]:
    """Record each store read of the response map: ``(method, on the event loop)``
    (the engine's own methods, called through)."""
    import asyncio

    seen: list[tuple[str, bool]] = []
    engine = proxy.engine
    for name in ("response_conversation", "response_conversation_head"):
        real = getattr(engine, name)

        def spy(*args: Any, _real: Any = real, _name: str = name) -> Any:
            try:
                asyncio.get_running_loop()
                on_loop = True
            except RuntimeError:
                on_loop = False
            seen.append((_name, on_loop))
            return _real(*args)

        setattr(engine, name, spy)
    return seen


async def test_a_cache_miss_reads_the_map_off_the_event_loop(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    data = tmp_path / "data"
    proxy, ids = await _two_turns_then_restart(upstream, data)
    try:
        conv = {"id": "conv_off_loop"}
        await _turn(proxy, TURNS[0], conversation=conv)
        await proxy.close()
        proxy = await start_proxy(upstream.base_url, data)  # an empty cache
        seen = _spy_reads(proxy)
        raw = await _turn(proxy, TURNS[2], ids[-1])
        assert raw.headers["x-lcm-responses-mode"] == "stateless-replay"  # it resolved
        await _turn(proxy, TURNS[1], conversation=conv)
        assert {name for name, _ in seen} == {"response_conversation",
                                              "response_conversation_head"}
        assert not any(on_loop for _, on_loop in seen), seen
        # A hit in the cache reads nothing.
        seen.clear()
        await _turn(proxy, TURNS[2], raw.parse().id)
        assert seen == []
        heads = _rows(proxy, "SELECT COUNT(*) AS n FROM response_conversations")
        assert heads[0]["n"] == 1
    finally:
        await proxy.close()
