"""Anthropic Messages (``POST /v1/messages``) through the proxy, driven by the real
``anthropic`` SDK against the fake upstream's Anthropic endpoint (tests/fake_anthropic.py):
capture, the block's place, prompt-cache breakpoints, thinking blocks kept, memory
tools hidden (streamed and not), errors with their true status, pass-through."""

from __future__ import annotations

import contextlib
import json
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import orjson
import pytest

from tests.conftest import TEST_KEY, RunningProxy, sql_read, start_proxy, store_sql
from tests.fake_anthropic import AReply, text, thinking, tool_use
from tests.fake_upstream import FakeUpstream

SIG = "EqQBCkYIARgCKkC+sig/with+base64==" * 3


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    """The conftest proxy with ``tools.offer = "always"``: most tests here are about
    the memory-tool rounds, on first requests that carry their whole history (the
    default offers the tools only when stored history lies beyond the request:
    ``test_tools_go_only_where_history_lies_beyond``)."""
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                tools={"offer": "always"})
    yield running
    await running.close()


def client(proxy: RunningProxy, key: str = TEST_KEY) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=proxy.root, api_key=key, max_retries=0)


def sent(upstream: FakeUpstream) -> list[dict[str, Any]]:
    return [r for r in upstream.requests if r["path"] == "/v1/messages"]


def stored(proxy: RunningProxy) -> list[dict[str, Any]]:
    data = proxy.engine.export(events=True)
    return [m for t in data["threads"] for m in t["messages"]]


async def test_plain_create_is_relayed_and_stored(proxy: RunningProxy,
                                                  upstream: FakeUpstream) -> None:
    c = client(proxy)
    raw = await c.messages.with_raw_response.create(
        model="claude-x", max_tokens=100, system="You are terse.",
        messages=[{"role": "user", "content": "My cat is called Biscuit."}])
    msg = await raw.parse()
    assert msg.content[0].text == "echo: My cat is called Biscuit."
    assert raw.headers["x-lcm-memory"] in ("injected", "skipped")
    await proxy.settle()
    got = stored(proxy)
    assert [m["role"] for m in got] == ["system", "user", "assistant"]
    assert got[0]["message"] == {"role": "system", "content": "You are terse."}
    assert got[2]["message"]["content"] == [{"type": "text",
                                             "text": "echo: My cat is called Biscuit."}]
    req = sent(upstream)[0]
    # the SDK (2.15) sends its key as a bearer token; it goes upstream as sent
    assert req["headers"]["authorization"] == f"Bearer {TEST_KEY}"
    assert req["headers"]["anthropic-version"]
    assert req["json"]["system"] == "You are terse."


