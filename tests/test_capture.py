"""Evidence capture through the proxy: each message once, branches, scoping, secrets.

Agents resend their whole history on every call; the proxy must store each message
exactly once, in order, fork a branch when history is edited or an answer is
regenerated, never overwrite anything, and never write the client's API key to disk.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest
from click.testing import CliRunner

from proxy.cli import main as cli
from tests.conftest import RunningProxy, sql_read, sql_write, writer_in_a_batch
from tests.fake_upstream import FakeUpstream, Reply

MakeProxy = Callable[..., Awaitable[RunningProxy]]
NO_INJECTION = {"enabled": False}
NO_TOOLS = {"enabled": False}  # no memory tools: the request body stays the client's
REAL_KEY = "sk-proj-" + "Xq7vR2mN9pL4tK8wZ3cB6yH1sD5fG0jA2eU7iO4r"
assert len(REAL_KEY) == 48


class Agent:
    """An agent loop as real ones are written: keep ``messages``, resend them all."""

    def __init__(self, base_url: str, *, key: str = REAL_KEY,
                 headers: dict[str, str] | None = None, sync: bool = False) -> None:
        cls = openai.OpenAI if sync else openai.AsyncOpenAI
        self.client: Any = cls(base_url=base_url, api_key=key, max_retries=0,
                               default_headers=headers)
        self.sync = sync
        self.messages: list[Any] = []

    async def _create(self, **kw: Any) -> Any:
        fn = self.client.chat.completions.create
        if self.sync:
            return await asyncio.to_thread(fn, **kw)
        return await fn(**kw)

    async def say(self, text: str, **kw: Any) -> Any:
        self.messages.append({"role": "user", "content": text})
        return await self.complete(**kw)

    async def complete(self, **kw: Any) -> Any:
        """Send the whole history; append the reply as the SDK returned it."""
        completion = await self._create(model="m", messages=list(self.messages), **kw)
        message = completion.choices[0].message
        self.messages.append(message)  # the pydantic object itself, as many agents do
        return message

    async def stream(self, text: str | None = None, **kw: Any) -> dict[str, Any]:
        """Stream a reply; rebuild the assistant message the way agents do."""
        if text is not None:
            self.messages.append({"role": "user", "content": text})

        async def run() -> list[Any]:
            s = await self.client.chat.completions.create(
                model="m", messages=list(self.messages), stream=True, **kw)
            return [c async for c in s]

        chunks = await run()
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        calls: dict[int, dict[str, Any]] = {}
        for c in chunks:
            for tc in (c.choices[0].delta.tool_calls or []) if c.choices else []:
                slot = calls.setdefault(tc.index, {"id": "", "type": "function",
                                                   "function": {"name": "", "arguments": ""}})
                slot["id"] = tc.id or slot["id"]
                if tc.function:
                    slot["function"]["name"] += tc.function.name or ""
                    slot["function"]["arguments"] += tc.function.arguments or ""
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        self.messages.append(message)
        return message

    async def close(self) -> None:
        if self.sync:
            await asyncio.to_thread(self.client.close)
        else:
            await self.client.close()


def path_of(running: RunningProxy, thread_id: int) -> list[tuple[str, str]]:
    """(role, text) from the root to the head of a thread."""
    return [(m["msg_role"], m["text"]) for m in running.engine.thread_messages(thread_id)]


def all_messages(running: RunningProxy) -> list[dict[str, Any]]:
    return [m for t in running.engine.export()["threads"] for m in t["messages"]]


@pytest.fixture
async def core(make_proxy: MakeProxy) -> RunningProxy:
    return await make_proxy(injection=NO_INJECTION, tools=NO_TOOLS)


# -- idempotent capture ------------------------------------------------------------


@pytest.mark.parametrize("injection", [False, True], ids=["plain", "with-injection"])
@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_resending_history_stores_each_message_once_in_order(
    make_proxy: MakeProxy, upstream: FakeUpstream, injection: bool, sync: bool
) -> None:
    running = await make_proxy(injection={"enabled": injection})
    agent = Agent(running.base_url, sync=sync)
    agent.messages.append({"role": "system", "content": "You are a helpful assistant."})
    expected = [("system", "You are a helpful assistant.")]
    for i in range(6):
        upstream.push(Reply(content=f"answer {i}"))
        await agent.say(f"question {i}")
        expected += [("user", f"question {i}"), ("assistant", f"answer {i}")]
    # A retry of the last request (same bytes) stores nothing new.
    upstream.push(Reply(content="answer 5"))
    await agent._create(model="m", messages=agent.messages[:-1])
    await running.settle()
    (thread,) = running.engine.export()["threads"]
    assert [(m["role"], m["text"]) for m in thread["messages"]] == expected
    assert path_of(running, thread["id"]) == expected
    ids = [m["id"] for m in thread["messages"]]
    assert ids == sorted(ids)
    assert [m["parent_id"] for m in thread["messages"]] == [None, *ids[:-1]]
    assert [m["kind"] for m in thread["messages"][1:3]] == ["request", "response"]
    # What the upstream saw for earlier turns is the client's text, unchanged.
    last = upstream.chat_requests[-2]["json"]["messages"]
    assert [m["content"] for m in last[:-1]] == [t for _, t in expected[:-2]]
    await agent.close()


async def test_replaying_the_same_request_concurrently_stores_once(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    agent = Agent(core.base_url)
    agent.messages = [{"role": "user", "content": "same"}]
    await asyncio.gather(*(agent._create(model="m", messages=agent.messages) for _ in range(8)))
    await core.settle()
    assert [(m["role"], m["text"]) for m in all_messages(core)] == [
        ("user", "same"), ("assistant", "echo: same")]
    await agent.close()


# -- branches ----------------------------------------------------------------------


async def _three_turns(running: RunningProxy, upstream: FakeUpstream) -> Agent:
    agent = Agent(running.base_url)
    for i in range(3):
        upstream.push(Reply(content=f"a{i}"))
        await agent.say(f"u{i}")
    await running.settle()
    return agent


async def test_editing_an_earlier_message_forks_a_thread(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    agent = await _three_turns(core, upstream)
    before = {m["id"]: m for m in all_messages(core)}
    (original,) = core.engine.export()["threads"]
    # The user edits u1 and the agent resends the history up to the edit.
    edited = agent.messages[:2] + [{"role": "user", "content": "u1 (edited)"}]
    agent.messages = edited
    upstream.push(Reply(content="a1'"))
    await agent.complete()
    await core.settle()
    threads = core.engine.export()["threads"]
    assert len(threads) == 2
    fork = threads[1]
    assert fork["parent_thread_id"] == original["id"]
    a0_id = original["messages"][1]["id"]
    assert fork["fork_message_id"] == a0_id
    assert [(m["role"], m["text"]) for m in fork["messages"]] == [
        ("user", "u1 (edited)"), ("assistant", "a1'")]
    assert fork["messages"][0]["parent_id"] == a0_id
    # Nothing was overwritten: the original thread and its rows are as they were.
    after = {m["id"]: m for m in all_messages(core)}
    assert {k: after[k] for k in before} == before
    assert path_of(core, original["id"]) == [
        ("user", "u0"), ("assistant", "a0"), ("user", "u1"), ("assistant", "a1"),
        ("user", "u2"), ("assistant", "a2")]
    assert path_of(core, fork["id"]) == [
        ("user", "u0"), ("assistant", "a0"), ("user", "u1 (edited)"), ("assistant", "a1'")]
    # Continuing the edited branch extends the fork, not the original.
    upstream.push(Reply(content="a2'"))
    await agent.say("u2'")
    await core.settle()
    assert len(core.engine.export()["threads"]) == 2
    assert path_of(core, fork["id"])[-2:] == [("user", "u2'"), ("assistant", "a2'")]
    await agent.close()


async def test_regenerating_an_answer_forks_and_keeps_the_original(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    agent = await _three_turns(core, upstream)
    (original,) = core.engine.export()["threads"]
    original_path = path_of(core, original["id"])
    # "Regenerate": resend the history without the last answer; a new answer comes.
    agent.messages = agent.messages[:-1]
    upstream.push(Reply(content="a2 regenerated"))
    await agent.complete()
    await core.settle()
    assert path_of(core, original["id"]) == original_path
    threads = core.engine.export()["threads"]
    assert len(threads) == 2
    regen = threads[1]
    assert regen["parent_thread_id"] == original["id"]
    u2_id = original["messages"][4]["id"]
    assert regen["fork_message_id"] == u2_id
    assert path_of(core, regen["id"]) == original_path[:-1] + [
        ("assistant", "a2 regenerated")]
    texts = [m["text"] for m in all_messages(core)]
    assert texts.count("a2") == 1 and texts.count("a2 regenerated") == 1
    # A retry that happens to produce the very same answer adds nothing.
    agent.messages = agent.messages[:-1]
    upstream.push(Reply(content="a2"))
    await agent.complete()
    await core.settle()
    assert len(core.engine.export()["threads"]) == 2
    assert len(all_messages(core)) == len(texts)
    # Continuing after the regenerated answer extends the regenerated branch.
    agent.messages[-1] = {"role": "assistant", "content": "a2 regenerated"}
    upstream.push(Reply(content="a3"))
    await agent.say("u3")
    await core.settle()
    assert path_of(core, original["id"]) == original_path
    assert path_of(core, regen["id"])[-3:] == [
        ("assistant", "a2 regenerated"), ("user", "u3"), ("assistant", "a3")]
    await agent.close()


# -- scoping -------------------------------------------------------------------------


async def test_session_and_role_headers_scope_the_evidence(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    same = [{"role": "user", "content": "shared opening line"}]
    scopes = [
        {},
        {"X-LCM-Session": "proj-a"},
        {"X-LCM-Session": "proj-b"},
        {"X-LCM-Session": "proj-a", "X-LCM-Role": "reviewer"},
    ]
    for headers in scopes:
        agent = Agent(core.base_url, headers=headers)
        agent.messages = list(same)
        await agent.complete()
        await agent.close()
    # Same again: every scope already holds these messages.
    for headers in scopes:
        agent = Agent(core.base_url, headers=headers)
        agent.messages = list(same)
        await agent.complete()
        await agent.close()
    await core.settle()
    threads = core.engine.export()["threads"]
    assert sorted((t["session"] or "", t["role"]) for t in threads) == sorted([
        ("", "default"), ("proj-a", "default"), ("proj-b", "default"),
        ("proj-a", "reviewer")])
    assert all(len(t["messages"]) == 2 for t in threads)
    assert len({t["tenant"] for t in threads}) == 1
    only = core.engine.export(session="proj-a", role="reviewer")["threads"]
    assert [(t["session"], t["role"]) for t in only] == [("proj-a", "reviewer")]
    for sent in upstream.chat_requests:
        assert not [h for h in sent["headers"] if h.lower().startswith("x-lcm-")]


async def test_tenants_are_separated_by_key_hash(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    for key in (REAL_KEY, "sk-proj-" + "b" * 40):
        agent = Agent(core.base_url, key=key)
        await agent.say("hello")
        await agent.close()
    await core.settle()
    threads = core.engine.export()["threads"]
    tenants = {t["tenant"] for t in threads}
    assert len(threads) == 2 and len(tenants) == 2
    assert all(t.startswith("t_") and REAL_KEY not in t for t in tenants)


# -- secrets -------------------------------------------------------------------------


def _files_containing(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in sorted(root.rglob("*")) if p.is_file() and needle in p.read_bytes()]


@pytest.mark.sqlite_only("scans the SQLite files (and WAL) in the data dir for the key")
async def test_api_key_is_never_written_to_disk(
    make_proxy: MakeProxy, upstream: FakeUpstream, tmp_path: Path
) -> None:
    data_dir = tmp_path / "secret-data"
    running = await make_proxy(data_dir=data_dir)
    agent = Agent(running.base_url)
    upstream.push(Reply(content="plain"))
    await agent.say("hello")
    upstream.push(Reply(content="streamed", tool_calls=[
        {"id": "call_1", "name": "f", "arguments": "{}"}]))
    await agent.stream("stream please")
    upstream.push(Reply(status=429, headers={"retry-after": "1"}))
    with pytest.raises(openai.RateLimitError):
        await agent.say("rate limited")
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {REAL_KEY}"}) as s:
        for body in (b"{not json", b"[1]", b'{"model": "m"}'):
            async with s.post(running.base_url + "/chat/completions", data=body) as resp:
                await resp.read()
        async with s.post(running.base_url + "/files", data=b"upload") as resp:
            await resp.read()
        async with s.post(running.base_url + "/chat/completions", headers={
                "api-key": REAL_KEY, "Authorization": ""},
                json={"model": "m", "messages": [{"role": "user", "content": "azure"}]}) as r:
            assert r.status == 200
    await running.settle()
    assert all(r["headers"].get("Authorization") in (f"Bearer {REAL_KEY}", "", None)
               for r in upstream.requests)  # it did reach the upstream
    files = [p for p in data_dir.rglob("*") if p.is_file()]
    assert any(p.name.endswith("-wal") for p in files)
    secret = REAL_KEY.encode()
    assert _files_containing(data_dir, b"stream please")  # the grep does see stored text
    assert _files_containing(data_dir, secret) == []
    assert _files_containing(data_dir, secret[8:]) == []  # not even without the prefix
    await agent.close()
    await running.close()
    assert _files_containing(data_dir, secret) == []
    assert _files_containing(data_dir, secret[8:]) == []


# -- tool calls ----------------------------------------------------------------------


async def test_tool_calls_and_tool_results_are_stored(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    agent = Agent(core.base_url)
    upstream.push(Reply(content=None, tool_calls=[
        {"id": "call_7", "name": "read_file", "arguments": '{"path": "/etc/hosts"}'}]))
    message = await agent.say("what is in /etc/hosts?")
    assert message.tool_calls[0].id == "call_7"
    agent.messages.append({"role": "tool", "tool_call_id": "call_7",
                           "content": "127.0.0.1 localhost"})
    upstream.push(Reply(content="It maps localhost."))
    await agent.complete()
    await core.settle()
    (thread,) = core.engine.export()["threads"]
    rows = thread["messages"]
    assert [m["role"] for m in rows] == ["user", "assistant", "tool", "assistant"]
    call = rows[1]
    assert call["kind"] == "response"
    assert call["message"]["tool_calls"][0]["function"] == {
        "name": "read_file", "arguments": '{"path": "/etc/hosts"}'}
    assert 'read_file({"path": "/etc/hosts"})' in call["text"]
    assert rows[2]["message"]["tool_call_id"] == "call_7"
    assert rows[2]["text"] == "127.0.0.1 localhost"
    await agent.close()


async def test_streamed_reply_is_stored_and_its_echo_maps_to_the_same_node(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    agent = Agent(core.base_url)
    upstream.push(Reply(content="Checking both.", piece=3, write_size=7, crlf=True,
                        keepalive=True, tool_calls=[
                            {"id": "call_a", "name": "search", "arguments": '{"q": "x"}'},
                            {"id": "call_b", "name": "search", "arguments": '{"q": "y"}'}]))
    echoed = await agent.stream("search x and y", stream_options={"include_usage": True})
    await core.settle()
    (thread,) = core.engine.export()["threads"]
    stored = thread["messages"][-1]
    assert stored["kind"] == "response"
    assert stored["message"]["content"] == "Checking both."
    assert stored["message"]["tool_calls"] == echoed["tool_calls"]
    response_id = stored["id"]
    agent.messages += [{"role": "tool", "tool_call_id": "call_a", "content": "x found"},
                       {"role": "tool", "tool_call_id": "call_b", "content": "y found"}]
    upstream.push(Reply(content="Both found.", piece=2))
    await agent.stream()
    # And a tool-only streamed reply, echoed with content None.
    upstream.push(Reply(content=None, tool_calls=[
        {"id": "call_c", "name": "done", "arguments": "{}"}]))
    await agent.stream("finish")
    agent.messages.append({"role": "tool", "tool_call_id": "call_c", "content": "ok"})
    upstream.push(Reply(content="Finished."))
    await agent.stream()
    await core.settle()
    (thread,) = core.engine.export()["threads"]
    rows = thread["messages"]
    assert [(m["role"], m["kind"]) for m in rows] == [
        ("user", "request"), ("assistant", "response"), ("tool", "request"),
        ("tool", "request"), ("assistant", "response"), ("user", "request"),
        ("assistant", "response"), ("tool", "request"), ("assistant", "response")]
    assert rows[1]["id"] == response_id
    assert rows[2]["parent_id"] == response_id
    assert rows[6]["message"]["tool_calls"][0]["id"] == "call_c"
    await agent.close()


# -- the CLI reads what the proxy stored -----------------------------------------------


async def test_cli_export_and_status_after_shutdown(
    make_proxy: MakeProxy, upstream: FakeUpstream, tmp_path: Path
) -> None:
    data_dir = tmp_path / "cli-data"
    running = await make_proxy(data_dir=data_dir, injection=NO_INJECTION, tools=NO_TOOLS)
    agent = Agent(running.base_url, headers={"X-LCM-Session": "cli-session"})
    upstream.push(Reply(content="first answer"))
    await agent.say("first question")
    upstream.push(Reply(status=500))
    with pytest.raises(openai.InternalServerError):
        await agent.say("second question")
    await agent.close()
    await running.settle()
    await running.close()

    runner = CliRunner()
    result = await asyncio.to_thread(
        runner.invoke, cli, ["memory", "export", "--events", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (thread,) = data["threads"]
    assert thread["session"] == "cli-session"
    assert [(m["role"], m["text"]) for m in thread["messages"]] == [
        ("user", "first question"), ("assistant", "first answer"),
        ("user", "second question")]
    kinds = [(e["kind"], e["data"].get("outcome")) for e in data["events"]]
    assert kinds == [("request", None), ("response", "complete"),
                     ("request", None), ("response", "upstream_error")]
    assert data["events"][-1]["data"]["status"] == 500

    result = await asyncio.to_thread(
        runner.invoke, cli, ["memory", "export", "--session", "nope", "--data-dir",
                             str(data_dir)])
    assert result.exit_code == 0 and json.loads(result.stdout)["threads"] == []

    result = await asyncio.to_thread(
        runner.invoke, cli, ["memory", "status", "--json", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    status = orjson.loads(result.stdout)
    assert status["counts"]["threads"] == 1
    assert status["counts"]["messages"] == 3
    assert status["counts"]["events"] == 4
    result = await asyncio.to_thread(
        runner.invoke, cli, ["memory", "status", "--data-dir", str(data_dir)])
    assert result.exit_code == 0
    assert "messages:" in result.stdout and " 3" in result.stdout


SURROGATE_BODY = (
    b'{"model": "m", "messages": [{"role": "user", "content": "cut emoji \\ud83d"},'
    b' {"role": "user", "content": [{"type": "text", "text": "parts"}], "n": 2}]}')


async def _send_surrogate_body(running: RunningProxy, upstream: FakeUpstream) -> None:
    async with aiohttp.ClientSession() as s:
        async with s.post(running.base_url + "/chat/completions", data=SURROGATE_BODY,
                          headers={"Authorization": f"Bearer {REAL_KEY}"}) as resp:
            assert resp.status == 200
    assert upstream.chat_requests[-1]["raw"] == SURROGATE_BODY
    await running.settle()


async def test_lone_surrogates_are_still_stored(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    """Bodies orjson rejects (an escaped lone surrogate from a cut emoji) are still
    valid JSON to the upstream; the evidence must keep them, not drop the request."""
    await _send_surrogate_body(core, upstream)
    rows = sql_read(core.engine, lambda c: c.execute(
        "SELECT msg_role, text, raw_json FROM messages ORDER BY id").fetchall())
    assert [r["msg_role"] for r in rows] == ["user", "user", "assistant"]
    assert rows[0]["text"] == "cut emoji \ufffd"  # searchable text: replacement char
    assert json.loads(rows[0]["raw_json"])["content"] == "cut emoji \ud83d"  # lossless
    assert rows[1]["text"] == "parts"


async def test_export_reads_back_lone_surrogates(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    await _send_surrogate_body(core, upstream)
    (thread,) = core.engine.export()["threads"]
    assert thread["messages"][0]["message"]["content"] == "cut emoji \ud83d"


# -- the capture functions directly (no HTTP) ------------------------------------------


@pytest.fixture
def engine(tmp_path: Path) -> Any:
    from memory_core.config import MemoryConfig
    from memory_core.engine import Engine

    eng = Engine(tmp_path / "engine-data", MemoryConfig(extract=False))
    yield eng
    eng.close()


def _capture(engine: Any, messages: list[Any], reply: dict[str, Any] | None,
             scope: Any = None) -> Any:
    from memory_core.models import Scope

    ticket, fut = engine.capture_request(scope or Scope("t_test"), "req_x", messages, {})
    fut.result(10)
    if reply is not None:
        engine.capture_response(ticket, [reply], {"outcome": "complete"}).result(10)
    return ticket.result


def test_two_answers_to_the_same_request_fork_instead_of_mixing(engine: Any) -> None:
    """Two in-flight copies of one request (a client retry racing the original)."""
    from memory_core.models import Scope

    user = [{"role": "user", "content": "hi"}]
    first, f1 = engine.capture_request(Scope("t_test"), "r1", user, {})
    second, f2 = engine.capture_request(Scope("t_test"), "r2", user, {})
    f1.result(10), f2.result(10)
    engine.capture_response(first, [{"role": "assistant", "content": "one"}], {}).result(10)
    engine.capture_response(second, [{"role": "assistant", "content": "two"}], {}).result(10)
    threads = engine.export()["threads"]
    assert [[m["text"] for m in t["messages"]] for t in threads] == [["hi", "one"], ["two"]]
    assert threads[1]["parent_thread_id"] == threads[0]["id"]
    assert [m["text"] for m in engine.thread_messages(threads[0]["id"])] == ["hi", "one"]
    assert [m["text"] for m in engine.thread_messages(threads[1]["id"])] == ["hi", "two"]


def test_odd_messages_are_stored_not_dropped(engine: Any) -> None:
    odd = [{"role": ["not", "a", "string"], "content": "x"}, "a bare string", 42, None,
           {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]},
           {"role": "user", "content": "huge " + str(2**70)}]
    result = _capture(engine, odd, {"role": "assistant", "content": "fine"})
    assert len(result.message_ids) == len(odd)
    rows = [m for t in engine.export()["threads"] for m in t["messages"]]
    assert [m["role"] for m in rows] == [None, None, None, None, "user", "user", "assistant"]
    assert rows[1]["text"] == "a bare string" and rows[4]["text"] == "[image_url]"
    # Replaying the same odd list stores nothing new.
    again = _capture(engine, odd, None)
    assert again.new_ids == () and again.message_ids == result.message_ids


def test_chain_key_cache_always_equals_a_full_rehash() -> None:
    """The memoised node keys are exactly chain_keys: on append, on an edited
    earlier message, on values Python calls equal but JSON does not (1, 1.0, true),
    and on integers orjson cannot serialise (the slow path)."""
    from memory_core.capture.tree import ChainKeyCache, chain_keys

    cache = ChainKeyCache(max_roots=2, per_root=2)
    history: list[Any] = [{"role": "system", "content": "sys"}]
    for i in range(40):
        history.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"})
        assert cache.keys(history) == chain_keys(history)
    edited = [dict(m) for m in history]
    edited[3]["content"] = "changed"
    assert cache.keys(edited) == chain_keys(edited) != chain_keys(history)
    variants = []
    for value in (1, 1.0, True, 2**70):
        odd = [dict(m) for m in history]
        odd[5]["content"] = value
        variants.append(cache.keys(odd))
        assert variants[-1] == chain_keys(odd)
    assert len({tuple(v) for v in variants}) == 4  # 1, 1.0, true and 2**70 differ
    # Other conversations evict this one (max_roots=2); results stay exact.
    for root in ("a", "b", "c"):
        other = [{"role": "system", "content": root}, *history[1:]]
        assert cache.keys(other) == chain_keys(other)
    assert cache.keys(history) == chain_keys(history)


@pytest.mark.parametrize("budget", [0, 700, 1 << 20])
def test_chain_key_cache_exact_whether_it_keeps_bytes_or_digests(budget: int) -> None:
    """Prefixes are checked against the bytes kept, or, past the byte budget, against
    the sha256 of the bytes let go: the keys are chain_keys either way, a changed
    earlier message is never taken for the old one, and the bytes kept stay within
    the budget."""
    from memory_core.capture.tree import ChainKeyCache, chain_keys

    cache = ChainKeyCache(max_roots=3, per_root=3, max_kept_bytes=budget)
    rng = random.Random(budget)
    histories: list[list[Any]] = [[{"role": "system", "content": f"conv {k}"}] for k in range(4)]
    for step in range(200):
        history = histories[rng.randrange(4)]
        history.append({"role": rng.choice(("user", "assistant")), "content": f"m{step}"})
        probe = history
        if rng.random() < 0.2 and len(history) > 3:  # a retry with an earlier message edited
            probe = [dict(m) for m in history]
            probe[rng.randrange(1, len(probe))]["content"] = f"edited {step}"
        assert cache.keys(probe) == chain_keys(probe)
        assert 0 <= cache._kept <= budget
        held = {id(e.data): e.data for es in cache._roots.values() for e in es if e.data}
        assert sum(map(len, held.values())) == cache._kept
    # A history that only grows is held once: its earlier lists share the newest bytes.
    grown = ChainKeyCache(max_kept_bytes=budget)
    history = [{"role": "system", "content": "grows"}]
    for step in range(30):
        history.append({"role": "user", "content": f"turn {step}"})
        assert grown.keys(history) == chain_keys(history)
    if budget >= 1 << 20:
        (entries,) = grown._roots.values()
        assert len(entries) == 4 and len({id(e.data) for e in entries}) == 1
        assert grown._kept == len(orjson.dumps(history))


def test_chain_key_cache_keeps_a_fork_apart_from_the_branch_it_left() -> None:
    """A history edited back to an earlier turn (a fork) is a new branch: the longer
    list of the old branch keeps its own bytes, so a list on the new branch is never
    taken for it, even where the new branch has a "," at the byte the old one ended
    (here inside a message's text)."""
    from memory_core.capture.tree import ChainKeyCache, chain_keys

    def message(k: int, text: str) -> dict[str, str]:
        return {"role": ("assistant", "user")[k % 2], "content": text}

    trunk = [{"role": "system", "content": "s"}] + [message(k, f"t{k}") for k in range(1, 8)]
    old = trunk + [message(8, "a8"), message(9, "a9")]
    end = len(orjson.dumps(old)) - 1  # where the old branch's closing "]" stands
    start = len(orjson.dumps(trunk + [message(8, "")])) - len(b'"}]')  # its text
    fork = trunk + [message(8, "x" * (end - start) + "," + "y" * 40)]
    assert orjson.dumps(fork)[end:end + 1] == b","
    cache = ChainKeyCache()
    for history in (trunk, old, fork, fork + [message(9, "b9")]):
        assert cache.keys(history) == chain_keys(history)


def test_chain_key_cache_lets_bytes_go_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its byte budget, with 256 conversations kept, a call lets bytes go in one
    pass over the conversations, not one pass over every list per conversation let
    go (which made a call cost about 300 full rehashes of a short history); within
    the budget it walks none. The keys stay exact."""
    from memory_core.capture import tree

    walks = 0
    held = tree._bytes_held

    def counted(entries: list[Any]) -> int:
        nonlocal walks
        walks += 1
        return held(entries)

    monkeypatch.setattr(tree, "_bytes_held", counted)
    for budget, most in ((0, 256 + 2), (1 << 30, 2)):
        cache = tree.ChainKeyCache(max_kept_bytes=budget)
        histories = [[{"role": "system", "content": f"conv {k}"}]
                     + [{"role": "user", "content": "hi"}] * 7 for k in range(256)]
        for history in histories:
            cache.keys(history)
        for turn in range(3):
            for history in histories:
                history.append({"role": "assistant", "content": f"ok {turn}"})
                walks = 0
                assert cache.keys(history) == tree.chain_keys(history)
                assert walks <= most  # the conversation's lists, then one pass at most
        assert cache._kept == (0 if budget == 0 else sum(
            held(es) for es in cache._roots.values()))


def test_remembered_paths_give_the_same_ids_as_the_walk(engine: Any) -> None:
    """Capturing with the path cache (warm engine) returns exactly what an engine
    without it (cold: full ancestor walk) returns, also for a fork; after a purge
    the remembered path is not reused."""
    from memory_core.config import MemoryConfig
    from memory_core.engine import Engine

    history: list[Any] = [{"role": "system", "content": "sys"}]
    results = []
    for i in range(12):
        history.append({"role": "user", "content": f"question {i}"})
        results.append(_capture(engine, list(history), {"role": "assistant",
                                                         "content": f"answer {i}"}))
        history.append({"role": "assistant", "content": f"answer {i}"})
    for i in range(1, len(results)):  # each request extended the one before it
        assert results[i].message_ids[:-2] == results[i - 1].message_ids
    fork = [*history[:9], {"role": "user", "content": "a different question"}]
    forked = _capture(engine, fork, None)
    warm = _capture(engine, list(history[:-1]), None)
    cold_engine = Engine(engine.data_dir, MemoryConfig(extract=False))
    try:
        cold = _capture(cold_engine, list(history[:-1]), None)
        assert warm.message_ids == cold.message_ids == results[-1].message_ids
        assert _capture(cold_engine, fork, None).message_ids == forked.message_ids
    finally:
        cold_engine.close()
    engine.purge(tenant="t_test")
    after = _capture(engine, list(history[:3]), None)
    assert len(after.new_ids) == 3
    assert set(after.message_ids).isdisjoint(results[-1].message_ids)


@pytest.mark.parametrize("tools", [True, False], ids=["tool-loop", "plain-relay"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
async def test_an_answer_is_stored_before_the_client_has_all_of_it(
        upstream: FakeUpstream, tmp_path: Path, tools: bool, stream: bool) -> None:
    """Without the capture journal and with ``capture.response_wait_seconds`` set
    (default 2 s; at 0 the answer is only queued before the end), the moment the SDK
    returns a whole answer (``[DONE]`` read, or the JSON body ended), the answer is
    already committed: no settling, no background wait. A crash right after cannot
    lose what the client holds (with the journal, ``capture.journal``, it is replayed
    instead: tests/test_capture_journal.py)."""
    from tests.conftest import start_proxy

    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"enabled": tools},
                              injection=NO_INJECTION,
                              capture={"response_wait_seconds": 2.0, "journal": False})
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=REAL_KEY, max_retries=0)
    try:
        upstream.push(Reply(content="Stored before you saw the end.", piece=4))
        messages = [{"role": "user", "content": "hello"}]
        if stream:
            s = await client.chat.completions.create(model="m", messages=messages,
                                                     stream=True)
            text = "".join([c.choices[0].delta.content or "" async for c in s
                            if c.choices])
        else:
            r = await client.chat.completions.create(model="m", messages=messages)
            text = r.choices[0].message.content
        assert text == "Stored before you saw the end."
        rows = sql_read(proxy.engine, lambda c: c.execute(
            "SELECT text FROM messages WHERE msg_role='assistant'").fetchall())
        assert [r[0] for r in rows] == [text]
    finally:
        await client.close()
        await proxy.runner.cleanup()


def test_an_answer_is_extracted_by_the_job_after_its_capture(tmp_path: Path) -> None:
    """The answer's capture (which the client's end waits for) marks it pending
    and does not extract; the job queued once it commits does, before any capture
    queued later. A pending answer whose follow-up never ran (a crash right after
    the commit) waits until due, then a later capture's retry extracts it; a
    follow-up for an answer no longer pending does nothing."""
    import time

    from memory_core.capture.jobs import EXTRACT_RETRY_SECONDS
    from memory_core.engine import Engine
    from memory_core.models import Scope

    engine = Engine(tmp_path / "d")
    scope = Scope("t_test")
    reply = {"role": "assistant", "content": "I suggest we use Redis for the cache."}
    question = {"role": "user", "content": "How should we cache sessions?"}

    def proposals(c: Any) -> list[int]:
        return [r[0] for r in c.execute(
            "SELECT source_message_id FROM memory_items WHERE kind='proposal' ORDER BY id")]

    def pending(c: Any) -> list[tuple[int, int, float]]:
        return [tuple(r) for r in c.execute(
            "SELECT message_id, attempts, next_at FROM extraction_queue")]

    def ask(rid: str, messages: list[Any]) -> Any:
        ticket, fut = engine.capture_request(scope, rid, messages, {})
        fut.result(10)
        return ticket

    try:
        ticket = ask("r1", [question])
        ids = engine.capture_response(ticket, [reply], {}).result(10)
        ask("r2", [question, reply, {"role": "user", "content": "ok"}])  # queued after
        assert sql_read(engine, proposals) == ids and sql_read(engine, pending) == []
        engine.store.write_tx_sync(lambda c: engine.captures._extract_pending(c, ids[0]))
        assert sql_read(engine, proposals) == ids  # no longer pending: nothing added

        # The answer's own job, alone (as if the process died right after its commit).
        later = ask("r3", [{"role": "user", "content": "And the job queue?"}])
        other = {"role": "assistant", "content": "I suggest we use Postgres for the job queue."}
        before = time.time()
        (lost,) = engine.store.write_tx_sync(
            lambda c: engine.captures._capture_response_job(c, later, [other], {}, None))
        ((mid, attempts, due),) = sql_read(engine, pending)
        assert (mid, attempts) == (lost, 0) and lost not in sql_read(engine, proposals)
        assert before + EXTRACT_RETRY_SECONDS[0] <= due <= time.time() + EXTRACT_RETRY_SECONDS[0]
        ask("r4", [{"role": "user", "content": "first"}])  # not due yet: left alone
        assert [p[0] for p in sql_read(engine, pending)] == [lost]
        sql_write(engine, lambda c: c.execute(
            "UPDATE extraction_queue SET next_at=?", (time.time() - 1,)))  # time passes
        ask("r5", [{"role": "user", "content": "second"}])
        assert lost in sql_read(engine, proposals) and sql_read(engine, pending) == []
    finally:
        engine.close()


def test_an_answer_waits_for_the_running_write_only(tmp_path: Path) -> None:
    """Once its request is captured, an answer's capture (the client's end waits for
    it) runs after the writer's running job, ahead of the background jobs queued
    before it; its extraction job keeps its place behind them."""

    from memory_core.engine import Engine
    from memory_core.models import Scope

    engine = Engine(tmp_path / "d")
    scope = Scope("t_test")
    try:
        ticket, fut = engine.capture_request(
            scope, "r1", [{"role": "user", "content": "How should we cache sessions?"}], {})
        thread_id = fut.result(10).thread_id
        # The thread's committed messages as each job behind the running one runs.
        with writer_in_a_batch(engine, lambda: len(engine.thread_messages(thread_id))
                               ) as seen:
            answer = engine.capture_response(ticket, [
                {"role": "assistant", "content": "I suggest we use Redis for the cache."}], {})
        ids = answer.result(30)
        assert seen == [2] * 5  # stored after the running job, before those behind it
        proposals = sql_read(engine, lambda c: [r[0] for r in c.execute(
            "SELECT source_message_id FROM memory_items WHERE kind='proposal'")])
        assert proposals == ids  # extracted by its own job, after them
    finally:
        engine.close()


def test_history_beyond_a_request_is_what_its_path_does_not_hold(engine: Any) -> None:
    """:meth:`Engine.has_history_beyond`, asked (as the proxy does) after a request's
    capture and before its answer's: when the memory tools could find something."""
    from memory_core.models import Scope

    scope = Scope("t_test")

    def turn(messages: list[Any], reply: str | None, on: Any = scope) -> tuple[Any, bool]:
        ticket, fut = engine.capture_request(on, "req_x", messages, {})
        result = fut.result(10)
        beyond = engine.has_history_beyond(on, result)
        if reply is not None:
            engine.capture_response(ticket, [{"role": "assistant", "content": reply}],
                                    {"outcome": "complete"}).result(10)
        return result, beyond

    u1, a1 = {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}
    u2 = {"role": "user", "content": "how are you?"}
    assert not turn([u1], "hello")[1]  # a first turn: nothing stored before it
    turn([{"role": "user", "content": "secret"}], None, Scope("t_other"))
    assert not turn([u1, a1, u2], "fine")[1]  # its whole thread; another tenant's is not
    # A retried turn: its thread holds an answer after the request's newest message.
    assert turn([u1, a1, u2], None)[1]
    # An earlier conversation of the same tenant is history beyond a new one.
    assert turn([{"role": "user", "content": "new topic"}], None)[1]
    # An agent memory alone is something to find.
    alone = Scope("t_alone")
    only, beyond = turn([u1], None, alone)
    assert not beyond
    engine.set_agent_memory(tenant="t_alone", role=alone.role, category="progress",
                            key="k", title="t", content="step 2 of 5")
    assert engine.has_history_beyond(alone, only)