def _history() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A Claude-Code-like request: system blocks with a breakpoint, a thinking +
    tool_use turn, and a newest user message of tool_result blocks, text and a
    breakpoint on its last block."""
    system = [{"type": "text", "text": "You are a coding agent.",
               "cache_control": {"type": "ephemeral"}}]
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "The build flag is -O3."}]},
        {"role": "assistant", "content": [
            thinking("I should read the file.", SIG),
            {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
            text("Reading it."),
            tool_use("toolu_1", "read_file", {"path": "Makefile"})]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "CFLAGS=-O3"},
            {"type": "text", "text": "Also check the docs.",
             "cache_control": {"type": "ephemeral"}}]},
    ]
    return system, messages


async def test_block_goes_last_after_tool_results_and_breakpoints(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    system, messages = _history()
    c = client(proxy)
    tools = [{"name": "read_file", "description": "Read a file",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
              "cache_control": {"type": "ephemeral"}}]
    raw = await c.messages.with_raw_response.create(
        model="claude-x", max_tokens=100, system=system, messages=messages, tools=tools,
        thinking={"type": "enabled", "budget_tokens": 1024},
        extra_headers={"anthropic-beta": "interleaved-thinking-2025-05-14"})
    assert raw.headers["x-lcm-memory"] == "injected"
    got = sent(upstream)[-1]
    body = got["json"]
    assert got["headers"]["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    # Everything before the newest message is the client's, value for value; the
    # thinking blocks' exact bytes are in the upstream body.
    assert body["system"] == system and body["messages"][:-1] == messages[:-1]
    for block in messages[1]["content"][:2]:
        assert orjson.dumps(block) in got["raw"]
    # The newest user message: its tool_result first, the client's blocks unchanged
    # (breakpoint included), then the block, last and without cache_control.
    last = body["messages"][-1]["content"]
    assert last[:2] == messages[-1]["content"]
    assert last[0]["type"] == "tool_result"
    assert len(last) == 3 and last[2]["type"] == "text" and "cache_control" not in last[2]
    assert "Background Context" in last[2]["text"]
    assert not last[2]["text"].endswith("[Current Request]")
    # The request bytes up to the client's last breakpoint are a prefix the client
    # would send unchanged: the body without the block serialises to the same prefix.
    without = dict(body, messages=[*body["messages"][:-1],
                                   dict(body["messages"][-1], content=last[:2])])
    cut = got["raw"].index(b'"Also check the docs."')
    assert orjson.dumps(without)[:cut] == got["raw"][:cut]
    # our tools come after the client's (its breakpoint on the last client tool holds)
    assert body["tools"][0] == tools[0]
    assert {t["name"] for t in body["tools"][1:]} >= {"memory_grep", "memory_search"}
    assert all(set(t) == {"name", "description", "input_schema"} for t in body["tools"][1:])
    n = sum(1 for t in body["tools"] if "cache_control" in t) + sum(
        1 for b in body["system"] if "cache_control" in b) + sum(
        1 for m in body["messages"] for b in m["content"] if "cache_control" in b)
    assert n == 3  # the client's three breakpoints, none added
    await proxy.settle()
    got_stored = stored(proxy)
    assert [m["message"] for m in got_stored[:4]] == [
        {"role": "system", "content": system}, *messages]


async def test_stream_thinking_split_across_reads_is_relayed_and_stored(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    c = client(proxy)
    upstream.anthropic_replies.append(AReply(
        content=[thinking("Let me think about cats.", SIG), text("Biscuit is a fine name.")],
        write_size=7, piece=3))
    async with c.messages.stream(model="claude-x", max_tokens=100, messages=[
            {"role": "user", "content": "Name my cat."}],
            thinking={"type": "enabled", "budget_tokens": 1024}) as s:
        kinds = [ev.type async for ev in s]
        final = await s.get_final_message()
    assert final.content[0].type == "thinking" and final.content[0].signature == SIG
    assert final.content[1].text == "Biscuit is a fine name."
    assert kinds.count("message_start") == 1 and kinds.count("message_stop") == 1
    # Nothing intercepted: the client got the upstream's bytes.
    await proxy.settle()
    reply = stored(proxy)[-1]["message"]
    assert reply == {"role": "assistant", "content": [
        thinking("Let me think about cats.", SIG), text("Biscuit is a fine name.")]}


def _tool_results(req: dict[str, Any]) -> dict[str, Any]:
    last = req["json"]["messages"][-1]
    return {b["tool_use_id"]: json.loads(b["content"]) for b in last["content"]
            if b.get("type") == "tool_result"}


async def _seed(c: anthropic.AsyncAnthropic) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Our dashboard id is GRF-7781, remember it."}]
    r = await c.messages.create(model="claude-x", max_tokens=100, messages=history)
    history.append({"role": "assistant", "content": [b.to_dict() for b in r.content]})
    return history


@pytest.mark.parametrize("stream", [False, True])
async def test_memory_tool_round_is_hidden(proxy: RunningProxy, upstream: FakeUpstream,
                                           stream: bool) -> None:
    c = client(proxy)
    history = await _seed(c)
    await proxy.settle()
    history.append({"role": "user", "content": "Which dashboard was it?"})
    upstream.anthropic_replies.extend([
        AReply(content=[thinking("Check memory.", SIG), text("Checking."),
                        tool_use("toolu_m", "memory_grep", {"query": "GRF-7781"})],
               write_size=11),
        AReply(content=[text("It is GRF-7781.")], write_size=5)])
    before = len(sent(upstream))
    if stream:
        async with c.messages.stream(model="claude-x", max_tokens=100,
                                     messages=history) as s:
            events = [ev async for ev in s]
            final = await s.get_final_message()
        kinds = [e.type for e in events]
        assert kinds.count("message_start") == 1 and kinds.count("message_stop") == 1
        starts = [e.index for e in events if e.type == "content_block_start"]
        assert starts == [0, 1, 2]  # renumbered across rounds, no tool_use block
        assert [b.type for b in final.content] == ["thinking", "text", "text"]
        assert final.content[2].text == "It is GRF-7781."
    else:
        final = await c.messages.create(model="claude-x", max_tokens=100, messages=history)
        assert [b.type for b in final.content] == ["text"]
        assert final.content[0].text == "It is GRF-7781."
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 10 and final.usage.input_tokens == 20  # summed
    first, second = sent(upstream)[before:]
    assert second["json"]["messages"][-2] == {"role": "assistant", "content": [
        thinking("Check memory.", SIG), text("Checking."),
        tool_use("toolu_m", "memory_grep", {"query": "GRF-7781"})]}
    result = _tool_results(second)["toolu_m"]
    assert any("GRF-7781" in hit["text"] for hit in result["results"])
    assert second["json"]["messages"][:-2] == first["json"]["messages"]
    await proxy.settle()
    hidden = [m for m in stored(proxy) if m["hidden"]]
    # the tool_result turn is kept as sent, filed as a tool result (not a user turn)
    assert [m["role"] for m in hidden] == ["assistant", "tool"]
    assert hidden[1]["message"]["role"] == "user"
    # the next request shows the model its own hidden round, in place
    history.append({"role": "assistant", "content": [b.to_dict() for b in final.content]})
    history.append({"role": "user", "content": "thanks"})
    await c.messages.create(model="claude-x", max_tokens=100, messages=history)
    seen = sent(upstream)[-1]["json"]["messages"]
    kinds_seen = [[b.get("type") for b in m["content"]] if isinstance(m["content"], list)
                  else "str" for m in seen]
    assert ["tool_result"] in kinds_seen
    i = kinds_seen.index(["tool_result"])
    assert seen[i - 1]["content"][-1]["name"] == "memory_grep"


@pytest.mark.parametrize(("status", "stream"), [(429, False), (529, True)])
async def test_upstream_errors_keep_status_and_headers(
        proxy: RunningProxy, upstream: FakeUpstream, status: int, stream: bool) -> None:
    kind = "rate_limit_error" if status == 429 else "overloaded_error"
    upstream.anthropic_replies.append(AReply(status=status, headers={"retry-after": "7"},
                                             error={"type": kind, "message": "slow down"}))
    c = client(proxy)
    with pytest.raises(anthropic.APIStatusError) as info:
        if stream:
            async with c.messages.stream(model="claude-x", max_tokens=10, messages=[
                    {"role": "user", "content": "hi"}]) as s:
                [ev async for ev in s]
        else:
            await c.messages.create(model="claude-x", max_tokens=10,
                                    messages=[{"role": "user", "content": "hi"}])
    assert info.value.status_code == status
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.body["error"]["type"] == kind  # type: ignore[index]


async def test_count_tokens_passes_through_and_bad_json_is_anthropic_shaped(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.root + "/v1/messages/count_tokens",
                             headers={"x-api-key": TEST_KEY},
                             json={"model": "m", "messages": []}) as r:
            assert r.status == 200 and (await r.json())["path"] == "/v1/messages/count_tokens"
        async with http.post(proxy.root + "/v1/messages", data=b"{nope",
                             headers={"content-type": "application/json"}) as r:
            assert r.status == 400
            err = await r.json()
            assert err["type"] == "error" and err["error"]["type"] == "invalid_request_error"
    assert upstream.requests[-1]["path"] == "/v1/messages/count_tokens"


async def test_x_api_key_names_the_tenant(proxy: RunningProxy,
                                          upstream: FakeUpstream) -> None:
    """Claude Code's own header, ``x-api-key``, is the client key (and goes upstream)."""
    for key in ("sk-ant-one-1234567890", "sk-ant-two-1234567890"):
        c = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=None, max_retries=0,
                                     default_headers={"x-api-key": key})
        await c.messages.create(
            model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        assert sent(upstream)[-1]["headers"]["x-api-key"] == key
        assert "authorization" not in sent(upstream)[-1]["headers"]
    await proxy.settle()
    tenants = {t["tenant"] for t in proxy.engine.export()["threads"]}
    assert len(tenants) == 2 and "anonymous" not in tenants


@pytest.mark.parametrize("stream", [False, True])
async def test_error_after_a_hidden_round_reaches_the_client_with_its_status(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    upstream.anthropic_replies.extend([
        AReply(content=[tool_use("toolu_m", "memory_search", {"query": "x"})]),
        AReply(status=529, headers={"retry-after": "3"},
               error={"type": "overloaded_error", "message": "Overloaded"})])
    c = client(proxy)
    with pytest.raises(anthropic.APIStatusError) as info:
        if stream:
            async with c.messages.stream(model="claude-x", max_tokens=10, messages=[
                    {"role": "user", "content": "hi"}]) as s:
                [ev async for ev in s]
        else:
            await c.messages.create(model="claude-x", max_tokens=10,
                                    messages=[{"role": "user", "content": "hi"}])
    assert info.value.status_code == 529
    assert info.value.response.headers["retry-after"] == "3"
    assert len(sent(upstream)) == 2


@pytest.mark.parametrize("stream", [False, True])
async def test_without_memory_tools_the_answer_is_relayed_and_stored(
        make_proxy: Any, upstream: FakeUpstream, stream: bool) -> None:
    proxy = await make_proxy(tools={"enabled": False})
    upstream.anthropic_replies.append(AReply(
        content=[thinking("t", SIG), text("plain answer")], write_size=9))
    c = client(proxy)
    history = [{"role": "user", "content": "hello"}]
    if stream:
        async with c.messages.stream(model="claude-x", max_tokens=10,
                                     messages=history) as s:
            final = await s.get_final_message()
    else:
        final = await c.messages.create(model="claude-x", max_tokens=10, messages=history)
    assert final.content[1].text == "plain answer"
    assert "tools" not in sent(upstream)[-1]["json"]
    await proxy.settle()
    assert stored(proxy)[-1]["message"] == {"role": "assistant", "content": [
        thinking("t", SIG), text("plain answer")]}
    # the client's echo of the reply is the stored reply: nothing stored twice
    history += [{"role": "assistant", "content": [b.to_dict() for b in final.content]},
                {"role": "user", "content": "again"}]
    await c.messages.create(model="claude-x", max_tokens=10, messages=history)
    await proxy.settle()
    assert [m["role"] for m in stored(proxy)] == ["user", "assistant", "user", "assistant"]
    # memory off for one request: sent as the client wrote it, and the reason said
    history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "bye"}]
    raw = await c.messages.with_raw_response.create(
        model="claude-x", max_tokens=10, messages=history, extra_headers={"X-LCM-Memory": "off"})
    assert raw.headers["x-lcm-memory-reason"] == "memory-off-header"
    assert sent(upstream)[-1]["json"]["messages"] == history


@pytest.mark.parametrize("stream", [False, True])
async def test_memory_command_is_answered_by_the_proxy(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    c = client(proxy)
    history = [{"role": "user", "content": "/memory status"}]
    if stream:
        async with c.messages.stream(model="claude-x", max_tokens=10, messages=history) as s:
            final = await s.get_final_message()
    else:
        final = await c.messages.create(model="claude-x", max_tokens=10, messages=history)
    assert final.content[0].type == "text" and final.stop_reason == "end_turn"
    assert final.content[0].text.strip()
    assert sent(upstream) == []
    await proxy.settle()
    assert [m["role"] for m in stored(proxy)] == ["user", "assistant"]


async def test_a_tool_round_keeps_the_turns_block(proxy: RunningProxy,
                                                  upstream: FakeUpstream) -> None:
    c = client(proxy)
    tools = [{"name": "read_file", "description": "Read a file",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    opening = {"role": "user", "content": "Fix the Makefile, the build flag must be -O3."}
    upstream.anthropic_replies.append(AReply(
        content=[text("Reading."), tool_use("toolu_r", "read_file", {"path": "Makefile"})]))
    first = await c.messages.create(model="claude-x", max_tokens=100, messages=[opening],
                                    tools=tools)
    assert first.stop_reason == "tool_use" and first.content[1].name == "read_file"
    block = sent(upstream)[-1]["json"]["messages"][-1]["content"][-1]["text"]
    history = [opening, {"role": "assistant", "content": [b.to_dict() for b in first.content]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_r",
                                             "content": "CFLAGS=-O2"}]}]
    await c.messages.create(model="claude-x", max_tokens=100, messages=history, tools=tools)
    body = sent(upstream)[-1]["json"]
    assert body["messages"][:2] == history[:2]  # the opening message as the client sent it
    last = body["messages"][-1]["content"]
    assert last[0] == history[2]["content"][0] and last[1] == text(block)


def _paste(i: int) -> str:
    return (f"Here is the log of run {i}:\n" + "\n".join(
        f"2024-05-0{i % 9 + 1} 12:{k:02d}:07 INFO worker-{k} processed batch {i * 100 + k}"
        f" in {k * 13 % 97} ms, queue depth {k * 7 % 31}" for k in range(25)))


def _tokens(req: dict[str, Any]) -> int:
    from memory_core.assembly import budget
    body = req["json"]
    return budget.messages_tokens(body["messages"]) + budget.tools_tokens(body.get("tools"))


TOO_LONG = {"type": "invalid_request_error",
            "message": "prompt is too long: 7000 tokens > 6000 maximum"}


@pytest.mark.parametrize(("stream", "tools"), [(False, True), (True, True), (True, False)])
async def test_prompt_too_long_is_recovered_once(make_proxy: Any, upstream: FakeUpstream,
                                                 stream: bool, tools: bool) -> None:
    proxy = await make_proxy(tools={"enabled": tools, "offer": "always"})
    c = client(proxy)
    messages: list[dict[str, Any]] = []
    for i in range(12):
        messages.append({"role": "user", "content": _paste(i)})
        messages.append({"role": "assistant", "content": [text(f"Run {i} looks healthy.")]})
    messages.append({"role": "user", "content": "Which run was slowest?"})
    upstream.anthropic_replies.extend([AReply(status=400, error=TOO_LONG),
                                       AReply(content=[text("run 7")])])
    before = len(sent(upstream))
    if stream:
        async with c.messages.with_streaming_response.create(
                model="claude-x", max_tokens=100, system="sys", messages=messages,
                stream=True) as raw:
            body = b"".join([chunk async for chunk in raw.iter_bytes()])
        deltas = [orjson.loads(line[6:]) for line in body.split(b"\n")
                  if line.startswith(b"data: ")]
        assert "".join(d["delta"].get("text", "") for d in deltas
                       if d["type"] == "content_block_delta") == "run 7"
    else:
        raw = await c.messages.with_raw_response.create(
            model="claude-x", max_tokens=100, system="sys", messages=messages)
        assert (await raw.parse()).content[0].text == "run 7"
    assert raw.headers["x-lcm-context-recovery"].startswith("retried")
    first, second = sent(upstream)[before:]
    assert _tokens(second) < _tokens(first) and _tokens(second) <= 6000
    assert second["json"]["system"] == "sys"
    assert second["json"]["messages"][-1]["content"][0] == text("Which run was slowest?")
    # both plans' blocks went upstream: each has its explain log (the retry's replanned)
    await proxy.settle()
    assert store_sql(proxy.engine, "SELECT COUNT(*) AS n FROM assembly_logs")[0]["n"] == 2
    # once only: a second refusal reaches the client as the upstream sent it
    upstream.anthropic_replies.extend([AReply(status=400, error=TOO_LONG),
                                       AReply(status=400, error=TOO_LONG)])
    messages += [{"role": "assistant", "content": [text("run 7")]},
                 {"role": "user", "content": "And the fastest?"}]
    with pytest.raises(anthropic.BadRequestError) as info:
        await c.messages.create(model="claude-x", max_tokens=100, system="sys",
                                messages=messages)
    assert info.value.body["error"]["message"] == TOO_LONG["message"]  # type: ignore[index]


async def test_long_tool_session_stays_in_budget_and_remembers(make_proxy: Any,
                                                               upstream: FakeUpstream) -> None:
    """A Claude-Code-like session (tool rounds, big tool output) on an 8k-window model:
    every forwarded request fits its budget, is valid Messages (every tool_result
    right after its tool_use's turn), keeps the system prompt, and an early fact
    reaches the upstream late in the session (block or summary)."""
    from memory_core.assembly import budget
    proxy = await make_proxy(context={"model_windows": ["tiny-*=8192"]}, tools={"enabled": False})
    c = client(proxy)
    limit = budget.request_budget({"model": "tiny-8b", "max_tokens": 100},
                                  proxy.engine.config.context).input_tokens
    system = [{"type": "text", "text": "You are a coding agent.",
               "cache_control": {"type": "ephemeral"}}]
    tools = [{"name": "run", "description": "Run a command",
              "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Remember: the deploy key id is KX-4491."}]
    compacted: list[str | None] = []

    async def ask() -> None:
        raw = await c.messages.with_raw_response.create(
            model="tiny-8b", max_tokens=100, system=system, messages=history, tools=tools)
        assert "x-lcm-compaction" not in raw.headers  # no tool pair was ever cut
        compacted.append(raw.headers.get("x-lcm-compacted-messages"))
        r = await raw.parse()
        history.append({"role": "assistant", "content": [b.to_dict() for b in r.content]})

    await ask()
    for i in range(20):
        history.append({"role": "user", "content": f"Step {i}: run the tests."})
        upstream.anthropic_replies.append(AReply(content=[
            text("Running."), tool_use(f"toolu_{i}", "run", {"cmd": f"pytest -k t{i}"})]))
        await ask()
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": _paste(i)}]})
        upstream.anthropic_replies.append(AReply(content=[text(f"Step {i} passed.")]))
        await ask()
    history.append({"role": "user", "content": "What is the deploy key id?"})
    await ask()
    from proxy.wire.messages import tool_pairs_ok
    reqs = sent(upstream)
    assert budget.messages_tokens(history) > 2 * limit  # far over the budget
    for req in reqs:
        body = req["json"]
        assert body["system"] == system
        assert tool_pairs_ok(body["messages"]), body["messages"]
        assert budget.messages_tokens([{"role": "system", "content": "x"}, *body["messages"]]
                                      ) + budget.tools_tokens(body["tools"]) <= limit + 50
    assert b"KX-4491" in reqs[-1]["raw"]
    assert len(reqs[-1]["json"]["messages"]) < len(history)  # compacted
    # Prompt cache: between two requests with no new compaction, the earlier one's
    # messages (its block taken off its last message) start the later one unchanged,
    # so a breakpoint the client put on its last block hits next time.
    # (A string's content counts as its one text block, as the upstream reads it.)
    from proxy.wire.messages import blocks
    same = 0
    for k in range(1, len(reqs)):
        if compacted[k] != compacted[k - 1]:
            continue
        same += 1
        prev, cur = reqs[k - 1]["json"]["messages"], reqs[k]["json"]["messages"]
        n = len(prev)
        assert cur[:n - 1] == prev[:n - 1], k
        was, now = blocks(prev[-1]["content"]), blocks(cur[n - 1]["content"])
        assert was[:len(now)] == now and len(was) - len(now) in (0, 1), k
    assert same >= len(reqs) // 2, (same, len(reqs))


async def test_heartbeats_during_a_hidden_round_and_a_client_that_leaves(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """While a hidden round runs, ``ping`` events keep the stream alive (the SDK
    skips them); a client that leaves cancels the upstream call in flight."""
    proxy = await make_proxy(tools={"heartbeat_seconds": 0.2, "offer": "always"})
    c = client(proxy)
    upstream.anthropic_replies.extend([
        AReply(content=[tool_use("toolu_m", "memory_search", {"query": "x"})]),
        AReply(content=[text("late answer")], answer_delay=0.7)])
    async with c.messages.with_streaming_response.create(
            model="claude-x", max_tokens=10, stream=True,
            messages=[{"role": "user", "content": "hi"}]) as raw:
        body = b"".join([chunk async for chunk in raw.iter_bytes()])
    assert body.startswith(b"event: ping\n")  # sent before the answer's first byte
    assert body.count(b"event: message_start") == 1 and b"toolu_m" not in body
    assert body.count(b"event: message_stop") == 1
    # leaving while the hidden round's successor streams slowly
    upstream.anthropic_replies.extend([
        AReply(content=[tool_use("toolu_n", "memory_search", {"query": "y"})]),
        AReply(content=[text("x" * 400)], piece=1, write_size=40, delay=0.05)])
    async with c.messages.with_streaming_response.create(
            model="claude-x", max_tokens=10, stream=True,
            messages=[{"role": "user", "content": "again"}]) as raw:
        async for chunk in raw.iter_bytes():
            if b"text_delta" in chunk:
                break
    await proxy.settle()
    assert upstream.aborted == 1
    events = proxy.engine.export(events=True)["events"]
    assert any(e["data"].get("client_gone") for e in events)


async def test_proxy_errors_and_the_upstream_key_on_anthropic_routes(
        upstream: FakeUpstream, tmp_path: Any) -> None:
    """Errors the proxy raises before any handler (a rejected client key) come in
    Anthropic's shape on ``/v1/messages*``, and ``proxy.upstream_api_key`` replaces the
    client's key as ``x-api-key`` there, count_tokens (pass-through) included."""
    from proxy.scope import tenant_for_key
    from tests.conftest import start_proxy

    running = await start_proxy(upstream.base_url, tmp_path / "d", proxy={
        "upstream_api_key": "sk-ant-upstream", "tenant_salt": "salt-1",
        "require_client_keys": [tenant_for_key(TEST_KEY, "salt-1")]})
    try:
        with pytest.raises(anthropic.AuthenticationError) as info:
            await client(running, key="sk-someone-else").messages.create(
                model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        assert info.value.status_code == 401
        body = info.value.body
        assert isinstance(body, dict) and body["type"] == "error"
        assert body["error"]["type"] == "authentication_error"
        c = client(running)
        await c.messages.create(model="claude-x", max_tokens=10,
                                messages=[{"role": "user", "content": "hi"}])
        await c.messages.count_tokens(model="claude-x",
                                      messages=[{"role": "user", "content": "hi"}])
        for path in ("/v1/messages", "/v1/messages/count_tokens"):
            req = [r for r in upstream.requests if r["path"] == path][-1]
            assert req["headers"]["x-api-key"] == "sk-ant-upstream", path
            assert "authorization" not in req["headers"], path
    finally:
        await running.close()


async def test_tools_go_only_where_history_lies_beyond(upstream: FakeUpstream,
                                                      tmp_path: Path) -> None:
    """Default ``tools.offer``: a first conversation carries all there is, so no memory
    tools; a second conversation of the same key has the first beyond it."""
    running = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        c = client(running)
        await c.messages.create(model="claude-x", max_tokens=50, messages=[
            {"role": "user", "content": "My cat is called Biscuit."}])
        assert not [t for t in sent(upstream)[-1]["json"].get("tools", [])
                    if t["name"].startswith("memory_")]
        await running.settle()
        await c.messages.create(model="claude-x", max_tokens=50, messages=[
            {"role": "user", "content": "A new task: what is my cat called?"}])
        names = {t["name"] for t in sent(upstream)[-1]["json"].get("tools", [])}
        assert {"memory_search", "memory_grep"} <= names
    finally:
        await running.close()


@pytest.mark.parametrize("choice", [{"type": "tool", "name": "read_file"}, {"type": "any"},
                                    {"type": "none"}])
async def test_a_tool_choice_without_memory_tools_gets_a_block_that_names_none(
        proxy: RunningProxy, upstream: FakeUpstream, choice: dict[str, Any]) -> None:
    """A ``tool_choice`` that keeps the memory tools out (forced, ``any``, ``none``)
    also keeps them out of the block's guidelines: the model is never told to call a
    tool it was not given."""
    tools = [{"name": "read_file", "description": "Read a file",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    raw = await client(proxy).messages.with_raw_response.create(
        model="claude-x", max_tokens=100, tools=tools, tool_choice=choice,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "Read the Makefile."}])
    assert raw.headers["x-lcm-memory"] == "injected"
    body = sent(upstream)[-1]["json"]
    assert [t["name"] for t in body["tools"]] == ["read_file"]
    assert body["tool_choice"] == choice
    block = body["messages"][-1]["content"][-1]["text"]
    assert block.startswith("[Background Context") and "memory_grep" not in block


async def test_the_inspector_keeps_the_bytes_the_upstream_received(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """The body recorded for the inspector is the one the upstream received, the
    memory tools in Anthropic's shape (it was once built with Chat Completions')."""
    await client(proxy).messages.create(model="claude-x", max_tokens=10,
                                        messages=[{"role": "user", "content": "hi"}])
    await proxy.settle()
    rows = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT * FROM forwarded_requests ORDER BY id")])
    assert rows[-1]["tools_added"] == 1
    assert "input_schema" in sent(upstream)[-1]["json"]["tools"][-1]
    assert zlib.decompress(rows[-1]["body"]) == sent(upstream)[-1]["raw"]


async def test_a_moving_breakpoint_keeps_one_conversation(proxy: RunningProxy,
                                                           upstream: FakeUpstream) -> None:
    """Claude Code puts its ``cache_control`` breakpoint on the newest message and
    takes it off the one before: the message is the same message, so the history
    still matches what is stored (one thread, each message once), and a hidden
    memory round is still shown to the model in place on the next turn (with its
    thinking block, which the API requires before a tool_use)."""
    c = client(proxy)
    mark = {"type": "ephemeral"}

    def ask(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The history as sent: a breakpoint on the newest message's last block only."""
        out = []
        for n, m in enumerate(history):
            blocks = ([{"type": "text", "text": m["content"]}] if isinstance(m["content"], str)
                      else [dict(b) for b in m["content"]])
            for b in blocks:
                b.pop("cache_control", None)
            if n == len(history) - 1:
                blocks[-1]["cache_control"] = mark
            out.append({"role": m["role"], "content": blocks})
        return out

    history: list[dict[str, Any]] = []
    for turn, said in enumerate(["The deploy target is cluster blue-7.",
                                 "Which cluster do we deploy to?", "Thanks.", "Bye."]):
        history.append({"role": "user", "content": said})
        if turn == 1:
            upstream.anthropic_replies.extend([
                AReply(content=[thinking("Look it up.", SIG),
                                tool_use("toolu_c", "memory_grep", {"query": "blue-7"})]),
                AReply(content=[text("It is blue-7.")])])
        r = await c.messages.create(model="claude-x", max_tokens=100, messages=ask(history),
                                    thinking={"type": "enabled", "budget_tokens": 1024})
        history.append({"role": "assistant", "content": [b.to_dict() for b in r.content]})
        await proxy.settle()
    threads = proxy.engine.export()["threads"]
    assert len(threads) == 1, [len(t["messages"]) for t in threads]
    said = [m["text"] for m in threads[0]["messages"] if m["role"] == "user"
            and not m["hidden"]]
    assert said == ["The deploy target is cluster blue-7.", "Which cluster do we deploy to?",
                    "Thanks.", "Bye."]
    # The last request showed the model its hidden round in place: thinking, tool_use,
    # then the tool_result turn, before the answer the client saw.
    seen = sent(upstream)[-1]["json"]["messages"]
    kinds = [[b.get("type") for b in m["content"]] for m in seen]
    i = kinds.index(["tool_result"])
    assert kinds[i - 1] == ["thinking", "tool_use"]


@pytest.mark.parametrize("stream", [False, True])
async def test_a_memory_call_cut_off_by_max_tokens_is_not_run(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    """The model reached ``max_tokens`` while writing a memory call (its input half
    written): the call is not run and no second round is sent; the client gets the
    text before it and ``stop_reason: max_tokens``, as the upstream ended it."""
    from tests.fake_anthropic import _event

    c = client(proxy)
    history = await _seed(c)
    await proxy.settle()
    history.append({"role": "user", "content": "Which dashboard was it?"})
    if stream:
        head = {"id": "msg_cut", "type": "message", "role": "assistant", "model": "claude-x",
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1}}
        raw = (_event("message_start", {"type": "message_start", "message": head})
               + _event("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": text("")})
               + _event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta",
                                                          "text": "Let me look."}})
               + _event("content_block_stop", {"type": "content_block_stop", "index": 0})
               + _event("content_block_start", {
                   "type": "content_block_start", "index": 1,
                   "content_block": tool_use("toolu_cut", "memory_search", {})})
               + _event("content_block_delta", {"type": "content_block_delta", "index": 1,
                                                "delta": {"type": "input_json_delta",
                                                          "partial_json": '{"query": "das'}})
               + _event("content_block_stop", {"type": "content_block_stop", "index": 1})
               + _event("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": "max_tokens",
                                                    "stop_sequence": None},
                                          "usage": {"output_tokens": 100}})
               + _event("message_stop", {"type": "message_stop"}))
        upstream.anthropic_replies.append(AReply(raw_stream=raw))
    else:
        upstream.anthropic_replies.append(AReply(
            content=[text("Let me look."), tool_use("toolu_cut", "memory_search", {})],
            stop_reason="max_tokens"))
    before = len(sent(upstream))
    if stream:
        async with c.messages.stream(model="claude-x", max_tokens=100,
                                     messages=history) as s:
            final = await s.get_final_message()
    else:
        final = await c.messages.create(model="claude-x", max_tokens=100, messages=history)
    assert len(sent(upstream)) == before + 1  # no second round
    assert [b.type for b in final.content] == ["text"]
    assert final.content[0].text == "Let me look."
    assert final.stop_reason == "max_tokens"
    await proxy.settle()
    answers = [m for m in stored(proxy) if m["role"] == "assistant" and not m["hidden"]]
    assert answers[-1]["message"]["content"] == [text("Let me look.")]