def test_a_request_bringing_its_history_is_extracted_after_its_capture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A request with more than EXTRACT_INLINE_MESSAGES new user messages (a
    conversation first seen with its history) commits its capture without extracting
    them; writer jobs queued after the commit do, in message order (the rules that
    compare a statement with earlier ones see them in the order they were said). A
    usual turn is extracted inline."""
    from memory_core.capture.jobs import EXTRACT_INLINE_MESSAGES
    from memory_core.engine import Engine
    from memory_core.items import writer as memory
    from memory_core.models import Scope

    engine = Engine(tmp_path / "d")
    in_capture: list[bool] = []
    inline: list[int] = []
    real_job, real_store = engine.captures._capture_request_job, memory.store_extracted

    def capture_job(*args: Any, **kw: Any) -> Any:
        in_capture.append(True)
        try:
            return real_job(*args, **kw)
        finally:
            in_capture.pop()

    def store_extracted(tx: Any, scope: Any, thread_id: int, message_id: int, *a: Any,
                        **kw: Any) -> Any:
        if in_capture:
            inline.append(message_id)
        return real_store(tx, scope, thread_id, message_id, *a, **kw)

    monkeypatch.setattr(engine.captures, "_capture_request_job", capture_job)
    monkeypatch.setattr(memory, "store_extracted", store_extracted)
    n = EXTRACT_INLINE_MESSAGES + 2
    history: list[dict[str, Any]] = []
    for i in range(n):
        history += [{"role": "user", "content": f"The staging port is {5400 + i}."},
                    {"role": "assistant", "content": "Noted."}]
    try:
        _ticket, fut = engine.capture_request(Scope("t"), "r1", history, {})
        fut.result(30)
        assert inline == []
        engine.flush()
        rows = sql_read(engine, lambda c: [tuple(r) for r in c.execute(
            "SELECT value, status, source_message_id FROM memory_items"
            " WHERE subject LIKE '%staging port%' ORDER BY id")])
        assert [float(r[0]) for r in rows] == [5400.0 + i for i in range(n)]
        assert [r[2] for r in rows] == sorted(r[2] for r in rows)  # message order
        # a usual turn: its one new user message is extracted inside the capture
        turn = [*history, {"role": "user", "content": "The staging port is 6000."}]
        _ticket, fut = engine.capture_request(Scope("t"), "r2", turn, {})
        fut.result(30)
        assert inline == [fut.result().new_ids[-1]]
    finally:
        engine.close()


def test_a_message_yielding_many_items_is_extracted_after_its_capture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A single new user message the rules find more than EXTRACT_INLINE_ITEMS items
    in (a pasted list of settings) is not stored item by item inside the capture
    transaction that the request waits on (on PostgreSQL a round trip per check);
    a writer job queued after the commit stores all of them. A message with a few
    items is still extracted inline."""
    from memory_core.capture.jobs import EXTRACT_INLINE_ITEMS
    from memory_core.engine import Engine
    from memory_core.items import writer as memory
    from memory_core.models import Scope

    engine = Engine(tmp_path / "d")
    in_capture: list[bool] = []
    inline: list[int] = []
    real_job, real_store = engine.captures._capture_request_job, memory.store_extracted

    def capture_job(*args: Any, **kw: Any) -> Any:
        in_capture.append(True)
        try:
            return real_job(*args, **kw)
        finally:
            in_capture.pop()

    def store_extracted(tx: Any, scope: Any, thread_id: int, message_id: int, *a: Any,
                        **kw: Any) -> Any:
        if in_capture:
            inline.append(message_id)
        return real_store(tx, scope, thread_id, message_id, *a, **kw)

    monkeypatch.setattr(engine.captures, "_capture_request_job", capture_job)
    monkeypatch.setattr(memory, "store_extracted", store_extracted)
    n = EXTRACT_INLINE_ITEMS + 4
    paste = "\n".join(f"The port of service svc{i:02d} is {7100 + i}." for i in range(n))
    try:
        _ticket, fut = engine.capture_request(
            Scope("t"), "r1", [{"role": "user", "content": paste}], {})
        fut.result(30)
        assert inline == []
        engine.flush()
        rows = sql_read(engine, lambda c: [tuple(r) for r in c.execute(
            "SELECT value FROM memory_items WHERE subject LIKE 'service svc%'"
            " ORDER BY id")])
        assert sorted(float(r[0]) for r in rows) == [7100.0 + i for i in range(n)]
        few = [{"role": "user", "content": paste},
               {"role": "assistant", "content": "Noted."},
               {"role": "user", "content": "The port of service web is 8080."}]
        _ticket, fut = engine.capture_request(Scope("t"), "r2", few, {})
        fut.result(30)
        assert inline == [fut.result().new_ids[-1]]
    finally:
        engine.close()


@pytest.mark.parametrize("users", [1, 6])
def test_a_rule_that_raises_never_loses_the_capture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, users: int) -> None:
    """The rules run before the capture decides to extract inline or queue (the
    item count of a message, a backfill's "anything to extract"); a rule raising
    there must not roll the request's messages back: they are stored, and the
    message is queued for extraction like any failed one."""
    from memory_core import extraction
    from memory_core.engine import Engine
    from memory_core.models import Scope

    real = extraction.extract

    def poisoned(text: str, *a: Any, **kw: Any) -> Any:
        if "POISON" in text:
            raise ValueError("a rule failed")
        return real(text, *a, **kw)

    monkeypatch.setattr(extraction, "extract", poisoned)
    engine = Engine(tmp_path / "d")
    history: list[dict[str, Any]] = []
    for i in range(users - 1):
        history += [{"role": "user", "content": f"The staging port is {5400 + i}."},
                    {"role": "assistant", "content": "Noted."}]
    history.append({"role": "user", "content": "POISON: my name is Ada."})
    try:
        _ticket, fut = engine.capture_request(Scope("t"), "r1", history, {})
        assert len(fut.result(30).new_ids) == len(history)
        engine.flush()
        stored = sql_read(engine, lambda c: c.execute(
            "SELECT count(*) FROM messages").fetchone()[0])
        assert stored == len(history)
    finally:
        engine.close()