async def test_an_error_after_shown_bytes_keeps_the_upstreams_type(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """Round 1 thought and called a memory tool (hidden, its thinking too); the
    client's status 200 went out with a heartbeat while round 2 was awaited, then
    the upstream refused round 2 as overloaded: the client's stream carries the
    upstream's own error event, ``overloaded_error``, which clients retry on."""
    proxy = await make_proxy(tools={"heartbeat_seconds": 0.1, "offer": "always"})
    c = client(proxy)
    history = await _seed(c)
    await proxy.settle()
    history.append({"role": "user", "content": "Which dashboard was it?"})
    overloaded = {"type": "error", "error": {"type": "overloaded_error",
                                             "message": "Overloaded"}}
    upstream.anthropic_replies.extend([
        AReply(content=[thinking("Check memory.", SIG),
                        tool_use("toolu_e", "memory_grep", {"query": "GRF"})]),
        AReply(status=529, error=overloaded["error"], headers={"retry-after": "30"},
               answer_delay=0.5)])
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{proxy.root}/v1/messages", headers={
                "x-api-key": TEST_KEY, "anthropic-version": "2023-06-01"}, json={
                "model": "claude-x", "max_tokens": 100, "stream": True,
                "thinking": {"type": "enabled", "budget_tokens": 1024},
                "messages": history}) as resp:
            assert resp.status == 200
            raw = b""
            with contextlib.suppress(aiohttp.ClientPayloadError):
                async for chunk in resp.content.iter_any():
                    raw += chunk
    assert b"event: ping" in raw and b"content_block_start" not in raw  # nothing shown
    tail = raw.rsplit(b"event: error\ndata: ", 1)[1].split(b"\n\n", 1)[0]
    assert orjson.loads(tail) == overloaded