def _assert_svc00_port_is_9999(engine: Any) -> None:
    """The correction's value is svc00's only active port (the pasted 7100 superseded)."""
    rows = sql_read(engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT value, status FROM memory_items WHERE subject LIKE 'service svc00%'"
        " ORDER BY id")])
    assert [float(v) for v, status in rows if status == "active"] == [9999.0], rows


def test_a_correction_after_a_queued_paste_still_supersedes(tmp_path: Path) -> None:
    """One request: a paste the rules find many items in (queued for after the
    commit), then a correction of one of them. Items are stored in the order they
    were said, so the correction supersedes the pasted value, not the reverse."""
    from memory_core.capture.jobs import EXTRACT_INLINE_ITEMS
    from memory_core.engine import Engine
    from memory_core.models import Scope

    engine = Engine(tmp_path / "d")
    paste = "\n".join(f"The port of service svc{i:02d} is {7100 + i}."
                      for i in range(EXTRACT_INLINE_ITEMS + 4))
    messages = [{"role": "user", "content": paste},
                {"role": "assistant", "content": "Noted."},
                {"role": "user", "content": "Actually, the port of service svc00 is 9999 now."}]
    try:
        _ticket, fut = engine.capture_request(Scope("t"), "r1", messages, {})
        fut.result(30)
        engine.flush()
        _assert_svc00_port_is_9999(engine)
    finally:
        engine.close()


def test_a_correction_in_the_next_request_waits_for_the_queued_paste(tmp_path: Path) -> None:
    """A request's capture is urgent, but its persona's extraction jobs queued before
    it (a paste from the previous request) run first, even when the writer had
    already taken them into a batch: the correction supersedes the pasted value.
    Another persona's queued job is not waited for."""
    import threading

    from memory_core.capture.jobs import EXTRACT_INLINE_ITEMS
    from memory_core.engine import Engine
    from memory_core.models import Scope

    engine = Engine(tmp_path / "d")
    scope = Scope("t")
    paste = "\n".join(f"The port of service svc{i:02d} is {7100 + i}."
                      for i in range(EXTRACT_INLINE_ITEMS + 4))
    first = [{"role": "user", "content": paste}]
    try:
        hold, running = threading.Event(), threading.Event()
        order: list[str] = []

        def blocker(_tx: Any) -> None:
            running.set()
            assert hold.wait(30)

        _ticket, fut = engine.capture_request(scope, "r1", first, {})
        engine.store.write_tx(blocker)  # after r1's capture, before its paste's job
        engine.store.write_tx(lambda _tx: order.append("other persona"),
                              order_key=("t2", "default"))
        fut.result(30)  # committed: the paste's extraction job is queued behind the blocker
        assert running.wait(30)
        second = engine.capture_request(scope, "r2", first + [
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "Actually, the port of service svc00 is 9999 now."}],
            {})[1]
        second.add_done_callback(lambda _f: order.append("r2"))
        hold.set()
        second.result(30)
        engine.flush()
        assert order == ["r2", "other persona"]
        _assert_svc00_port_is_9999(engine)
    finally:
        engine.close()


async def test_a_cut_emoji_in_the_newest_message_fails_neither_memory_nor_extraction(
    proxy: RunningProxy, upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """A lone surrogate (an emoji cut in half) in the user's words: the statement is
    still extracted and the next request with one still gets its block (both failed:
    the item was lost and every such request failed open)."""
    bodies = (b'{"model": "m", "messages": [{"role": "user", "content": '
              b'"The staging port is 8080 \\ud83d"}]}',
              b'{"model": "m", "messages": [{"role": "user", "content": '
              b'"Which staging port do we use? \\ud83d"}]}')
    states = []
    async with aiohttp.ClientSession() as s:
        for body in bodies:
            async with s.post(proxy.base_url + "/chat/completions", data=body,
                              headers={"Authorization": f"Bearer {REAL_KEY}"}) as resp:
                assert resp.status == 200
                states.append(resp.headers["x-lcm-memory"])
            await proxy.settle()
    assert b"The staging port is 8080 \\ud83d" in upstream.chat_requests[0]["raw"]
    items = sql_read(proxy.engine, lambda c: [r["text"] for r in c.execute(
        "SELECT text FROM memory_items WHERE kind = 'fact'")])
    assert items == ["The staging port is 8080 \ufffd"], items
    assert states[1] == "injected", states
    assert "8080" in upstream.chat_requests[1]["raw"].decode()
    assert not [r for r in caplog.records if "failed" in r.getMessage()]


def test_a_memory_off_request_is_extracted_after_its_answer_commits(tmp_path: Path) -> None:
    """``extract_after_answer`` (``X-LCM-Memory: off``: nothing reads the request's
    items before its answer): the request's capture only marks its user message
    pending; the answer's capture commits next, then the request's extraction runs,
    then the answer's. The items stored are those of an inline capture, in the
    same order; with no answer at all the pending row is retried once due."""
    import time

    from memory_core.engine import Engine
    from memory_core.models import Scope

    said = {"role": "user", "content": "Keep in mind: the staging database runs on port"
            " 5433. We decided to use Redis for the session cache."}
    reply = {"role": "assistant", "content": "I suggest we use Postgres for the job queue."}

    def items(c: Any) -> list[tuple[str, str]]:
        return [tuple(r) for r in c.execute("SELECT kind, text FROM memory_items ORDER BY id")]

    def pending(c: Any) -> list[int]:
        return [r[0] for r in c.execute("SELECT message_id FROM extraction_queue")]

    def run(after: bool, order: list[str]) -> list[tuple[str, str]]:
        engine = Engine(tmp_path / f"d{after}")
        jobs = engine.captures
        def traced(name: str) -> Any:
            fn = getattr(jobs, name)

            def run(*a: Any) -> Any:
                order.append(name)
                return fn(*a)
            return run

        for name in ("_capture_response_job", "_extract_pending"):
            setattr(jobs, name, traced(name))
        try:
            # (a turn after an exchange: an opening is read after its commit either
            # way, checked against the assistant's tool calls: capture/delegated.py)
            ticket, fut = engine.capture_request(Scope("t_test"), "r1", [
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Hello."}, said], {},
                extract_after_answer=after)
            *_, mid = fut.result(10).new_ids
            if after:
                assert mid in sql_read(engine, pending) and sql_read(engine, items) == []
            engine.capture_response(ticket, [reply], {}).result(10)
            engine.store.write_tx_sync(lambda c: None)  # the queued extractions ran
            assert sql_read(engine, pending) == []
            if after:  # no answer: left pending until due, then retried
                t2, f2 = engine.capture_request(Scope("t_test"), "r2", [
                    {"role": "user", "content": "We decided to deploy on Fridays."}], {},
                    extract_after_answer=True)
                (lost,) = f2.result(10).new_ids
                assert sql_read(engine, pending) == [lost]
                sql_write(engine, lambda c: c.execute(
                    "UPDATE extraction_queue SET next_at=?", (time.time() - 1,)))
                engine.capture_request(Scope("t_test"), "r3", [
                    {"role": "user", "content": "ok"}], {})[1].result(10)
                assert sql_read(engine, pending) == []
                return [i for i in sql_read(engine, items) if "Fridays" not in i[1]]
            return sql_read(engine, items)
        finally:
            engine.close()

    inline: list[str] = []
    after: list[str] = []
    expected = run(False, inline)
    assert {k for k, _t in expected} == {"fact", "decision", "proposal"}
    assert run(True, after) == expected
    assert inline[:2] == ["_capture_response_job", "_extract_pending"]  # the answer's
    assert after[:3] == ["_capture_response_job", "_extract_pending", "_extract_pending"]


def _held_engine(path: Path, order: list[str]) -> Any:
    """An engine whose writer holds every job queued to give way (as while a request is
    in flight, without a time limit), and that records, in ``order``, each request
    capture (its request id), answer capture and queued extraction as it runs."""
    from memory_core.engine import Engine

    engine = Engine(path)
    engine.store.hold_background(lambda: True, 60.0)
    jobs = engine.captures
    capture, answer, pending = (jobs._capture_request_job, jobs._capture_response_job,
                                jobs._extract_pending)

    def traced_capture(tx: Any, ticket: Any, *a: Any) -> Any:
        order.append(ticket.request_id)
        return capture(tx, ticket, *a)

    def traced_answer(tx: Any, ticket: Any, *a: Any) -> Any:
        order.append(f"answer {ticket.request_id}")
        return answer(tx, ticket, *a)

    def traced_pending(tx: Any, message_id: int, *a: Any) -> Any:
        order.append(f"extract {message_id}")
        return pending(tx, message_id, *a)

    jobs._capture_request_job = traced_capture
    jobs._capture_response_job = traced_answer
    jobs._extract_pending = traced_pending
    return engine


_OPENING = ("Keep in mind that the staging database runs on port 5433 and the nightly"
            " backup starts at 02:00 UTC.")


def test_a_new_conversation_does_not_wait_for_an_unanswered_requests_extraction(
        tmp_path: Path) -> None:
    """Two requests of one persona in flight, each a new conversation (issue 28's
    16 concurrent clients): the first one's opening is extracted by a job after its
    commit (capture/delegated.py); the second one's capture does not wait for that
    job (the first request is unanswered: nothing the second one's client sent can
    depend on it), its capture commits while the job is still held."""
    from memory_core.models import Scope

    order: list[str] = []
    engine = _held_engine(tmp_path / "d", order)
    try:
        first = engine.capture_request(Scope("t"), "r1", [
            {"role": "user", "content": _OPENING}], {})[1].result(10)
        engine.capture_request(Scope("t", session="s2"), "r2", [
            {"role": "user", "content": "Another chat: the billing export failed 3 times"
             " out of 120 runs yesterday. What should I check first?"}], {})[1].result(10)
        assert order == ["r1", "r2"]
        (mid,) = first.new_ids
        engine.store.hold_background(None, 0.0)
        engine.flush()
        assert f"extract {mid}" in order
    finally:
        engine.close()


def test_an_answer_goes_after_its_requests_queued_extraction(tmp_path: Path) -> None:
    """The answer's capture runs the request's extraction queued after its commit
    first, held or not: a request sent after the answer (a new conversation, which
    catches nothing up) finds the earlier request's items."""
    from memory_core.models import Scope

    order: list[str] = []
    engine = _held_engine(tmp_path / "d", order)
    try:
        ticket, fut = engine.capture_request(Scope("t"), "r1", [
            {"role": "user", "content": _OPENING}], {})
        (mid,) = fut.result(10).new_ids
        engine.capture_response(ticket, [{"role": "assistant", "content": "Noted."}],
                                {}).result(10)
        engine.capture_request(Scope("t", session="s2"), "r2", [
            {"role": "user", "content": "Another chat, another question."}], {})[1].result(10)
        assert order.index(f"extract {mid}") < order.index("answer r1") < order.index("r2"), \
            order
        found = sql_read(engine, lambda c: [r[0] for r in c.execute(
            "SELECT text FROM memory_items WHERE source_message_id = ?", (mid,))])
        assert found, "the opening's items are stored before the next request's capture"
    finally:
        engine.store.hold_background(None, 0.0)
        engine.close()


def test_a_continued_conversation_does_not_read_anothers_queued_paste(
        tmp_path: Path) -> None:
    """A long paste in one conversation is queued for after its capture; a request
    of a continued conversation of the same persona (its message read inline) does
    not extract that paste in its own capture (the request path) to keep items in
    message order: it queues its message behind it, and the correction still
    supersedes once the jobs run. before: r2's capture extracted the paste itself
    (about 0.5 s for 50 KB)."""
    from memory_core.capture.jobs import EXTRACT_MAX_CHARS
    from memory_core.models import Scope

    order: list[str] = []
    engine = _held_engine(tmp_path / "d", order)
    lines = [f"The port of service svc{i:03d} is {7100 + i} in staging." for i in range(2000)]
    paste = "\n".join(lines)
    assert len(paste) > EXTRACT_MAX_CHARS and lines[0].startswith("The port of service svc000")
    try:
        engine.capture_request(Scope("t"), "r1", [{"role": "user", "content": paste}],
                               {})[1].result(30)
        engine.capture_request(Scope("t", session="s2"), "r2", [
            {"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Actually, the port of service svc000 is 9999 now."}],
            {})[1].result(30)
        assert order == ["r1", "r2"], order
        engine.store.hold_background(None, 0.0)
        engine.flush()
        rows = sql_read(engine, lambda c: [tuple(r) for r in c.execute(
            "SELECT value, status FROM memory_items WHERE subject LIKE ? ORDER BY id",
            ("service svc000%",))])
        assert [float(v) for v, status in rows if status == "active"] == [9999.0], rows
    finally:
        engine.close()


def test_a_correction_overtaking_an_unanswered_opening_still_supersedes(
        tmp_path: Path) -> None:
    """A request in another conversation corrects what an unanswered request's
    opening said, while that opening's extraction job is still held: its capture
    does not wait for the job, yet items are stored in the order said (the capture
    extracts the earlier opening first), so the correction supersedes."""
    from memory_core.models import Scope

    order: list[str] = []
    engine = _held_engine(tmp_path / "d", order)
    try:
        engine.capture_request(Scope("t"), "r1", [{"role": "user", "content": (
            "For the record, the port of service svc00 is 7100 in every environment"
            " we run today.")}], {})[1].result(10)
        engine.capture_request(Scope("t", session="s2"), "r2", [
            {"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Actually, the port of service svc00 is 9999 now."}],
            {})[1].result(10)
        assert order[:2] == ["r1", "r2"], order
        engine.store.hold_background(None, 0.0)
        engine.flush()
        _assert_svc00_port_is_9999(engine)
    finally:
        engine.close()
